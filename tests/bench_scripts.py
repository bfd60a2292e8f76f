"""The diagnostics kept out of the wheel (``benches/python/``, run from a checkout), for the tests that run
them: as a user runs each (``python benches/python/<name>.py ARGS``), or imported to call its pieces."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

BENCHES = Path(__file__).resolve().parents[1] / "benches" / "python"


def run_script(script: str, *args: str) -> str:
    """``python benches/python/<script>.py ARGS``; its standard output (it must exit 0)."""
    done = subprocess.run(
        [sys.executable, str(BENCHES / f"{script}.py"), *args], capture_output=True, text=True, timeout=240
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def load_script(script: str) -> ModuleType:
    """The script imported as a module of its own name (its dataclasses look their module up there)."""
    spec = importlib.util.spec_from_file_location(script, BENCHES / f"{script}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[script] = module
    spec.loader.exec_module(module)
    return module

"""The trainers page's snippets ("Use with SB3 / CleanRL / TorchRL", docs/trainers.md) run as written."""

from __future__ import annotations

import importlib.util
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TRAINERS = ROOT / "docs" / "trainers.md"


def section() -> str:
    """The trainers page ("Use with SB3 / CleanRL / TorchRL", moved there from the README)."""
    return TRAINERS.read_text()


def blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", section(), flags=re.DOTALL)


def needs(snippet: str) -> str | None:
    """Why a snippet cannot run here (a missing optional package), or None."""
    for package in ("stable_baselines3", "torchrl", "torch"):
        if (
            re.search(rf"^(from|import) {package}\b", snippet, flags=re.MULTILINE)
            and importlib.util.find_spec(package) is None
        ):
            return f"{package} is not installed"
    if "step_batch(" in snippet:
        import torchwm

        if not hasattr(torchwm.AtariVectorEnv, "step_batch"):
            return "AtariVectorEnv.step_batch is not wired yet (torchwm.integrations.torch_batches.TorchBatchMixin)"
    return None


@pytest.mark.parametrize("snippet", blocks("python"), ids=lambda s: re.findall(r"\w+", s.split("import ")[-1])[0])
def test_python_snippet_runs(snippet):
    reason = needs(snippet)
    if reason:
        pytest.skip(reason)
    # One torch thread: the snippets' tiny models train faster than with threads fighting the env workers.
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    subprocess.run([sys.executable, "-c", snippet], check=True, timeout=600, env=env, cwd=ROOT)


def test_shell_snippets_name_real_flags():
    """Every example command parses (the examples' smoke tests run them)."""
    spec = importlib.util.spec_from_file_location("ppo_atari", ROOT / "examples" / "ppo_atari.py")
    commands = [line for block in blocks("bash") for line in block.splitlines() if line.strip()]
    assert commands
    for command in commands:
        words = shlex.split(command, comments=True)
        assert words[:2] == ["python", "examples/ppo_atari.py"], command
        pytest.importorskip("torch")
        module = importlib.util.module_from_spec(spec)
        sys.modules["ppo_atari"] = module  # dataclasses look their module up there
        spec.loader.exec_module(module)
        module.parse_args(words[2:])

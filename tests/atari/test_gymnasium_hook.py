"""The start-up hook (``torchwm-gymnasium.pth``): ``TorchWM/<Game>-v5`` resolves in a process that never
imports torchwm (RLlib env runners, Ray workers), and a broken torchwm never breaks ``import gymnasium``.

Each case runs a fresh interpreter that processes the hook's ``.pth`` as site-packages does
(``site.addsitedir``), from the source tree, so it needs no installed wheel."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

HOOK_DIR = Path(__file__).resolve().parents[2] / "python" / "torchwm.data" / "purelib"

MAKE_PLAIN_ID = """
import gymnasium as gym
envs = gym.make_vec("TorchWM/Pong-v5", num_envs=2, vectorization_mode="vector_entry_point")
print(type(envs).__module__, envs.single_observation_space.shape)
envs.close()
single = gym.make("TorchWM/Pong-v5")
print(type(single.unwrapped).__name__)
single.close()
"""


def run_python(code: str, *, extra_path: str | None = None, **env: str) -> subprocess.CompletedProcess:
    prefix = f"import site; site.addsitedir({str(HOOK_DIR)!r})\n"
    environment = {**os.environ, **env}
    if extra_path is not None:
        environment["PYTHONPATH"] = os.pathsep.join(filter(None, [extra_path, environment.get("PYTHONPATH")]))
    return subprocess.run(
        [sys.executable, "-c", prefix + code], check=False, capture_output=True, text=True, timeout=120, env=environment
    )


def test_plain_id_resolves_in_a_process_that_never_imports_torchwm():
    result = run_python(MAKE_PLAIN_ID)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["torchwm.atari.vector_env", "(4,", "84,", "84)", "AtariEnv"]


def test_without_the_hook_the_plain_id_is_unknown():
    """What the hook fixes (and its off switch): gymnasium alone does not know the namespace."""
    result = run_python(MAKE_PLAIN_ID, TORCHWM_NO_GYMNASIUM_HOOK="1")
    assert result.returncode != 0
    assert "NamespaceNotFound" in result.stderr and "TorchWM" in result.stderr


def test_importing_torchwm_first_still_works_without_warnings():
    result = run_python("import warnings; warnings.simplefilter('error')\nimport torchwm\n" + MAKE_PLAIN_ID)
    assert result.returncode == 0, result.stderr


def test_importing_ale_py_first_still_works_without_warnings():
    """ale_py imports gymnasium, and torchwm's registration imports ale_py: it waits for ale_py to load."""
    result = run_python("import warnings; warnings.simplefilter('error')\nimport ale_py\n" + MAKE_PLAIN_ID)
    assert result.returncode == 0, result.stderr


def test_a_broken_torchwm_never_breaks_import_gymnasium(tmp_path):
    broken = tmp_path / "torchwm"
    broken.mkdir()
    (broken / "__init__.py").write_text("raise ImportError('this torchwm is broken on purpose')\n")
    result = run_python("import gymnasium as gym\nprint(gym.make('CartPole-v1').spec.id)", extra_path=str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "CartPole-v1"
    assert "could not register its gymnasium ids" in result.stderr and "broken on purpose" in result.stderr


@pytest.mark.parametrize(("flag", "watching"), [("1", False), ("yes", False), ("0", True), ("", True)])
def test_off_switch(flag, watching):
    """Before gymnasium is imported, the hook waits for it unless TORCHWM_NO_GYMNASIUM_HOOK is set."""
    result = run_python(
        "import sys\nprint(any(type(f).__name__ == 'GymnasiumImportWatcher' for f in sys.meta_path))",
        TORCHWM_NO_GYMNASIUM_HOOK=flag,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == str(watching)

"""The process vectorizer with workers started by spawn, as on Windows and macOS: side by side with
gymnasium's ``AsyncVectorEnv`` (spawn too), a killed worker, ``close()``, more workers than Windows
waits on at once, and a script without the ``if __name__ == "__main__":`` guard.

Written with nothing but what every system has (``Process.kill`` is ``TerminateProcess`` on Windows,
SIGKILL elsewhere), so that the same file runs on Linux and on Windows under wine
(scripts/windows_check.sh). Where workers are spawned by default: the test command runs it in the
portable column (``TORCHWM_PORTABLE=1``, macOS's code paths), not again in its main pytest, whose
forked workers these tests would not use.
"""

from __future__ import annotations

import multiprocessing as mp
import subprocess
import sys
import textwrap
import time
from functools import partial
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces
from gymnasium.vector import AsyncVectorEnv, AutoresetMode

from testing_support import assert_same
from torchwm import TorchVectorizedEnv, WorkerCrashedError, _platform

pytestmark = pytest.mark.skipif(
    not _platform.PORTABLE, reason="spawned workers: run in the portable column (TORCHWM_PORTABLE=1) and on Windows"
)


class DictCounter(gym.Env):
    """A Dict observation (a Box and a Discrete) whose episodes end after a seeded number of steps."""

    observation_space = spaces.Dict({"position": spaces.Box(-10, 10, (2,), np.float32), "phase": spaces.Discrete(3)})
    action_space = spaces.Discrete(3)

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[Any, dict]:
        super().reset(seed=seed)
        self.steps, self.limit = 0, int(self.np_random.integers(2, 6))
        self.position = self.np_random.uniform(-1, 1, 2).astype(np.float32)
        return self._observation(), {"limit": self.limit}

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        self.steps += 1
        self.position = (self.position + (int(action) - 1) * 0.5).astype(np.float32)
        info = {"steps": self.steps} if self.steps % 2 else {}
        return self._observation(), float(action), self.steps >= self.limit, False, info

    def _observation(self) -> dict[str, Any]:
        return {"position": self.position.copy(), "phase": self.steps % 3}


class SlowStep(gym.Env):
    observation_space = spaces.Box(-1, 1, (1,), np.float32)
    action_space = spaces.Discrete(2)

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[Any, dict]:
        return np.zeros(1, np.float32), {}

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        time.sleep(float(action) * 30)  # action 1: the step the test kills the worker in
        return np.zeros(1, np.float32), 0.0, False, False, {}

    def twice(self, value: int) -> int:
        return 2 * value


ENVS = {
    "box": partial(gym.make, "CartPole-v1"),
    "discrete": partial(gym.make, "FrozenLake-v1"),
    "dict": DictCounter,
}


@pytest.mark.timeout(300)
@pytest.mark.parametrize("mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP, AutoresetMode.DISABLED])
@pytest.mark.parametrize("env", sorted(ENVS))
def test_matches_async_vector_env_with_spawned_workers(env: str, mode: AutoresetMode) -> None:
    """Same seeds and actions, in the same interpreter: the same observations, rewards, flags and infos."""
    factory = ENVS[env]
    # Two workers a side: each spawned worker costs a second or more (under wine, three).
    ours = TorchVectorizedEnv(factory, num_workers=2, envs_per_worker=1, context="spawn", autoreset_mode=mode)
    theirs = AsyncVectorEnv([factory] * 2, context="spawn", autoreset_mode=mode)
    try:
        assert ours.observation_space == theirs.observation_space
        assert ours.action_space == theirs.action_space
        assert_same(ours.reset(seed=7), theirs.reset(seed=7))
        rng, ended = np.random.default_rng(0), 0
        for _ in range(40):
            actions = rng.integers(0, ours.single_action_space.n, 2)
            got, expected = ours.step(actions), theirs.step(actions)
            for a, b in zip(got, expected):
                assert_same(a, b)
            done = expected[2] | expected[3]
            ended += int(done.sum())
            if mode == AutoresetMode.DISABLED and done.any():
                options = {"reset_mask": done}
                assert_same(ours.reset(options=options), theirs.reset(options=options))
        assert ended > 0
    finally:
        ours.close()
        theirs.close()


@pytest.mark.timeout(300)
def test_pool_mode_with_spawned_workers_steps_the_first_workers_done() -> None:
    envs = TorchVectorizedEnv(ENVS["box"], num_workers=3, envs_per_worker=2, batch_size=4, context="spawn")
    try:
        observations, info = envs.reset(seed=0)
        assert observations.shape == (4, 4) and len(set(info["env_id"].tolist())) == 4
        seen: set[int] = set()
        for _ in range(5_000):  # whichever workers finish first: every one within a few steps, unless starved
            if seen == set(range(6)):
                break
            observations, rewards, _, _, info = envs.step(np.zeros(4, np.int64))
            assert observations.shape == (4, 4) and rewards.shape == (4,)
            ids = info["env_id"].tolist()
            assert all(i ^ 1 in ids for i in ids)  # whole workers: envs 0-1, 2-3 and 4-5
            seen.update(ids)
        assert seen == set(range(6))
    finally:
        envs.close()


@pytest.mark.timeout(300)
def test_a_worker_killed_mid_step_is_reported_and_close_leaves_no_process() -> None:
    envs = TorchVectorizedEnv(SlowStep, num_workers=2, envs_per_worker=2, context="spawn")
    try:
        envs.reset(seed=0)
        processes = list(envs._pool.processes)
        envs.step_async(np.array([0, 0, 1, 0]))  # worker 1 sleeps in env 2's step
        time.sleep(0.5)
        processes[1].kill()  # TerminateProcess on Windows
        with pytest.raises(WorkerCrashedError, match=r"worker 1 \(sub-environments 2\.\.3\) died"):
            envs.step_wait(timeout=60)
    finally:
        envs.close()
    assert not any(process.is_alive() for process in processes)
    assert mp.active_children() == []


@pytest.mark.timeout(600)
def test_more_workers_than_one_wait_takes_on_windows() -> None:
    """64 workers: Windows waits on at most 63 handles at once; the last worker's death is seen too."""
    envs = TorchVectorizedEnv(SlowStep, num_workers=64, envs_per_worker=1, context="spawn")
    try:
        assert envs.reset(seed=0)[0].shape == (64, 1)
        assert envs.step(np.zeros(64, np.int64))[0].shape == (64, 1)
        processes = list(envs._pool.processes)
        actions = np.zeros(64, np.int64)
        actions[63] = 1
        envs.step_async(actions)
        time.sleep(0.5)
        processes[63].kill()
        with pytest.raises(WorkerCrashedError, match=r"worker 63 \(sub-environments 63\.\.63\) died"):
            envs.step_wait(timeout=120)
    finally:
        envs.close()
    assert not any(process.is_alive() for process in processes)


_UNGUARDED_SCRIPT = """
import gymnasium as gym
from functools import partial
from torchwm import TorchVectorizedEnv

# No `if __name__ == "__main__":` guard: each spawned worker runs this line again as it imports this module.
envs = TorchVectorizedEnv(partial(gym.make, "CartPole-v1"), 2, 1, context="spawn")
print("made")
"""


@pytest.mark.timeout(300)
def test_a_script_without_the_main_guard_gets_a_clear_error(tmp_path) -> None:
    """Neither a hang nor processes starting processes: the workers refuse at once, and the script's
    own call raises WorkerCrashedError naming the guard."""
    script = tmp_path / "unguarded.py"
    script.write_text(textwrap.dedent(_UNGUARDED_SCRIPT))
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=240)
    assert done.returncode != 0 and "made" not in done.stdout
    assert "WorkerCrashedError" in done.stderr
    assert 'if __name__ == "__main__":' in done.stderr
    # Each worker's own traceback: it refused before making an env or starting a process.
    assert done.stderr.count("TorchVectorizedEnv was created while this process was starting") >= 1


_PARENT_SCRIPT = """
import time
from functools import partial

import gymnasium as gym

from torchwm import TorchVectorizedEnv

if __name__ == "__main__":
    envs = TorchVectorizedEnv(partial(gym.make, "CartPole-v1"), 2, 1, context="spawn")
    envs.reset(seed=0)
    print(*envs.worker_pids, flush=True)
    time.sleep(600)  # killed by the test
"""


@pytest.mark.timeout(300)
def test_workers_exit_on_their_own_once_their_parent_is_killed(tmp_path) -> None:
    psutil = pytest.importorskip("psutil")
    script = tmp_path / "parent.py"
    script.write_text(textwrap.dedent(_PARENT_SCRIPT))
    # As a context manager, Popen closes the pipe it read the pids from (else a ResourceWarning).
    with subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True) as parent:
        try:
            assert parent.stdout is not None
            pids = [int(pid) for pid in parent.stdout.readline().split()]
            assert len(pids) == 2
            workers = [psutil.Process(pid) for pid in pids]
        finally:
            parent.kill()  # TerminateProcess on Windows: nothing of the parent runs
            parent.wait()
    _, alive = psutil.wait_procs(workers, timeout=60)
    assert alive == []


def _open_handles(psutil: Any) -> int:
    process = psutil.Process()
    return process.num_handles() if sys.platform == "win32" else process.num_fds()


@pytest.mark.timeout(300)
def test_closing_leaves_no_handle_behind() -> None:
    """The parent's open handles (descriptors off Windows) do not grow with each vector env made and
    closed: the doorbells' mapping, their events, the pipes and the process handles all go."""
    psutil = pytest.importorskip("psutil")
    counts = []
    for _ in range(3):
        envs = TorchVectorizedEnv(ENVS["box"], num_workers=2, envs_per_worker=1, context="spawn")
        envs.reset(seed=0)
        envs.step(np.zeros(2, np.int64))
        envs.close()
        del envs
        counts.append(_open_handles(psutil))
    assert counts[2] <= counts[0], counts


@pytest.mark.timeout(300)
def test_calls_attributes_and_timeouts_match_async_vector_env() -> None:
    ours = TorchVectorizedEnv(SlowStep, num_workers=2, envs_per_worker=1, context="spawn")
    theirs = AsyncVectorEnv([SlowStep] * 2, context="spawn")
    try:
        for env in (ours, theirs):
            env.reset(seed=0)
            env.set_attr("label", ["a", "b"])
        assert ours.get_attr("label") == theirs.get_attr("label") == ("a", "b")
        assert ours.call("twice", 3) == theirs.call("twice", 3) == (6, 6)
        raised = []
        for env in (ours, theirs):
            env.step_async(np.array([0, 1]))  # env 1 sleeps for 30 s
            with pytest.raises(mp.TimeoutError) as error:
                env.step_wait(timeout=0.5)
            raised.append(type(error.value))
        assert raised[0] is raised[1]
        # Ours keeps the step pending after its timeout (docs/migration.md: gymnasium drops it), and
        # warns as gymnasium does when an env with a pending call is closed.
        with pytest.warns(UserWarning, match="Calling `close` while waiting for a pending call to `step`"):
            ours.close(terminate=True)
    finally:
        ours.close(terminate=True)
        theirs.close(terminate=True)

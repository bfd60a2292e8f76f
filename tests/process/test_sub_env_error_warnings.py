"""Sub-envs that raise: torchwm logs the warnings gymnasium's AsyncVectorEnv logs, no more and no fewer
(one pair per failing env, in the same order, then "Raising the last exception"), and raises the same
exception, side by side with gymnasium's own env, whatever the action space's shape and however torchwm
groups the envs into workers (several failing envs of one worker included), in step, reset and call."""

from __future__ import annotations

import functools
import gc
import multiprocessing.queues
import os
import time
import warnings
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces
from multi_agent_envs import Departures

from torchwm import TorchVectorizedEnv


class RaisesInStep(gym.Env):
    def __init__(self, shape: tuple[int, ...]) -> None:
        self.observation_space = spaces.Box(-1, 1, (2,), np.float32)
        self.action_space = spaces.Box(-1, 1, shape, np.float32)

    def reset(self, *, seed=None, options=None):
        return np.zeros(2, np.float32), {}

    def step(self, action):
        raise RuntimeError("step failed")


def _warnings_of_a_failing_step(venv) -> list[str]:
    venv.reset(seed=0)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with pytest.raises(RuntimeError, match="step failed"):
                venv.step(venv.action_space.sample())
    finally:
        venv.close()
    # The tracebacks name each library's own files: compare the kind of each warning, in order.
    return sorted(str(w.message).split("\n")[0].replace("Worker-1", "Worker-0") for w in caught)


@pytest.mark.parametrize("shape", [(), (2,)])
def test_the_same_warnings_as_async_vector_env(shape):
    factory = functools.partial(RaisesInStep, shape)
    theirs = _warnings_of_a_failing_step(gym.vector.AsyncVectorEnv([factory] * 2))
    ours = _warnings_of_a_failing_step(TorchVectorizedEnv(factory, 2, 1))
    assert ours == theirs
    assert not any("Casting input x to numpy array" in message for message in ours)


# ------------------------------------------------------------------ several failing envs, in order

# The envs built in each process: (pid, marker folder, env index).
_BUILT: set[tuple[int, str, int]] = set()
# How long an env waits for the env before it to have reported its error (it never waits in torchwm).
_CHAIN_WAIT_S = 120.0


class Chained:
    """Env ``index`` of a vector env whose envs ``failing`` raise in step, in reset with
    ``options={"fail": True}`` and in ``call("explode")``; the others step, reset and answer.

    gymnasium's AsyncVectorEnv logs its envs' errors in the order they reach its error queue, each env
    in a process of its own: to make that order env order, a failing env first waits until the failing
    env before it has closed (which gymnasium's worker does after it queued its error; ``close`` then
    flushes the queue first) unless that env is in the same process (torchwm steps a worker's envs in
    order). The envs of one test share ``folder``, where the markers are."""

    def __init__(self, index: int, failing: tuple[int, ...], folder: str) -> None:
        self.index, self.failing, self.folder = index, failing, folder
        self.raised = False
        _BUILT.add((os.getpid(), folder, index))

    def fail(self, what: str) -> None:
        if self.index not in self.failing:
            return
        earlier = [f for f in self.failing if f < self.index]
        if earlier and (os.getpid(), self.folder, earlier[-1]) not in _BUILT:
            marker = Path(self.folder, f"closed-{earlier[-1]}")
            deadline = time.monotonic() + _CHAIN_WAIT_S
            while not marker.exists():
                if time.monotonic() > deadline:  # fails the test (another message) rather than hang it
                    raise TimeoutError(f"env {self.index} waited for {marker} in vain")
                time.sleep(0.01)
        self.raised = True
        raise ValueError(f"{what} failed in env {self.index}")

    def closing(self) -> None:
        if self.raised:
            # gymnasium's worker queued this env's error: flushed to the parent's queue before the marker.
            for queue in [o for o in gc.get_objects() if isinstance(o, multiprocessing.queues.Queue)]:
                queue.close()
                queue.join_thread()
            Path(self.folder, f"closed-{self.index}").touch()


class ChainedEnv(gym.Env):
    """A single-agent :class:`Chained` env."""

    observation_space = spaces.Box(-1, 1, (2,), np.float32)
    action_space = spaces.Discrete(2)

    def __init__(self, index: int, failing: tuple[int, ...], folder: str) -> None:
        self.chained = Chained(index, failing, folder)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        if (options or {}).get("fail"):
            self.chained.fail("reset")
        return np.zeros(2, np.float32), {}

    def step(self, action):
        self.chained.fail("step")
        return np.zeros(2, np.float32), 0.0, False, False, {}

    def explode(self) -> int:
        self.chained.fail("call")
        return self.chained.index

    def close(self) -> None:
        self.chained.closing()


class ChainedParallelEnv(Departures):
    """A PettingZoo ParallelEnv (torchwm's agent workers) failing as :class:`ChainedEnv` does."""

    def __init__(self, index: int, failing: tuple[int, ...], folder: str) -> None:
        super().__init__(agents=2, length=50)
        self.chained = Chained(index, failing, folder)

    def reset(self, seed=None, options=None):
        if (options or {}).get("fail"):
            self.chained.fail("reset")
        return super().reset(seed=seed)

    def step(self, actions):
        self.chained.fail("step")
        return super().step(actions)

    def explode(self) -> int:
        self.chained.fail("call")
        return self.chained.index

    def close(self) -> None:
        self.chained.closing()


def _comparable(logged: list[Any]) -> list[tuple[type[Warning], str]]:
    """Each logged warning by its category and last line: the header of a failing env's pair, the last
    line of its traceback (the frames above are each library's own), the closing line."""
    return [(warning.category, str(warning.message).rstrip().split("\n")[-1]) for warning in logged]


def _failure(venv: Any, command: str) -> tuple[list[tuple[type[Warning], str]], type[BaseException], str]:
    """What ``command`` logs and raises on ``venv`` (reset first, but for a failing reset); closes it."""
    try:
        if command != "reset":
            venv.reset(seed=0)
        act = {
            "step": lambda: venv.step(np.zeros(venv.num_envs, np.int64)),
            "reset": lambda: venv.reset(seed=0, options={"fail": True}),
            "call": lambda: venv.call("explode"),
        }[command]
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with pytest.raises(Exception) as raised:
                act()
    finally:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            venv.close(terminate=True)
    return _comparable(caught), type(raised.value), str(raised.value)


def _gymnasiums(failing: tuple[int, ...], num_envs: int, command: str, folder: Path) -> Any:
    factories = [functools.partial(ChainedEnv, i, failing, str(folder)) for i in range(num_envs)]
    return _failure(gym.vector.AsyncVectorEnv(factories), command)


# (workers, envs per worker, failing envs): several failing envs of one worker, with and without other
# workers, failing envs first and last in their worker.
LAYOUTS = [(1, 3, (1, 2)), (1, 3, (0, 2)), (1, 3, (0, 1, 2)), (2, 2, (2, 3)), (2, 3, (0, 1)), (3, 1, (1,))]


@pytest.mark.parametrize("command", ["step", "reset", "call"])
@pytest.mark.parametrize("layout", LAYOUTS, ids=lambda layout: f"{layout[0]}x{layout[1]}-failing{layout[2]}")
def test_every_failing_env_is_logged_and_the_last_raised_as_by_gymnasium(layout, command, tmp_path):
    workers, per_worker, failing = layout
    num_envs = workers * per_worker
    (tmp_path / "theirs").mkdir()
    (tmp_path / "ours").mkdir()
    theirs = _gymnasiums(failing, num_envs, command, tmp_path / "theirs")
    factories = [functools.partial(ChainedEnv, i, failing, str(tmp_path / "ours")) for i in range(num_envs)]
    ours = _failure(TorchVectorizedEnv(factories, workers, per_worker), command)
    assert ours == theirs
    assert len(theirs[0]) == 2 * len(failing) + 1  # the test's own check: every failing env was logged


@pytest.mark.parametrize("command", ["step", "reset", "call"])
def test_a_pool_mode_batch_of_failing_envs_is_logged_and_raised_as_by_gymnasium(command, tmp_path):
    (tmp_path / "theirs").mkdir()
    (tmp_path / "ours").mkdir()
    theirs = _gymnasiums((1, 2), 3, command, tmp_path / "theirs")
    factories = [functools.partial(ChainedEnv, i, (1, 2), str(tmp_path / "ours")) for i in range(3)]
    ours = _failure(TorchVectorizedEnv(factories, 1, 3, batch_size=3), command)
    assert ours == theirs and len(theirs[0]) == 5


@pytest.mark.parametrize("command", ["step", "reset", "call"])
def test_agent_workers_log_and_raise_as_gymnasium_does_for_its_envs(command, tmp_path):
    """ParallelEnvs (agent workers) that fail as gymnasium's single-agent envs do: the same warnings and
    exception (gymnasium's AsyncVectorEnv does not run ParallelEnvs)."""
    (tmp_path / "theirs").mkdir()
    (tmp_path / "ours").mkdir()
    theirs = _gymnasiums((1, 2), 3, command, tmp_path / "theirs")
    factories = [functools.partial(ChainedParallelEnv, i, (1, 2), str(tmp_path / "ours")) for i in range(3)]
    ours = _failure(TorchVectorizedEnv(factories, 1, 3), command)
    assert ours == theirs and len(theirs[0]) == 5

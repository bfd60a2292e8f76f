"""TorchVectorizedEnv: the Gym vector guide's examples, parity with SyncVectorEnv, and failure cases."""

from __future__ import annotations

import gc
import os
import signal
import threading
import time
from functools import partial
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

from testing_support import logs_sub_env_errors, measured_s, prompt_within_s
from torchwm import TorchVectorizedEnv, WorkerCrashedError


def cartpole() -> gym.Env:
    return gym.make("CartPole-v1")


class DictSpaceEnv(gym.Env):
    """Dict observation and action spaces (the Gym vector guide's example), with an info entry."""

    observation_space = gym.spaces.Dict(
        {
            "position": gym.spaces.Box(-1.0, 1.0, (3,), np.float32),
            "velocity": gym.spaces.Box(-1.0, 1.0, (2,), np.float32),
        }
    )
    action_space = gym.spaces.Dict(
        {"jump": gym.spaces.Discrete(2), "acceleration": gym.spaces.Box(-1.0, 1.0, (2,), np.float32)}
    )

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[dict, dict]:
        super().reset(seed=seed)
        self.t = 0
        return self.observation_space.sample(), {}

    def step(self, action: dict) -> tuple[dict, float, bool, bool, dict]:
        self.t += 1
        obs = {
            "position": np.full(3, float(action["jump"]), np.float32) * 0.5,
            "velocity": np.clip(action["acceleration"], -1, 1).astype(np.float32),
        }
        return obs, float(action["jump"]), self.t >= 3, False, {"t": self.t}


class FailingEnv(gym.Env):
    observation_space = gym.spaces.Box(0, 1, (1,), np.float32)
    action_space = gym.spaces.Discrete(2)

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        return np.zeros(1, np.float32), {}

    def step(self, action):
        if action == 1:
            raise ArithmeticError("the env refuses action 1")
        return np.zeros(1, np.float32), 0.0, False, False, {}


class OldApiEnv:
    """Old gym API: reset returns obs only, step returns a 4-tuple."""

    observation_space = gym.spaces.Box(0, 10, (1,), np.float32)
    action_space = gym.spaces.Discrete(2)

    def reset(self):
        self.t = 0
        return np.zeros(1, np.float32)

    def step(self, action):
        self.t += 1
        info = {"TimeLimit.truncated": self.t == 5} if self.t == 5 else {}
        return np.full(1, self.t, np.float32), 1.0, self.t >= 5, info


class SlowEnv(gym.Env):
    observation_space = gym.spaces.Box(0, 1, (1,), np.float32)
    action_space = gym.spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        return np.zeros(1, np.float32), {}

    def step(self, action):
        time.sleep(0.5)
        return np.zeros(1, np.float32), 0.0, False, False, {}


def _assert_same(a: Any, b: Any) -> None:
    if isinstance(a, tuple):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _assert_same(x, y)
    elif isinstance(a, dict):
        assert set(a) == set(b)
        for key in a:
            _assert_same(a[key], b[key])
    elif isinstance(a, np.ndarray) and a.dtype == object:
        for x, y in zip(a, b):
            _assert_same(x, y)
    else:
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP])
def test_cartpole_matches_sync_vector_env(mode: AutoresetMode) -> None:
    ours = TorchVectorizedEnv(cartpole, num_workers=2, envs_per_worker=3, autoreset_mode=mode)
    reference = gym.vector.SyncVectorEnv([cartpole] * 6, autoreset_mode=mode)
    try:
        assert ours.num_envs == ours.total_envs == 6
        assert ours.observation_space == reference.observation_space
        assert ours.action_space == reference.action_space
        assert ours.single_action_space == gym.spaces.Discrete(2)
        assert ours.metadata["autoreset_mode"] == mode
        _assert_same(ours.reset(seed=42), reference.reset(seed=42))
        rng = np.random.default_rng(0)
        finished = 0
        for _ in range(150):
            actions = rng.integers(0, 2, 6)
            got, expected = ours.step(actions), reference.step(actions)
            for a, b in zip(got, expected):
                _assert_same(a, b)
            finished += int((expected[2] | expected[3]).sum())
        assert finished > 0
    finally:
        ours.close()
        reference.close()


def test_distinct_seeds_and_constructor_seed() -> None:
    with TorchVectorizedEnv(cartpole, 2, 2, seed=7) as env:
        obs, _ = env.reset()
        assert len({row.tobytes() for row in obs}) == 4
        reference = gym.vector.SyncVectorEnv([cartpole] * 4)
        np.testing.assert_array_equal(obs, reference.reset(seed=7)[0])
        reference.close()


def test_dict_spaces_and_info_batching() -> None:
    with TorchVectorizedEnv(DictSpaceEnv, num_workers=2, envs_per_worker=2) as env:
        obs, _ = env.reset(seed=0)
        assert set(obs) == {"position", "velocity"} and obs["position"].shape == (4, 3)
        actions = {"jump": np.array([0, 1, 1, 0]), "acceleration": np.full((4, 2), 0.25, np.float32)}
        obs, rewards, terms, truncs, info = env.step(actions)
        np.testing.assert_array_equal(rewards, [0, 1, 1, 0])
        np.testing.assert_array_equal(obs["position"][1], [0.5, 0.5, 0.5])
        np.testing.assert_array_equal(info["t"], [1, 1, 1, 1])
        np.testing.assert_array_equal(info["_t"], [True] * 4)


def test_frozenlake_autoreset_next_step() -> None:
    """The guide's FrozenLake example: after an episode ends, the next step resets that env."""
    make = partial(gym.make, "FrozenLake-v1", is_slippery=False)
    with TorchVectorizedEnv(make, 1, 2) as env:
        env.reset(seed=0)
        # Down, down, right, right, down, right reaches the goal on the 4x4 map; env 1 walks left.
        for action in (1, 1, 2, 2, 1):
            obs, rewards, terms, truncs, _ = env.step(np.array([action, 0]))
            assert not terms[0]
        obs, rewards, terms, truncs, _ = env.step(np.array([2, 0]))
        assert terms[0] and rewards[0] == 1.0 and obs[0] == 15
        obs, rewards, terms, truncs, _ = env.step(np.array([2, 0]))
        assert obs[0] == 0 and rewards[0] == 0.0 and not terms[0]  # the reset step


@pytest.mark.parametrize("mode", ["same", "different"])
def test_mismatched_spaces_are_rejected_as_gymnasium_does(mode: str) -> None:
    factories = [cartpole, partial(gym.make, "MountainCar-v0")]
    with pytest.raises(Exception) as expected:
        gym.vector.AsyncVectorEnv(factories, observation_mode=mode).close()
    expected_class, expected_message = type(expected.value), str(expected.value)
    # The traceback holds the half-made AsyncVectorEnv: collected now, its __del__ closes its pipes. Left to
    # a later collection, its __del__ met a descriptor already closed (OSError: Bad file descriptor, which
    # pytest reported as a PytestUnraisableExceptionWarning).
    del expected
    gc.collect()
    with pytest.raises(Exception) as got:
        TorchVectorizedEnv(factories, num_workers=2, envs_per_worker=1, observation_mode=mode)
    assert type(got.value) is expected_class is (RuntimeError if mode == "same" else ValueError)
    assert str(got.value) == expected_message.replace("AsyncVectorEnv", "TorchVectorizedEnv")
    with pytest.raises(ValueError, match="total_envs"):
        TorchVectorizedEnv([cartpole], num_workers=2, envs_per_worker=1)


def test_old_api_env_is_adapted() -> None:
    with TorchVectorizedEnv(OldApiEnv, 1, 2) as env:
        obs, info = env.reset()
        assert obs.shape == (2, 1)
        for _ in range(4):
            obs, rewards, terms, truncs, _ = env.step(np.zeros(2, dtype=np.int64))
        obs, rewards, terms, truncs, _ = env.step(np.zeros(2, dtype=np.int64))
        np.testing.assert_array_equal(truncs, [True, True])
        np.testing.assert_array_equal(terms, [False, False])


def test_call_get_attr_set_attr_and_wrong_actions() -> None:
    with TorchVectorizedEnv(cartpole, 2, 2) as env:
        env.reset(seed=1)
        assert env.get_attr("gravity") == (9.8,) * 4
        env.set_attr("gravity", [1.0, 2.0, 3.0, 4.0])
        assert env.get_attr("gravity") == (1.0, 2.0, 3.0, 4.0)
        assert all(frame is None for frame in env.call("render"))
        with pytest.raises(ValueError, match="total_envs=4"):
            env.step(np.zeros(3, dtype=np.int64))
        with pytest.raises(TypeError, match="Unable to iterate"):  # as gymnasium (issue 22)
            env.step(np.int64(0))
        env.step(np.zeros(4, dtype=np.int64))  # still usable


def test_step_async_and_step_wait_timeout() -> None:
    with TorchVectorizedEnv(SlowEnv, 1, 1) as env:
        env.reset()
        env.step_async(np.zeros(1, dtype=np.int64))
        with pytest.raises(Exception, match="did not answer"):
            env.step_wait(timeout=0.05)
        obs, *_ = env.step_wait(timeout=10)  # keeps waiting for the same step
        assert obs.shape == (1, 1)


def test_exception_in_sub_env_is_reraised_as_its_class_with_remote_traceback() -> None:
    env = TorchVectorizedEnv(FailingEnv, num_workers=2, envs_per_worker=2)
    env.reset()
    with logs_sub_env_errors(), pytest.raises(ArithmeticError, match="refuses action 1") as caught:
        env.step(np.array([0, 0, 1, 0]))
    assert type(caught.value) is ArithmeticError
    assert "refuses action 1" in caught.value.remote_traceback and caught.value.env_index == 2
    assert "FailingEnv" not in str(caught.value) and "in step" in str(caught.value.__cause__)
    assert any("sub-environment 2" in note for note in caught.value.__notes__)
    assert env.closed
    for process in env._pool.processes:
        assert not process.is_alive() and process.exitcode is not None
    env.close()  # idempotent


def test_killed_worker_is_detected_quickly_and_nothing_is_left() -> None:
    env = TorchVectorizedEnv(cartpole, 2, 2)
    env.reset()
    step_s = measured_s(lambda: env.step(np.zeros(4, dtype=np.int64)))
    os.kill(env._pool.processes[1].pid, signal.SIGKILL)
    start = time.monotonic()
    with pytest.raises(WorkerCrashedError, match="worker 1"):
        env.step(np.zeros(4, dtype=np.int64))
    assert time.monotonic() - start < prompt_within_s(step_s)
    assert all(not p.is_alive() for p in env._pool.processes)


@pytest.mark.parametrize("context", ["spawn", "forkserver"])
def test_unpicklable_factory_names_the_fix(context: str) -> None:
    lock = threading.Lock()

    def factory() -> gym.Env:
        with lock:
            return gym.make("CartPole-v1")

    with pytest.raises(TypeError, match="module scope"):
        TorchVectorizedEnv(factory, 1, 1, context=context)


@pytest.mark.parametrize("context", ["fork", "spawn", "forkserver"])
def test_start_methods(context: str) -> None:
    with TorchVectorizedEnv(cartpole, 2, 1, context=context, shared_memory=context != "forkserver") as env:
        obs, _ = env.reset(seed=3)
        assert obs.shape == (2, 4)
        env.step(np.ones(2, dtype=np.int64))


def test_close_twice_and_use_after_close() -> None:
    env = TorchVectorizedEnv(cartpole, 1, 2)
    env.reset()
    env.close()
    env.close()
    with pytest.raises(gym.error.ClosedEnvironmentError, match="close"):
        env.step(np.zeros(2, dtype=np.int64))


def test_torch_batches() -> None:
    torch = pytest.importorskip("torch")
    with TorchVectorizedEnv(cartpole, 1, 2) as env:
        first = env.reset_batch(seed=0)
        assert isinstance(first["obs"], torch.Tensor) and first["obs"].shape == (2, 4)
        out = env.step_batch(torch.zeros(2, dtype=torch.int64))
        assert set(out) == {"obs", "reward", "terminated", "truncated", "done", "info"}
        assert out["done"].dtype == torch.bool and out["reward"].dtype == torch.float32


def test_no_worker_outlives_the_interpreter() -> None:
    import subprocess
    import sys

    code = (
        "import gymnasium as gym\n"
        "from torchwm import TorchVectorizedEnv\n"
        "env = TorchVectorizedEnv(lambda: gym.make('CartPole-v1'), 2, 2)\n"
        "env.reset()\n"
        "print(' '.join(str(p.pid) for p in env._pool.processes))\n"  # exits without close()
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    pids = [int(p) for p in out.stdout.split()]
    assert len(pids) == 2
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(os.path.exists(f"/proc/{pid}") for pid in pids):
        time.sleep(0.1)
    assert not any(os.path.exists(f"/proc/{pid}") for pid in pids)

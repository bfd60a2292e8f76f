"""The envs of the process-vectorizer benchmarks, at module level so that any start method (spawn
included) can pickle their factories: CartPole, CartPole with numpy work in every step (a heavier
env, as a simulator written in numpy is), and an env that burns a fixed CPU time per step."""

from __future__ import annotations

import time
from typing import Any

import gymnasium as gym
import numpy as np

# Elements of the numpy work in NumpyCartPole's step: about 0.2 ms on a 2020s x86-64 core.
NUMPY_WORK = 20_000


def cartpole() -> gym.Env:
    """gymnasium's CartPole-v1, the cheap case: the vectorizer's own cost dominates."""
    return gym.make("CartPole-v1")


class NumpyCartPole(gym.Wrapper):
    """CartPole whose every step (and reset) also runs ``work`` elements of numpy ufuncs (sin, a
    product, a square root, a sum) over an array of its own; the result feeds nothing, the time is
    the point. Its cost per step is fixed work, not fixed time: ``step_cost_ms`` measures it here."""

    def __init__(self, work: int = NUMPY_WORK) -> None:
        super().__init__(gym.make("CartPole-v1"))
        self._inputs = np.linspace(0.0, 1.0, max(1, int(work)))
        self._scratch = np.empty_like(self._inputs)

    def _numpy_work(self) -> float:
        np.sin(self._inputs, out=self._scratch)
        np.multiply(self._scratch, self._scratch, out=self._scratch)
        np.sqrt(self._scratch, out=self._scratch)
        return float(self._scratch.sum())

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        self._numpy_work()
        return self.env.reset(**kwargs)

    def step(self, action: Any) -> tuple[Any, Any, bool, bool, dict[str, Any]]:
        self._numpy_work()
        return self.env.step(action)


def numpy_cartpole() -> gym.Env:
    """A :class:`NumpyCartPole` with the default work (about 0.2 ms of numpy per step)."""
    return NumpyCartPole()


class BusyEnv(gym.Env):
    """An env whose step burns about ``cost_ms`` of CPU (a stand-in for a physics simulator)."""

    observation_space = gym.spaces.Box(-1.0, 1.0, (8,), np.float32)
    action_space = gym.spaces.Discrete(2)

    def __init__(self, cost_ms: float = 1.0) -> None:
        self.cost_s = cost_ms / 1000.0

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        self.t = 0
        return np.zeros(8, np.float32), {}

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict]:
        end = time.thread_time() + self.cost_s
        while time.thread_time() < end:
            pass
        self.t += 1
        return np.full(8, (self.t % 100) / 100.0, np.float32), 1.0, False, self.t >= 1000, {}


def busy_1ms() -> gym.Env:
    """A :class:`BusyEnv` burning 1 ms of CPU per step."""
    return BusyEnv(1.0)


def step_cost_ms(factory: Any, steps: int = 300, seed: int = 0) -> float:
    """Milliseconds of CPU per step of one env of ``factory``, alone in this thread (resets included):
    CPU time, so that other load on the machine does not count. The actions are drawn before the
    timing (a vectorizer's worker is handed its actions, it does not sample them)."""
    env = factory()
    try:
        env.reset(seed=seed)
        env.action_space.seed(seed)
        actions = [env.action_space.sample() for _ in range(steps)]
        start = time.thread_time()
        for action in actions:
            _, _, terminated, truncated, _ = env.step(action)
            if terminated or truncated:
                env.reset()
        return (time.thread_time() - start) * 1000.0 / steps
    finally:
        env.close()


class NoopEnv(gym.Env):
    """An env whose step does nothing: what a vectorizer costs per batch, with no env time to hide it."""

    observation_space = gym.spaces.Box(-1.0, 1.0, (4,), np.float32)
    action_space = gym.spaces.Discrete(2)

    def __init__(self) -> None:
        self._observation = np.zeros(4, np.float32)

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[np.ndarray, dict]:
        return self._observation, {}

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict]:
        return self._observation, 1.0, False, False, {}

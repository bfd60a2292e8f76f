"""Process-vectorizer throughput, side by side in one run: TorchVectorizedEnv against gymnasium's
SyncVectorEnv and AsyncVectorEnv on a cheap env (CartPole) and an expensive one (~1 ms of CPU/step)."""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from functools import partial
from typing import Any

import gymnasium as gym
import numpy as np

from torchwm.benchmarks.timing import steps_per_second
from torchwm.process import TorchVectorizedEnv


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


def _cartpole() -> gym.Env:
    return gym.make("CartPole-v1")


def _measure(make: Callable[[], Any], num_envs: int, seconds: float) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        env = make()
    try:
        return steps_per_second(env, seconds, batch_size=num_envs, num_actions=2)
    finally:
        env.close()


def run_process_benchmarks(seconds: float = 2.0, rounds: int = 5) -> list[dict[str, Any]]:
    """Both cases of the process-vectorizer targets. Each case runs ``rounds`` rounds, every backend
    once per round (interleaved, so a change of load on the machine hits all of them alike), for
    ``seconds / rounds`` each. Rows carry the median steps/s and ``torchwm_x``: the median over
    rounds of TorchVectorizedEnv's rate over this backend's in the same round, with the range."""
    cases = [
        (
            "cartpole",
            [
                ("torchwm 2x16", lambda: TorchVectorizedEnv(_cartpole, 2, 16), 32),
                ("gym_sync", lambda: gym.vector.SyncVectorEnv([_cartpole] * 32), 32),
                ("gym_async", lambda: gym.vector.AsyncVectorEnv([_cartpole] * 8), 8),
            ],
        ),
        (
            "busy_1ms",
            [
                ("torchwm 2x4", lambda: TorchVectorizedEnv(partial(BusyEnv, 1.0), 2, 4), 8),
                ("gym_sync", lambda: gym.vector.SyncVectorEnv([partial(BusyEnv, 1.0)] * 8), 8),
                ("gym_async", lambda: gym.vector.AsyncVectorEnv([partial(BusyEnv, 1.0)] * 8), 8),
            ],
        ),
    ]
    rounds = max(1, int(rounds))
    per_run = max(0.5, seconds / rounds)
    rows = []
    for case, backends in cases:
        rates: list[list[float]] = [[] for _ in backends]
        for _ in range(rounds):
            for b, (_, make, n) in enumerate(backends):
                rates[b].append(_measure(make, n, per_run))
        for (name, _, n), backend_rates in zip(backends, rates):
            ratios = [ours / theirs for ours, theirs in zip(rates[0], backend_rates)]
            spread = f" ({min(ratios):.2f}-{max(ratios):.2f})" if rounds > 1 else ""
            rows.append(
                {
                    "case": case,
                    "backend": name,
                    "num_envs": n,
                    "steps_per_s": round(float(np.median(backend_rates))),
                    "torchwm_x": f"{float(np.median(ratios)):.2f}{spread}",
                    "ratios": [round(r, 3) for r in ratios],
                }
            )
    return rows

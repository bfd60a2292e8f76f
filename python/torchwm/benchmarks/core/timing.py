"""Timing a vector env's step loop: the one measurement every backend in the benchmarks shares."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np


def steps_per_second(
    env: Any,
    seconds: float,
    *,
    batch_size: int,
    num_actions: int,
    warmup_steps: int = 5,
    seed: int = 0,
    policy: Callable[[np.ndarray], None] | None = None,
) -> float:
    """Env steps per second (one env stepping once counts one) of ``env.step`` with random actions.

    ``policy`` is called with the last observations before each step, to stand for the agent's own
    work (as a real training loop would). Actions are drawn ahead of time so their cost is not counted. For an async torchwm env
    (``batch_size < num_envs``) ``step`` is ``send`` + ``recv``, so the policy runs while the envs
    not in the batch keep stepping.
    """
    rng = np.random.default_rng(seed)
    actions = rng.integers(0, num_actions, size=(256, batch_size), dtype=np.int64)
    obs, _ = env.reset(seed=seed)
    for i in range(warmup_steps):
        obs = env.step(actions[i % 256])[0]
    steps = 0
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        if policy is not None:
            policy(obs)
        obs = env.step(actions[steps % 256])[0]
        steps += 1
        now = time.perf_counter()
        if now >= deadline:
            return steps * batch_size / (now - start)

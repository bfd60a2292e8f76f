"""The timed loop every process-vectorizer measurement shares (the process suite's and ``autotune``'s):
a backend's :class:`~torchwm.benchmarks.process.steppers.Stepper` stepped for a while on random actions
drawn ahead, the caller's stand-in policy before each batch, giving env steps per second and what a
batch cost (:class:`~torchwm.benchmarks.core.batch_cost.BatchCost`: wall time, the caller's CPU time and
its workers')."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from gymnasium import spaces

from torchwm.benchmarks.core.batch_cost import BatchCost
from torchwm.benchmarks.core.cpu_time import CpuSnapshot
from torchwm.benchmarks.process.shapes import Shape
from torchwm.benchmarks.process.steppers import Stepper, open_stepper

__all__ = ["ACTION_BATCHES", "Sample", "measure", "measure_sample", "random_actions", "time_stepper"]

ACTION_BATCHES = 64  # pre-drawn batches of random actions, cycled through


def random_actions(space: spaces.Space, batch_size: int, seed: int, dtype: Any) -> list[Any]:
    """``ACTION_BATCHES`` batches of ``batch_size`` random actions from ``space`` (drawn ahead of the
    timing), as arrays of ``dtype``: each backend gets its own batched action space's dtype, what its
    ``action_space.sample()`` gives a caller (int64 for gymnasium's and torchwm's Discrete, int32 for
    PufferLib's), so that none pays a conversion the others do not."""
    space.seed(seed)
    return [np.array([space.sample() for _ in range(batch_size)], dtype=dtype) for _ in range(ACTION_BATCHES)]


@dataclass(frozen=True)
class Sample:
    """One timed run: env steps per second and what a batch cost."""

    steps_per_s: float
    cost: BatchCost


def _timed_caller(caller: Callable[[], None]) -> tuple[Callable[[], None], list[float]]:
    """``caller`` wrapped to add the CPU time it burns to the returned one-element list: the policy's
    CPU is the caller's own work, left out of what a batch costs it."""
    burned = [0.0]

    def timed() -> None:
        start = time.thread_time()
        caller()
        burned[0] += time.thread_time() - start

    return timed, burned


def time_stepper(
    stepper: Stepper,
    seconds: float,
    caller: Callable[[], None] | None = None,
    *,
    warmup_steps: int = 5,
    seed: int = 0,
) -> Sample:
    """Env steps per second (one env stepping once counts one) over ``seconds`` of batches of random
    actions, the ``caller``'s work (its policy) before each batch's step, all counted in the time; and
    each batch's wall and CPU time (the caller's policy CPU left out)."""
    batch = stepper.shape.batch_size
    actions = random_actions(stepper.single_action_space, batch, seed, stepper.env.action_space.dtype)
    stepper.reset(seed)
    for i in range(warmup_steps):
        stepper.step(actions[i % ACTION_BATCHES])
    timed, burned = _timed_caller(caller) if caller is not None else (None, [0.0])
    pids = stepper.worker_pids()
    steps = 0
    before = CpuSnapshot.take(pids)
    deadline = before.wall_s + seconds
    while True:
        if timed is not None:
            timed()
        stepper.step(actions[steps % ACTION_BATCHES])
        steps += 1
        if time.perf_counter() >= deadline:
            after = CpuSnapshot.take(pids, clocks_first=True)
            cost = BatchCost.between(before, after, steps, burned[0])
            return Sample(steps * batch / (after.wall_s - before.wall_s), cost)


def measure_sample(
    backend: str,
    factory: Callable[[], Any],
    shape: Shape,
    seconds: float,
    caller: Callable[[], None] | None = None,
) -> Sample:
    """Opens ``backend`` for ``shape`` (not timed), times it for ``seconds`` and closes it."""
    stepper = open_stepper(backend, factory, shape)
    try:
        return time_stepper(stepper, seconds, caller)
    finally:
        stepper.close()


def measure(
    backend: str,
    factory: Callable[[], Any],
    shape: Shape,
    seconds: float,
    caller: Callable[[], None] | None = None,
) -> float:
    """:func:`measure_sample`'s env steps per second."""
    return measure_sample(backend, factory, shape, seconds, caller).steps_per_s

"""The multi-agent backends behind one small interface, and their timed loop: rows (agent steps) per
second over random actions drawn ahead, and the CPU time of all the backend's processes per row.

- ``torchwm``: ``TorchVectorizedEnv(factory, num_workers, envs_per_worker)`` (agents as rows).
- ``supersuit``: ``concat_vec_envs_v1(pettingzoo_env_to_vec_env_v1(env), num_envs, num_cpus=num_workers)``,
  SuperSuit's processes over the same envs (one worker: SuperSuit steps the envs in this process).
- ``pufferlib``: ``pufferlib.vector.Multiprocessing`` over ``pufferlib.emulation.PettingZooPufferEnv``,
  only where ``pufferlib.vector`` imports (skipped otherwise, with the reason, as in the CartPole case).

Pool mode (torchwm, PufferLib): a batch of the envs of the first ``pool`` workers to answer.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np

from torchwm.benchmarks.core.cpu_time import tree_cpu_seconds
from torchwm.benchmarks.core.unavailable import Unavailable, pufferlib_missing
from torchwm.benchmarks.multi_agent.cases import MA_CASES, agent_count, pool_sizes

__all__ = ["MA_BACKENDS", "POOL_BACKENDS", "Stepper", "measure", "rate"]

MA_BACKENDS = ("torchwm", "supersuit", "pufferlib")
POOL_BACKENDS = ("torchwm", "pufferlib")  # the backends with a pool mode (a batch of the first workers ready)


class Stepper:
    """One backend: ``reset(seed)``, ``step(actions)`` over a batch's rows, ``close()``; ``rows`` (of a
    batch: all of them, or in pool mode those of the first ``pool`` workers to answer), ``space``."""

    def __init__(self, backend: str, factory: Callable[[], Any], workers: int, envs: int, pool: int = 0) -> None:
        if pool and (backend not in POOL_BACKENDS or pool not in pool_sizes(workers)):
            raise ValueError(
                f"pool mode is for {POOL_BACKENDS}, a batch of {pool_sizes(workers) or 'no'} of {workers} workers, "
                f"got {backend!r} with {pool}"
            )
        agents = agent_count(factory)
        self.env = _open(backend, factory, workers, envs, agents, pool)
        self.backend = backend
        self.rows = (pool or workers) * envs * agents
        self.space = self.env.single_action_space if backend != "supersuit" else self.env.action_space

    def reset(self, seed: int) -> None:
        if self.backend == "pufferlib":
            self.env.async_reset(seed)
            self.env.recv()
        else:
            self.env.reset(seed=seed)

    def step(self, actions: np.ndarray) -> None:
        if self.backend == "pufferlib":
            self.env.send(actions)
            self.env.recv()
        else:
            self.env.step(actions)

    def close(self) -> None:
        self.env.close()
        # PufferLib's close() terminates its workers without waiting: wait, so that none still runs
        # while the next backend is measured.
        for process in getattr(self.env, "processes", []) if self.backend == "pufferlib" else []:
            process.join(timeout=10)


def _open(backend: str, factory: Callable[[], Any], workers: int, envs: int, agents: int, pool: int) -> Any:
    """``backend`` over ``workers`` x ``envs`` envs; ``pool``: the envs of that many workers per batch,
    the first to answer (torchwm's ``batch_size`` counts rows, PufferLib's envs); 0: sync mode."""
    if backend == "torchwm":
        from torchwm.process import TorchVectorizedEnv

        return TorchVectorizedEnv(factory, workers, envs, batch_size=pool * envs * agents if pool else None)
    if backend == "supersuit":
        try:
            import supersuit
        except ImportError as error:
            raise Unavailable(f"supersuit not importable here ({error})") from None
        base = supersuit.pettingzoo_env_to_vec_env_v1(factory())
        return supersuit.concat_vec_envs_v1(base, workers * envs, num_cpus=workers, base_class="gymnasium")
    if backend == "pufferlib":
        missing = pufferlib_missing()
        if missing:
            raise Unavailable(missing)
        import pufferlib.emulation
        import pufferlib.vector

        creator = partial(pufferlib.emulation.PettingZooPufferEnv, env_creator=factory)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return pufferlib.vector.make(
                creator,
                backend=pufferlib.vector.Multiprocessing,
                num_envs=workers * envs,
                num_workers=workers,
                batch_size=(pool or workers) * envs,
                overwork=True,  # it refuses more workers than cores otherwise: the grid goes to 2 x cores
            )
    raise ValueError(f"backend must be one of {MA_BACKENDS}, got {backend!r}")


def rate(stepper: Stepper, seconds: float, seed: int = 0) -> tuple[float, float | None]:
    """Rows per second over ``seconds`` of random actions (drawn ahead of the timing), and the CPU
    milliseconds all the backend's processes spent per row (None without psutil)."""
    stepper.space.seed(seed)
    kind = np.dtype(stepper.space.dtype).kind
    dtype = stepper.space.dtype if kind == "f" else np.int32 if stepper.backend == "pufferlib" else np.int64
    batches = [np.array([stepper.space.sample() for _ in range(stepper.rows)], dtype) for _ in range(16)]
    stepper.reset(seed)
    for i in range(5):
        stepper.step(batches[i % 16])
    cpu = tree_cpu_seconds()
    steps, start = 0, time.perf_counter()
    while (now := time.perf_counter()) < start + seconds:
        stepper.step(batches[steps % 16])
        steps += 1
    rows = steps * stepper.rows
    after = tree_cpu_seconds()
    return rows / (now - start), None if cpu is None or after is None else (after - cpu) * 1e3 / rows


def measure(
    backend: str, case: str, workers: int, envs: int, seconds: float, pool: int = 0
) -> tuple[float, float | None]:
    """Opens ``backend`` over ``case``'s envs, ``workers`` x ``envs`` (``pool``: workers per batch; 0:
    sync mode), times it for ``seconds`` (:func:`rate`: rows per second, CPU ms per row) and closes it."""
    stepper = Stepper(backend, MA_CASES[case][0], workers, envs, pool)
    try:
        return rate(stepper, seconds)
    finally:
        stepper.close()

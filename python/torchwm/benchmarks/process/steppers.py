"""The process-vectorizer benchmarks' backends behind one small interface.

A backend is opened for a :class:`~torchwm.benchmarks.process.shapes.Shape` (workers x envs per
worker, and the batch one ``send``/``recv`` returns: all envs, or fewer in pool mode) and gives a
:class:`Stepper`: ``reset``, ``step`` (a whole batch: ``step`` in sync mode, ``send`` + ``recv`` in
pool mode), ``close``, and the processes that step its envs (``worker_pids``, for their CPU time).

- ``torchwm``: :class:`torchwm.TorchVectorizedEnv`; pool mode is its ``batch_size=`` keyword.
- ``pufferlib``: ``pufferlib.vector.Multiprocessing`` over ``pufferlib.emulation.GymnasiumPufferEnv``
  (optional: only where ``import pufferlib.vector`` works, see ``scripts/bench_env.sh``), with its own
  defaults (zero-copy contiguous batches, ``sync_traj``: batches come in worker order) and
  ``overwork=True`` so that it may run more workers than cores, as the sweep asks.
- ``pufferlib_async`` (opt-in, pool mode only): the same with ``zero_copy=False, sync_traj=False``, its
  "full async" pool that returns the first ready workers, as torchwm's pool mode and EnvPool do.
- ``gym_sync`` / ``gym_async``: gymnasium's ``SyncVectorEnv`` / ``AsyncVectorEnv`` over all the envs
  (one process per env for Async); no pool mode.

A backend that cannot run here raises :class:`~torchwm.benchmarks.core.unavailable.Unavailable` with
the reason, which the reports show.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from functools import partial
from typing import Any

from gymnasium import spaces

from torchwm.benchmarks.core.unavailable import Unavailable, pufferlib_missing
from torchwm.benchmarks.process.shapes import Shape

__all__ = ["BACKENDS", "DEFAULT_BACKENDS", "POOL_BACKENDS", "POOL_ONLY_BACKENDS", "Stepper", "open_stepper"]

BACKENDS = ("torchwm", "pufferlib", "pufferlib_async", "gym_sync", "gym_async")
DEFAULT_BACKENDS = ("torchwm", "pufferlib", "gym_sync", "gym_async")
POOL_BACKENDS = ("torchwm", "pufferlib", "pufferlib_async")
POOL_ONLY_BACKENDS = ("pufferlib_async",)  # the same as pufferlib in sync mode


class Stepper:
    """One backend opened for one shape. ``step`` steps a whole batch and returns its observations."""

    single_action_space: spaces.Space
    env: Any  # the backend's vector env: its batched ``action_space`` gives the actions' dtype

    def __init__(self, shape: Shape) -> None:
        self.shape = shape

    def reset(self, seed: int) -> Any:
        raise NotImplementedError

    def step(self, actions: Any) -> Any:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    def worker_pids(self) -> list[int]:
        """The processes that step the envs besides the caller's (none for an in-process vectorizer)."""
        return [process.pid for process in self.env.processes]


class TorchwmStepper(Stepper):
    def __init__(self, factory: Callable[[], Any], shape: Shape) -> None:
        from torchwm.process import TorchVectorizedEnv

        super().__init__(shape)
        pool: dict[str, Any] = {"batch_size": shape.batch_size} if shape.pool else {}
        self.env: Any = TorchVectorizedEnv(factory, shape.num_workers, shape.envs_per_worker, **pool)
        self.single_action_space = self.env.single_action_space

    def reset(self, seed: int) -> Any:
        return self.env.reset(seed=seed)[0]

    def step(self, actions: Any) -> Any:
        if self.shape.pool:  # actions for the envs of the last batch (info["env_id"]), then the next batch
            self.env.send(actions)
            return self.env.recv()[0]
        return self.env.step(actions)[0]

    def close(self) -> None:
        self.env.close()

    def worker_pids(self) -> list[int]:
        return list(self.env.worker_pids)


class PufferStepper(Stepper):
    def __init__(self, factory: Callable[[], Any], shape: Shape, first_ready: bool = False) -> None:
        super().__init__(shape)
        missing = pufferlib_missing()
        if missing:
            raise Unavailable(missing)
        import pufferlib.emulation
        import pufferlib.vector

        if first_ready and not shape.pool:
            raise Unavailable("pufferlib_async is PufferLib's pool mode: measured in pool mode only")
        creator = partial(pufferlib.emulation.GymnasiumPufferEnv, env_creator=factory)
        full_async = {"zero_copy": False, "sync_traj": False} if first_ready else {}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self.env: Any = pufferlib.vector.make(
                creator,
                backend=pufferlib.vector.Multiprocessing,
                num_envs=shape.num_envs,
                num_workers=shape.num_workers,
                batch_size=shape.batch_size,
                overwork=True,
                **full_async,
            )
        self.single_action_space = self.env.single_action_space

    def reset(self, seed: int) -> Any:
        self.env.async_reset(seed)
        return self.env.recv()[0]

    def step(self, actions: Any) -> Any:
        self.env.send(actions)
        return self.env.recv()[0]

    def close(self) -> None:
        # Multiprocessing.close() terminates its workers without waiting: wait, so that none still
        # spins while the next backend is measured.
        self.env.close()
        for process in self.env.processes:
            process.join(timeout=10)


class GymStepper(Stepper):
    def __init__(self, factory: Callable[[], Any], shape: Shape, vector: str) -> None:
        import gymnasium as gym

        super().__init__(shape)
        if shape.pool:
            raise Unavailable(f"gymnasium's {vector} vector env has no pool mode")
        make = gym.vector.SyncVectorEnv if vector == "sync" else gym.vector.AsyncVectorEnv
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self.env: Any = make([factory] * shape.num_envs)
        self.single_action_space = self.env.single_action_space

    def reset(self, seed: int) -> Any:
        return self.env.reset(seed=seed)[0]

    def step(self, actions: Any) -> Any:
        return self.env.step(actions)[0]

    def close(self) -> None:
        self.env.close()

    def worker_pids(self) -> list[int]:
        return [process.pid for process in getattr(self.env, "processes", [])]  # SyncVectorEnv: none


def open_stepper(backend: str, factory: Callable[[], Any], shape: Shape) -> Stepper:
    """``backend`` running ``factory``'s envs in ``shape``; :class:`Unavailable` where it cannot here."""
    if not shape.valid():
        raise ValueError(f"batch_size {shape.batch_size} is not whole workers of {shape.workers_envs}")
    if backend == "torchwm":
        return TorchwmStepper(factory, shape)
    if backend in ("pufferlib", "pufferlib_async"):
        return PufferStepper(factory, shape, first_ready=backend == "pufferlib_async")
    if backend in ("gym_sync", "gym_async"):
        return GymStepper(factory, shape, backend.removeprefix("gym_"))
    raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}")

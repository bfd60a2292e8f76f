"""The process-vectorizer benchmarks' backends behind one small interface, and the timed loop they share.

A backend is opened for a :class:`Shape` (workers x envs per worker, and the batch one ``send``/``recv``
returns: all envs, or fewer in pool mode) and gives a :class:`Stepper`: ``reset``, ``step`` (a whole
batch: ``step`` in sync mode, ``send`` + ``recv`` in pool mode), ``close``.

- ``torchwm``: :class:`torchwm.TorchVectorizedEnv`; pool mode is its ``batch_size=`` keyword.
- ``pufferlib``: ``pufferlib.vector.Multiprocessing`` over ``pufferlib.emulation.GymnasiumPufferEnv``
  (optional: only where ``import pufferlib.vector`` works, see ``scripts/bench_env.sh``), with its own
  defaults (zero-copy contiguous batches, ``sync_traj``: batches come in worker order) and
  ``overwork=True`` so that it may run more workers than cores, as the sweep asks.
- ``pufferlib_async`` (opt-in, pool mode only): the same with ``zero_copy=False, sync_traj=False``, its
  "full async" pool that returns the first ready workers, as torchwm's pool mode and EnvPool do.
- ``gym_sync`` / ``gym_async``: gymnasium's ``SyncVectorEnv`` / ``AsyncVectorEnv`` over all the envs
  (one process per env for Async); no pool mode.

A backend that cannot run here raises :class:`Unavailable` with the reason, which the reports show.
Each timed run also gives what a batch cost (:class:`~torchwm.benchmarks.core.batch_cost.BatchCost`): wall
time, the caller's CPU time and its workers' (``Stepper.worker_pids``).
"""

from __future__ import annotations

import importlib
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np
from gymnasium import spaces

from torchwm.benchmarks.core.batch_cost import BatchCost
from torchwm.benchmarks.core.cpu_time import CpuSnapshot

BACKENDS = ("torchwm", "pufferlib", "pufferlib_async", "gym_sync", "gym_async")
DEFAULT_BACKENDS = ("torchwm", "pufferlib", "gym_sync", "gym_async")
POOL_BACKENDS = ("torchwm", "pufferlib", "pufferlib_async")
POOL_ONLY_BACKENDS = ("pufferlib_async",)  # the same as pufferlib in sync mode
CALLER_KINDS = ("sleep", "burn")
ACTION_BATCHES = 64  # pre-drawn batches of random actions, cycled through


class Unavailable(RuntimeError):
    """This backend (or this mode of it) cannot run here; the message says why."""


@dataclass(frozen=True)
class Shape:
    """``num_workers`` processes x ``envs_per_worker`` envs; ``batch_size`` envs per step call."""

    num_workers: int
    envs_per_worker: int
    batch_size: int

    @property
    def num_envs(self) -> int:
        return self.num_workers * self.envs_per_worker

    @property
    def pool(self) -> bool:
        return self.batch_size < self.num_envs

    @property
    def mode(self) -> str:
        return "pool" if self.pool else "sync"

    @property
    def workers_envs(self) -> str:
        return f"{self.num_workers}x{self.envs_per_worker}"

    def valid(self) -> bool:
        """A batch is whole workers, at least one, at most all of them."""
        return 0 < self.batch_size <= self.num_envs and self.batch_size % self.envs_per_worker == 0


def sync_and_pool(num_workers: int, envs_per_worker: int) -> list[Shape]:
    """The shape in sync mode, and in pool mode with half the envs per batch where that is whole workers."""
    shapes = [Shape(num_workers, envs_per_worker, num_workers * envs_per_worker)]
    if num_workers > 1 and num_workers % 2 == 0:
        shapes.append(Shape(num_workers, envs_per_worker, num_workers * envs_per_worker // 2))
    return shapes


def parse_workers_envs(text: str) -> list[tuple[int, int]]:
    """``"1x32,2x16,4x8"`` -> ``[(1, 32), (2, 16), (4, 8)]``."""
    pairs = []
    for item in text.replace(" ", "").split(","):
        workers, sep, envs = item.partition("x")
        if not sep or not workers.isdigit() or not envs.isdigit() or int(workers) < 1 or int(envs) < 1:
            raise ValueError(f"expected WORKERSxENVS items like 2x16, got {item!r}")
        pairs.append((int(workers), int(envs)))
    return pairs


def pufferlib_missing() -> str | None:
    """None where ``pufferlib.vector`` imports, else why not (its import pulls in torch: seconds)."""
    try:
        importlib.import_module("pufferlib.vector")
        importlib.import_module("pufferlib.emulation")
    except Exception as error:  # an ImportError, or a broken install of its dependencies
        return f"pufferlib not importable here ({type(error).__name__}: {error}); see scripts/bench_env.sh"
    return None


def caller_work(kind: str, ms: float) -> Callable[[], None] | None:
    """The caller's time per batch, standing for its policy: a sleep (a GPU forward pass leaves the
    CPU to the envs) or a busy loop burning ``ms`` of this thread's CPU time (a CPU forward pass
    competes with them)."""
    if kind not in CALLER_KINDS:
        raise ValueError(f"caller work must be one of {CALLER_KINDS}, got {kind!r}")
    if ms <= 0:
        return None
    seconds = ms / 1000.0
    if kind == "sleep":
        return partial(time.sleep, seconds)

    def burn() -> None:  # CPU time, as a forward pass needs: descheduled, it takes longer
        end = time.thread_time() + seconds
        while time.thread_time() < end:
            pass

    return burn


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

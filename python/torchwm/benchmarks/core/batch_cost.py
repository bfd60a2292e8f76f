"""What one batch costs, from two :class:`~torchwm.benchmarks.core.cpu_time.CpuSnapshot` around a timed loop:
wall time, the caller's (parent's) CPU time and the workers' CPU time, in microseconds per batch."""

from __future__ import annotations

from dataclasses import dataclass

from torchwm.benchmarks.core.cpu_time import CpuSnapshot

__all__ = ["BatchCost", "net_of_envs"]


@dataclass(frozen=True)
class BatchCost:
    """Microseconds per batch. ``parent_cpu_us``: the caller's process, its own policy work left out
    (the vectorizer's send, wait and receive; for an in-process vectorizer, the envs' steps too).
    ``workers_cpu_us``: all worker processes together (their envs' steps, transport and waiting), None
    where there are none or their CPU time cannot be read here."""

    wall_us: float
    parent_cpu_us: float
    workers_cpu_us: float | None

    @classmethod
    def between(cls, before: CpuSnapshot, after: CpuSnapshot, batches: int, caller_cpu_s: float = 0.0) -> BatchCost:
        """The cost per batch of ``batches`` batches timed between ``before`` and ``after``;
        ``caller_cpu_s``, the CPU time the caller's policy burned in that span, is not the batches'."""
        if batches < 1:
            raise ValueError(f"batches must be positive, got {batches}")
        scale = 1e6 / batches
        workers = None
        if before.workers_cpu_s is not None and after.workers_cpu_s is not None:
            workers = (after.workers_cpu_s - before.workers_cpu_s) * scale
        parent = max(0.0, after.parent_cpu_s - before.parent_cpu_s - caller_cpu_s) * scale
        return cls((after.wall_s - before.wall_s) * scale, parent, workers)


def net_of_envs(worker_cpu_us: float, envs_per_worker: int, env_step_cpu_us: float) -> float:
    """A worker's CPU per batch beyond its envs' own steps (``envs_per_worker`` x one step's CPU time,
    measured alone): the transport, the step loop and any spinning or polling while it waits."""
    return worker_cpu_us - envs_per_worker * env_step_cpu_us

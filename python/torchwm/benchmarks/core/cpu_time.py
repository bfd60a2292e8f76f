"""CPU time of other processes (a vectorizer's workers), for the benchmarks' per-batch CPU figures.

One reading per process id, :func:`pid_cpu_seconds` (or of this process and its live children,
:func:`tree_cpu_seconds`), through the platform seam
(``_platform.process_cpu_seconds``: ``/proc`` on Linux, psutil in the portable column, where the
figures are left out if psutil is not installed). CPU time is what a busy machine does not blur: a
process descheduled for a while accrues none.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass

from torchwm import _platform

__all__ = ["CpuSnapshot", "cpu_source", "pid_cpu_seconds", "tree_cpu_seconds"]


@functools.cache
def cpu_source() -> str | None:
    """Where other processes' CPU time is read from here: ``"/proc"``, ``"psutil"``, or None (nowhere)."""
    if not _platform.PORTABLE:
        return "/proc"
    return "psutil" if importlib.util.find_spec("psutil") is not None else None


def pid_cpu_seconds(pid: int) -> float | None:
    """User + system CPU seconds process ``pid`` has used so far; None where it cannot be read here."""
    return None if cpu_source() is None else _platform.process_cpu_seconds(pid)


def tree_cpu_seconds() -> float | None:
    """User + system CPU seconds of this process and its live children (the workers); None where other
    processes' CPU time cannot be read here (``cpu_source``)."""
    if cpu_source() is None:
        return None
    total = 0.0
    for pid in [os.getpid(), *_platform.child_pids()]:
        try:
            total += _platform.process_cpu_seconds(pid)
        except Exception:  # exited meanwhile (an OSError from /proc, psutil's NoSuchProcess)
            pass
    return total


@dataclass(frozen=True)
class CpuSnapshot:
    """The clocks of one instant: wall time, this process's CPU time (all its threads) and the summed
    CPU time of ``pids`` (None where unreadable here, or where there are no such processes)."""

    wall_s: float
    parent_cpu_s: float
    workers_cpu_s: float | None

    @classmethod
    def take(cls, pids: Sequence[int], *, clocks_first: bool = False) -> CpuSnapshot:
        """``clocks_first``: read this process's clocks before the workers' (at the end of a timed
        span), so that reading ``/proc`` is never counted in the span's wall or CPU time."""
        wall, parent = (time.perf_counter(), time.process_time()) if clocks_first else (0.0, 0.0)
        readings = [pid_cpu_seconds(pid) for pid in pids]
        if not clocks_first:
            wall, parent = time.perf_counter(), time.process_time()
        workers = None if not readings or None in readings else sum(r for r in readings if r is not None)
        return cls(wall, parent, workers)

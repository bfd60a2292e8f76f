"""CPU time of other processes (a vectorizer's workers), for the benchmarks' per-batch CPU figures.

One reading per process id, in one function, :func:`pid_cpu_seconds`: from ``/proc/<pid>/stat`` on Linux
(no dependency), else from psutil where it is importable (macOS, Windows); elsewhere the figures are
left out. CPU time is what a busy machine does not blur: a process descheduled for a while accrues none.
"""

from __future__ import annotations

import importlib
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

__all__ = ["CpuSnapshot", "cpu_source", "pid_cpu_seconds"]


def _proc_cpu_seconds(pid: int) -> float:
    """User + system CPU time of ``pid`` from ``/proc/<pid>/stat`` (fields 14 and 15)."""
    with open(f"/proc/{pid}/stat") as stat:
        # The command name (field 2) may hold spaces and parentheses: split after its last ")".
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _psutil_cpu_seconds(pid: int) -> float:
    """The portable twin of :func:`_proc_cpu_seconds`, through psutil (not a dependency, and untyped:
    imported by name)."""
    times = importlib.import_module("psutil").Process(pid).cpu_times()
    return float(times.user + times.system)


def _pick_reader() -> tuple[str, Callable[[int], float]] | None:
    if os.path.exists(f"/proc/{os.getpid()}/stat"):
        return "/proc", _proc_cpu_seconds
    try:
        importlib.import_module("psutil")
    except ImportError:
        return None
    return "psutil", _psutil_cpu_seconds


_READER = _pick_reader()


def cpu_source() -> str | None:
    """Where other processes' CPU time is read from here: ``"/proc"``, ``"psutil"``, or None (nowhere)."""
    return _READER[0] if _READER else None


def pid_cpu_seconds(pid: int) -> float | None:
    """User + system CPU seconds process ``pid`` has used so far; None where it cannot be read here."""
    return _READER[1](pid) if _READER else None


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

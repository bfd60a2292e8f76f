"""The doorbells of a process vectorizer: parent and workers signal commands and results through
atomic words in a shared memfd (``torchwm._core.Doorbells``), spinning on them and then polling them
(yielding the core between checks) while that pays, then sleeping on a futex. A step through shared
memory costs no pipe message and, while the other side is awake, no system call.

How long each side spins and polls before it sleeps is decided here, from the cores this process may
use: both only pay when every process that waits has a core of its own. Within that cap each waiter
adapts its spin to how long its recent waits took (``torchwm._core``'s spin budget: zero on a busy
machine or behind a slow policy).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from multiprocessing import reduction
from typing import Any

from torchwm import _core

__all__ = ["DoorbellMemory", "Patience", "patience_for"]

# How long a waiter with a core of its own may spin (adaptive, up to this) and then polls, and how long
# a worker sharing cores polls.
SPIN_CAP_S = 1e-3
POLL_S = 1e-3
SHARED_POLL_S = 2e-4


@dataclass(frozen=True)
class Patience:
    """Seconds a waiter spins (at most: the spin adapts below it), then yields its core between checks,
    before it sleeps."""

    spin_s: float
    yield_s: float


def patience_for(num_workers: int, cores: int | None = None) -> tuple[Patience, Patience]:
    """``(parent, worker)`` patience for ``num_workers`` workers on ``cores`` cores (default: this
    process's). With a core for every worker and the parent, both spin for as long as their recent
    waits took (up to a millisecond; a wake-up costs tens of microseconds, more than a cheap env's
    step), then poll with ``sched_yield`` for up to a millisecond. A fixed spin would starve the process
    waited for whenever something else wants the cores (measured on a loaded 2-core machine: 2.9 ms a
    batch instead of 50 us); the adaptive one falls to zero there, and a yielding waiter gives its
    core away and still sees the doorbell within a microsecond when the core is free. With fewer
    cores, the parent sleeps at once (its core goes to a worker) and a worker polls briefly (the
    parent's next command follows its own, usually short, work)."""
    cores = cores if cores is not None else len(os.sched_getaffinity(0))
    if num_workers + 1 <= cores:
        return Patience(SPIN_CAP_S, POLL_S), Patience(SPIN_CAP_S, POLL_S)
    return Patience(0.0, 0.0), Patience(0.0, SHARED_POLL_S)


class DoorbellMemory:
    """The memfd behind ``num_workers`` workers' doorbells; pickles (a duplicated fd) to a worker
    started by spawn or forkserver, and is inherited by a forked one."""

    def __init__(self, num_workers: int, fd: int | None = None) -> None:
        self.num_workers = num_workers
        if fd is None:
            fd = os.memfd_create("torchwm-doorbells", os.MFD_CLOEXEC)
            try:
                os.ftruncate(fd, 4 * _core.Doorbells.words_needed(num_workers))
            except BaseException:
                os.close(fd)
                raise
        self.fd = fd
        self.bells = _core.Doorbells(fd, num_workers)

    def close(self) -> None:
        """Closes the fd (the mapping stays until this object goes); safe to call more than once."""
        fd, self.fd = self.fd, -1
        if fd >= 0:
            os.close(fd)

    def __reduce__(self) -> tuple[Any, ...]:
        if self.fd < 0:
            raise ValueError("the doorbell memory was closed: a worker can no longer be started with it")
        return _rebuild, (self.num_workers, reduction.DupFd(self.fd))


def _rebuild(num_workers: int, dup_fd: Any) -> DoorbellMemory:
    memory = DoorbellMemory(num_workers, dup_fd.detach())
    memory.close()  # mapped: the worker needs no fd
    return memory

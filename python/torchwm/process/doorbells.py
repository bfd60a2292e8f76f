"""The doorbells of a process vectorizer: parent and workers signal commands and results through
atomic words in shared memory (``torchwm._core.Doorbells``), spinning on them and then polling them
(yielding the core between checks) while that pays, then sleeping on a futex. A step through shared
memory costs no pipe message and, while the other side is awake, no system call.

How long each side may spin and poll before it sleeps is decided here, from the cores this process
may use: both only pay when every process that waits has a core of its own. Within that cap each
waiter adapts (``src/poll_budget.rs``): it spins about as long as its recent waits took, and stops
polling altogether for a while once it loses its core while polling (a busy machine).

Memory ordering (docs/memory_model.md): what one side writes into the shared buffers before its
doorbell call (the parent's actions before ``ring``, a worker's results before ``complete``) is
visible to the other side once its wait sees that doorbell, on every CPU (ARM included): the Rust
call stores the sequence word with ``Release``, after those writes in program order, and the waiter
loads it with ``Acquire`` before it returns, before the reads that follow it in program order.
Python adds no ordering of its own; it needs none beyond calling the doorbell after the writes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torchwm._core as _core
import torchwm._platform as _platform

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
    step), then poll with ``sched_yield`` for up to a millisecond. On a machine busy with other work
    the budget turns polling off (a spinning waiter starves the process it waits for, a yielding one
    hands its core to another job for a whole time slice; a sleeper is woken with priority). With
    fewer cores than processes, the parent sleeps at once (its core goes to a worker) and a worker
    polls briefly (the parent's next command follows its own, usually short, work)."""
    cores = cores if cores is not None else _platform.usable_cores()
    if num_workers + 1 <= cores:
        return Patience(SPIN_CAP_S, POLL_S), Patience(SPIN_CAP_S, POLL_S)
    return Patience(0.0, 0.0), Patience(0.0, SHARED_POLL_S)


class DoorbellMemory:
    """The shared file behind ``num_workers`` workers' doorbells (``_platform.shared_file``: on Windows a
    file mapping), and on Windows the events their sleepers wait on; pickles (duplicated descriptors or
    handles) to a worker started by spawn or forkserver, and is inherited by a forked one. The parent
    holds the file until :meth:`close`: on Windows, for a worker to be started with it."""

    def __init__(self, num_workers: int, fd: int | None = None, wake_handles: list[int] | None = None) -> None:
        self.num_workers = num_workers
        if fd is None:
            fd = _platform.shared_file("torchwm-doorbells", 4 * _core.Doorbells.words_needed(num_workers))
        try:
            self.bells = _core.Doorbells(fd, num_workers, wake_handles)
        except BaseException:
            _platform.close_shared_file(fd)
            raise
        self.fd = fd

    def close(self) -> None:
        """Closes the file (the mapping stays until this object goes); safe to call more than once."""
        fd, self.fd = self.fd, -1
        if fd >= 0:
            _platform.close_shared_file(fd)

    def __reduce__(self) -> tuple[Any, ...]:
        if self.fd < 0:
            raise ValueError("the doorbell memory was closed: a worker can no longer be started with it")
        wake = _platform.handles_for_child(self.bells.wake_handles())
        return _rebuild, (self.num_workers, _platform.shared_file_for_child(self.fd), wake)


def _rebuild(num_workers: int, file: Any, wake: list[Any]) -> DoorbellMemory:
    memory = DoorbellMemory(num_workers, file.detach(), [handle.detach() for handle in wake] or None)
    memory.close()  # mapped: the worker needs no descriptor
    return memory

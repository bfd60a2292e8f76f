"""Gymnasium's async calls over the worker processes (process/worker_processes.py): a command goes to
a set of idle workers, the call it makes is recorded as pending, and its replies are taken by
:meth:`WorkerPool.gather` (every busy worker) or :meth:`WorkerPool.gather_some` (the first to finish:
pool mode), or set aside and dropped (pool mode's calls and resets while steps are in flight).
"""

from __future__ import annotations

import time
from typing import Any

from gymnasium.vector.async_vector_env import AsyncState

from torchwm.process.protocol import Message
from torchwm.process.remote_errors import RemoteError, rebuild
from torchwm.process.worker_processes import WorkerProcesses

__all__ = ["WorkerPool"]


class WorkerPool(WorkerProcesses):
    """The worker processes (:class:`WorkerProcesses`) as gymnasium's async calls use them. Commands go
    to any set of idle workers; their replies, collected as they come (``ready``, oldest first), are taken
    by :meth:`gather` (every busy worker) or :meth:`gather_some` (the first to finish: pool mode).

    The pool records the async call awaited (``pending``, gymnasium's ``AsyncState``) as the command
    goes out and clears it as the replies are taken or dropped, in the statement that does so: a
    Ctrl-C, which Python raises between calls, finds it recorded exactly when the command is out and
    its replies are not taken. The env reads it for gymnasium's ``AlreadyPendingCallError`` and
    ``NoAsyncCallError``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        """Starts the workers (:class:`WorkerProcesses`'s arguments) with no call pending."""
        self.last_raised: list[RemoteError] = []  # those of the last gather that raised, in env order
        self.pending = AsyncState.DEFAULT  # the call whose replies are awaited (see the class's docstring)
        # Pool mode: the frames of a call sent once the steps in flight are done (defer), the replies set
        # aside while it runs (stash), and the workers of the batch gather_some took last, which the next
        # step goes to (none once drop_all dropped everything).
        self.deferred: list[bytes] | None = None
        self.stashed: tuple[list[int], list[Any], list[RemoteError]] | None = None
        self.held: list[int] = []
        super().__init__(*args, **kwargs)

    # ------------------------------------------------------------------------------------ commands

    def send(self, frames: list[bytes], workers: list[int] | None = None, *, pending: AsyncState) -> None:
        """Writes ``frames[i]`` to worker ``workers[i]`` (default: every worker), each announced by its
        doorbell; the call ``pending`` is then awaited (a deferred command is sent). A worker that is
        gone is reported (:meth:`crashed`), even one whose pipe a child of it holds open: a frame larger
        than the pipe's buffer would wait for it for ever. Interrupted half-way (Ctrl-C), the workers
        are out of step with each other: they are shut down and the interrupt goes on. A Ctrl-C raised
        once the last frame is all written (as its last write returns, or later) finds the command out
        and pending: it goes on with the workers busy with it, as in :meth:`step_shared`."""
        workers = list(range(len(self.channels))) if workers is None else workers
        count = min(len(workers), len(frames))
        # The frames begun, the last of them and the counts of its writes (write_frame stores each as
        # the write returns: a Ctrl-C raised then finds it).
        begun, data = 0, b""
        written: list[int] = []
        try:
            # Recorded before anything goes out: from here on, an interruption either finds the command
            # out or shuts the workers down (a closed pool awaits nothing).
            self.pending, self.deferred = pending, None
            for w, data in zip(workers, frames):
                begun, written = begun + 1, []
                self.busy[w] = True
                self.bells.ring([w], Message.FRAME)  # first: a frame larger than the pipe is read as written
                try:
                    self.channels[w].write(data, self.processes[w].is_alive, written)
                except OSError:  # BrokenPipeError included: the worker is gone
                    self.crashed(w)
        except BaseException as error:
            self._out_of_step(error, out=begun == count and sum(written) == len(data))
            raise

    def step_shared(self, workers: list[int], *, pending: AsyncState) -> None:
        """Rings ``workers``' doorbells for a step whose actions are in shared memory; the call ``pending``
        is then awaited. A Ctrl-C before the ring leaves the workers' flags out of step with them: they
        are shut down, as in :meth:`send`. One raised as the ring returns (``ring`` never checks for
        signals: Python raised it as the call returned) finds the step out and pending, and goes on with
        the workers busy with it."""
        rung = False
        try:
            self.pending = pending  # before anything goes out, as in send
            for w in workers:
                self.busy[w] = True
            rung = True  # before the call: a Ctrl-C out of it came as it returned, the step rung
            # The actions written into shared memory before this call are published by its Release
            # (each worker reads them after its wait's Acquire: process/doorbells.py).
            self.bells.ring(workers, Message.STEP_SHARED)
        except BaseException as error:
            self._out_of_step(error, out=rung)
            raise

    def gather(self, what: str, timeout: float | None) -> list[Any]:
        """Every worker's reply payload (None for ``STEP_DONE`` and for workers given no command), or
        ``multiprocessing.TimeoutError`` after ``timeout`` s (call again to keep waiting: the call stays
        pending). A worker's fatal error (``FAILED``) or death shuts every worker down and raises; a
        sub-env's exception (``RAISED``) is raised once every worker has answered (the highest env
        index's, as gymnasium raises the last it logs; ``last_raised`` lists them all in env order). Once
        the replies are taken, nothing is pending (a Ctrl-C raised from then on loses them, as gymnasium's)
        and those :meth:`stash` set aside are back."""
        self._collect(what, timeout, len(self.ready) + self.busy.count(True))
        # Taken and the call over in one statement with no call: no Ctrl-C is raised between the two.
        taken, self.ready, self.pending = self.ready, [], AsyncState.DEFAULT
        try:
            if len(taken) == len(self.channels):  # every worker answered (the common case): no lookups
                replies, self.replies = self.replies, [None] * len(taken)
                return self._take(taken, replies)
            chosen = set(taken)
            return self._take(taken, [self.replies[w] if w in chosen else None for w in range(len(self.channels))])
        finally:
            if self.stashed is not None:  # with no call: no signal is handled before they are back
                (self.ready, self.replies, self.raised), self.stashed = self.stashed, None

    def gather_some(self, what: str, timeout: float | None, count: int) -> tuple[list[int], list[Any]]:
        """The first ``count`` workers to answer (oldest reply first) and their replies; as :meth:`gather`.
        Once they are taken, ``held`` names them (the next step's workers, even if a Ctrl-C loses the
        replies) and nothing is pending."""
        self._collect(what, timeout, count)
        taken = self.ready[:count]
        # Taken, held and the call over in one statement with no call: no Ctrl-C is raised half-way.
        self.ready, self.held, self.pending = self.ready[count:], taken, AsyncState.DEFAULT
        return taken, self._take(taken, [self.replies[w] for w in taken])

    def drop_all(self, what: str, timeout: float | None, pending: AsyncState) -> None:
        """Waits for every command in flight and drops every reply not taken and the batch held (pool
        mode's reset); the call ``pending`` (the reset, sent next) is then under way, even if a Ctrl-C
        is raised before it goes out. After ``timeout`` s, ``multiprocessing.TimeoutError`` with nothing
        dropped (the replies collected so far wait with the others) and nothing else changed."""
        self._collect(what, timeout, len(self.ready) + self.busy.count(True))
        empty = [None] * len(self.channels)
        # One statement, no call in it: no Ctrl-C is raised half-way.
        self.ready, self.raised, self.replies, self.held, self.pending = [], [], empty, [], pending

    def stash(self, what: str, timeout: float | None) -> None:
        """Waits for every command in flight and sets aside the replies not taken (``stashed``), so that
        a command to every worker (a ``call`` in pool mode) can run; :meth:`gather` (or :meth:`drop_pending`)
        puts them back. After ``timeout`` s, ``multiprocessing.TimeoutError`` with nothing set aside (the
        replies collected so far wait with the others). Replies already set aside stay so: a call whose wait
        was interrupted before it went out, nothing came in since (every reply was in, nothing was sent)."""
        self._collect(what, timeout, len(self.ready) + self.busy.count(True))
        if self.stashed is None:
            empty = [None] * len(self.channels)
            self.stashed, self.ready, self.raised, self.replies = (self.ready, self.replies, self.raised), [], [], empty

    def defer(self, frames: list[bytes], pending: AsyncState) -> None:
        """Pool mode: ``frames`` (one a worker) wait to go out until the steps in flight are done
        (:meth:`send_deferred`, from the call's wait, which has a timeout); ``pending`` from now on."""
        self.deferred, self.pending = frames, pending

    def send_deferred(self, what: str, timeout: float | None) -> float | None:
        """Sends the deferred command once the commands in flight are done, their replies set aside
        (:meth:`stash`) until its own are taken; returns what is left of ``timeout``. A timeout or
        Ctrl-C while they finish leaves it deferred and pending."""
        deadline = None if timeout is None else time.monotonic() + timeout
        self.stash(what, timeout)  # the pool holds them: a Ctrl-C raised as it returns loses none
        assert self.deferred is not None
        self.send(self.deferred, pending=self.pending)  # it clears deferred in the statement that records pending
        return None if deadline is None else max(0.0, deadline - time.monotonic())

    def drop_pending(self) -> None:
        """The pending call is over without its replies (dropped unsent, or its replies unreadable):
        nothing is pending or deferred, and the replies :meth:`stash` set aside are back."""
        if self.stashed is not None:  # no call up to the next line: no signal is handled half-way
            (self.ready, self.replies, self.raised), self.stashed = self.stashed, None
        self.pending, self.deferred = AsyncState.DEFAULT, None

    def _take(self, taken: list[int], replies: list[Any]) -> list[Any]:
        for w in taken:
            self.replies[w] = None
        if not self.raised:
            return replies
        k = self.envs_per_worker
        raised = [remote for remote in self.raised if remote.env_index // k in taken]
        if raised:
            self.raised = [remote for remote in self.raised if remote.env_index // k not in taken]
            self.last_raised = sorted(raised, key=lambda remote: remote.env_index)
            raise rebuild(self.last_raised[-1])
        return replies

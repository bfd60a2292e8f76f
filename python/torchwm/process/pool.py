"""The worker processes of one env: start, send a command to all, gather their replies, shut down.

A worker's death is noticed from its process (a pidfd, else its sentinel, and a liveness check every
``LIVENESS_CHECK_S``), not from its pipe: a child the env forked may hold the pipe open. Before a dead
or unreachable worker is reported as crashed, whatever it wrote last (its start-up traceback, say) is
read and raised instead.
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import os
import select
import time
import weakref
from typing import Any, NoReturn

from torchwm.errors import WorkerCrashedError
from torchwm.process.protocol import STEP_DONE_BODY, Message, decode, frame, read_frame, write_frame
from torchwm.process.remote_errors import RemoteError, rebuild
from torchwm.process.worker import WorkerConfig, worker_main

# How long close() waits for a worker to exit before terminating it.
CLOSE_TIMEOUT_S = 5.0
# While waiting for replies, how often the liveness of the workers is checked (besides their pidfds).
LIVENESS_CHECK_S = 0.2

_CLOSE_FRAME = frame(Message.CLOSE)


class WorkerPool:
    """``len(configs)`` worker processes, each with its pipe; every command goes to all of them."""

    def __init__(self, ctx: Any, configs: list[WorkerConfig], daemon: bool, envs_per_worker: int) -> None:
        self.closed = False
        self.envs_per_worker = envs_per_worker
        self.processes: list[Any] = []
        self.pipes: list[Any] = []
        self.death_fds: list[int] = []
        self.fds: list[int] = []  # each worker's pipe descriptor
        self.poller = select.poll()
        self.watched: dict[int, tuple[str, int]] = {}
        # Registered before any worker starts, so a failure half-way through still reaps the started ones.
        # Guarded by pid: a copy of this env in a process forked later (a worker of a newer env) must
        # not shut down workers it does not own.
        self.owner_pid = os.getpid()
        self._finalizer = weakref.finalize(self, _shutdown, self.owner_pid, self.processes, self.pipes, self.death_fds)
        for w, config in enumerate(configs):
            parent_end, child_end = ctx.Pipe()
            fork = ctx.get_start_method() == "fork"
            process = ctx.Process(
                target=worker_main,
                name=f"torchwm-worker-{w}",
                args=(config, child_end, parent_end if fork else None),
                daemon=daemon,
            )
            process.start()
            child_end.close()
            self.processes.append(process)
            self.pipes.append(parent_end)
            self._watch(w, process, parent_end)
        self.received = [False] * len(configs)
        self.replies: list[Any] = [None] * len(configs)
        self.raised: list[RemoteError] = []  # the RAISED replies to the pending command
        self.last_raised: list[RemoteError] = []  # those of the last command that raised, in env order

    def _watch(self, w: int, process: Any, pipe: Any) -> None:
        """Registers worker ``w``'s pipe and a descriptor that becomes readable when it dies: a pidfd
        (Linux 5.3+; it does not depend on who else holds pipes open), else the process sentinel."""
        try:
            death_fd = os.pidfd_open(process.pid)
            self.death_fds.append(death_fd)
        except (AttributeError, OSError):
            death_fd = process.sentinel
        self.fds.append(pipe.fileno())
        for fd, kind in ((pipe.fileno(), "pipe"), (death_fd, "death")):
            self.watched[fd] = (kind, w)
            self.poller.register(fd, select.POLLIN | select.POLLERR | select.POLLHUP)

    # ------------------------------------------------------------------------------------ commands

    def send(self, frames: list[bytes]) -> None:
        """Writes ``frames[w]`` to worker ``w``, for every worker. Interrupted half-way (Ctrl-C), the
        workers are out of step with each other: they are shut down and the interrupt goes on."""
        self.received = [False] * len(self.fds)
        w = 0
        try:
            for w, fd in enumerate(self.fds):
                try:
                    write_frame(fd, frames[w])
                except OSError:  # BrokenPipeError included: the worker is gone
                    self.crashed(w)
        except BaseException:
            if not self.closed:
                self.shutdown(terminate=True)
            raise

    def gather(self, what: str, timeout: float | None) -> list[Any]:
        """Every worker's reply payload (None for ``STEP_DONE``), or ``multiprocessing.TimeoutError`` after ``timeout``
        s (call again to keep waiting). A worker's fatal error (``FAILED``) or death shuts every worker
        down and raises; a sub-env's exception (``RAISED``) is raised once every worker has answered (the
        lowest env index's; ``last_raised`` lists them all)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        received = self.received
        while not all(received):
            # Blocking here measured as fast as spinning (the workers spin, and the parent shares their cores).
            left = LIVENESS_CHECK_S if deadline is None else max(0.0, deadline - time.monotonic())
            ready = self.poller.poll(min(LIVENESS_CHECK_S, left) * 1000.0)
            dead = set()
            for fd, _ in ready:
                kind, w = self.watched[fd]
                if kind == "pipe" and not received[w]:
                    self._receive(w)
                elif kind == "death":
                    dead.add(w)
            if not ready:
                dead = {w for w, process in enumerate(self.processes) if not process.is_alive()}
            for w in dead:
                if not received[w]:
                    self.crashed(w)
            if not ready and deadline is not None and time.monotonic() >= deadline and not all(received):
                raise mp.TimeoutError(
                    f"{what}: {received.count(False)} worker(s) did not answer within {timeout} s; "
                    "call again to keep waiting"
                )
        return self._take_replies()

    def _take_replies(self) -> list[Any]:
        replies, self.replies = self.replies, [None] * len(self.fds)
        if self.raised:
            self.last_raised, self.raised = sorted(self.raised, key=lambda remote: remote.env_index), []
            raise rebuild(self.last_raised[0])
        return replies

    def _receive(self, w: int) -> None:
        """Reads worker ``w``'s reply into ``self.replies``."""
        try:
            body = read_frame(self.fds[w])
        except (EOFError, OSError):
            self.crashed(w, read_last=False)
        self.received[w] = True
        if body == STEP_DONE_BODY:
            self.replies[w] = None
            return
        kind, payload = decode(body)
        if kind == Message.RAISED:
            self.raised.append(payload)
        elif kind == Message.FAILED:
            self.shutdown(terminate=True)
            raise rebuild(payload)
        else:
            self.replies[w] = payload

    def crashed(self, w: int, read_last: bool = True) -> NoReturn:
        """Worker ``w`` is gone: raises what it reported last (read first), else ``WorkerCrashedError``."""
        if read_last and not self.received[w] and self.pipes[w].poll(0):
            self._receive(w)  # raises the worker's own error, if that is what it sent
        process = self.processes[w]
        _join(process, 1.0)
        first = w * self.envs_per_worker
        self.shutdown(terminate=True)
        raise WorkerCrashedError(
            f"worker {w} (sub-environments {first}..{first + self.envs_per_worker - 1}) died "
            f"with exit code {process.exitcode}; the other workers were shut down"
        )

    def shutdown(self, terminate: bool = False) -> None:
        """Stops every worker (terminated at once with ``terminate``); safe to call more than once.
        In a process forked from the owner, only marks this copy closed."""
        self.closed = True
        if terminate and os.getpid() == self.owner_pid:
            for process in self.processes:
                if process.is_alive():
                    process.terminate()
        self._finalizer()


def _join(process: Any, timeout: float | None) -> bool:
    """Waits for ``process`` to exit; True when it has. Asks the OS (``waitpid``) rather than waiting
    on the process sentinel, which a child the env forked may hold open long after the worker died."""
    deadline = None if timeout is None else time.monotonic() + timeout
    pause = 0.0005
    while process.is_alive():
        if deadline is not None and time.monotonic() >= deadline:
            return False
        time.sleep(pause)
        pause = min(pause * 2, 0.05)
    return True


def _shutdown(owner_pid: int, processes: list[Any], pipes: list[Any], death_fds: list[int]) -> None:
    """Stops workers: ask, wait a little, then terminate and reap. Does nothing in any process but the
    one that started them (a forked copy of the env); safe to call more than once."""
    if os.getpid() != owner_pid:
        return
    for pipe in pipes:
        with contextlib.suppress(Exception):
            write_frame(pipe.fileno(), _CLOSE_FRAME)
    for process in processes:
        if not _join(process, CLOSE_TIMEOUT_S):
            process.terminate()
            if not _join(process, CLOSE_TIMEOUT_S):
                process.kill()
                _join(process, None)
    for pipe in pipes:
        with contextlib.suppress(Exception):
            pipe.close()
    while death_fds:
        with contextlib.suppress(OSError):
            os.close(death_fds.pop())

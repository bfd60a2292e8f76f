"""The worker processes of one env: start, collect their replies, notice their deaths, shut down (the
commands and the call pending are process/pool.py's).

A command is announced by the worker's doorbell and a reply by the parent's (process/doorbells.py);
what does not fit in shared memory follows as a frame on the worker's pipe (process/channel.py). A
worker's death is noticed from its process (``_platform.death_watch``: a pidfd, else its sentinel; and
``waitpid`` every ``LIVENESS_CHECK_S`` of a wait), not from its pipe: a child the env forked may hold
the pipe open. Before a dead or unreachable worker is reported as crashed, whatever it wrote last (its
start-up traceback, say) is read and raised instead.
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import os
import time
import weakref
from typing import Any, NoReturn

import torchwm._platform as _platform
from torchwm._vector_args import timeout_message
from torchwm.errors import WorkerCrashedError
from torchwm.process.channel import Channel, open_channel
from torchwm.process.doorbells import DoorbellMemory, Patience
from torchwm.process.protocol import Message, decode, frame
from torchwm.process.remote_errors import RemoteError, rebuild
from torchwm.process.worker import WorkerConfig
from torchwm.process.worker_entry import worker_main

# How long close() waits for a worker to exit before terminating it.
CLOSE_TIMEOUT_S = 5.0
# While waiting for replies, how often the liveness of the workers is checked (besides their pidfds).
LIVENESS_CHECK_S = 0.05

_CLOSE_FRAME = frame(Message.CLOSE)


class WorkerProcesses:
    """``len(configs)`` worker processes, each with its pipe and its doorbell: started, their replies
    collected as they come (``ready``, oldest first), their deaths noticed, shut down. Which call is
    pending, and which replies are taken, is :class:`~torchwm.process.pool.WorkerPool`'s."""

    def __init__(
        self,
        ctx: Any,
        configs: list[WorkerConfig],
        daemon: bool,
        envs_per_worker: int,
        doorbells: DoorbellMemory,
        patience: Patience,
    ) -> None:
        self.closed = False
        self.envs_per_worker = envs_per_worker
        self.doorbells = doorbells
        self.bells = doorbells.bells
        self.patience = patience
        self.processes: list[Any] = []
        self.channels: list[Channel] = []  # each worker's pipe
        self.deaths = _platform.death_watch()  # tells which workers died
        # Whether each worker has answered (its first reply is READY or its start-up error): a worker
        # that dies before is reported with what makes a spawned one die then (WorkerCrashedError).
        self.answered = [False] * len(configs)
        self.spawned = ctx.get_start_method() != "fork"
        self.next_liveness_check = 0.0  # time.monotonic() of the next look at the workers' lives
        # Registered before any worker starts, so a failure half-way through still reaps the started ones.
        # Guarded by pid: a copy of this env in a process forked later (a worker of a newer env) must
        # not shut down workers it does not own.
        self.owner_pid = os.getpid()
        self._finalizer = weakref.finalize(
            self, _shutdown, self.owner_pid, self.processes, self.channels, self.deaths, doorbells
        )
        n = len(configs)
        # Every worker starts busy: its first reply is READY (or its start-up error).
        self.busy = [True] * n
        self.ready: list[int] = []  # workers whose reply is in, not yet taken; oldest first
        self.replies: list[Any] = [None] * n
        self.raised: list[RemoteError] = []  # the errors of the RAISED replies in, not yet taken
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
            self.channels.append(open_channel(parent_end))
            self.deaths.watch(w, process)

    def idle(self) -> list[int]:
        """The workers with no command in flight and no reply waiting to be taken."""
        return [w for w, busy in enumerate(self.busy) if not busy and w not in self.ready]

    def _out_of_step(self, error: BaseException, out: bool = False) -> None:
        """``error`` (which the caller raises on) broke off a command or a reply half-way: the workers are
        out of step with their doorbells and pipes, and are shut down. Unless it is a Ctrl-C raised once
        the command was all out (``out``): the command then stays pending, the next wait gets its replies."""
        if not self.closed and not (out and isinstance(error, KeyboardInterrupt)):
            self.shutdown(terminate=True)

    def _collect(self, what: str, timeout: float | None, count: int) -> None:
        """Waits until ``count`` replies are in (``ready``), collecting each as its worker finishes."""
        deadline = None if timeout is None else time.monotonic() + timeout
        patience = self.patience
        while len(self.ready) < count:
            busy = [w for w, b in enumerate(self.busy) if b]
            assert busy, "waiting for replies to commands never sent"
            left = LIVENESS_CHECK_S if deadline is None else max(0.0, deadline - time.monotonic())
            done = self.bells.wait_done(
                busy, count - len(self.ready), patience.spin_s, patience.yield_s, min(LIVENESS_CHECK_S, left)
            )
            if done:
                self._receive(done, deadline)
                # In pool mode the others may keep answering while one worker is dead: look anyway,
                # every LIVENESS_CHECK_S over the calls.
                now = time.monotonic()
                if now >= self.next_liveness_check:
                    self.next_liveness_check = now + LIVENESS_CHECK_S
                    self._check_deaths()
            else:
                self._check_deaths()
                if deadline is not None and time.monotonic() >= deadline:
                    raise mp.TimeoutError(timeout_message(what, timeout, count - len(self.ready)))

    def _check_deaths(self) -> None:
        """Raises for a busy worker that died (after reading what it said last)."""
        for w in self.deaths.dead():
            if self.busy[w] and not self.bells.is_done(w):
                self.crashed(w)
        for w, process in enumerate(self.processes):
            if self.busy[w] and not self.bells.is_done(w) and not process.is_alive():
                self.crashed(w)

    def _receive(self, done: list[int], deadline: float | None) -> None:
        """Collects the replies of ``done`` workers (they have rung the parent's doorbell): nothing
        more for a step all in shared memory, else the frame on the worker's pipe."""
        # Anything but STEP_DONE is a frame: READY comes before the first doorbell is rung. What ``done``
        # workers wrote into shared memory is visible from here on: wait_done's Acquire saw them done.
        in_memory = self.bells.done_with_kind(done, Message.STEP_DONE)
        framed = [w for w in done if w not in in_memory] if len(in_memory) < len(done) else []
        for w in in_memory:
            self.busy[w] = False
            self.ready.append(w)
        for w in framed:
            self._receive_frame(w, deadline)

    def _receive_frame(self, w: int, deadline: float | None) -> None:
        # Until its first byte is read the reply stays in the pipe: a timeout or Ctrl-C while awaiting
        # it leaves the worker busy, and the next wait reads it.
        self._await_reply(w, deadline)
        self.busy[w] = False
        self.answered[w] = True
        try:
            kind, payload = decode(self._read_reply(w))
        except KeyboardInterrupt as error:
            # Half a frame read: the pipe is out of step with the protocol, as in an interrupted send.
            self._out_of_step(error)
            raise
        if kind == Message.FAILED:
            self.shutdown(terminate=True)
            raise rebuild(payload)
        self.ready.append(w)
        if kind == Message.RAISED:
            self.raised.extend(payload)  # each env's that raised, in env order
        else:
            self.replies[w] = payload

    def _await_reply(self, w: int, deadline: float | None) -> None:
        """Waits until worker ``w``'s reply frame can be read, with an eye on the worker's life."""
        readable = self.channels[w].readable
        while not readable(LIVENESS_CHECK_S):
            if not self.processes[w].is_alive() and not readable(0):
                self.crashed(w, read_last=False)
            if deadline is not None and time.monotonic() >= deadline:
                raise mp.TimeoutError(f"worker {w} did not finish its reply in time; call again to keep waiting")

    def _read_reply(self, w: int) -> bytes:
        """The frame worker ``w`` has begun to write (:meth:`_await_reply`)."""
        try:
            return self.channels[w].read(self.processes[w].is_alive)
        except (EOFError, OSError):
            self.crashed(w, read_last=False)

    def crashed(self, w: int, read_last: bool = True) -> NoReturn:
        """Worker ``w`` is gone: raises what it reported last (read first), else ``WorkerCrashedError``."""
        if read_last and self.channels[w].readable(0):
            with contextlib.suppress(EOFError, OSError):
                kind, payload = decode(self.channels[w].read(self.processes[w].is_alive))
                if kind in (Message.FAILED, Message.RAISED):
                    self.shutdown(terminate=True)
                    raise rebuild(payload if kind == Message.FAILED else payload[-1])
        process = self.processes[w]
        _join(process, 1.0)
        first = w * self.envs_per_worker
        self.shutdown(terminate=True)
        raise WorkerCrashedError(
            f"worker {w} (sub-environments {first}..{first + self.envs_per_worker - 1}) died "
            f"with exit code {process.exitcode}{self._before_start(w)}; the other workers were shut down"
        )

    def _before_start(self, w: int) -> str:
        """What a worker that died before it answered most likely met, where it was spawned."""
        if self.answered[w] or not self.spawned:
            return ""
        return (
            " before it started its envs. A spawned worker first imports the main module: a script that "
            'makes the vector env at its top level must do so under `if __name__ == "__main__":` (the '
            "worker's traceback is on its standard error)"
        )

    def shutdown(self, terminate: bool = False, timeout: float | None = None) -> None:
        """Stops every worker (terminated at once with ``terminate``); safe to call more than once.
        With ``timeout``, the workers busy with a command get that long to finish it, then every worker
        is terminated (gymnasium's ``close(timeout=)``); without, ``CLOSE_TIMEOUT_S`` to exit. In a
        process forked from the owner, only marks this copy closed."""
        if not terminate and timeout is not None and not self.closed and os.getpid() == self.owner_pid:
            terminate = not self._commands_finish_within(timeout)
        self.closed = True
        if terminate and os.getpid() == self.owner_pid:
            for process in self.processes:
                if process.is_alive():
                    process.terminate()
        self._finalizer()

    def _commands_finish_within(self, timeout: float) -> bool:
        """Whether every live worker busy with a command finishes it (rings its doorbell) within
        ``timeout`` s. The replies are not read: the shutdown drops them."""
        deadline = time.monotonic() + timeout
        while True:
            busy = [w for w in self._busy_and_alive() if not self.bells.is_done(w)]
            left = deadline - time.monotonic()
            if not busy or left <= 0:
                return not busy
            self.bells.wait_done(busy, len(busy), 0.0, 0.0, min(LIVENESS_CHECK_S, left))

    def _busy_and_alive(self) -> list[int]:
        return [w for w, busy in enumerate(self.busy) if busy and self.processes[w].is_alive()]


def _join(process: Any, timeout: float | None, drain: Channel | None = None) -> bool:
    """Waits for ``process`` to exit; True when it has. Asks the OS (``waitpid``) rather than waiting
    on the process sentinel, which a child the env forked may hold open long after the worker died.
    Meanwhile, what the process writes on the channel ``drain`` is read and dropped."""
    deadline = None if timeout is None else time.monotonic() + timeout
    pause = 0.0005
    while process.is_alive():
        if deadline is not None and time.monotonic() >= deadline:
            return False
        if drain is None or not drain.drop_input(pause):
            time.sleep(pause)
        pause = min(pause * 2, 0.05)
    return True


def _shutdown(
    owner_pid: int,
    processes: list[Any],
    channels: list[Channel],
    deaths: _platform.DeathWatch,
    doorbells: DoorbellMemory,
) -> None:
    """Stops workers: ask, wait a little, then terminate and reap. Does nothing in any process but the
    one that started them (a forked copy of the env); safe to call more than once. Interrupted (Ctrl-C
    while it waits), it kills and reaps the workers before the interrupt goes on: the finalizer that
    calls it runs once, so nothing may be left for a later call."""
    if os.getpid() != owner_pid:
        return
    try:
        _ask_to_close(processes, channels, doorbells)
        _wait_for_exit(processes, channels)
    except BaseException:
        for process in processes:
            with contextlib.suppress(Exception):
                process.kill()
        for process in processes:
            _join(process, None)
        raise
    finally:
        for channel in channels:
            with contextlib.suppress(Exception):
                channel.close()
        deaths.close()
        doorbells.close()


def _ask_to_close(processes: list[Any], channels: list[Channel], doorbells: DoorbellMemory) -> None:
    for w, (process, channel) in enumerate(zip(processes, channels)):
        with contextlib.suppress(Exception):
            # A worker still busy reads the CLOSE frame once it is done: its next command. A pipe with
            # no room left (a worker that died before taking a command, a child of it holding the pipe)
            # would block the write for ever: that worker gets no CLOSE and is terminated after the wait.
            if channel.has_room():
                doorbells.bells.ring([w], Message.FRAME)
                channel.write(_CLOSE_FRAME, process.is_alive)


def _wait_for_exit(processes: list[Any], channels: list[Channel]) -> None:
    # A worker that is writing a reply nobody will take (larger than the pipe's buffer, it blocks) is
    # read to the end of it, so that it reads CLOSE and exits on its own. One deadline for them all.
    deadline = time.monotonic() + CLOSE_TIMEOUT_S
    for process, channel in zip(processes, channels):
        if not _join(process, max(0.0, deadline - time.monotonic()), channel):
            process.terminate()
            if not _join(process, CLOSE_TIMEOUT_S):
                process.kill()
                _join(process, None)

"""The worker processes of one env: start, send commands, collect their replies, shut down.

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

from gymnasium.vector.async_vector_env import AsyncState

from torchwm import _platform
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


class WorkerPool:
    """``len(configs)`` worker processes, each with its pipe and its doorbell. Commands go to any set
    of idle workers; their replies are collected as they come (``ready``, oldest first) and taken
    by :meth:`gather` (every busy worker) or :meth:`gather_some` (the first to finish: pool mode).

    The pool records the async call awaited (``pending``, gymnasium's ``AsyncState``) as the command
    goes out and clears it as the replies are taken or dropped, in the statement that does so: a
    Ctrl-C, which Python raises between calls, finds it recorded exactly when the command is out and
    its replies are not taken. The env reads it for gymnasium's ``AlreadyPendingCallError`` and
    ``NoAsyncCallError``."""

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
        self.last_raised: list[RemoteError] = []  # those of the last gather that raised, in env order
        self.pending = AsyncState.DEFAULT  # the call whose replies are awaited (see the class's docstring)
        # Pool mode: the frames of a call sent once the steps in flight are done (defer), the replies set
        # aside while it runs (stash), and the workers of the batch gather_some took last, which the next
        # step goes to (none once drop_all dropped everything).
        self.deferred: list[bytes] | None = None
        self.stashed: tuple[list[int], list[Any], list[RemoteError]] | None = None
        self.held: list[int] = []
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

    # ------------------------------------------------------------------------------------ commands

    def idle(self) -> list[int]:
        """The workers with no command in flight and no reply waiting to be taken."""
        return [w for w, busy in enumerate(self.busy) if not busy and w not in self.ready]

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

    def _out_of_step(self, error: BaseException, out: bool = False) -> None:
        """``error`` (which the caller raises on) broke off a command or a reply half-way: the workers are
        out of step with their doorbells and pipes, and are shut down. Unless it is a Ctrl-C raised once
        the command was all out (``out``): the command then stays pending, the next wait gets its replies."""
        if not self.closed and not (out and isinstance(error, KeyboardInterrupt)):
            self.shutdown(terminate=True)

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

"""The parent/worker protocol: one message kind enum and one framing, used both ways on every pipe.

A command or reply is announced by a doorbell (process/doorbells.py) carrying its kind: a step through
shared memory (``STEP_SHARED``, ``STEP_DONE``) needs nothing else; ``FRAME`` says it is the next frame
on the pipe.

A frame is a 4-byte big-endian length (the framing of ``multiprocessing.Connection``), then one byte,
the :class:`Message` kind, then the pickled payload if there is one. The step doorbell and a step's
plain reply are single-byte bodies, read with one ``read`` call. Frames are built by :func:`frame`
before anything is written, so a payload that cannot be pickled never leaves a pipe half-written.
"""

from __future__ import annotations

import enum
import os
import pickle
import select
from collections.abc import Callable
from typing import Any

__all__ = [
    "STEP_DONE_BODY",
    "STEP_DONE_FRAME",
    "STEP_SHARED_BODY",
    "STEP_SHARED_FRAME",
    "Message",
    "decode",
    "frame",
    "read_frame",
    "write_frame",
]


# While the rest of a frame is awaited (read) or waits for room (written), how often the other end's
# life is checked (milliseconds).
PEER_CHECK_MS = 50
# The largest frame written with one blocking write: at most what a pipe takes atomically, which an
# idle reader's empty pipe always has room for (a step's actions, most commands). Windows has no
# POSIX pipes (nor this constant): its frames are messages of a named pipe (process/channel.py).
ONE_WRITE_MAX = getattr(select, "PIPE_BUF", 512)


class Message(enum.IntEnum):
    """What a frame carries. Parent to worker: the commands; worker to parent: the replies."""

    # Parent -> worker.
    STEP_SHARED = 1  # step with the actions already in the shared action buffer (no payload)
    STEP = 2  # step with the actions in the payload
    RESET = 3
    CALL = 4  # call (get_attr too: gymnasium's get_attr is a call)
    SET_ATTR = 5
    CLOSE = 6
    SB3_CALL = 7  # one of SB3's per-env calls on some of the worker's envs (process/sb3_calls.py)
    # Both ways, on a doorbell only: the command or reply is the next frame on the pipe.
    FRAME = 8
    # Worker -> parent.
    READY = 16  # start-up done; payload: the spaces of the worker's envs
    OK = 17  # payload: the command's result
    STEP_DONE = 18  # a step whose results are all in shared memory (no payload)
    RAISED = 19  # sub-envs' errors: payload a list of RemoteErrors (env order); the worker goes on
    FAILED = 20  # a fatal error (start-up, reset, step): payload a RemoteError; the worker has stopped


def _dumps(payload: Any) -> bytes:
    """``pickle``, else ``cloudpickle`` (lambdas, local classes) for what plain pickle refuses."""
    try:
        return pickle.dumps(payload, pickle.HIGHEST_PROTOCOL)
    except Exception:
        import cloudpickle

        return cloudpickle.dumps(payload, pickle.HIGHEST_PROTOCOL)


def frame(kind: Message, payload: Any = None) -> bytes:
    """The bytes of one frame (a None payload is sent as none); raises, having written nothing, if
    ``payload`` cannot be pickled."""
    body = bytes((kind,)) if payload is None else bytes((kind,)) + _dumps(payload)
    return len(body).to_bytes(4, "big") + body


def write_frame(fd: int, data: bytes, reader_alive: Callable[[], bool], written: list[int] | None = None) -> None:
    """Writes a frame built by :func:`frame`, all of it; ``BrokenPipeError`` when the reader died before
    taking it. A frame of at most ``ONE_WRITE_MAX`` bytes costs one ``write``. With ``written``, the
    count of each ``write`` is appended there (:func:`_write`): a caller that a Ctrl-C interrupts can
    tell a frame all written from one cut short."""
    if len(data) > ONE_WRITE_MAX:
        _write_rest(fd, memoryview(data), reader_alive, written)
        return
    count = _write(fd, data, written)
    if count < len(data):  # cut short by a signal
        _write_rest(fd, memoryview(data)[count:], reader_alive, written)


def _write(fd: int, data: bytes | memoryview, written: list[int] | None) -> int:
    """``os.write``; with ``written``, its count appended there by C code (``list.extend`` over ``map``):
    Python raises a Ctrl-C that came during the write as a call returns to it, here once the count is
    stored (``written.append(os.write(...))`` would lose it)."""
    if written is None:
        return os.write(fd, data)
    written.extend(map(os.write, (fd,), (data,)))
    return written[-1]


def _write_rest(fd: int, view: memoryview, reader_alive: Callable[[], bool], written: list[int] | None) -> None:
    """Writes ``view`` as the reader makes room for it, with an eye on the reader's life: a child process
    the reader forked may hold the pipe open, so a reader that died leaves no broken pipe, only a pipe
    that never has room again. The descriptor is non-blocking meanwhile (a blocking write waits until
    all of it is written); it is blocking otherwise, as every pipe of the protocol."""
    try:
        os.set_blocking(fd, False)
        while view:
            try:
                view = view[_write(fd, view, written) :]
            except BlockingIOError:
                _await_room(fd, reader_alive)
    finally:
        os.set_blocking(fd, True)


def _await_room(fd: int, reader_alive: Callable[[], bool]) -> None:
    """Waits until the pipe ``fd`` has room; ``BrokenPipeError`` if its reader dies first."""
    writable = select.poll()
    writable.register(fd, select.POLLOUT)
    while not writable.poll(PEER_CHECK_MS):
        if not reader_alive() and not writable.poll(0):
            raise BrokenPipeError("the reader died in the middle of a frame")


def read_frame(fd: int, writer_alive: Callable[[], bool]) -> bytes:
    """The body of the next frame on ``fd``; ``EOFError`` when the other end closed, or when the writer
    died in the middle of the frame. A one-byte body (the doorbell, a step's plain reply) costs one
    ``read``."""
    chunk = os.read(fd, 5)
    if not chunk:
        raise EOFError
    if len(chunk) < 4:
        chunk += _read_rest(fd, 4 - len(chunk), writer_alive)
    size = int.from_bytes(chunk[:4], "big", signed=True)
    if size < 1:
        raise OSError(f"malformed frame of length {size}")
    remaining = size - (len(chunk) - 4)
    if remaining <= 0:
        return chunk[4:]
    return chunk[4:] + _read_rest(fd, remaining, writer_alive)


def _read_rest(fd: int, count: int, writer_alive: Callable[[], bool]) -> bytes:
    """The next ``count`` bytes of a frame begun. Waits for each part with an eye on the writer's life:
    a child process the writer forked may hold the pipe open, so a writer that died half-way through
    leaves no end of file, only a pipe that never becomes readable again."""
    readable = select.poll()
    readable.register(fd, select.POLLIN | select.POLLERR | select.POLLHUP)
    parts = []
    while count > 0:
        while not readable.poll(PEER_CHECK_MS):
            if not writer_alive() and not readable.poll(0):
                raise EOFError("the writer died in the middle of a frame")
        more = os.read(fd, count)
        if not more:
            raise EOFError
        parts.append(more)
        count -= len(more)
    return b"".join(parts)


def decode(body: bytes) -> tuple[Message, Any]:
    """A frame body as (kind, payload); a body without payload gives None."""
    kind = Message(body[0])
    return kind, (pickle.loads(body[1:]) if len(body) > 1 else None)


# The two frames of a step through shared memory, and their bodies (compared as bytes: no decoding).
STEP_SHARED_FRAME = frame(Message.STEP_SHARED)
STEP_SHARED_BODY = STEP_SHARED_FRAME[4:]
STEP_DONE_FRAME = frame(Message.STEP_DONE)
STEP_DONE_BODY = STEP_DONE_FRAME[4:]

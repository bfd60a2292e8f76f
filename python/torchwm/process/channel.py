"""The pipe between the parent and one worker, as frames (process/protocol.py): written whole, read
whole, with an eye on the other end's life. One class for each kind of pipe the platform seam gives
(``_platform.PIPES_ARE_DESCRIPTORS``):

- :class:`DescriptorChannel` (POSIX): the pipe's descriptor, read and written with ``os`` calls and
  waited on with ``select.poll``. A child process the other end forked may hold the pipe open after
  that end died, so a wait checks the peer's life every ``PEER_CHECK_MS``, and no wait is blocking.
- :class:`ConnectionChannel` (Windows): ``multiprocessing``'s connection over a named pipe, whose
  handle ``select`` cannot wait on; a frame is one message. Handles are not inherited by the processes
  an env starts, so a peer that dies closes its end and a blocked read or write ends at once
  (``EOFError``, ``BrokenPipeError``).

Both run on Linux too (the second over ``multiprocessing.Pipe``'s connection), where the tests check
that they carry the same frames.
"""

from __future__ import annotations

import os
import select
from collections.abc import Callable
from typing import Any

import torchwm._platform as _platform
from torchwm.process.protocol import read_frame, write_frame

__all__ = ["Channel", "ConnectionChannel", "DescriptorChannel", "open_channel"]


class DescriptorChannel:
    """A POSIX pipe's descriptor (``connection``'s, which this channel owns)."""

    def __init__(self, connection: Any) -> None:
        self.connection = connection
        self.fd = connection.fileno()
        # One poll object, made once (Connection.poll builds a selector on every call).
        self.readable_poll = select.poll()
        self.readable_poll.register(self.fd, select.POLLIN | select.POLLERR | select.POLLHUP)

    def write(self, data: bytes, peer_alive: Callable[[], bool], written: list[int] | None = None) -> None:
        """Writes the frame ``data`` (:func:`~torchwm.process.protocol.write_frame`, ``written`` included)."""
        write_frame(self.fd, data, peer_alive, written)

    def read(self, peer_alive: Callable[[], bool]) -> bytes:
        """The next frame's body; ``EOFError`` when the peer closed its end or died in the middle of it."""
        return read_frame(self.fd, peer_alive)

    def readable(self, timeout_s: float) -> bool:
        """Whether a frame has begun to arrive (or the peer closed its end) within ``timeout_s``."""
        return bool(self.readable_poll.poll(timeout_s * 1000))

    def has_room(self) -> bool:
        """Whether a small frame (``protocol.ONE_WRITE_MAX`` bytes) can be written without blocking."""
        writable = select.poll()
        writable.register(self.fd, select.POLLOUT)
        return bool(writable.poll(0))

    def drop_input(self, seconds: float) -> bool:
        """Reads and drops what comes within ``seconds``; False if nothing came (or the end)."""
        try:
            return self.readable(seconds) and bool(os.read(self.fd, 1 << 16))
        except OSError:
            return False

    def close(self) -> None:
        self.connection.close()


class ConnectionChannel:
    """A ``multiprocessing`` connection (which this channel owns); a frame is one message of it."""

    def __init__(self, connection: Any) -> None:
        self.connection = connection

    def write(self, data: bytes, peer_alive: Callable[[], bool], written: list[int] | None = None) -> None:
        """Sends the frame ``data`` as one message (its body: the connection has its own length). With
        ``written``, its length is appended there once it is all sent: a Ctrl-C raised during the send
        finds nothing there (the caller then takes the frame as cut short). ``BrokenPipeError`` when the
        peer died. ``peer_alive`` is not needed: a dead peer's end is closed."""
        self.connection.send_bytes(data, 4)
        if written is not None:
            written.append(len(data))

    def read(self, peer_alive: Callable[[], bool]) -> bytes:
        """The next frame's body; ``EOFError`` when the peer closed its end (or died)."""
        body = self.connection.recv_bytes()
        if not body:
            raise OSError("malformed frame of length 0")
        return body

    def readable(self, timeout_s: float) -> bool:
        """Whether a message has arrived (or the peer closed its end) within ``timeout_s``."""
        try:
            return bool(self.connection.poll(timeout_s))
        except (EOFError, OSError):  # Windows: the peer's end is closed; a read raises EOFError at once
            return True

    def has_room(self) -> bool:
        """Always: a message is sent into the pipe's buffer, and a dead reader breaks the pipe rather than
        leaving it full (no child of it holds its end)."""
        return True

    def drop_input(self, seconds: float) -> bool:
        """Reads and drops a message that comes within ``seconds``; False if none came (or the end)."""
        try:
            return self.readable(seconds) and self.connection.recv_bytes() is not None
        except (EOFError, OSError):
            return False

    def close(self) -> None:
        self.connection.close()


Channel = DescriptorChannel | ConnectionChannel


def open_channel(connection: Any) -> Channel:
    """The channel over ``connection`` (one end of ``multiprocessing``'s ``Pipe``) for this system's pipes."""
    if _platform.PIPES_ARE_DESCRIPTORS:
        return DescriptorChannel(connection)
    return ConnectionChannel(connection)

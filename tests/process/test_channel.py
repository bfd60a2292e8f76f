"""Both kinds of pipe channel (process/channel.py) on this system: Windows's (a frame a message of
``multiprocessing``'s connection) runs here over Linux's ``multiprocessing.Pipe`` too, and carries
what the descriptor channel carries."""

from __future__ import annotations

import multiprocessing as mp
import sys
import threading

import pytest

from torchwm.process.channel import ConnectionChannel, DescriptorChannel, open_channel
from torchwm.process.protocol import ONE_WRITE_MAX, Message, decode, frame

KINDS = [pytest.param(ConnectionChannel, id="connection")]
if sys.platform != "win32":
    KINDS.append(pytest.param(DescriptorChannel, id="descriptor"))


def _always() -> bool:
    return True


@pytest.fixture(params=KINDS)
def ends(request):
    left, right = mp.Pipe()
    a, b = request.param(left), request.param(right)
    yield a, b
    a.close()  # closing twice is harmless
    b.close()


@pytest.mark.timeout(60)
@pytest.mark.parametrize("size", [0, 10, ONE_WRITE_MAX + 1, 4 << 20])
def test_a_frame_arrives_whole_and_readable_says_so(ends, size) -> None:
    writer, reader = ends
    data = frame(Message.OK, bytes(range(256)) * (size // 256) if size else None)
    assert not reader.readable(0)
    written: list[int] = []
    # A frame larger than the pipe's buffer is written while it is read.
    thread = threading.Thread(target=writer.write, args=(data, _always, written))
    thread.start()
    assert reader.readable(30)
    body = reader.read(_always)
    thread.join()
    assert body == data[4:] and decode(body)[0] == Message.OK
    assert sum(written) == len(data)
    assert not reader.readable(0)


@pytest.mark.timeout(60)
def test_frames_keep_their_order_and_a_closed_end_reads_as_eof(ends) -> None:
    writer, reader = ends
    frames = [frame(Message.OK, i) for i in range(5)]
    for data in frames:
        writer.write(data, _always)
    assert [decode(reader.read(_always))[1] for _ in frames] == list(range(5))
    writer.close()
    assert reader.readable(5)  # the end: a read returns at once
    with pytest.raises(EOFError):
        reader.read(_always)


@pytest.mark.timeout(60)
def test_dropping_input_reads_what_came_and_nothing_else(ends) -> None:
    writer, reader = ends
    assert not reader.drop_input(0.01)
    writer.write(frame(Message.OK, "dropped"), _always)
    assert reader.drop_input(5)
    assert reader.has_room() and writer.has_room()


def test_this_system_gets_its_kind_of_channel() -> None:
    left, right = mp.Pipe()
    try:
        expected = ConnectionChannel if sys.platform == "win32" else DescriptorChannel
        assert type(open_channel(left)) is expected
    finally:
        left.close()
        right.close()

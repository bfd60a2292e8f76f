"""Both columns of Python's platform seam (torchwm/_platform.py), each run here on Linux: the portable
implementations (macOS's) are called by switching ``_platform.PORTABLE`` for the test."""

from __future__ import annotations

import mmap
import multiprocessing as mp
import os
import select
import signal
import sys
import time

import pytest

from torchwm import _platform

COLUMNS = [pytest.param(False, id="linux"), pytest.param(True, id="portable")]


@pytest.fixture(params=COLUMNS)
def column(request, monkeypatch) -> bool:
    monkeypatch.setattr(_platform, "PORTABLE", request.param)
    return request.param


def _write_at(fd: int, offset: int, value: bytes) -> None:
    with mmap.mmap(fd, 0) as shared:
        shared[offset : offset + len(value)] = value


def test_the_shared_file_is_shared_with_a_child_and_has_no_name(column) -> None:
    fd = _platform.shared_file("torchwm-test", 4096)
    try:
        assert os.fstat(fd).st_size == 4096
        assert not os.get_inheritable(fd)
        target = os.readlink(f"/proc/self/fd/{fd}")
        assert target.endswith("(deleted)")  # nothing can open it by name; a kill leaves nothing behind
        assert ("/dev/shm/torchwm-test-" in target) == column
        with mmap.mmap(fd, 0) as shared:
            child = mp.get_context("fork").Process(target=_write_at, args=(fd, 100, b"doorbell"))
            child.start()
            child.join(30)
            assert child.exitcode == 0
            assert shared[100:108] == b"doorbell"
            assert shared[:100] == bytes(100)
    finally:
        os.close(fd)


def _sleep() -> None:
    time.sleep(60)


def test_the_death_descriptor_is_readable_once_the_process_is_killed(column) -> None:
    process = mp.get_context("fork").Process(target=_sleep)
    process.start()
    fd, owned = _platform.death_descriptor(process)
    try:
        assert owned != column  # the pidfd is the caller's to close; the sentinel is the process object's
        poll = select.poll()
        poll.register(fd, select.POLLIN | select.POLLHUP)
        assert poll.poll(0) == []
        os.kill(process.pid, signal.SIGKILL)
        assert poll.poll(10_000) != []
    finally:
        process.kill()
        process.join()
        if owned:
            os.close(fd)


def _spin_then_wait(seconds: float, spun, release) -> None:
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass
    spun.set()
    release.wait(60)


def test_both_cpu_time_readings_agree(monkeypatch) -> None:
    ctx = mp.get_context("fork")
    spun, release = ctx.Event(), ctx.Event()
    process = ctx.Process(target=_spin_then_wait, args=(0.3, spun, release))
    process.start()
    try:
        assert spun.wait(60)
        readings = []
        for portable in (False, True):
            monkeypatch.setattr(_platform, "PORTABLE", portable)
            readings.append(_platform.process_cpu_seconds(process.pid))
    finally:
        release.set()
        process.join()
    assert readings[0] >= 0.25
    assert readings[0] == pytest.approx(readings[1], abs=0.05)


def test_both_resource_readings_agree(monkeypatch) -> None:
    monkeypatch.setattr(_platform, "PORTABLE", True)
    fd = _platform.shared_file("torchwm-test", 4096)
    try:
        with mmap.mmap(fd, 0):
            portable = _platform.resources()
            monkeypatch.setattr(_platform, "PORTABLE", False)
            linux = _platform.resources()
    finally:
        os.close(fd)
    for key in ("threads", "fds", "children"):
        assert linux[key] == portable[key], key
    assert linux["rss_mib"] == pytest.approx(portable["rss_mib"], rel=0.1)
    # psutil lists mapped files; /proc also shows deleted ones only held open by a descriptor.
    mapped = {path for path in portable["shm_segments"] if "/torchwm-test-" in path}
    assert len(mapped) == 1
    assert portable["shm_segments"] <= linux["shm_segments"]


def test_each_column_has_its_start_method_and_cores(column) -> None:
    assert _platform.default_start_method(["fork", "spawn", "forkserver"]) == ("spawn" if column else "fork")
    assert _platform.default_start_method(["spawn"]) == "spawn"
    assert 1 <= _platform.usable_cores() <= (os.cpu_count() or 1)


def test_windows_refuses_the_process_vectorizer_before_starting_anything(monkeypatch) -> None:
    """Windows: the process vectorizer's workers need POSIX pipes, so TorchVectorizedEnv says so at once,
    naming what runs there instead. Off Windows, the same branch runs with ``sys.platform`` set to it,
    and the system itself is not refused. (scripts/windows_check.sh runs it on Windows, under wine.)"""
    import gymnasium as gym

    from torchwm import TorchVectorizedEnv

    if sys.platform != "win32":
        assert _platform.process_workers_missing() is None
        monkeypatch.setattr(_platform.sys, "platform", "win32")
    with pytest.raises(NotImplementedError, match=r"Windows.*gymnasium\.vector\.AsyncVectorEnv.*AtariVectorEnv"):
        TorchVectorizedEnv(lambda: gym.make("CartPole-v1"), 2, 1)


def test_two_mappings_of_one_file_share_their_doorbells() -> None:
    """The Rust side's file mapping (``_core.Doorbells``) on this system, Windows's under wine included:
    a command rung through one mapping is what a worker waiting on another mapping of the file sees."""
    import tempfile

    from torchwm import _core

    with tempfile.TemporaryFile() as file:
        file.truncate(4 * _core.Doorbells.words_needed(2))
        parent, worker = (_core.Doorbells(_platform.mapping_handle(file.fileno()), 2) for _ in range(2))
    assert worker.wait_command(1, 0, 0.0, 0.0, 0.05) is None  # nothing rung yet
    parent.ring([1], 3)
    assert worker.wait_command(1, 0, 0.0, 0.0, 5.0) == 3
    assert not parent.is_done(1)
    worker.complete(1, 3, 1)
    assert parent.is_done(1)

"""Both columns of Python's platform seam (torchwm/_platform.py), each run here on Linux: the portable
implementations (macOS's) are called by switching ``_platform.PORTABLE`` for the test."""

from __future__ import annotations

import mmap
import multiprocessing as mp
import os
import select
import signal
import sys
import threading
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


def test_two_mappings_of_the_shared_file_share_their_doorbells() -> None:
    """The Rust side's mapping (``_core.Doorbells``) of ``_platform.shared_file`` on this system,
    Windows's under wine included (a paging-file mapping and its events, duplicated as a spawned worker
    receives them): a command rung through one mapping wakes a worker sleeping on another at once."""
    from torchwm import _core

    handle = _platform.shared_file("torchwm-test", 4 * _core.Doorbells.words_needed(2))
    try:
        parent = _core.Doorbells(handle, 2)
        events = [event.detach() for event in _platform.handles_for_child(parent.wake_handles())]
        assert (len(events) == 3) == (sys.platform == "win32")  # the parent's and one a worker
        duplicate = _platform.shared_file_for_child(handle).detach()
        try:
            worker = _core.Doorbells(duplicate, 2, events or None)
        finally:
            _platform.close_shared_file(duplicate)
    finally:
        _platform.close_shared_file(handle)  # the mappings stay
    assert worker.wait_command(1, 0, 0.0, 0.0, 0.05) is None  # nothing rung yet
    rung = threading.Timer(0.2, parent.ring, ([1], 3))
    rung.start()
    assert worker.wait_command(1, 0, 0.0, 0.0, 30.0) == 3  # asleep (no spin, no yield) when it came
    rung.join()
    assert not parent.is_done(1)
    done = threading.Timer(0.2, worker.complete, (1, 3, 1))
    done.start()
    assert parent.wait_done([1], 1, 0.0, 0.0, 30.0) == [1]
    done.join()


def test_a_mapping_smaller_than_the_doorbells_is_refused() -> None:
    from torchwm import _core

    handle = _platform.shared_file("torchwm-test", 16)
    try:
        # Linux: the file is too short; Windows: the view is refused (access denied).
        with pytest.raises(ValueError, match=r"mapping (fd|file mapping handle) \d+ \(\d+ bytes\)"):
            _core.Doorbells(handle, 64)
    finally:
        _platform.close_shared_file(handle)


def _sleep_forever() -> None:
    time.sleep(600)


@pytest.mark.parametrize(
    "watch", [_platform.PollWatch, lambda: _platform.SentinelWatch(chunk=2)], ids=["poll", "sentinels"]
)
def test_a_death_watch_names_the_dead_processes_only(watch) -> None:
    """Both ways of watching workers die, Windows's (sentinels waited on a chunk at a time; Windows takes
    at most 63 a wait) with chunks of 2 here, so that five processes take three waits."""
    ctx = mp.get_context("spawn")
    processes = [ctx.Process(target=_sleep_forever, daemon=True) for _ in range(5)]
    for process in processes:
        process.start()
    deaths = watch()
    try:
        for number, process in enumerate(processes):
            deaths.watch(number, process)
        assert deaths.dead() == []
        for number in (1, 4):
            processes[number].kill()
            processes[number].join()
        assert deaths.dead() == [1, 4]
    finally:
        for process in processes:
            process.kill()
            process.join()
        deaths.close()


def _report_when_the_parent_is_gone(path: str, windows: bool) -> None:
    _platform._WINDOWS = windows  # the implementation under test (Windows's runs on Linux too)
    gone = _platform.parent_gone(os.getppid())
    with open(path, "w") as report:
        report.write("alive" if not gone() else "gone at once")
    deadline = time.monotonic() + 60
    while not gone() and time.monotonic() < deadline:
        time.sleep(0.01)
    with open(path, "a") as report:
        report.write(" then gone" if gone() else " never gone")


def _start_a_child_then_sleep(path: str, windows: bool) -> None:
    child = mp.get_context("spawn").Process(target=_report_when_the_parent_is_gone, args=(path, windows))
    child.start()
    time.sleep(600)  # killed by the test


@pytest.mark.timeout(600)
@pytest.mark.parametrize("windows", [False, True], ids=["posix", "windows"])
def test_a_worker_sees_its_parent_die(tmp_path, windows) -> None:
    """``_platform.parent_gone`` in a spawned grandchild, both implementations (Windows's: the parent's
    process handle, ``multiprocessing.parent_process``), once its parent is killed."""
    if sys.platform == "win32" and not windows:
        pytest.skip("os.kill(pid, 0) is no liveness check on Windows")
    path = tmp_path / "report"
    parent = mp.get_context("spawn").Process(target=_start_a_child_then_sleep, args=(str(path), windows))
    parent.start()
    try:
        deadline = time.monotonic() + 240  # two spawned starts, one after the other, on a busy machine
        while not (path.exists() and path.read_text()) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert path.read_text() == "alive"
    finally:
        parent.kill()
        parent.join()
    deadline = time.monotonic() + 60
    while path.read_text() == "alive" and time.monotonic() < deadline:
        time.sleep(0.01)
    assert path.read_text() == "alive then gone"

"""Python's side of the platform seam: everything the Python code does differently between operating
systems, each facility with Linux's implementation and a portable one (macOS's; it also runs on
Linux), and where Windows lacks what POSIX gives, Windows's own. Nothing outside this module asks
which system it runs on (docs/platforms.md).

Which column a process takes is decided once, by the Rust side (``_core.uses_portable_implementations``:
always portable off Linux; on Linux when ``TORCHWM_PORTABLE=1``), so that a process's doorbells sleep
and its workers start, share memory and are watched by the same column. Workers inherit the variable.

| facility | Linux | portable (macOS) | Windows |
| --- | --- | --- | --- |
| default worker start | ``fork`` | ``spawn`` (macOS's default: fork is unsafe with its system libraries) | ``spawn`` (the only one) |
| shared memory of the doorbells | a sealed memfd | an unlinked file (``/dev/shm`` where there is one, else the temporary directory) | a paging-file mapping, its handle held by the parent, duplicated into each worker |
| the pipe to a worker (``PIPES_ARE_DESCRIPTORS``) | a descriptor (``select.poll``) | the same | ``multiprocessing``'s connection (a named pipe's handle) |
| a worker's death noticed at once (``death_watch``) | a pidfd | the process sentinel (``select.poll``) | the process handle (``multiprocessing.connection.wait``, 63 at a time) |
| a worker's parent gone (``parent_gone``) | ``getppid`` changed, or the creator's pid gone | the same | the parent's process handle signalled (``multiprocessing.parent_process``) |
| cores this process may use | ``sched_getaffinity`` | ``os.process_cpu_count`` / ``os.cpu_count`` | the same |
| another process's CPU time | ``/proc/PID/stat`` | ``psutil`` | ``psutil`` |
| this process's memory, threads, descriptors, children, shared segments (soak) | ``/proc/self`` | ``psutil`` (shared segments: where psutil lists mappings; not on macOS) | ``psutil`` |

The doorbells' sleep is the Rust side's (``src/ffi/futex``): a futex, a polled sleep, or on Windows an
event per worker and one for the parent (``_core.Doorbells.wake_handles``, duplicated into the workers
here: ``handles_for_child``).
"""

from __future__ import annotations

import multiprocessing as mp
import os
import select
import sys
import tempfile
from collections.abc import Callable
from multiprocessing import reduction
from typing import Any

import torchwm._core as _core

__all__ = [
    "PIPES_ARE_DESCRIPTORS",
    "PORTABLE",
    "DeathWatch",
    "PollWatch",
    "SentinelWatch",
    "child_pids",
    "close_shared_file",
    "death_watch",
    "default_start_method",
    "handles_for_child",
    "parent_gone",
    "process_cpu_seconds",
    "resources",
    "rss_mib",
    "shared_file",
    "shared_file_for_child",
    "usable_cores",
]

PORTABLE: bool = _core.uses_portable_implementations()
_WINDOWS = sys.platform == "win32"
# Whether a pipe's end is a descriptor that ``os.read``/``os.write`` and ``select`` take (POSIX); on
# Windows it is a named pipe's handle, used through its ``multiprocessing`` connection.
PIPES_ARE_DESCRIPTORS: bool = not _WINDOWS
# The most handles one ``multiprocessing.connection.wait`` takes on Windows (WaitForMultipleObjects'
# 64, less the one CPython adds for Ctrl-C).
WAIT_HANDLES_MAX = 63
# Windows access rights of the handles a worker receives: all of a file mapping's; an event's wait
# (SYNCHRONIZE) and set (EVENT_MODIFY_STATE).
_FILE_MAP_ALL_ACCESS = 0xF001F
_EVENT_ACCESS = 0x00100000 | 0x0002


def default_start_method(available: list[str]) -> str:
    """The start method of workers when the caller names none, among ``available``. Linux forks (the
    cheapest start). The portable column spawns, as macOS's Python does by default."""
    if not PORTABLE and "fork" in available:
        return "fork"
    return "spawn"


def usable_cores() -> int:
    """The cores this process may run on."""
    if not PORTABLE:
        return len(os.sched_getaffinity(0))
    count = getattr(os, "process_cpu_count", os.cpu_count)()  # 3.13's honours affinity where the OS has it
    return max(1, count or 1)


def shared_file(name: str, size: int) -> int:
    """A new file descriptor (close-on-exec) of ``size`` zeroed bytes that every process it is passed
    to may map shared, and that nothing else can open: it goes away with its last descriptor and
    mapping, so a killed process leaves nothing behind. On Windows, the handle of a new file mapping
    of the paging file (Windows deletes it with its last handle and view)."""
    if sys.platform == "win32":  # not _WINDOWS: so that type checkers on other systems skip it
        return _paging_file_mapping(name, size)
    if not PORTABLE:
        return _sealed_memfd(name, size)
    return _unlinked_file(name, size)


def close_shared_file(handle: int) -> None:
    """Closes what :func:`shared_file` returned (its mappings stay)."""
    if sys.platform == "win32":
        import _winapi

        _winapi.CloseHandle(handle)
    else:
        os.close(handle)


def shared_file_for_child(handle: int) -> Any:
    """What pickles :func:`shared_file`'s ``handle`` to a process being started (spawn or forkserver):
    its ``detach()`` there gives that process's own descriptor or handle."""
    if _WINDOWS:
        return reduction.DupHandle(handle, _FILE_MAP_ALL_ACCESS)  # type: ignore[attr-defined,unused-ignore]
    return reduction.DupFd(handle)


def handles_for_child(handles: list[int]) -> list[Any]:
    """What pickles the doorbells' event ``handles`` (``_core.Doorbells.wake_handles``: only Windows has
    any) to a process being started; each one's ``detach()`` there gives that process's handle."""
    return [reduction.DupHandle(handle, _EVENT_ACCESS) for handle in handles]  # type: ignore[attr-defined,unused-ignore]


if sys.platform == "win32":

    def _paging_file_mapping(name: str, size: int) -> int:
        """A new mapping of the paging file. CPython's ``_winapi`` names every mapping: a random name, never
        an existing mapping's (which ``CreateFileMapping`` would open instead). Workers receive duplicates
        of the handle, not the name."""
        import _winapi
        import secrets

        for _ in range(100):
            handle = _winapi.CreateFileMapping(
                _winapi.INVALID_HANDLE_VALUE,
                _winapi.NULL,
                _winapi.PAGE_READWRITE,
                size >> 32,
                size & 0xFFFFFFFF,
                f"{name}-{os.getpid()}-{secrets.token_hex(16)}",
            )
            if _winapi.GetLastError() != _ERROR_ALREADY_EXISTS:
                return int(handle)
            _winapi.CloseHandle(handle)
        raise FileExistsError("no free name for the doorbells' file mapping")

    _ERROR_ALREADY_EXISTS = 183


def _sealed_memfd(name: str, size: int) -> int:
    import fcntl

    fd = os.memfd_create(name, os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    try:
        os.ftruncate(fd, size)
        # Every process maps it: one that shrank it would crash the others (SIGBUS) at their next look.
        fcntl.fcntl(fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_SHRINK)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _unlinked_file(name: str, size: int) -> int:
    # /dev/shm is memory on Linux; macOS has none and its temporary directory is per user (mode 0700).
    # Unlinked at once: no name exists for another process to open or for a kill to leave behind.
    directory = "/dev/shm" if os.path.isdir("/dev/shm") else tempfile.gettempdir()
    fd, path = tempfile.mkstemp(prefix=f"{name}-", dir=directory)  # O_EXCL, mode 0600, not inherited
    try:
        os.unlink(path)
        os.ftruncate(fd, size)
    except BaseException:
        os.close(fd)
        raise
    return fd


class PollWatch:
    """POSIX's :class:`DeathWatch`: a descriptor of each process that becomes readable at its death
    (:func:`death_descriptor`), polled together."""

    def __init__(self) -> None:
        self._poll = select.poll()
        self._watched: dict[int, int] = {}  # descriptor -> number
        self._owned: list[int] = []  # the descriptors this watch made and closes (pidfds)

    def watch(self, number: int, process: Any) -> None:
        fd, owned = death_descriptor(process)
        if owned:
            self._owned.append(fd)
        self._watched[fd] = number
        self._poll.register(fd, select.POLLIN | select.POLLERR | select.POLLHUP)

    def dead(self) -> list[int]:
        return [self._watched[fd] for fd, _ in self._poll.poll(0)]

    def close(self) -> None:
        while self._owned:
            fd = self._owned.pop()
            self._poll.unregister(fd)
            os.close(fd)


class SentinelWatch:
    """Windows's :class:`DeathWatch`: each process's sentinel (its handle there, a descriptor elsewhere),
    waited on at most ``chunk`` at a time, as Windows' wait takes at most ``WAIT_HANDLES_MAX``."""

    def __init__(self, chunk: int = WAIT_HANDLES_MAX) -> None:
        self.chunk = chunk
        self._sentinels: list[Any] = []
        self._numbers: dict[Any, int] = {}

    def watch(self, number: int, process: Any) -> None:
        self._sentinels.append(process.sentinel)
        self._numbers[process.sentinel] = number

    def dead(self) -> list[int]:
        from multiprocessing.connection import wait

        signalled: list[Any] = []
        for start in range(0, len(self._sentinels), self.chunk):
            signalled += wait(self._sentinels[start : start + self.chunk], timeout=0)
        return sorted(self._numbers[sentinel] for sentinel in signalled)

    def close(self) -> None:
        """Nothing to close: the sentinels are the process objects'."""


DeathWatch = PollWatch | SentinelWatch


def death_watch() -> DeathWatch:
    """Tells which watched processes (``watch(number, process)``: started ``multiprocessing`` processes,
    each named by a number) have died, without waiting (``dead()``); ``close()`` closes what it made."""
    return SentinelWatch() if _WINDOWS else PollWatch()


def parent_gone(parent_pid: int) -> Callable[[], bool]:
    """In a worker: a check that is True once the process that created the env (``parent_pid``) has died,
    SIGKILL included. POSIX: this process was re-parented, or ``parent_pid`` no longer exists (a
    forkserver's workers are not the creator's children). Windows: the parent's process handle (which
    spawn opened) is signalled; ``os.kill(pid, 0)`` there would send a Ctrl-C event."""
    if _WINDOWS:
        parent = mp.parent_process()
        if parent is None:
            return lambda: False
        return lambda: not parent.is_alive()
    first_ppid = os.getppid()

    def gone() -> bool:
        if os.getppid() != first_ppid:
            return True
        try:
            os.kill(parent_pid, 0)
        except ProcessLookupError:
            return True
        except OSError:
            pass
        return False

    return gone


def death_descriptor(process: Any) -> tuple[int, bool]:
    """``(fd, owned)``: a descriptor that becomes readable when ``process`` (a started
    ``multiprocessing`` process) dies, and whether the caller must close it. Linux: a pidfd (5.3+),
    readable at the death whoever else holds the worker's pipes. Portable (and older kernels): the
    process sentinel, which a grandchild the env forked may hold open after the worker died; the
    pool therefore also asks the OS (``is_alive``, a ``waitpid``) every ``LIVENESS_CHECK_S`` of a wait."""
    if not PORTABLE:
        try:
            return os.pidfd_open(process.pid), True
        except OSError:
            pass
    return process.sentinel, False


def process_cpu_seconds(pid: int) -> float:
    """User + system CPU seconds process ``pid`` (this user's) has used. The portable reading needs
    psutil (the ``bench`` extra installs it off Linux)."""
    if not PORTABLE:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    times = _psutil().Process(pid).cpu_times()
    return float(times.user + times.system)


def _psutil() -> Any:
    try:
        import psutil
    except ImportError as error:
        raise RuntimeError(f"this reading on {sys.platform} needs psutil: pip install psutil") from error
    return psutil


def child_pids() -> list[int]:
    """This process's live child processes."""
    if not PORTABLE:
        return _linux_child_pids()
    return [child.pid for child in _psutil().Process().children()]


def rss_mib() -> float:
    """This process's resident memory, MiB."""
    if not PORTABLE:
        return _linux_rss_mib()
    return float(_psutil().Process().memory_info().rss) / 2**20


def resources() -> dict[str, Any]:
    """This process's resident memory (``rss_mib``), ``threads``, open ``fds``, live ``children``
    (pids) and ``shm_segments``: the shared-memory files it maps or holds open, deleted ones included
    (``None`` where the OS gives no way to list them)."""
    if not PORTABLE:
        return _linux_resources()
    process = _psutil().Process()
    segments: set[str] | None = None  # psutil lists no mappings on macOS
    if hasattr(process, "memory_maps"):
        paths = [m.path for m in process.memory_maps(grouped=False)] + [f.path for f in process.open_files()]
        segments = {path for path in paths if path.startswith(_SHARED_DIRS)}
    return {
        "rss_mib": rss_mib(),
        "threads": process.num_threads(),
        "fds": process.num_fds(),
        "children": child_pids(),
        "shm_segments": segments,
    }


# Where Linux keeps shared memory (``shared_file``, multiprocessing's arenas, gymnasium's buffers); macOS has no
# such place, and psutil lists no mappings there.
_SHARED_DIRS = ("/dev/shm/",)


def _linux_resources() -> dict[str, Any]:
    return {
        "rss_mib": _linux_rss_mib(),
        "threads": len(os.listdir("/proc/self/task")),
        "fds": len(os.listdir("/proc/self/fd")),
        "children": _linux_child_pids(),
        "shm_segments": _linux_shm_segments(),
    }


def _linux_rss_mib() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


def _linux_child_pids() -> list[int]:
    children: list[int] = []
    for task in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{task}/children") as listed:
                children += [int(pid) for pid in listed.read().split()]
        except OSError:  # the thread ended while we looked
            continue
    return children


def _linux_shm_segments() -> set[str]:
    with open("/proc/self/maps") as maps:
        # A deleted file's path ends in " (deleted)" here and in its fd's link, not in psutil's reading.
        segments = {
            line.split(maxsplit=5)[-1].strip().removesuffix(" (deleted)") for line in maps if "/dev/shm/" in line
        }
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:  # closed while we looked
            continue
        if target.startswith("/dev/shm/"):
            segments.add(target.removesuffix(" (deleted)"))
    return segments

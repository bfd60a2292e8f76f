"""Python's side of the platform seam: everything the Python code does differently between operating
systems, each facility with Linux's implementation and a portable one (macOS's; it also runs on
Linux). Nothing outside this module asks which system it runs on (docs/platforms.md).

Which column a process takes is decided once, by the Rust side (``_core.uses_portable_implementations``:
always portable off Linux; on Linux when ``TORCHWM_PORTABLE=1``), so that a process's doorbells sleep
and its workers start, share memory and are watched by the same column. Workers inherit the variable.

| facility | Linux | portable |
| --- | --- | --- |
| default worker start | ``fork`` | ``spawn`` (macOS's default: fork is unsafe with its system libraries) |
| shared memory of the doorbells | a sealed memfd | an unlinked file (``/dev/shm`` where there is one, else the temporary directory) |
| a worker's death noticed at once | a pidfd | the process sentinel |
| cores this process may use | ``sched_getaffinity`` | ``os.process_cpu_count`` / ``os.cpu_count`` |
| another process's CPU time | ``/proc/PID/stat`` | ``psutil`` |
| this process's memory, threads, descriptors, children, shared segments (soak) | ``/proc/self`` | ``psutil`` (shared segments: where psutil lists mappings; not on macOS) |

Windows takes the portable column for what it has, but the process vectorizer's workers do not run
there (``process_workers_missing``): they talk over POSIX pipes (``select``), which Windows lacks.
"""

from __future__ import annotations

import os
import sys
import tempfile
from typing import Any

from torchwm import _core

__all__ = [
    "PORTABLE",
    "child_pids",
    "death_descriptor",
    "default_start_method",
    "mapping_handle",
    "process_cpu_seconds",
    "process_workers_missing",
    "resources",
    "rss_mib",
    "shared_file",
    "usable_cores",
]

PORTABLE: bool = _core.uses_portable_implementations()


def process_workers_missing() -> str | None:
    """Why ``TorchVectorizedEnv``'s worker processes cannot run on this system, or None where they can."""
    if sys.platform != "win32":
        return None
    return (
        "TorchVectorizedEnv does not run on Windows yet: its workers talk to the parent over POSIX pipes, "
        "which Windows lacks. Use gymnasium.vector.AsyncVectorEnv there; torchwm.AtariVectorEnv (threads, "
        "no worker processes) runs on Windows."
    )


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
    mapping, so a killed process leaves nothing behind."""
    if not PORTABLE:
        return _sealed_memfd(name, size)
    return _unlinked_file(name, size)


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


def mapping_handle(fd: int) -> int:
    """What ``_core.Doorbells`` maps the file ``fd`` by: the descriptor itself, or on Windows the file's
    OS handle (a C runtime's descriptors mean nothing to another runtime, such as the extension's)."""
    if sys.platform != "win32":
        return fd
    import msvcrt

    return int(msvcrt.get_osfhandle(fd))  # type: ignore[attr-defined,unused-ignore]


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

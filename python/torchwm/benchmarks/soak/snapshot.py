"""What the soak run watches, at one moment and between two: this process's resident memory, threads,
open file descriptors, child processes and the ``/dev/shm`` segments it maps (``_platform.resources``),
and what grew from one snapshot to the next."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from torchwm import _platform

__all__ = ["Snapshot", "leaks", "rss_mib"]


def rss_mib() -> float:
    """Resident set size of this process, MiB."""
    return _platform.rss_mib()


@dataclass(frozen=True)
class Snapshot:
    """The process's resources at one moment (``_platform.resources``)."""

    rss_mib: float
    threads: int
    fds: int
    children: int
    shm_segments: int | None  # None where the OS lists no mappings (macOS)

    @staticmethod
    def take() -> Snapshot:
        now = _platform.resources()
        segments = now["shm_segments"]
        return Snapshot(
            rss_mib=now["rss_mib"],
            threads=now["threads"],
            fds=now["fds"],
            children=len(now["children"]),
            shm_segments=None if segments is None else len(segments),
        )


def leaks(before: Snapshot, after: Snapshot) -> dict[str, Any]:
    return {
        "before": asdict(before),
        "after": asdict(after),
        "threads_leaked": after.threads - before.threads,
        "fds_leaked": after.fds - before.fds,
        "children_left": after.children,
        "shm_segments_added": (
            None
            if after.shm_segments is None or before.shm_segments is None
            else after.shm_segments - before.shm_segments
        ),
        "rss_growth_mib": round(after.rss_mib - before.rss_mib, 2),
    }

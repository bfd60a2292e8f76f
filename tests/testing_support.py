"""Helpers every test folder imports (``tests/`` is on pytest's ``pythonpath``): the games the parity
tests sweep, and the live torchwm worker threads."""

from __future__ import annotations

from pathlib import Path

PARITY_GAMES = ["breakout", "pong", "space_invaders", "ms_pacman", "seaquest"]


def torchwm_worker_threads() -> list[str]:
    """Names of this process's live torchwm worker threads (OS threads, read from /proc)."""
    names = []
    for comm in Path("/proc/self/task").glob("*/comm"):
        try:
            name = comm.read_text().strip()
        except OSError:  # the thread ended while we looked
            continue
        if name.startswith(("torchwm-atari", "torchwm-reset")):
            names.append(name)
    return names

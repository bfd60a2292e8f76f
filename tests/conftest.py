"""Shared fixtures: ale_py quiet, and the games the parity tests sweep."""

from __future__ import annotations

import pytest
from ale_py import ALEInterface, LoggerMode

ALEInterface.setLoggerMode(LoggerMode.Error)

PARITY_GAMES = ["breakout", "pong", "space_invaders", "ms_pacman", "seaquest"]


@pytest.fixture(autouse=True)
def _no_leaked_threads():
    """Every env a test makes is closed or dropped: no torchwm worker thread outlives its test."""
    import gc
    import threading

    yield
    gc.collect()
    leaked = [t.name for t in threading.enumerate() if t.name.startswith("torchwm-atari")]
    assert not leaked, f"worker threads left running: {leaked}"

"""Shared fixtures: ale_py quiet, and the games the parity tests sweep."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest
from ale_py import ALEInterface, LoggerMode

ALEInterface.setLoggerMode(LoggerMode.Error)

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


@pytest.fixture(autouse=True)
def _no_leaked_threads():
    """Every env a test makes is closed or dropped: no torchwm worker thread outlives its test."""
    yield
    gc.collect()
    leaked = torchwm_worker_threads()
    assert not leaked, f"worker threads left running: {leaked}"


@pytest.fixture(scope="module")
def runner():
    """The fuzz tests' case runner: one process per test module, replaced after a crash or a hang.
    Imported here, not at the top: hypothesis is a test extra that the Ray test venv does not have."""
    from fuzz_support import CaseRunner

    case_runner = CaseRunner()
    yield case_runner
    case_runner.stop()

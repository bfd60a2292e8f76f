"""Shared fixtures: ale_py quiet, and no torchwm worker thread outliving its test."""

from __future__ import annotations

import gc

import pytest
from ale_py import ALEInterface, LoggerMode

ALEInterface.setLoggerMode(LoggerMode.Error)

from testing_support import torchwm_worker_threads


@pytest.fixture(autouse=True)
def _no_leaked_threads():
    """Every env a test makes is closed or dropped: no torchwm worker thread outlives its test."""
    yield
    gc.collect()
    leaked = torchwm_worker_threads()
    assert not leaked, f"worker threads left running: {leaked}"

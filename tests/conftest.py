"""Shared fixtures: ale_py quiet, no torchwm worker thread outliving its test, and no threaded library
(JAX) loaded in a pytest process, which forks: such tests are marked ``own_interpreter``."""

from __future__ import annotations

import gc
import os
import sys

# Before torch is imported anywhere in this process: one OpenMP thread (what scripts/test.sh sets too).
# torch's OpenMP pool would otherwise be threads of its own in a process that forks for later tests,
# and idle, they spin on cores the envs need.
os.environ.setdefault("OMP_NUM_THREADS", "1")

import pytest
from ale_py import ALEInterface, LoggerMode

ALEInterface.setLoggerMode(LoggerMode.Error)

# The own_interpreter marker's hooks (tests/own_interpreter.py), found here by their names.
from own_interpreter import in_own_interpreter, pytest_configure, pytest_runtest_logreport, pytest_runtest_protocol
from testing_support import torchwm_worker_threads

__all__ = ["pytest_configure", "pytest_runtest_logreport", "pytest_runtest_protocol"]

# Libraries that start threads of their own when used: loaded in a pytest process, every later fork
# there (worker processes, SubprocVecEnv, the fork tests) could deadlock its child.
THREADED_LIBRARIES = ("jax",)


@pytest.fixture(scope="session", autouse=True)
def _sb3_logs_in_pytests_temporary_directory(tmp_path_factory):
    """SB3's ``learn()`` makes a log folder in the system's temporary directory unless told where
    (``SB3_LOGDIR``): under pytest's own temporary directory, which pytest prunes, not left in /tmp."""
    os.environ.setdefault("SB3_LOGDIR", str(tmp_path_factory.mktemp("sb3-logs")))


@pytest.fixture(autouse=True)
def _no_leaked_threads():
    """Every env a test makes is closed or dropped: no torchwm worker thread outlives its test."""
    yield
    gc.collect()
    leaked = torchwm_worker_threads()
    assert not leaked, f"worker threads left running: {leaked}"


@pytest.fixture(autouse=True)
def _no_threaded_library_in_a_forking_process():
    """A test that loads JAX runs in its own interpreter (``@pytest.mark.own_interpreter``): never here,
    where later tests fork."""
    yield
    if in_own_interpreter():
        return
    loaded = [name for name in THREADED_LIBRARIES if sys.modules.get(name) is not None]
    assert not loaded, (
        f"{loaded} loaded in the pytest process, which forks for later tests: mark the test "
        "@pytest.mark.own_interpreter (tests/own_interpreter.py)"
    )

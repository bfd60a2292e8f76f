"""Helpers every test folder imports (``tests/`` is on pytest's ``pythonpath``): the games the parity
tests sweep, the live torchwm worker threads, a Ctrl-C landing at a chosen call (``CtrlCOnce``), and a
Python to send real Ctrl-Cs to (``python_with_ctrl_c``)."""

from __future__ import annotations

import contextlib
import os
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import pytest

T = TypeVar("T")

PARITY_GAMES = ["breakout", "pong", "space_invaders", "ms_pacman", "seaquest"]

# Set by scripts/aarch64_check.sh, which runs a selection of these tests on the aarch64 wheel under
# qemu-user, where ALE runs at about a tenth of its native speed.
EMULATED = os.environ.get("TORCHWM_EMULATED") == "1"


def native_or_emulated(native: T, emulated: T) -> T:
    """A test's length (or cases) natively, and under emulation (fewer: the same checks on fewer frames)."""
    return emulated if EMULATED else native


def rom_ids_to_check(every_rom: list[str]) -> list[str]:
    """The ROMs the every-ROM tests play: all of them natively; under emulation every 21st (6 of ale_py's
    108 ids, spread over the alphabet), the five parity games being played by the other tests."""
    return every_rom[::21] if EMULATED else every_rom


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


def ale_py_reset_seeds(count: int) -> tuple[list[int], np.ndarray]:
    """``count`` reset seeds for ale_py's single AtariEnv, and the ALE seeds it derives from them
    (SeedSequence's second word), which torchwm takes directly; only seeds whose ALE seed fits a C int."""
    derived = {s: int(np.random.SeedSequence(s).generate_state(n_words=2)[1]) for s in range(100)}
    seeds = [s for s, ale_seed in derived.items() if ale_seed < 2**31][:count]
    return seeds, np.array([derived[s] for s in seeds])


@contextlib.contextmanager
def logs_sub_env_errors() -> Iterator[list]:
    """Expects what gymnasium's ``AsyncVectorEnv`` (and torchwm's vector env, which does the same) logs
    before it raises a sub-env's error in reset/step/call: gymnasium's logger errors, which are
    ``UserWarning``s ("Received the following error from Worker-i", its traceback, and last "Raising the
    last exception back to the main process."). Deliberate warnings: the test that causes them says so here."""
    with pytest.warns(UserWarning, match="ERROR: ") as logged:
        yield logged
    assert "Raising the last exception back to the main process." in str(logged[-1].message)


def measured_s(call: Callable[[], object], repeats: int = 3) -> float:
    """The median time ``call()`` takes, measured now: a baseline under whatever load this run has."""
    times = []
    for _ in range(repeats):
        start = time.monotonic()
        call()
        times.append(time.monotonic() - start)
    return statistics.median(times)


def prompt_within_s(baseline_s: float) -> float:
    """How long "at once" may take, given ``baseline_s`` (a round trip through the same env, measured in
    the same test): a few seconds on a quiet machine, more when a busy one slows the baseline too."""
    return 3.0 + 50 * baseline_s


def python_with_ctrl_c(code: str) -> list[str]:
    """The command that runs ``code`` in a Python whose SIGINT raises KeyboardInterrupt, as in a terminal,
    also where this test run inherited SIGINT ignored (a shell starts its background jobs so: ``cmd &``,
    ``nohup``), which the child would inherit and keep: Python installs its handler only over the default."""
    return [sys.executable, "-c", "import signal; signal.signal(signal.SIGINT, signal.default_int_handler)\n" + code]


class CtrlCOnce:
    """Stands in for ``inner``: the first call of its method ``name`` raises KeyboardInterrupt, a Ctrl-C
    landing there: before the call runs, or with ``after`` once it has run (Python raises a Ctrl-C that
    came during a call as the call returns). Any other call or attribute is ``inner``'s. For a function
    of a module or a class, patch in ``getattr(CtrlCOnce(owner, name), name)``."""

    def __init__(self, inner: object, name: str, *, after: bool = False) -> None:
        self.inner, self.name, self.after, self.armed = inner, name, after, True

    def __getattr__(self, name: str) -> object:
        attribute = getattr(self.inner, name)
        if name != self.name:
            return attribute

        def interrupted_once(*args: object, **kwargs: object) -> object:
            if not self.armed:
                return attribute(*args, **kwargs)
            self.armed = False
            if self.after:
                attribute(*args, **kwargs)
            raise KeyboardInterrupt

        return interrupted_once


def assert_same(a: Any, b: Any) -> None:
    """Equal values of the same (container) types, recursively."""
    assert type(a) is type(b), (type(a), type(b))
    if isinstance(a, tuple):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            assert_same(x, y)
    elif isinstance(a, dict):
        assert list(a) == list(b)
        for key in a:
            assert_same(a[key], b[key])
    elif isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and a.shape == b.shape
        if a.dtype == object:
            for x, y in zip(a, b):
                assert_same(x, y)
        else:
            np.testing.assert_array_equal(a, b)
    else:
        assert a == b or (a != a and b != b), (a, b)

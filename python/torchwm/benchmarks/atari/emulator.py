"""The raw single-thread emulator speed that bounds every Atari backend: torchwm's ALE build (a Rust
loop, no Python per frame) and stock ALE through ale_py, on the same ROM."""

from __future__ import annotations

import time

import numpy as np

from torchwm import _core
from torchwm.atari.roms import rom_path

__all__ = ["raw_emulator_frames_per_second", "stock_ale_frames_per_second"]


def raw_emulator_frames_per_second(game: str, frames: int = 20_000) -> float:
    """Single-thread emulator frames/s with no preprocessing (Rust loop, no Python per frame)."""
    return _core.emulator_frames_per_second(str(rom_path(game)), frames)


def stock_ale_frames_per_second(game: str, frames: int = 20_000) -> float:
    """The same loop on ale_py's own ALEInterface (stock ALE, from Python, as the issue measured it):
    torchwm compiles ALE with a faster TIA pixel loop, so its raw speed is not stock ALE's."""
    from ale_py import ALEInterface, LoggerMode

    ALEInterface.setLoggerMode(LoggerMode.Error)
    ale = ALEInterface()
    ale.setInt("random_seed", 0)
    ale.loadROM(str(rom_path(game)))
    actions = ale.getMinimalActionSet()
    choices = np.random.default_rng(0).integers(len(actions), size=frames)
    start = time.perf_counter()
    for choice in choices:
        ale.act(actions[choice])
        if ale.game_over():
            ale.reset_game()
    return frames / (time.perf_counter() - start)

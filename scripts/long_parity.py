"""The long parity run: torchwm's ALE build and AtariVectorEnv against ale_py 0.12.1, side by side.

The test suite plays 1,000-2,000 frames per game; this plays at least 10,000 per game and setting
and prints a Markdown table for docs/performance.md. Two parts:

- ``emulator``: every ROM ALE supports, sticky actions off and on (0.25), random legal actions with
  paddle strengths; every frame's reward, raw screen (palette indices, from which grayscale and RGB
  are tables), RAM, lives, game over and frame numbers must be equal.
- ``vector``: Breakout, Pong, Space Invaders, Ms. Pac-Man and Seaquest through ``AtariVectorEnv``,
  frameskip 1 to 5, each with grayscale and RGB, max-pool on and off, sticky actions off and on;
  observations, rewards, terminations, truncations, lives and frame numbers must be equal. At
  frameskip 2 and 4 torchwm runs with ``reset_ahead=True``, so every reset there runs ahead on a reset
  thread, started by the step that ends the episode (at the others with the default, which behind this
  loop, with no time between steps, runs none ahead).

Usage: ``python scripts/long_parity.py [emulator|vector|all] [--frames N] [--games ROM ...]`` (exit
status 1 on any difference, with where it was). ``--games`` runs a subset: those ROMs in the emulator
part, and those of the five games in the vector part (``scripts/aarch64_check.sh`` runs a subset so
under emulation, where ALE runs at about a tenth of its native speed).
"""

from __future__ import annotations

import argparse
import itertools
import math
import sys
import time

import numpy as np
from ale_py import ALEInterface, LoggerMode, roms
from ale_py.vector_env import AtariVectorEnv as AlePyVectorEnv

import torchwm
from torchwm import _core

GAMES = ["breakout", "pong", "space_invaders", "ms_pacman", "seaquest"]


class Mismatch(AssertionError):
    pass


def check(condition: bool, where: str) -> None:
    if not condition:
        raise Mismatch(where)


def emulator_run(game: str, sticky: float, frames: int) -> int:
    """Plays ``frames`` frames of ``game`` on both emulators; returns the number of resets."""
    path = str(roms.get_rom_path(game))
    ours = _core.Ale()
    ours.set_int("random_seed", 17)
    ours.set_float("repeat_action_probability", sticky)
    try:
        ours.load_rom(path)
    except ValueError:
        return -1  # not a ROM ALE has settings for (ale_py would end the process on it)
    reference = ALEInterface()
    reference.setInt("random_seed", 17)
    reference.setFloat("repeat_action_probability", sticky)
    reference.loadROM(path)
    actions = reference.getLegalActionSet()
    rng = np.random.default_rng(23)
    choices, strengths = rng.integers(len(actions), size=frames), rng.uniform(0.0, 1.0, size=frames)
    resets = 0
    for frame in range(frames):
        action, strength = actions[choices[frame]], float(strengths[frame])
        where = f"{game} sticky={sticky} frame {frame}"
        check(ours.act(action.value, strength) == reference.act(action, strength), f"{where}: reward")
        check(np.array_equal(ours.screen_raw(), reference.getScreen()), f"{where}: screen")
        check(np.array_equal(ours.ram(), reference.getRAM()), f"{where}: RAM")
        check(ours.lives() == reference.lives() and ours.game_over() == reference.game_over(), f"{where}: lives")
        check(ours.frame_number() == reference.getFrameNumber(), f"{where}: frame number")
        check(ours.episode_frame_number() == reference.getEpisodeFrameNumber(), f"{where}: episode frame")
        if reference.game_over():
            reference.reset_game()
            ours.reset_game()
            resets += 1
    check(np.array_equal(ours.screen_rgb(), reference.getScreenRGB()), f"{game} sticky={sticky}: final RGB")
    return resets


def vector_settings() -> list[dict]:
    """Frameskip 1-5, each with every combination of grayscale, max-pool and sticky actions."""
    combos = list(itertools.product([True, False], [True, False], [0.0, 0.25]))
    return [
        {"frameskip": skip, "grayscale": gray, "maxpool": pool, "repeat_action_probability": sticky}
        for skip in range(1, 6)
        for gray, pool, sticky in combos
    ]


def vector_run(game: str, kwargs: dict, frames: int) -> int:
    """Steps both vector envs (2 envs) for ``frames`` emulator frames per env; returns episodes ended."""
    reset_ahead = True if kwargs["frameskip"] % 2 == 0 else "auto"
    reference = AlePyVectorEnv(game, 2, **kwargs)
    ours = torchwm.AtariVectorEnv(game, 2, reset_ahead=reset_ahead, **kwargs)
    try:
        obs_e, _ = reference.reset(seed=29)
        obs_g, _ = ours.reset(seed=29)
        check(np.array_equal(obs_e, obs_g), f"{game} {kwargs}: reset")
        rng = np.random.default_rng(31)
        ended = 0
        for step in range(math.ceil(frames / kwargs["frameskip"])):
            actions = rng.integers(reference.single_action_space.n, size=2)
            expected, got = reference.step(actions), ours.step(actions)
            where = f"{game} {kwargs} step {step}"
            for name, e, g in zip(["obs", "reward", "terminated", "truncated"], expected[:4], got[:4]):
                check(np.array_equal(e, g), f"{where}: {name}")
            for key in ("lives", "frame_number", "episode_frame_number"):
                check(np.array_equal(expected[4][key], got[4][key]), f"{where}: info[{key}]")
            ended += int(np.sum(expected[2] | expected[3]))
        return ended
    finally:
        reference.close()
        ours.close()


def run_emulator(frames: int, games: list[str]) -> list[str]:
    rows = ["| sticky | ROMs | frames each | resets | result |", "| ---: | ---: | ---: | ---: | --- |"]
    for sticky in (0.0, 0.25):
        start, played, resets = time.perf_counter(), 0, 0
        for game in games:
            count = emulator_run(game, sticky, frames)
            if count >= 0:
                played, resets = played + 1, resets + count
        print(f"emulator sticky={sticky}: {played} ROMs in {time.perf_counter() - start:.0f} s", flush=True)
        rows.append(f"| {sticky} | {played} | {frames:,} | {resets:,} | identical |")
    return rows


def run_vector(frames: int, games: list[str]) -> list[str]:
    rows = ["| game | settings | frames per env each | episodes ended | result |", "| --- | ---: | ---: | ---: | --- |"]
    for game in games:
        start, ended, settings = time.perf_counter(), 0, vector_settings()
        for kwargs in settings:
            ended += vector_run(game, kwargs, frames)
        print(f"vector {game}: {len(settings)} settings in {time.perf_counter() - start:.0f} s", flush=True)
        rows.append(f"| {game} | {len(settings)} | {frames:,} | {ended:,} | identical |")
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("part", choices=["emulator", "vector", "all"], nargs="?", default="all")
    parser.add_argument("--frames", type=int, default=10_000, help="emulator frames per game and setting")
    parser.add_argument("--games", nargs="+", metavar="ROM", help="only these ROM ids (default: all of each part's)")
    args = parser.parse_args()
    every_rom = roms.get_all_rom_ids()
    if unknown := sorted(set(args.games or []) - set(every_rom)):
        parser.error(f"unknown ROM ids {unknown}; expected ids of ale_py.roms.get_all_rom_ids()")
    ALEInterface.setLoggerMode(LoggerMode.Error)
    tables = []
    try:
        if args.part in ("emulator", "all"):
            tables.append(run_emulator(args.frames, args.games or every_rom))
        if args.part in ("vector", "all"):
            tables.append(run_vector(args.frames, [g for g in GAMES if g in (args.games or GAMES)]))
    except Mismatch as mismatch:
        print(f"DIFFERENT: {mismatch}", file=sys.stderr)
        return 1
    for table in tables:
        print("\n".join(table) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""What one env's reset costs, per game: emulator frames and microseconds, torchwm against ale_py.

    python benches/python/reset_cost.py --games breakout pong space_invaders ms_pacman seaquest

A reset is ALE's ``reset_game`` (its own no-op frames and soft resets), the fire press and up to
``noop_max`` no-op frames, then the first observation. Each backend resets one env ``--resets`` times
without a seed (so the ROM is not reloaded), in interleaved rounds. The frames column is what
``info["frame_number"]`` advances by: the fire and no-op frames; ALE does not count the frames of its
own ``reset_game`` there, so the time is the measure of the whole.
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

from torchwm.benchmarks.atari.backends import BACKENDS


def measure(backend: str, game: str, resets: int) -> tuple[float, float]:
    """``(microseconds, frames)`` per reset, medians over ``resets`` resets of one env."""
    env: Any = BACKENDS[backend](game, 1)
    try:
        _, info = env.reset(seed=0)
        times, frames = [], []
        for _ in range(resets):
            before = int(info["frame_number"][0])
            start = time.perf_counter()
            _, info = env.reset()
            times.append(time.perf_counter() - start)
            frames.append(int(info["frame_number"][0]) - before)
    finally:
        env.close()
    return 1e6 * statistics.median(times), statistics.median(frames)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", nargs="+", default=["breakout", "pong", "space_invaders", "ms_pacman", "seaquest"])
    parser.add_argument("--backends", nargs="+", default=["torchwm", "ale_py"])
    parser.add_argument("--resets", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    print("| game | backend | µs per reset (median of rounds) | fire + no-op frames per reset |")
    print("|---|---|---:|---:|")
    for game in args.games:
        rows: dict[str, list[tuple[float, float]]] = {b: [] for b in args.backends}
        for _ in range(args.rounds):
            for backend in args.backends:
                rows[backend].append(measure(backend, game, args.resets))
        for backend, results in rows.items():
            micros = statistics.median(r[0] for r in results)
            frames = statistics.median(r[1] for r in results)
            print(f"| {game} | {backend} | {micros:,.0f} | {frames:.0f} |", flush=True)


if __name__ == "__main__":
    main()

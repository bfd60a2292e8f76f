"""The raw single-thread loop's wall-clock ratio, torchwm's build over stock ALE, in interleaved rounds.

Each round runs every game once, each in a fresh process that measures torchwm's raw loop and then stock
ALE's (``raw_emulator_frames_per_second`` and ``stock_ale_frames_per_second``, 20,000 frames each), so that
both figures of a ratio share the machine's state; prints each ratio, then per game the median and the
spread over the rounds.

Usage: ``python scripts/raw_rounds.py [--rounds N] GAME ...``
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys

MEASURE = (
    "import sys\n"
    "from torchwm.benchmarks.atari.emulator import raw_emulator_frames_per_second, stock_ale_frames_per_second\n"
    "print(raw_emulator_frames_per_second(sys.argv[1]), stock_ale_frames_per_second(sys.argv[1]))\n"
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("games", nargs="+")
    args = parser.parse_args()
    ratios: dict[str, list[float]] = {game: [] for game in args.games}
    for round_number in range(args.rounds):
        for game in args.games:
            result = subprocess.run([sys.executable, "-c", MEASURE, game], capture_output=True, text=True, check=True)
            ours, stock = (float(value) for value in result.stdout.split())
            ratios[game].append(ours / stock)
            print(
                f"round {round_number} {game}: torchwm {ours:,.0f} frames/s, stock ALE {stock:,.0f}, {ours / stock:.2f}x"
            )
    for game, values in ratios.items():
        print(f"{game}: median {statistics.median(values):.2f}x (min {min(values):.2f}x, max {max(values):.2f}x)")


if __name__ == "__main__":
    main()

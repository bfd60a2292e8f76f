"""Plots a learning curve (raw game score vs emulator frames) from ``ppo_atari.py --log-csv``.

    python examples/plot_learning_curve.py docs/ppo_learning_curve.csv docs/ppo_learning_curve.png

Each CSV line is one PPO update: the env steps so far and the mean raw score of the games that ended
during it. The plot shows each update's mean (dots) and a running mean over the last ``--window`` games.
One env step is ``--frame-skip`` emulator frames (4 in ``ppo_atari.py``).
"""

from __future__ import annotations

import argparse
import csv

import matplotlib.pyplot as plt
import numpy as np


def read_games(path: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Updates that finished games: their env step, their games' mean raw score, how many games."""
    with open(path, newline="") as file:
        rows = [row for row in csv.DictReader(file) if int(row["episodes"]) > 0]
    steps = np.array([int(row["global_step"]) for row in rows])
    means = np.array([float(row["mean_raw_return"]) for row in rows])
    counts = np.array([int(row["episodes"]) for row in rows])
    return steps, means, counts


def running_mean(means: np.ndarray, counts: np.ndarray, window: int) -> np.ndarray:
    """Mean score of the last ``window`` games at each update (an update's games count at its mean)."""
    per_game = np.repeat(means, counts)
    cumulative = np.concatenate([[0.0], np.cumsum(per_game)])
    ends = np.cumsum(counts)
    starts = np.maximum(ends - window, 0)
    return (cumulative[ends] - cumulative[starts]) / (ends - starts)


def plot(csv_path: str, png_path: str, window: int, frame_skip: int, title: str) -> None:
    steps, means, counts = read_games(csv_path)
    frames = steps * frame_skip / 1e6
    figure, axes = plt.subplots(figsize=(7, 4), dpi=100)
    axes.scatter(frames, means, s=6, alpha=0.35, color="tab:blue", label="games ended in one update (mean)")
    axes.plot(frames, running_mean(means, counts, window), color="tab:red", label=f"mean of the last {window} games")
    axes.set_xlabel("emulator frames (millions)")
    axes.set_ylabel("raw game score")
    axes.set_title(title)
    axes.grid(alpha=0.3)
    axes.legend(loc="lower right")
    figure.tight_layout()
    figure.savefig(png_path)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("csv_path")
    parser.add_argument("png_path")
    parser.add_argument("--window", type=int, default=30, help="games in the running mean")
    parser.add_argument("--frame-skip", type=int, default=4, help="emulator frames per env step")
    parser.add_argument("--title", default="PPO on torchwm.AtariVectorEnv")
    args = parser.parse_args(argv)
    if args.window < 1 or args.frame_skip < 1:
        parser.error("--window and --frame-skip must be at least 1")
    plot(args.csv_path, args.png_path, args.window, args.frame_skip, args.title)


if __name__ == "__main__":
    main()

"""A mixed pool's speed against its games alone: steps/s of ``AtariVectorEnv([g1, g2, ...], n)`` and of
``AtariVectorEnv(g, n, full_action_space=True)`` for each game, interleaved round by round.

    python benches/python/mixed_pool.py --games pong breakout space_invaders ms_pacman --num-envs 8

A pool of k games in n envs runs n/k envs of each game, so what it should cost is the mean of its games'
*time per step*: the expected rate is the harmonic mean of the games' rates alone. The ratio printed is
the pool's rate over that expectation (1.00: mixing games costs nothing).
"""

from __future__ import annotations

import argparse
import statistics

import torchwm
from torchwm.benchmarks.core.timing import steps_per_second


def rate(game: str | list[str], num_envs: int, seconds: float) -> float:
    """Steps/s of one env of ``game`` (a pool when a list), random actions over the full action set."""
    env = torchwm.AtariVectorEnv(game, num_envs, full_action_space=True)
    try:
        return steps_per_second(env, seconds, batch_size=num_envs, num_actions=18)
    finally:
        env.close()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", nargs="+", default=["pong", "breakout", "space_invaders", "ms_pacman"])
    parser.add_argument("--num-envs", type=int, default=8, help="envs in the pool and in each one-game env")
    parser.add_argument("--seconds", type=float, default=3.0, help="time per measurement")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds (the median is kept)")
    args = parser.parse_args(argv)
    names = [*args.games, "pool"]
    rates: dict[str, list[float]] = {name: [] for name in names}
    ratios = []
    for _ in range(args.rounds):
        for name in names:
            rates[name].append(rate(args.games if name == "pool" else name, args.num_envs, args.seconds))
        expected = len(args.games) / sum(1 / rates[game][-1] for game in args.games)
        ratios.append(rates["pool"][-1] / expected)
    print(f"| env ({args.num_envs} envs, sync) | steps/s (median of {args.rounds} rounds) |")
    print("|---|---:|")
    for name in names:
        label = f"pool of {', '.join(args.games)}" if name == "pool" else f"{name} alone"
        print(f"| {label} | {statistics.median(rates[name]):,.0f} |")
    spread = f"{min(ratios):.2f}-{max(ratios):.2f}"
    print(f"\npool / harmonic mean of its games alone: {statistics.median(ratios):.2f}x (rounds: {spread})")


if __name__ == "__main__":
    main()

"""``torchwm rollout``: a quick random Atari rollout that prints steps/s and frames/s."""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np

__all__ = ["add_parser", "rollout"]


def rollout(args: argparse.Namespace) -> int:
    """Random actions in a torchwm AtariVectorEnv; prints steps/s and emulator frames/s."""
    from gymnasium.spaces import Discrete

    from torchwm import AtariVectorEnv

    env = AtariVectorEnv(args.game, args.num_envs)
    assert isinstance(env.single_action_space, Discrete)
    try:
        env.reset(seed=args.seed)
        rng = np.random.default_rng(args.seed)
        episodes = 0
        score = np.zeros(args.num_envs, dtype=np.int64)
        returns: list[int] = []
        start = time.perf_counter()
        for _ in range(args.steps):
            _, rewards, terms, truncs, _ = env.step(rng.integers(0, int(env.single_action_space.n), args.num_envs))
            score += rewards
            for i in np.flatnonzero(terms | truncs):
                returns.append(int(score[i]))
                score[i] = 0
                episodes += 1
        elapsed = time.perf_counter() - start
    finally:
        env.close()
    steps = args.steps * args.num_envs
    print(f"torchwm {args.game}: {args.num_envs} envs x {args.steps} steps in {elapsed:.2f}s")
    print(f"  {steps / elapsed:,.0f} env steps/s, {steps * 4 / elapsed:,.0f} emulator frames/s")
    if returns:
        print(f"  {episodes} episodes finished, mean clipped return {np.mean(returns):.1f}")
    return 0


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Adds ``rollout`` to the ``torchwm`` command's subcommands."""
    p = subparsers.add_parser("rollout", help="random-action Atari rollout; prints frames/s")
    p.add_argument("--game", default="breakout", help="ROM id, e.g. breakout, pong (default: breakout)")
    p.add_argument("--num-envs", type=int, default=8, help="environments stepped together (default: 8)")
    p.add_argument("--steps", type=int, default=500, help="batched steps to run (default: 500)")
    p.add_argument("--seed", type=int, default=0, help="seed of the first reset (default: 0)")
    p.set_defaults(func=rollout)
    return p

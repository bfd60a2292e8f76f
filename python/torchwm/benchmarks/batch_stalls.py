"""How long an AtariVectorEnv batch takes when one of its envs resets, against batches without a reset.

    python -m torchwm.benchmarks.batch_stalls --game breakout --num-envs 32 --batch-size 32 16

In next-step autoreset mode an env whose episode ended resets on its next step, so a batch "has a
reset" when it steps an env that ended in the batch before. A sync batch waits for all its envs, so a
reset (ALE's own reset plus up to 30 no-op steps) holds up the whole batch; an async batch is the first
envs to finish, so it does not wait for one.
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import asdict, dataclass

import numpy as np
from gymnasium.spaces import Discrete

from torchwm import AtariVectorEnv


@dataclass
class StallResult:
    game: str
    num_envs: int
    batch_size: int
    num_threads: int
    steps_per_s: float
    batches: int
    share_with_reset: float
    ms_with_reset: float | None
    ms_without_reset: float | None


def measure(game: str, num_envs: int, batch_size: int, seconds: float, seed: int = 0) -> StallResult:
    env = AtariVectorEnv(game, num_envs, batch_size=batch_size)
    try:
        space = env.single_action_space
        assert isinstance(space, Discrete), "the benchmark steps discrete actions"
        actions = np.random.default_rng(seed).integers(0, int(space.n), size=(256, env.batch_size))
        env.reset(seed=seed)
        ended = np.zeros(num_envs, dtype=bool)
        with_reset: list[float] = []
        without_reset: list[float] = []
        batches = 0
        start = time.perf_counter()
        while time.perf_counter() - start < seconds:
            began = time.perf_counter()
            _, _, terminated, truncated, info = env.step(actions[batches % 256])
            took = time.perf_counter() - began
            env_ids = info["env_id"]
            (with_reset if ended[env_ids].any() else without_reset).append(took)
            ended[env_ids] = terminated | truncated
            batches += 1
        elapsed = time.perf_counter() - start
        return StallResult(
            game,
            num_envs,
            env.batch_size,
            env.num_threads,
            round(batches * env.batch_size / elapsed),
            batches,
            round(len(with_reset) / batches, 3),
            round(1000 * float(np.mean(with_reset)), 2) if with_reset else None,
            round(1000 * float(np.mean(without_reset)), 2) if without_reset else None,
        )
    finally:
        env.close()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", nargs="+", default=["breakout", "pong"])
    parser.add_argument("--num-envs", type=int, default=32)
    parser.add_argument("--batch-size", type=int, nargs="+", default=[32, 16])
    parser.add_argument("--seconds", type=float, default=4.0)
    args = parser.parse_args(argv)
    for game in args.game:
        for batch_size in args.batch_size:
            print(json.dumps(asdict(measure(game, args.num_envs, batch_size, args.seconds))), flush=True)


if __name__ == "__main__":
    main()

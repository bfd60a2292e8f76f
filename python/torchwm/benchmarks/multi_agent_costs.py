"""Where a multi-agent case's time goes, beside the side by side (``process_multi_agent``):

- ``step_spread``: one env's step times (mean, standard deviation) and what a synchronous batch over
  ``workers`` workers loses waiting for the slowest: E[max of ``workers`` steps] / E[one step], from
  the measured times drawn at random (each worker stepping one env; more envs per worker average out).
- ``time_in_env``: TorchVectorizedEnv's workers' share of their time spent inside the env's ``step``
  (timed by a wrapper inside each worker), in sync or pool mode; the rest is the vectorizer's work
  and the wait for the next actions.

``python -m torchwm.benchmarks.multi_agent_costs --case pistonball --workers-envs 2x2``
"""

from __future__ import annotations

import argparse
import time
from functools import partial
from typing import Any

import numpy as np

from torchwm.benchmarks.process_multi_agent import MA_CASES, agent_count

__all__ = ["step_spread", "time_in_env"]


def step_spread(case: str, steps: int = 1000, workers: int = 2, seed: int = 0) -> dict[str, float]:
    """Milliseconds per step of one env of ``case`` (random actions, resets left out), and the ratio a
    synchronous batch over ``workers`` workers pays for waiting for the slowest."""
    env = MA_CASES[case][0]()
    try:
        env.reset(seed=seed)
        space = env.action_space(env.possible_agents[0])
        space.seed(seed)
        times: list[float] = []
        while len(times) < steps:
            if not env.agents:
                env.reset()
                continue
            actions = {agent: space.sample() for agent in env.agents}
            start = time.perf_counter()
            env.step(actions)
            times.append(time.perf_counter() - start)
    finally:
        env.close()
    ms = np.array(times) * 1e3
    draws = np.random.default_rng(seed).choice(ms, size=(100_000, workers))
    return {
        "mean_ms": float(ms.mean()),
        "std_ms": float(ms.std()),
        "barrier": float(draws.max(axis=1).mean() / ms.mean()),
    }


class _TimedSteps:
    """A ParallelEnv's ``step`` timed: the wrapped env's seconds in ``step`` (``timed()``)."""

    def __init__(self, env: Any) -> None:
        self.env, self.seconds = env, 0.0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.env, name)

    def step(self, actions: Any) -> Any:
        start = time.perf_counter()
        try:
            return self.env.step(actions)
        finally:
            self.seconds += time.perf_counter() - start

    def timed(self, reset: bool = False) -> float:
        seconds = self.seconds
        if reset:
            self.seconds = 0.0
        return seconds


def _timed_env(case: str) -> _TimedSteps:
    return _TimedSteps(MA_CASES[case][0]())


def time_in_env(case: str, workers: int, envs: int, pool: bool = False, seconds: float = 4.0) -> dict[str, float]:
    """Rows per second of TorchVectorizedEnv over ``case`` and its workers' share of time in the env's
    ``step``; ``pool``: half the workers' rows per batch."""
    from torchwm.process import TorchVectorizedEnv

    factory = partial(_timed_env, case)
    agents = agent_count(MA_CASES[case][0])
    rows = workers * envs * agents // (2 if pool else 1)
    vec = TorchVectorizedEnv(factory, workers, envs, batch_size=rows if pool else None)
    try:
        vec.reset(seed=0)
        space = vec.single_action_space
        space.seed(0)
        batches = [np.array([space.sample() for _ in range(rows)]) for _ in range(16)]
        for i in range(5):
            vec.step(batches[i % 16])
        vec.call("timed", reset=True)
        steps, start = 0, time.perf_counter()
        while (now := time.perf_counter()) < start + seconds:
            vec.step(batches[steps % 16])
            steps += 1
        in_env = sum(vec.call("timed"))
    finally:
        vec.close()
    elapsed = now - start
    return {"rows_per_s": steps * rows / elapsed, "share_in_env_step": in_env / (workers * elapsed)}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", choices=sorted(MA_CASES), default="pistonball")
    parser.add_argument("--workers-envs", default="2x2", help="WORKERSxENVS for time_in_env")
    parser.add_argument("--seconds", type=float, default=4.0)
    args = parser.parse_args(argv)
    workers, envs = (int(n) for n in args.workers_envs.split("x"))
    spread = step_spread(args.case, workers=workers)
    print(
        f"{args.case}: one env's step {spread['mean_ms']:.2f} ms (std {spread['std_ms']:.2f}); a sync batch over "
        f"{workers} workers waits for the slowest: {spread['barrier']:.2f}x the mean"
    )
    for pool in (False, True):
        measured = time_in_env(args.case, workers, envs, pool, args.seconds)
        print(
            f"torchwm {args.workers_envs}{' pool' if pool else ''}: {measured['rows_per_s']:,.0f} rows/s, workers "
            f"{measured['share_in_env_step']:.0%} of their time in the env's step"
        )


if __name__ == "__main__":
    main()

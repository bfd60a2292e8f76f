"""Where a multi-agent case's time goes, beside the side by side (``torchwm.benchmarks.multi_agent``):

- ``step_spread``: one env's step times (mean, standard deviation) and what a synchronous batch over
  ``workers`` workers loses waiting for the slowest: E[max of ``workers`` steps] / E[one step], from
  the measured times drawn at random (each worker stepping one env; more envs per worker average out).
- ``time_in_env``: TorchVectorizedEnv's workers' share of their time spent inside the env's ``step``
  (timed by a wrapper inside each worker), in sync or pool mode; the rest is the vectorizer's work
  and the wait for the next actions. Beside it, the CPU time a row costs: the caller's, the workers'
  and, of the workers', the env's own ``step`` (CPU time of the worker's thread inside it); and how
  many cores were busy. What a row costs beyond the env's step is all the vectorizer can save.

``python benches/python/multi_agent_costs.py --case pistonball --workers-envs 2x2``
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

from torchwm.benchmarks.core.cpu_time import CpuSnapshot
from torchwm.benchmarks.multi_agent.cases import MA_CASES, agent_count, config_name, pool_sizes
from torchwm.benchmarks.multi_agent.env_alone import env_ms_per_row

__all__ = ["RowCosts", "step_spread", "time_in_env"]


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
    """A ParallelEnv's ``step`` timed: the wrapped env's wall and CPU seconds (this thread's) in ``step``
    (``timed()``)."""

    def __init__(self, env: Any) -> None:
        self.env, self.seconds, self.cpu_seconds = env, 0.0, 0.0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.env, name)

    def step(self, actions: Any) -> Any:
        start, cpu = time.perf_counter(), time.thread_time()
        try:
            return self.env.step(actions)
        finally:
            self.seconds += time.perf_counter() - start
            self.cpu_seconds += time.thread_time() - cpu

    def timed(self, reset: bool = False) -> tuple[float, float]:
        seconds = (self.seconds, self.cpu_seconds)
        if reset:
            self.seconds = self.cpu_seconds = 0.0
        return seconds


def _timed_env(case: str) -> _TimedSteps:
    return _TimedSteps(MA_CASES[case][0]())


def time_in_env(case: str, workers: int, envs: int, pool: int = 0, seconds: float = 4.0, copy: bool = True) -> RowCosts:
    """What a row of ``case`` costs TorchVectorizedEnv (``RowCosts``); ``pool``: the envs of that many
    workers per batch (0: sync mode, every row); ``copy``: TorchVectorizedEnv's (False: the caller
    takes the shared rows themselves where it can, no copy of the batch)."""
    from torchwm.process import TorchVectorizedEnv

    factory = partial(_timed_env, case)
    rows = (pool or workers) * envs * agent_count(MA_CASES[case][0])
    vec = TorchVectorizedEnv(factory, workers, envs, batch_size=rows if pool else None, copy=copy)
    try:
        vec.reset(seed=0)
        space = vec.single_action_space
        space.seed(0)
        batches = [np.array([space.sample() for _ in range(rows)]) for _ in range(16)]
        for i in range(5):
            vec.step(batches[i % 16])
        vec.call("timed", reset=True)
        steps, pids = 0, vec.worker_pids
        first = CpuSnapshot.take(pids)
        while time.perf_counter() < first.wall_s + seconds:
            vec.step(batches[steps % 16])
            steps += 1
        last = CpuSnapshot.take(pids, clocks_first=True)
        in_env, in_env_cpu = (sum(column) for column in zip(*vec.call("timed")))
    finally:
        vec.close()
    return _costs(first, last, steps * rows, workers, in_env, in_env_cpu)


@dataclass(frozen=True)
class RowCosts:
    """What ``time_in_env`` measured: rows per second, the workers' share of their time in the env's
    ``step``, and the CPU milliseconds a row costs. The workers' whole CPU time (and so the cores busy)
    is ``None`` where other processes' CPU time cannot be read here; the rest is always measured."""

    rows_per_s: float
    share_in_env_step: float
    caller_cpu_ms_per_row: float
    env_step_cpu_ms_per_row: float
    workers_cpu_ms_per_row: float | None
    cores_busy: float | None

    def line(self, name: str) -> str:
        """This measurement as one line, for the configuration ``name``."""
        line = (
            f"torchwm {name}: {self.rows_per_s:,.0f} rows/s, workers {self.share_in_env_step:.0%} of their time "
            f"in the env's step; CPU per row: caller {self.caller_cpu_ms_per_row:.3f} ms"
        )
        env_cpu = self.env_step_cpu_ms_per_row
        if self.workers_cpu_ms_per_row is None or self.cores_busy is None:
            return line + f", the env's step {env_cpu:.3f} ms (the workers' whole CPU time is not readable here)"
        total = self.workers_cpu_ms_per_row + self.caller_cpu_ms_per_row
        return line + (
            f", workers {self.workers_cpu_ms_per_row:.3f} ms, of which the env's step {env_cpu:.3f} ms "
            f"({env_cpu / total:.0%} of all); {self.cores_busy:.2f} cores busy"
        )


def _costs(
    first: CpuSnapshot, last: CpuSnapshot, rows: int, workers: int, in_env: float, in_env_cpu: float
) -> RowCosts:
    elapsed = last.wall_s - first.wall_s
    caller_cpu = last.parent_cpu_s - first.parent_cpu_s
    workers_cpu = None
    if first.workers_cpu_s is not None and last.workers_cpu_s is not None:
        workers_cpu = last.workers_cpu_s - first.workers_cpu_s
    return RowCosts(
        rows_per_s=rows / elapsed,
        share_in_env_step=in_env / (workers * elapsed),
        caller_cpu_ms_per_row=1e3 * caller_cpu / rows,
        env_step_cpu_ms_per_row=1e3 * in_env_cpu / rows,
        workers_cpu_ms_per_row=None if workers_cpu is None else 1e3 * workers_cpu / rows,
        cores_busy=None if workers_cpu is None else (caller_cpu + workers_cpu) / elapsed,
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", choices=sorted(MA_CASES), default="pistonball")
    parser.add_argument("--workers-envs", default="2x2", help="WORKERSxENVS for time_in_env")
    parser.add_argument("--seconds", type=float, default=4.0)
    parser.add_argument(
        "--no-copy", dest="copy", action="store_false", help="TorchVectorizedEnv(copy=False): no copy of the batch"
    )
    args = parser.parse_args(argv)
    workers, envs = (int(n) for n in args.workers_envs.split("x"))
    spread = step_spread(args.case, workers=workers)
    alone_ms = env_ms_per_row(MA_CASES[args.case][0], 1.0)  # the bench's own figure (its JSON's env_ms_per_row)
    print(
        f"{args.case}: one env's step {spread['mean_ms']:.2f} ms (std {spread['std_ms']:.2f}; CPU "
        f"{alone_ms:.3f} ms per row, in this process); a sync batch over {workers} workers "
        f"waits for the slowest: {spread['barrier']:.2f}x the mean"
    )
    for pool in [0, *pool_sizes(workers)]:
        measured = time_in_env(args.case, workers, envs, pool, args.seconds, args.copy)
        print(measured.line(config_name(workers, envs, pool) + ("" if args.copy else " copy=False")))


if __name__ == "__main__":
    main()

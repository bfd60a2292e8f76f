"""Ray backend throughput against the local process backend on one machine, side by side in one run.

``python benches/python/ray_bench.py [--seconds S] [--rounds R] [--address ADDR]``: the same envs,
workers and envs per worker under ``TorchVectorizedEnv`` (local processes, shared memory) and
``RayVectorEnv`` (Ray actors, object store), interleaved round by round so a change of load on the
machine hits both alike. Rows give median steps/s and ``ray_x``: the median over rounds of Ray's rate
over the local backend's in the same round.
"""

from __future__ import annotations

import argparse
import json
import os
import warnings
from collections.abc import Callable
from functools import partial
from typing import Any

import gymnasium as gym
import numpy as np

from torchwm.benchmarks.core.timing import steps_per_second
from torchwm.benchmarks.process.envs import BusyEnv


def _cartpole() -> gym.Env:
    return gym.make("CartPole-v1")


def _atari_block(num_envs: int) -> Any:
    from torchwm import AtariVectorEnv

    return AtariVectorEnv("pong", num_envs=num_envs, num_threads=1)


def _cases(workers: int) -> list[tuple[str, Callable[[], Any], int, int]]:
    """(name, factory, envs per worker, actions) per case."""
    return [
        ("cartpole", _cartpole, 16, 2),
        ("busy_1ms", partial(BusyEnv, 1.0), 4, 2),
        ("atari_pong_block", partial(_atari_block, 8), 8, 6),
    ]


def _make(backend: str, factory: Callable[[], Any], workers: int, per_worker: int) -> Any:
    if backend == "ray":
        from torchwm.ray import RayVectorEnv

        return RayVectorEnv(factory, workers, per_worker, num_cpus=0)
    if factory.__class__ is partial and factory.func is _atari_block:
        # The local comparison for blocks: one AtariVectorEnv of all the envs in this process.
        from torchwm import AtariVectorEnv

        return AtariVectorEnv("pong", num_envs=workers * per_worker, num_threads=workers)
    from torchwm import TorchVectorizedEnv

    return TorchVectorizedEnv(factory, workers, per_worker)


def _measure(
    backend: str, factory: Callable[[], Any], workers: int, per_worker: int, actions: int, seconds: float
) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        env = _make(backend, factory, workers, per_worker)
    try:
        return steps_per_second(env, seconds, batch_size=workers * per_worker, num_actions=actions)
    finally:
        env.close()


def run_ray_benchmarks(
    seconds: float = 3.0, rounds: int = 3, workers: int = 2, address: str | None = None
) -> list[dict[str, Any]]:
    """Every case under both backends, ``rounds`` interleaved rounds of ``seconds / rounds`` each."""
    import ray

    if not ray.is_initialized():
        ray.init(address=address, include_dashboard=False, log_to_driver=False)
    per_run = max(0.5, seconds / max(1, rounds))
    rows = []
    for case, factory, per_worker, actions in _cases(workers):
        rates: dict[str, list[float]] = {"local": [], "ray": []}
        for _ in range(max(1, rounds)):
            for backend, backend_rates in rates.items():
                backend_rates.append(_measure(backend, factory, workers, per_worker, actions, per_run))
        ratios = [ray / local for ray, local in zip(rates["ray"], rates["local"])]
        for backend, backend_rates in rates.items():
            rows.append(
                {
                    "case": case,
                    "backend": backend,
                    "workers": workers,
                    "envs_per_worker": per_worker,
                    "steps_per_s": round(float(np.median(backend_rates))),
                    "ray_x": round(float(np.median(ratios)), 3),
                    "ray_x_range": [round(min(ratios), 3), round(max(ratios), 3)],
                    "load_avg_1min": round(os.getloadavg()[0], 2),
                    "cpus": os.cpu_count(),
                }
            )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="measured seconds per case and backend")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--address", default=None, help="Ray cluster to join (default: start a local one)")
    args = parser.parse_args()
    for row in run_ray_benchmarks(args.seconds, args.rounds, args.workers, args.address):
        print(json.dumps(row))


if __name__ == "__main__":
    main()

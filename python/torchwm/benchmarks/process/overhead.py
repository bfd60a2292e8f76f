"""Where a batch of the process vectorizer goes: ``python -m torchwm.benchmarks.process.overhead``.

Steps ``TorchVectorizedEnv`` at each ``WORKERSxENVS`` shape over envs that do nothing (``--env noop``,
:class:`NoopEnv`: all of a batch is the vectorizer's own cost) or CartPole (``--env cartpole``), and
reports per batch, as the median (and min..max) of ``--repeats`` spans: the wall time; the CPU time of
the parent (``step_async`` + ``step_wait``: actions in, observations out, the wait); the CPU time of each
worker (its wait for the command, its step loop, its results into shared memory), read by
``cpu_time.pid_cpu_seconds``; and the vectorizer's overhead by CPU time: the parent's CPU per batch, and
a worker's CPU per batch beyond its envs' own steps (one env's step CPU, measured alone, times the envs
per worker). Both are checked against ``TARGET_US``. A worker's figure includes its polling for the
next command (the doorbells' patience), so it is an upper bound on its transport cost. CPU time is
steady on a busy machine, where wall time is not. ``--pool N``: pool mode, a batch of the envs of the
first ``N`` workers to finish (``send``/``recv``); a worker's figures are then per batch it steps.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from typing import Any

import numpy as np

from torchwm import _platform
from torchwm.benchmarks.core.batch_cost import BatchCost, net_of_envs
from torchwm.benchmarks.core.cpu_time import CpuSnapshot, cpu_source
from torchwm.benchmarks.core.machine import cores
from torchwm.benchmarks.process.envs import NoopEnv, cartpole, step_cost_ms
from torchwm.process import TorchVectorizedEnv

TARGET_US = 100.0  # the vectorizer's overhead per batch, microseconds of CPU: parent, and each worker
ENVS: dict[str, Callable[[], Any]] = {"noop": NoopEnv, "cartpole": cartpole}


def _median_range(values: list[float]) -> tuple[float, float, float]:
    return float(np.median(values)), min(values), max(values)


def time_spans(
    envs: Any, batches: int, repeats: int, env_alone: Callable[[], float]
) -> tuple[list[BatchCost], list[float]]:
    """``repeats`` spans of ``batches`` steps each (after a warm-up), what a batch cost in each; before
    each span, ``env_alone()`` (one env's step CPU, us): it moves with the machine's load as the
    workers' does, so each span is set against its own."""
    actions = np.zeros(envs.batch_size, np.int64)
    for _ in range(min(500, batches)):
        envs.step(actions)
    pids = envs.worker_pids
    costs, alone = [], []
    for _ in range(repeats):
        alone.append(env_alone())
        before = CpuSnapshot.take(pids)
        for _ in range(batches):
            envs.step(actions)
        costs.append(BatchCost.between(before, CpuSnapshot.take(pids, clocks_first=True), batches))
    return costs, alone


def overhead_row(
    costs: list[BatchCost], workers: int, envs_per_worker: int, env_step_us: list[float], pool: int = 0
) -> dict[str, Any]:
    """The per-batch figures (median over spans, and min..max) and the overhead verdict; span ``i``'s
    worker overhead is its worker CPU beyond ``envs_per_worker`` x ``env_step_us[i]``. ``pool``: the
    workers a batch steps (0: all of them, sync mode)."""
    wall = _median_range([c.wall_us for c in costs])
    parent = _median_range([c.parent_cpu_us for c in costs])
    # Each worker's mean CPU per batch it steps: the workers' total over the workers a batch steps (they
    # run alike; in pool mode a waiting worker's polling is counted in too).
    per_worker = [(c.workers_cpu_us or 0.0) / (pool or workers) for c in costs]
    worker = _median_range(per_worker)
    net = float(np.median([net_of_envs(w, envs_per_worker, e) for w, e in zip(per_worker, env_step_us)]))
    return {
        "shape": f"{workers}x{envs_per_worker}" + (f" pool{pool}" if pool else ""),
        "cores": cores(),
        "wall_us": round(wall[0], 1),
        "wall_us_range": [round(wall[1], 1), round(wall[2], 1)],
        "parent_cpu_us": round(parent[0], 1),
        "parent_cpu_us_range": [round(parent[1], 1), round(parent[2], 1)],
        "worker_cpu_us": round(worker[0], 1),
        "worker_cpu_us_range": [round(worker[1], 1), round(worker[2], 1)],
        "env_cpu_us_per_worker": round(envs_per_worker * float(np.median(env_step_us)), 1),
        "worker_overhead_cpu_us": round(net, 1),
        "target_us": TARGET_US,
        "parent_target_met": parent[0] <= TARGET_US,
        "worker_target_met": net <= TARGET_US,
    }


def measure(
    num_workers: int, envs_per_worker: int, batches: int, env: str = "noop", repeats: int = 3, pool: int = 0
) -> dict[str, Any]:
    """Per-batch wall and CPU microseconds of ``repeats`` x ``batches`` steps at one shape; ``pool``: a
    batch of that many workers' envs (0: sync mode, every env)."""
    if cpu_source() is None:
        raise RuntimeError("no way to read the workers' CPU time here (no /proc): install psutil")
    if not 0 <= pool < num_workers:
        raise ValueError(f"pool is {pool}: a batch of 1 to {num_workers - 1} workers' envs, or 0 (sync mode)")
    factory = ENVS[env]
    envs = TorchVectorizedEnv(factory, num_workers, envs_per_worker, batch_size=pool * envs_per_worker or None)
    try:
        envs.reset(seed=0)
        costs, alone = time_spans(envs, batches, max(1, repeats), lambda: step_cost_ms(factory, 2000) * 1e3)
    finally:
        envs.close()
    transport = "portable" if _platform.PORTABLE else "linux"
    return {"env": env, "transport": transport, **overhead_row(costs, num_workers, envs_per_worker, alone, pool)}


def verdict(row: dict[str, Any]) -> str:
    """One line saying what the overhead figures are and whether each is within the target."""

    def met(ok: bool) -> str:
        return "met" if ok else "NOT met"

    return (
        f"{row['env']} {row['shape']}: vectorizer overhead per batch, CPU time, target <= {row['target_us']:.0f} us:"
        f" parent {row['parent_cpu_us']:.0f} us ({met(row['parent_target_met'])});"
        f" each worker {row['worker_overhead_cpu_us']:.0f} us beyond its envs' own"
        f" {row['env_cpu_us_per_worker']:.0f} us, polling for the next command included"
        f" ({met(row['worker_target_met'])}); wall {row['wall_us']:.0f} us per batch"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers-envs", default="1x32,2x16,4x8", help="WORKERSxENVS shapes")
    parser.add_argument("--batches", type=int, default=20_000, help="batches timed per shape and repeat")
    parser.add_argument("--repeats", type=int, default=3, help="timed spans per shape: the median is reported")
    parser.add_argument("--env", choices=sorted(ENVS), default="noop", help="the envs stepped (default: noop)")
    parser.add_argument("--pool", type=int, default=0, help="pool mode: a batch of N workers' envs (default 0: sync)")
    args = parser.parse_args(argv)
    for shape in args.workers_envs.split(","):
        workers, envs_per_worker = (int(part) for part in shape.lower().split("x"))
        row = measure(workers, envs_per_worker, args.batches, args.env, args.repeats, args.pool)
        print(json.dumps(row), flush=True)
        print(verdict(row), flush=True)


if __name__ == "__main__":
    main()

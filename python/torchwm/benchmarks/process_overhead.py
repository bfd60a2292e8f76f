"""Where a batch of the process vectorizer goes: ``python -m torchwm.benchmarks.process_overhead``.

Steps ``TorchVectorizedEnv`` over envs that do nothing (:class:`NoopEnv`), so that all of a batch is
the vectorizer's own cost, at each ``WORKERSxENVS`` shape, and reports per batch: the wall time, the
CPU time of the parent (``step_async`` + ``step_wait``: actions in, observations out, the wait) and of
each worker (its wait for the command, its step loop, its results into shared memory), read from
``/proc``. CPU time is steady on a busy machine, where wall time is not.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from typing import Any

import numpy as np

from torchwm.benchmarks.process_envs import NoopEnv
from torchwm.process import TorchVectorizedEnv


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of process ``pid``."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measure(num_workers: int, envs_per_worker: int, batches: int) -> dict[str, Any]:
    """Per-batch wall and CPU microseconds of ``batches`` steps at one shape."""
    envs = TorchVectorizedEnv(NoopEnv, num_workers, envs_per_worker)
    try:
        envs.reset(seed=0)
        actions = np.zeros(envs.num_envs, np.int64)
        for _ in range(min(500, batches)):
            envs.step(actions)
        pids = envs.worker_pids
        workers_before = [cpu_seconds(pid) for pid in pids]
        parent_before, wall_before = time.process_time(), time.perf_counter()
        for _ in range(batches):
            envs.step(actions)
        wall = time.perf_counter() - wall_before
        parent = time.process_time() - parent_before
        workers = [cpu_seconds(pid) - before for pid, before in zip(pids, workers_before)]
    finally:
        envs.close()
    per_batch = 1e6 / batches
    return {
        "shape": f"{num_workers}x{envs_per_worker}",
        "cores": len(os.sched_getaffinity(0)),
        "wall_us": round(wall * per_batch, 1),
        "parent_cpu_us": round(parent * per_batch, 1),
        "worker_cpu_us": round(float(np.mean(workers)) * per_batch, 1),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers-envs", default="1x32,2x16,4x8", help="WORKERSxENVS shapes")
    parser.add_argument("--batches", type=int, default=20_000, help="batches timed per shape")
    args = parser.parse_args(argv)
    for shape in args.workers_envs.split(","):
        workers, envs_per_worker = (int(part) for part in shape.lower().split("x"))
        print(json.dumps(measure(workers, envs_per_worker, args.batches)), flush=True)


if __name__ == "__main__":
    main()

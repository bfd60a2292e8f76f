"""What the portable transport (macOS's column of the platform seam) costs against Linux's, measured
on Linux: ``python -m torchwm.benchmarks.process.transport_cost``.

Runs ``overhead`` (``python -m torchwm.benchmarks.process.overhead``) at each shape in child
processes, alternately with ``TORCHWM_PORTABLE=0`` and ``=1`` (a process's column is fixed once it
asks), ``--pairs`` times, and reports each column's median per-batch wall and CPU time and the portable
one over Linux's, with the min..max of the per-pair ratios. The portable doorbell sleep polls (20 us growing to 1 ms) where Linux's futex is
woken at once, so the portable column costs most where waiters sleep: more processes than cores,
or a busy machine.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from typing import Any

import numpy as np

COLUMNS = {"linux": "0", "portable": "1"}
FIGURES = ("wall_us", "parent_cpu_us", "worker_cpu_us")


def measure_column(column: str, shape: str, env: str, batches: int) -> dict[str, Any]:
    """One ``overhead`` row at ``shape``, in a child process on ``column``."""
    command = [sys.executable, "-m", "torchwm.benchmarks.process.overhead", "--workers-envs", shape]
    command += ["--env", env, "--batches", str(batches), "--repeats", "1"]
    environment = dict(os.environ, TORCHWM_PORTABLE=COLUMNS[column])
    done = subprocess.run(command, env=environment, capture_output=True, text=True, check=True)
    row: dict[str, Any] = json.loads(next(line for line in done.stdout.splitlines() if line.startswith("{")))
    return row


def compare(pairs: list[tuple[dict[str, Any], dict[str, Any]]]) -> dict[str, Any]:
    """Each column's median of each figure, and portable over Linux: the median and min..max of the
    per-pair ratios."""
    summary: dict[str, Any] = {}
    for figure in FIGURES:
        linux = [pair[0][figure] for pair in pairs]
        portable = [pair[1][figure] for pair in pairs]
        ratios = [p / max(lx, 1e-9) for lx, p in zip(linux, portable)]
        summary[figure] = {
            "linux": round(float(np.median(linux)), 1),
            "portable": round(float(np.median(portable)), 1),
            "portable_over_linux": round(float(np.median(ratios)), 2),
            "ratio_range": [round(min(ratios), 2), round(max(ratios), 2)],
        }
    return summary


def compare_transports(shape: str, env: str = "noop", batches: int = 5000, pairs: int = 5) -> dict[str, Any]:
    """``pairs`` alternated runs of each column at ``shape``, compared (:func:`compare`)."""
    runs = [
        (measure_column("linux", shape, env, batches), measure_column("portable", shape, env, batches))
        for _ in range(max(1, pairs))
    ]
    return {"env": env, "shape": shape, "pairs": len(runs), **compare(runs)}


def line(row: dict[str, Any]) -> str:
    """One line: each figure, Linux's then the portable column's, and their ratio with its range."""
    parts = [
        f"{figure} {row[figure]['linux']:.0f} -> {row[figure]['portable']:.0f} "
        f"({row[figure]['portable_over_linux']:.2f}x, {row[figure]['ratio_range'][0]:.2f}..{row[figure]['ratio_range'][1]:.2f})"
        for figure in FIGURES
    ]
    return f"{row['env']} {row['shape']}, Linux -> portable transport, per batch (us): " + "; ".join(parts)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers-envs", default="1x32,2x16", help="WORKERSxENVS shapes")
    parser.add_argument("--env", choices=["noop", "cartpole"], default="noop")
    parser.add_argument("--batches", type=int, default=5000, help="batches timed per child process")
    parser.add_argument("--pairs", type=int, default=5, help="Linux/portable runs alternated per shape")
    args = parser.parse_args(argv)
    if not sys.platform.startswith("linux"):
        parser.error("both transports run only on Linux (elsewhere the portable one is the only one)")
    for shape in args.workers_envs.split(","):
        row = compare_transports(shape, args.env, args.batches, args.pairs)
        print(json.dumps(row), flush=True)
        print(line(row), flush=True)


if __name__ == "__main__":
    main()

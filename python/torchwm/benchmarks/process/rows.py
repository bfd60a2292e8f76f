"""The process suite's table rows: one per measured point, its median rate, the spread over rounds,
what a batch cost, and torchwm's rate over PufferLib's at the same shape and mode."""

from __future__ import annotations

from typing import Any

import numpy as np

from torchwm.benchmarks.core.round_spread import paired_ratios
from torchwm.benchmarks.process.rounds import Measured

__all__ = ["table_rows"]


def _median(values: list[float]) -> float:
    return float(np.median(values))


def _cost_columns(result: Measured) -> dict[str, float | None]:
    """The median over its rounds of each per-batch figure, microseconds."""
    costs = [s.cost for s in result.samples.values()]
    if not costs:
        return {"wall_us": None, "parent_cpu_us": None, "workers_cpu_us": None}
    workers = [c.workers_cpu_us for c in costs if c.workers_cpu_us is not None]
    return {
        "wall_us": round(_median([c.wall_us for c in costs]), 1),
        "parent_cpu_us": round(_median([c.parent_cpu_us for c in costs]), 1),
        "workers_cpu_us": round(_median(workers), 1) if workers else None,
    }


def table_rows(results: list[Measured], rounds: int | None = None) -> list[dict[str, Any]]:
    """One row per config: the median rate, its min and max over rounds, each round's rate (None where
    the config sat a round out), and per batch: wall time, the caller's CPU and the workers' CPU.
    torchwm's rows carry ``vs_pufferlib`` (and ``vs_pufferlib_async`` where that was measured): its
    rate over PufferLib's at the same shape and mode, the median of the per-round ratios."""
    rounds = rounds if rounds is not None else max((max(r.samples) + 1 for r in results if r.samples), default=0)
    by_key = {(r.config.case, r.config.backend, r.config.shape): r for r in results}
    rows = []
    for r in results:
        c = r.config
        rates = r.rates
        row: dict[str, Any] = {
            "case": c.case,
            "backend": c.backend,
            "mode": c.shape.mode,
            "workers_envs": c.label,
            "num_envs": c.shape.num_envs,
            "batch_size": c.shape.batch_size,
            "steps_per_s": round(r.median) if r.median is not None else None,
            "min_steps_per_s": round(min(rates)) if rates else None,
            "max_steps_per_s": round(max(rates)) if rates else None,
            "rounds": [None if x is None else round(x) for x in r.by_round(rounds)],
            **_cost_columns(r),
        }
        if r.skipped:
            row["skipped"] = r.skipped
        for peer in ("pufferlib", "pufferlib_async"):
            theirs = by_key.get((c.case, peer, c.shape))
            if c.backend == "torchwm" and theirs is not None and theirs.samples and r.samples:
                ratios = paired_ratios(r.by_round(rounds), theirs.by_round(rounds))
                row[f"vs_{peer}"] = round(_median(ratios), 2) if ratios else None
        rows.append(row)
    return rows

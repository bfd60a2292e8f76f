"""The multi-agent cases' side by side: every backend (``steppers``) over the same grid of
configurations (``cases.configs``), each judged at its best.

Every backend runs the same grid of workers x envs per worker, in sync mode and, for the two that have
one (torchwm, PufferLib), in pool mode: a batch of half the workers, the first to answer (``2x4 pool``,
an even number of workers), and with more than two workers a batch of one worker's envs (``4x4 pool1``:
more workers than cores, one waiting for its actions leaves its core to another), the same envs, seeds
and actions (of its own action dtype), and hands its caller the observations as its default does:
torchwm and SuperSuit a copy (as gymnasium's ``AsyncVectorEnv``), PufferLib views of its shared memory
(zero-copy, which costs the caller nothing); each is judged at its own best configuration. Rates are
rows (agent steps) per second, the median of interleaved rounds with their spread; the ratio's spread
is over rounds, torchwm's best configuration against the best other's in the same round. The grid
picks each backend's best configuration; a final (``final``) then measures torchwm's best against the
best other's in adjacent pairs, and its ratio judges the 1.3x target. Beside them: the CPU time of each
backend's processes per row (where psutil imports) and the env's own cost (``env_alone``): one env
stepped in this process with nothing around it, which bounds any vectorizer on this machine at
``cores / env_ms_per_row`` (``ceiling``, all cores free), and ``envs_alone``: at each configuration,
that many processes stepping the envs with no vectorizer at all, measured in the same rounds (so under
the same load). Where the best of these is under 1.3x the best other backend, no vectorizer can meet
the target here: the env's own work is the bound.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from torchwm.benchmarks.core import round_spread
from torchwm.benchmarks.core.machine import cores
from torchwm.benchmarks.core.round_spread import RATIO_SPREAD, settled
from torchwm.benchmarks.core.rounds import measure_adaptively
from torchwm.benchmarks.core.unavailable import Unavailable
from torchwm.benchmarks.multi_agent import steppers
from torchwm.benchmarks.multi_agent.cases import MA_CASES, case_missing, config_name, configs, pool_sizes
from torchwm.benchmarks.multi_agent.env_alone import ALONE, alone_rate, env_ms_per_row
from torchwm.benchmarks.multi_agent.final import run_final
from torchwm.benchmarks.multi_agent.steppers import MA_BACKENDS, POOL_BACKENDS

__all__ = ["TARGET", "run_multi_agent"]

TARGET = 1.3  # torchwm / the best of the others


def run_multi_agent(
    seconds: float,
    rounds: int,
    cases: list[str] | None = None,
    *,
    max_rounds: int | None = None,
    ratio_spread: float = RATIO_SPREAD,
    grid: bool = True,
) -> dict[str, Any]:
    """Every case x configuration x backend in interleaved rounds of ``seconds`` each (and the env
    alone once per round): ``rounds`` of them, then more until torchwm's per-round ratio to the best
    other spreads by less than ``ratio_spread``, up to ``max_rounds`` (default ``rounds``). A row per
    case with each backend's best configuration, torchwm's ratio to the best other (median and spread
    over rounds), and the env's ceiling; then the final (``final``), whose ratio judges the
    1.3x target. ``grid=False``: one configuration, no final (a smoke run)."""
    most = max(rounds, max_rounds or rounds)
    rows = [_case_rounds(case, seconds, rounds, most, ratio_spread, grid) for case in cases or list(MA_CASES)]
    return {"target": TARGET, "cores": cores(), "ratio_spread": ratio_spread, "rows": rows}


def _case_rounds(case: str, seconds: float, least: int, most: int, ratio_spread: float, grid: bool) -> dict[str, Any]:
    """One case's row: ``least`` rounds, then more while torchwm's ratio is unsettled (up to ``most``),
    then the final where the grid ran; a case not installed here is skipped, with the reason."""
    skipped = case_missing(case)
    runs: dict[str, dict[str, list[tuple[float, float | None]]]] = {b: {} for b in MA_BACKENDS}
    why: dict[str, str] = {}
    runs[ALONE] = {}
    env_ms: list[float] = []

    def one_round(_cases: list[str], _index: int) -> None:
        _round(case, seconds, runs, why, env_ms, grid)

    def pending(cases: list[str], _done: int) -> list[str]:
        return [] if _settled(_case_row(case, runs, why, env_ms, None, grid), ratio_spread) else cases

    if not skipped and least >= 1:
        measure_adaptively([case], one_round, least, most, pending)
    row = _case_row(case, runs, why, env_ms, skipped, grid)
    if grid and "backends" in row:
        _add_final(row, case, seconds, ratio_spread)
    return row


def _add_final(row: dict[str, Any], case: str, seconds: float, ratio_spread: float) -> None:
    """The head-to-head final of torchwm's best against the best other's (``final``); its
    ratio, measured in adjacent pairs, is the verdict (``target_met``) where it ran."""

    def measure(backend: str, workers: int, envs: int, pool: int) -> float:
        return steppers.measure(backend, case, workers, envs, seconds, pool)[0]

    final = run_final(row["backends"], measure, TARGET, ratio_spread)
    if final is not None:
        row["final"] = final
        row["target_met"] = final["target_met"]


def _round(
    case: str,
    seconds: float,
    runs: dict[str, dict[str, list[tuple[float, float | None]]]],
    why: dict[str, str],
    env_ms: list[float],
    grid: bool,
) -> None:
    """One interleaved round of every configuration and backend, and of the envs alone."""
    env_ms.append(env_ms_per_row(MA_CASES[case][0], min(seconds, 1.0)))
    for workers, envs in configs(case, grid):
        for backend, pool in _backend_modes(workers, grid):
            if backend in why:
                continue
            try:
                run = steppers.measure(backend, case, workers, envs, seconds, pool)
            except Unavailable as reason:
                why[backend] = str(reason)
                continue
            runs[backend].setdefault(config_name(workers, envs, pool), []).append(run)
        alone = alone_rate(MA_CASES[case][0], workers, envs, seconds)
        runs[ALONE].setdefault(f"{workers}x{envs}", []).append((alone, None))


def _backend_modes(workers: int, grid: bool) -> list[tuple[str, int]]:
    """(backend, pool) pairs measured at ``workers``: each backend in sync mode (0); the pool mode of
    torchwm and PufferLib too, at each of ``pool_sizes`` (SuperSuit has none), except in a smoke run."""
    sizes = pool_sizes(workers) if grid else []
    return [(b, 0) for b in MA_BACKENDS] + [(b, size) for size in sizes for b in POOL_BACKENDS]


def _settled(row: dict[str, Any], target: float) -> bool:
    """Whether torchwm's per-round ratio to the best other has settled (or there is nothing to compare)."""
    if row.get("ratio_vs_best_other") is None:
        return True
    return settled(round_spread.ratio_spread(row["ratio_rounds"]), target)


def _config_stats(runs: list[tuple[float, float | None]]) -> dict[str, Any]:
    rates = [rate for rate, _ in runs]
    cpu = [ms for _, ms in runs if ms is not None]
    return {
        "median": float(np.median(rates)),
        "min": min(rates),
        "max": max(rates),
        "rounds": rates,
        "cpu_ms_per_row": float(np.median(cpu)) if cpu else None,
    }


def _best(per_config: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The configuration of the highest median rate, with its figures."""
    name = max(per_config, key=lambda c: per_config[c]["median"])
    return {"workers_envs": name, **per_config[name]}


def _case_row(
    case: str,
    runs: dict[str, dict[str, list[tuple[float, float | None]]]],
    why: dict[str, str],
    env_ms: list[float],
    skipped: str | None,
    grid: bool = True,
) -> dict[str, Any]:
    row: dict[str, Any] = {
        "case": case,
        "env": MA_CASES[case][1],
        "configs": [
            config_name(w, e, pool)
            for w, e in configs(case, grid)
            for pool in sorted({p for _, p in _backend_modes(w, grid)}, key=lambda p: (p != 0, -p))
        ],
    }
    if skipped or not env_ms:
        return {**row, "skipped": skipped} if skipped else {**row, "ratio_vs_best_other": None}
    stats = {b: {c: _config_stats(r) for c, r in per.items()} for b, per in runs.items()}
    row["per_config"] = stats
    row["backends"] = {b: _best(stats[b]) if stats[b] else {"skipped": why.get(b)} for b in MA_BACKENDS}
    row[ALONE] = _best(stats[ALONE])
    row.update(_ratios(row["backends"]))
    # torchwm's best in sync mode alone (every row each batch, as SuperSuit's), beside its best of both.
    sync = {c: v for c, v in stats["torchwm"].items() if " pool" not in c}
    row["torchwm_sync"] = _best(sync) if sync else {"skipped": why.get("torchwm")}
    row["sync_ratio_vs_best_other"] = _ratios({**row["backends"], "torchwm": row["torchwm_sync"]})[
        "ratio_vs_best_other"
    ]
    row["env_ms_per_row"] = float(np.median(env_ms))
    row["ceiling_rows_per_s"] = cores() * 1e3 / row["env_ms_per_row"]
    row.update(_bounds(row))
    return row


def _bounds(row: dict[str, Any]) -> dict[str, float | None]:
    """How far any vectorizer could get past the best other backend: the env's ceiling over its rate
    (all cores free), and its CPU per row over the env's own (on the CPU share it had, with nothing
    spent around the env: the bound under load too, where the ceiling overstates)."""
    others = [row["backends"][b] for b in MA_BACKENDS[1:] if "median" in row["backends"][b]]
    if not others:
        return {"ceiling_vs_best_other": None, "cpu_bound_vs_best_other": None, "alone_vs_best_other": None}
    top = max(others, key=lambda b: b["median"])
    cpu = top["cpu_ms_per_row"]
    return {
        "ceiling_vs_best_other": row["ceiling_rows_per_s"] / top["median"],
        "cpu_bound_vs_best_other": cpu / row["env_ms_per_row"] if cpu else None,
        "alone_vs_best_other": row[ALONE]["median"] / top["median"],
    }


def _ratios(best: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """torchwm's best over the best other's best: of the medians, and round by round (its spread)."""
    others = [best[b] for b in MA_BACKENDS[1:] if "median" in best[b]]
    ours = best["torchwm"]
    if not others or "median" not in ours:
        return {"ratio_vs_best_other": None, "ratio_rounds": [], "target_met": False}
    top = max(others, key=lambda b: b["median"])
    rounds = [a / b for a, b in zip(ours["rounds"], top["rounds"])]
    ratio = ours["median"] / top["median"]
    return {"ratio_vs_best_other": ratio, "ratio_rounds": rounds, "target_met": ratio >= TARGET}

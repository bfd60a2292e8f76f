"""The process suite's summary: each backend's best point per case, torchwm's best against each other
backend's best as a per-round ratio with its spread, and the rule that says whether more rounds are
needed (:func:`unsettled`)."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from torchwm.benchmarks.core.round_spread import RATIO_SPREAD, RatioSpread, paired_ratios, ratio_spread, settled
from torchwm.benchmarks.process.steppers import BACKENDS, POOL_BACKENDS

__all__ = ["RATIO_SPREAD", "summarize", "unsettled"]


def _best(rows: list[dict[str, Any]], case: str, backend: str, mode: str | None = None) -> dict[str, Any] | None:
    candidates = [
        r
        for r in rows
        if r["case"] == case and r["backend"] == backend and r["steps_per_s"] and mode in (None, r["mode"])
    ]
    return max(candidates, key=lambda r: r["steps_per_s"]) if candidates else None


BRIEF = ("steps_per_s", "workers_envs", "mode", "batch_size")
COSTS = ("min_steps_per_s", "max_steps_per_s", "wall_us", "parent_cpu_us", "workers_cpu_us")


def _brief(row: dict[str, Any]) -> dict[str, Any]:
    return {k: row[k] for k in BRIEF} | {k: row[k] for k in COSTS if k in row}


def best_ratio(ours: dict[str, Any], theirs: dict[str, Any]) -> dict[str, Any] | None:
    """Our row's rate over theirs, per round where both were measured (the rows' ``rounds``), with
    the spread; None where they share no round."""
    spread = ratio_spread(paired_ratios(ours.get("rounds", []), theirs.get("rounds", [])))
    if spread is None:
        return None
    return {k: v if k == "rounds" or v is None else round(v, 4) for k, v in asdict(spread).items()}


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Per case: each backend's best row (over shapes and modes; and per mode), and torchwm's best over
    each peer's best: ``torchwm_best_ratio`` (the per-round ratio's median, interval and spread) and
    ``torchwm_best_x`` (that median; the ratio of the two medians where the rows carry no rounds)."""
    summary: dict[str, Any] = {}
    for case in dict.fromkeys(r["case"] for r in rows):
        best = {b: _best(rows, case, b) for b in BACKENDS}
        by_mode = {mode: {b: _best(rows, case, b, mode) for b in POOL_BACKENDS} for mode in ("sync", "pool")}
        summary[case] = {
            "best": {b: _brief(r) for b, r in best.items() if r},
            "best_by_mode": {m: {b: _brief(r) for b, r in bs.items() if r} for m, bs in by_mode.items()},
            **_versus(best),
        }
    return summary


def _versus(best: dict[str, dict[str, Any] | None]) -> dict[str, dict[str, Any]]:
    ours = best["torchwm"]
    ratio: dict[str, Any] = {}
    times: dict[str, float] = {}
    for peer, theirs in best.items():
        if ours is None or theirs is None or peer == "torchwm":
            continue
        ratio[peer] = best_ratio(ours, theirs)
        times[peer] = round(ratio[peer]["median"] if ratio[peer] else ours["steps_per_s"] / theirs["steps_per_s"], 2)
    return {"torchwm_best_ratio": {b: r for b, r in ratio.items() if r is not None}, "torchwm_best_x": times}


def unsettled(summary: dict[str, Any], target: float = RATIO_SPREAD) -> list[tuple[str, str]]:
    """``(case, peer)`` for every ratio of torchwm's best to a peer's best whose spread is not yet
    measured or not below ``target``: more rounds are needed for it."""
    return [
        (case, peer)
        for case, s in summary.items()
        for peer in s["torchwm_best_x"]
        if not settled(_spread(s["torchwm_best_ratio"].get(peer)), target)
    ]


def _spread(entry: dict[str, Any] | None) -> RatioSpread | None:
    return RatioSpread(**entry) if entry else None

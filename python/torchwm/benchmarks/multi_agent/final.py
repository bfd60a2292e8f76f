"""The multi-agent cases' final: torchwm's best configuration against the best other backend's, head to head.

The grid (``grid``) picks each backend's best configuration from rounds in which two
backends' measurements can be a minute apart; on a machine whose speed drifts over seconds
(docs/performance.md) that widens the per-round ratio, and a best median picked out of many noisy ones
overstates its backend (both sides' winners alike). The final measures the two winners again, and only
them, in adjacent pairs whose order alternates (torchwm first, then the other first), so that a drift
within a pair counts against each side equally often, until the ratio's spread is below the target
(``round_spread``), from ``least`` pairs up to ``most``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from torchwm.benchmarks.core.round_spread import ratio_spread, settled

__all__ = ["FINAL_LEAST", "FINAL_MOST", "final_line", "parse_config", "run_final"]

FINAL_LEAST = 8
FINAL_MOST = 24

# measure(backend, workers, envs, workers per batch or 0) -> rows per second
Measure = Callable[[str, int, int, int], float]


def parse_config(name: str) -> tuple[int, int, int]:
    """A configuration's name as ``cases.config_name`` writes it -> (workers, envs per
    worker, workers per batch: 0 in sync mode): ``"2x4"`` -> ``(2, 4, 0)``, ``"4x4 pool"`` -> ``(4, 4, 2)``
    (half), ``"4x4 pool1"`` -> ``(4, 4, 1)``."""
    shape, _, mode = name.partition(" ")
    if mode != "" and (not mode.startswith("pool") or not (mode == "pool" or mode[4:].isdigit())):
        raise ValueError(f"a configuration is WORKERSxENVS, 'WORKERSxENVS pool' or 'WORKERSxENVS poolN', got {name!r}")
    workers, envs = (int(n) for n in shape.split("x"))
    pool = 0 if not mode else workers // 2 if mode == "pool" else int(mode[4:])
    return workers, envs, pool


def _contenders(backends: dict[str, dict[str, Any]]) -> tuple[str, str] | None:
    """torchwm and the other backend with the highest median at its best; None unless both ran."""
    others = [b for b in backends if b != "torchwm" and "median" in backends[b]]
    if "median" not in backends.get("torchwm", {}) or not others:
        return None
    return "torchwm", max(others, key=lambda b: backends[b]["median"])


def run_final(
    backends: dict[str, dict[str, Any]],
    measure: Measure,
    target: float,
    spread_target: float,
    least: int = FINAL_LEAST,
    most: int = FINAL_MOST,
) -> dict[str, Any] | None:
    """Pairs of torchwm's best configuration and the best other's (``backends``: each backend's best,
    as the grid's row has them) until the ratio settles; None when either side did not run."""
    contenders = _contenders(backends)
    if contenders is None:
        return None
    sides = [(b, parse_config(backends[b]["workers_envs"])) for b in contenders]
    pairs: list[tuple[float, float]] = []
    while len(pairs) < max(least, 1) or (len(pairs) < most and not settled(_spread(pairs), spread_target)):
        order = sides if len(pairs) % 2 == 0 else sides[::-1]
        rates = {backend: measure(backend, *config) for backend, config in order}
        pairs.append((rates[contenders[0]], rates[contenders[1]]))
    spread = _spread(pairs)
    assert spread is not None
    return {
        "torchwm": backends["torchwm"]["workers_envs"],
        "other": contenders[1],
        "other_workers_envs": backends[contenders[1]]["workers_envs"],
        "pairs": [list(pair) for pair in pairs],
        "ratio": spread.median,
        "low": spread.low,
        "high": spread.high,
        "spread": spread.spread,
        "target_met": spread.median >= target,
    }


def _spread(pairs: list[tuple[float, float]]) -> Any:
    return ratio_spread([ours / theirs for ours, theirs in pairs])


def final_line(final: dict[str, Any], target: float) -> str:
    """The final's verdict in one line."""
    spread = "" if final["spread"] is None else f", spread {final['spread']:.0%}"
    met = "met" if final["target_met"] else "not met"
    return (
        f"head to head, {len(final['pairs'])} adjacent pairs: torchwm {final['torchwm']} / {final['other']} "
        f"{final['other_workers_envs']} {final['ratio']:.2f}x (interval {final['low']:.2f}..{final['high']:.2f}"
        f"{spread}), target {target}x {met}"
    )

"""How far interleaved rounds agree, and when there are enough of them.

A ratio between two backends is taken per round (both measured in that round, so a change of load hits
both) and summarized by its median. Its *spread* is the width of a distribution-free confidence
interval of that median, relative to it: the order statistics ``k`` and ``n - k + 1`` of the ``n``
per-round ratios, with ``k`` as large as keeps the interval's coverage at least ``COVERAGE``. Unlike
the min–max range of the rounds, which only widens as rounds are added, this narrows with more
rounds, so "add rounds until the spread is below 10%" ends. Up to 4 rounds (too few for the coverage)
it is the min–max range.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from math import comb

__all__ = ["COVERAGE", "RATIO_SPREAD", "RatioSpread", "median_interval", "paired_ratios", "ratio_spread", "settled"]

COVERAGE = 0.9
RATIO_SPREAD = 0.10  # the default target: rounds are added until a ratio's spread is below this


def _rank(n: int, coverage: float) -> int:
    """The largest ``k >= 1`` such that ``[x_(k), x_(n-k+1)]`` covers the median with probability at
    least ``coverage`` (it misses when ``k`` or more values fall on one side: two binomial tails)."""
    k = 1
    while k + 1 <= (n + 1) // 2:
        miss = 2 * sum(comb(n, i) for i in range(k + 1)) / 2**n  # k+1 as the rank: P(at most k below)
        if 1 - miss < coverage:
            break
        k += 1
    return k


def median_interval(values: Sequence[float], coverage: float = COVERAGE) -> tuple[float, float]:
    """The ``coverage`` confidence interval of the median of ``values`` (min–max for 4 or fewer)."""
    if not values:
        raise ValueError("no values")
    ordered = sorted(values)
    k = _rank(len(ordered), coverage)
    return ordered[k - 1], ordered[len(ordered) - k]


def _median(values: Sequence[float]) -> float:
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


@dataclass(frozen=True)
class RatioSpread:
    """Per-round ratios summarized: their median, the median's interval (``low``, ``high``), its width
    relative to the median (``spread``, None from a single round) and the raw min and max."""

    median: float
    low: float
    high: float
    spread: float | None
    min: float
    max: float
    rounds: int


def paired_ratios(ours: Sequence[float | None], theirs: Sequence[float | None]) -> list[float]:
    """``ours[i] / theirs[i]`` for every round ``i`` where both were measured."""
    return [a / b for a, b in zip(ours, theirs) if a is not None and b is not None and b > 0]


def ratio_spread(ratios: Sequence[float], coverage: float = COVERAGE) -> RatioSpread | None:
    """Summary of per-round ratios; None without any."""
    if not ratios:
        return None
    median = _median(ratios)
    low, high = median_interval(ratios, coverage)
    spread = (high - low) / median if len(ratios) > 1 and median > 0 else None
    return RatioSpread(median, low, high, spread, min(ratios), max(ratios), len(ratios))


def settled(spread: RatioSpread | None, target: float) -> bool:
    """Enough rounds for this ratio: its spread is measured (two rounds or more) and below ``target``."""
    return spread is not None and spread.spread is not None and spread.spread < target

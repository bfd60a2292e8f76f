"""Interleaved rounds: every point measured once per round, so that a change of load on the machine hits
every point of a round alike; after the least rounds, more for the points a ratio still needs, until
none does or the most rounds are run (``round_spread`` says when a ratio is settled)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

__all__ = ["measure_adaptively"]

Point = TypeVar("Point")


def measure_adaptively(
    results: list[Point],
    measure: Callable[[list[Point], int], None],
    min_rounds: int,
    max_rounds: int,
    pending: Callable[[list[Point], int], list[Point]],
) -> int:
    """``min_rounds`` rounds of every point, then rounds of ``pending(results, rounds_done)`` only
    (the points a ratio still needs) until it names none or ``max_rounds`` is reached. ``measure``
    runs one round (points, index). Returns the number of rounds run."""
    rounds = 0
    while rounds < max(1, min_rounds):
        measure(results, rounds)
        rounds += 1
    while rounds < max_rounds:
        chosen = pending(results, rounds)
        if not chosen:
            break
        measure(chosen, rounds)
        rounds += 1
    return rounds

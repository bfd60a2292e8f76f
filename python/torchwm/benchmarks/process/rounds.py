"""The process suite's measured points and their interleaved rounds.

Every point (a :class:`Config`: case, backend, shape) is measured once per round, case after case, so a
change of load on the machine hits every point of a round alike. After the first rounds, more rounds
may be added for some points only (those a ratio still needs: see ``bench``, and the loop itself in
``core.rounds``); each sample keeps the index of its round, so that ratios pair only points measured in
the same round.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from torchwm.benchmarks.core.unavailable import Unavailable
from torchwm.benchmarks.process.sampling import Sample, measure_sample
from torchwm.benchmarks.process.shapes import Shape

__all__ = ["Config", "Measured", "measure_round"]


@dataclass(frozen=True)
class Config:
    """One measured point of a case: a backend in a shape."""

    case: str
    backend: str
    shape: Shape

    @property
    def label(self) -> str:
        """How tables name its shape: ``2x16`` for the process vectorizers, the env count for gymnasium's."""
        if self.backend == "gym_sync":
            return f"in-process x{self.shape.num_envs}"
        if self.backend == "gym_async":
            return f"{self.shape.num_envs}x1"
        return self.shape.workers_envs


@dataclass
class Measured:
    """A config's samples by round index (rounds it sat out are absent), or why it was skipped."""

    config: Config
    samples: dict[int, Sample] = field(default_factory=dict)
    skipped: str | None = None

    @property
    def rates(self) -> list[float]:
        return [s.steps_per_s for s in self.samples.values()]

    @property
    def median(self) -> float | None:
        return float(np.median(self.rates)) if self.samples else None

    def by_round(self, rounds: int) -> list[float | None]:
        """Its rate in each of ``rounds`` rounds, None where it was not measured."""
        return [self.samples[i].steps_per_s if i in self.samples else None for i in range(rounds)]


def measure_round(
    results: list[Measured],
    index: int,
    factories: dict[str, Callable[[], Any]],
    seconds: float,
    caller: Callable[[], None] | None,
    progress: Any = None,
) -> None:
    """Round ``index``: each of ``results`` (not skipped) measured once, in order (the sweep's: case
    after case). A config that is unavailable here is skipped from then on, with the reason."""
    for result in (r for r in results if r.skipped is None):
        c = result.config
        try:
            result.samples[index] = measure_sample(c.backend, factories[c.case], c.shape, seconds, caller)
        except Unavailable as why:
            result.skipped = str(why)
        if progress is not None:
            progress.update(1)

"""``torchwm.autotune``: the TorchVectorizedEnv shape that steps the caller's own env fastest on this
machine, measured, with the caller's policy time in the loop.

It times workers x envs per worker (x pool batch, where TorchVectorizedEnv has pool mode) for a fixed
number of envs, in interleaved rounds (a change of load on the machine hits every candidate alike),
and returns the keywords of the fastest median with the whole table::

    result = torchwm.autotune(make_my_env, num_envs=32, policy_ms=2.0)
    print(result)  # the table, fastest first
    envs = torchwm.TorchVectorizedEnv(make_my_env, **result.keywords)

The rate counted is env steps per second of the whole loop, the policy's time included: what a
trainer collecting experience gets. ``policy_ms`` is spent once per batch (``send``/``recv`` or
``step``), slept (a GPU forward pass leaves the CPU to the envs) or burned (``policy="burn"``: a CPU
forward pass competes with them).

It measures with the process suite's own timed loop (``torchwm.benchmarks.process.sampling``, the
caller's stand-in from ``torchwm.benchmarks.core.policies``), so that a shape it picks is the shape the
bench would rank first: the one import from this floor up into ``torchwm.benchmarks``, on purpose. Only
that loop and the measuring core it stands on are imported, none of the suites.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from torchwm.benchmarks.core.machine import cores as usable_cores
from torchwm.benchmarks.core.policies import caller_work
from torchwm.benchmarks.core.table import format_table
from torchwm.benchmarks.process.sampling import measure
from torchwm.benchmarks.process.shapes import Shape
from torchwm.errors import InvalidArgumentError

__all__ = ["TuneResult", "autotune", "candidate_shapes", "load_factory"]


@dataclass
class TuneResult:
    """What :func:`autotune` measured. ``keywords``: pass them to ``TorchVectorizedEnv`` with the env
    factory. ``table``: one row per candidate, fastest first: ``num_workers``, ``envs_per_worker``,
    ``batch_size``, ``steps_per_s`` (median over rounds), ``rounds`` (each round's rate) and
    ``relative`` (to the fastest)."""

    keywords: dict[str, int]
    table: list[dict[str, Any]]
    num_envs: int
    policy_ms: float
    policy: str
    cores: int
    skipped: list[str]

    def format_table(self) -> str:
        rows = [
            {**row, "steps_per_s": f"{row['steps_per_s']:,}", "relative": f"{row['relative']:.2f}"}
            for row in self.table
        ]
        return format_table(rows, ["num_workers", "envs_per_worker", "batch_size", "steps_per_s", "relative"])

    def __str__(self) -> str:
        caller = f"{self.policy} {self.policy_ms:g} ms per batch" if self.policy_ms > 0 else "no policy time"
        lines = [
            f"{self.num_envs} envs on {self.cores} cores, {caller}:",
            self.format_table(),
            f"best: TorchVectorizedEnv(env_factory, {', '.join(f'{k}={v}' for k, v in self.keywords.items())})",
        ]
        lines += [f"skipped: {why}" for why in self.skipped]
        return "\n".join(lines)


def default_num_envs(cores: int) -> int:
    return 32 if cores <= 16 else 2 * cores


def candidate_shapes(
    num_envs: int, max_workers: int, batch_sizes: Sequence[int] | None
) -> tuple[list[Shape], list[str]]:
    """Worker counts dividing ``num_envs`` (powers of two, and ``max_workers`` itself), each with every
    batch size that is whole workers: ``batch_sizes``, or all envs and half of them. A batch size
    asked for that is not whole workers of a count is left out there, and said so."""
    counts = {w for w in range(1, max_workers + 1) if num_envs % w == 0 and (w & (w - 1) == 0 or w == max_workers)}
    sizes = sorted(set(batch_sizes), reverse=True) if batch_sizes else None
    shapes: list[Shape] = []
    skipped: list[str] = []
    for workers in sorted(counts):
        envs = num_envs // workers
        wanted = sizes or ([num_envs, num_envs // 2] if workers % 2 == 0 else [num_envs])
        for size in wanted:
            shape = Shape(workers, envs, size)
            if not shape.valid():
                if sizes:
                    skipped.append(f"{workers}x{envs} batch {size}: not whole workers")
                continue
            shapes.append(shape)
    return shapes, skipped


def autotune(
    env_factory: Callable[[], Any],
    *,
    num_envs: int | None = None,
    policy_ms: float = 0.0,
    policy: str = "sleep",
    max_workers: int | None = None,
    batch_sizes: Sequence[int] | None = None,
    seconds: float = 1.0,
    rounds: int = 3,
    progress: bool = False,
) -> TuneResult:
    """Measures ``TorchVectorizedEnv(env_factory, ...)`` shapes on this machine; returns the fastest's
    keywords and the table.

    Args:
        env_factory: a callable returning one env (picklable where the start method is spawn).
        num_envs: envs in all (default 32; twice the cores past 16 cores).
        policy_ms: the caller's time per batch, spent before every step.
        policy: ``"sleep"`` or ``"burn"`` (a busy loop): how ``policy_ms`` is spent.
        max_workers: the most worker processes tried (default: the cores this process may use).
        batch_sizes: envs per batch to try (each kept where it is whole workers); default all of them
            and, where pool mode exists, half of them.
        seconds: timing per candidate and round (the workers' start is not counted).
        rounds: interleaved rounds; the median is ranked.
        progress: a tqdm progress bar on stderr.
    """
    cores = usable_cores()
    num_envs = default_num_envs(cores) if num_envs is None else int(num_envs)
    max_workers = cores if max_workers is None else int(max_workers)
    if num_envs < 1 or max_workers < 1 or seconds <= 0 or rounds < 1:
        raise InvalidArgumentError("num_envs, max_workers, seconds and rounds must be positive")
    shapes, skipped = candidate_shapes(num_envs, max_workers, batch_sizes)
    if not shapes:
        raise InvalidArgumentError(
            f"no candidate: no batch size of {list(batch_sizes or [])} is whole workers of {num_envs} envs"
        )
    caller = caller_work(policy, policy_ms)
    rates = _measure_rounds(env_factory, shapes, seconds, rounds, caller, progress)
    table = _ranked_table(shapes, rates)
    return TuneResult(_best_keywords(table[0], num_envs), table, num_envs, policy_ms, policy, cores, skipped)


def _measure_rounds(
    env_factory: Callable[[], Any],
    shapes: list[Shape],
    seconds: float,
    rounds: int,
    caller: Callable[[], None] | None,
    progress: bool,
) -> list[list[float]]:
    """Each shape's rate in every round. Every round times every shape in turn, so a change of load on
    the machine hits all of them alike."""
    rates: list[list[float]] = [[] for _ in shapes]
    bar = _progress(len(shapes) * rounds) if progress else None
    try:
        for _ in range(rounds):
            for i, shape in enumerate(shapes):
                rates[i].append(measure("torchwm", env_factory, shape, seconds, caller))
                if bar is not None:
                    bar.set_postfix_str(f"{shape.workers_envs} batch {shape.batch_size}: {rates[i][-1]:,.0f}/s")
                    bar.update(1)
    finally:
        if bar is not None:
            bar.close()
    return rates


def _ranked_table(shapes: list[Shape], rates: list[list[float]]) -> list[dict[str, Any]]:
    """One row per shape, fastest median first, each with its rounds and its rate relative to the fastest."""
    medians = [float(np.median(r)) for r in rates]
    fastest = max(medians)
    return sorted(
        (
            {
                "num_workers": s.num_workers,
                "envs_per_worker": s.envs_per_worker,
                "batch_size": s.batch_size,
                "steps_per_s": round(m),
                "rounds": [round(x) for x in r],
                "relative": round(m / fastest, 3),
            }
            for s, m, r in zip(shapes, medians, rates)
        ),
        key=lambda row: -row["steps_per_s"],
    )


def _best_keywords(best: dict[str, Any], num_envs: int) -> dict[str, int]:
    """The ``TorchVectorizedEnv`` keywords of the table's best row; ``batch_size`` only where it is not all envs."""
    keywords = {"num_workers": best["num_workers"], "envs_per_worker": best["envs_per_worker"]}
    if best["batch_size"] < num_envs:
        keywords["batch_size"] = best["batch_size"]
    return keywords


def _progress(total: int) -> Any:
    from tqdm import tqdm

    return tqdm(total=total, desc="autotune", unit="run")


def load_factory(spec: str) -> Callable[[], Any]:
    """``"package.module:function"`` (or ``module:Class``, ``module:object.attribute``) -> that callable.
    The current directory is importable, as for ``python -m``."""
    module_name, sep, attribute = spec.partition(":")
    if not sep or not module_name or not attribute:
        raise InvalidArgumentError(f"expected an env factory as module:function, got {spec!r}")
    if "" not in sys.path:
        sys.path.insert(0, "")
    target: Any = importlib.import_module(module_name)
    for part in attribute.split("."):
        if not hasattr(target, part):
            raise InvalidArgumentError(f"{spec}: {target!r} has no attribute {part!r}")
        target = getattr(target, part)
    if not callable(target):
        raise InvalidArgumentError(f"{spec} is not callable")
    return target

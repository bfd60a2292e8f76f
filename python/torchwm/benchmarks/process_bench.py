"""Process-vectorizer throughput, side by side in one run: TorchVectorizedEnv against PufferLib's
Multiprocessing (where it is installed) and gymnasium's SyncVectorEnv and AsyncVectorEnv.

For each case (an env: CartPole, CartPole with ~0.2 ms of numpy per step, ...) the sweep measures
workers x envs per worker (``1x32,2x16,4x8``) for torchwm and PufferLib, in sync mode (every env in
every batch) and pool mode (half the envs per batch: the first ready workers), and gymnasium's two
vector envs once over the same number of envs. Every configuration is measured once per round, the
rounds interleaved (a change of load on the machine hits all of them alike); rows carry the median.
``--policy-ms`` is the caller's time per batch (slept, or burned on the CPU), before every step.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from torchwm.benchmarks import process_envs
from torchwm.benchmarks.process_backends import (
    BACKENDS,
    DEFAULT_BACKENDS,
    POOL_BACKENDS,
    POOL_ONLY_BACKENDS,
    Shape,
    Unavailable,
    caller_work,
    measure,
    sync_and_pool,
)
from torchwm.benchmarks.process_envs import BusyEnv
from torchwm.benchmarks.process_multi_agent import MA_CASES, run_multi_agent

__all__ = [
    "CASES",
    "BusyEnv",
    "Config",
    "default_workers_envs",
    "run_process_benchmarks",
    "summarize",
    "target_checks",
]

# name -> (factory, what it is). The factories are module-level (picklable under spawn).
CASES: dict[str, tuple[Callable[[], Any], str]] = {
    "cartpole": (process_envs.cartpole, "CartPole-v1"),
    "cartpole_numpy": (process_envs.numpy_cartpole, "CartPole-v1 + numpy work per step"),
    "busy_1ms": (process_envs.busy_1ms, "1 ms of CPU burned per step"),
}
DEFAULT_CASES = ("cartpole", "cartpole_numpy")
HEAVY_CASE = "cartpole_numpy"


def cpu_count() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def default_workers_envs(cores: int | None = None) -> list[tuple[int, int]]:
    """Worker counts 1, 2, 4, ... up to the core count (at least 4), sharing 32 envs (2 per core past
    16 cores): ``1x32, 2x16, 4x8`` on 2 cores, on to ``16x2`` on 16."""
    cores = cores or cpu_count()
    total = 32 if cores <= 16 else 2 * cores
    counts = []
    workers = 1
    while workers <= max(4, cores) and workers <= total:
        counts.append(workers)
        workers *= 2
    if cores not in counts and cores <= total:
        counts.append(cores)
    return [(w, total // w) for w in sorted(counts) if total % w == 0]


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
    config: Config
    rates: list[float] = field(default_factory=list)
    skipped: str | None = None

    @property
    def median(self) -> float | None:
        return float(np.median(self.rates)) if self.rates else None


def sweep(
    cases: list[str], workers_envs: list[tuple[int, int]], backends: list[str], modes: tuple[str, ...]
) -> list[Config]:
    """Every case x shape x mode for torchwm and PufferLib; gymnasium's once per case and env count."""
    configs = []
    for case in cases:
        for workers, envs in workers_envs:
            for shape in sync_and_pool(workers, envs):
                if shape.mode in modes:
                    configs += [
                        Config(case, b, shape)
                        for b in backends
                        if b in POOL_BACKENDS and (shape.pool or b not in POOL_ONLY_BACKENDS)
                    ]
        for total in dict.fromkeys(w * e for w, e in workers_envs):
            configs += [Config(case, b, Shape(1, total, total)) for b in backends if b.startswith("gym_")]
    return configs


def measure_rounds(
    configs: list[Config],
    seconds: float,
    rounds: int,
    caller: Callable[[], None] | None,
    progress: Any = None,
) -> list[Measured]:
    """``rounds`` rounds, each measuring every config of a case once, case after case. A config that
    is unavailable here is skipped from then on, with the reason."""
    results = [Measured(c) for c in configs]
    for case in dict.fromkeys(c.case for c in configs):
        factory = CASES[case][0]
        for _ in range(rounds):
            for result in (r for r in results if r.config.case == case and r.skipped is None):
                try:
                    result.rates.append(measure(result.config.backend, factory, result.config.shape, seconds, caller))
                except Unavailable as why:
                    result.skipped = str(why)
                if progress is not None:
                    progress.update(1)
    return results


def _ratio(ours: list[float], theirs: list[float]) -> float | None:
    """The median over rounds of ours / theirs in the same round."""
    pairs = [a / b for a, b in zip(ours, theirs) if b > 0]
    return float(np.median(pairs)) if pairs else None


def table_rows(results: list[Measured]) -> list[dict[str, Any]]:
    """One row per config; torchwm's carry ``vs_pufferlib`` (and ``vs_pufferlib_async`` where that was
    measured): its rate over PufferLib's at the same shape and mode, the median over rounds of the
    ratio in each round."""
    by_key = {(r.config.case, r.config.backend, r.config.shape): r for r in results}
    rows = []
    for r in results:
        c = r.config
        row: dict[str, Any] = {
            "case": c.case,
            "backend": c.backend,
            "mode": c.shape.mode,
            "workers_envs": c.label,
            "num_envs": c.shape.num_envs,
            "batch_size": c.shape.batch_size,
            "steps_per_s": round(r.median) if r.median is not None else None,
            "rounds": [round(x) for x in r.rates],
        }
        if r.skipped:
            row["skipped"] = r.skipped
        for peer in ("pufferlib", "pufferlib_async"):
            theirs = by_key.get((c.case, peer, c.shape))
            if c.backend == "torchwm" and theirs is not None and theirs.rates and r.rates:
                ratio = _ratio(r.rates, theirs.rates)
                row[f"vs_{peer}"] = round(ratio, 2) if ratio is not None else None
        rows.append(row)
    return rows


def _best(rows: list[dict[str, Any]], case: str, backend: str, mode: str | None = None) -> dict[str, Any] | None:
    candidates = [
        r
        for r in rows
        if r["case"] == case and r["backend"] == backend and r["steps_per_s"] and mode in (None, r["mode"])
    ]
    return max(candidates, key=lambda r: r["steps_per_s"]) if candidates else None


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Per case: each backend's best row (over shapes and modes; and per mode), and torchwm's best over
    each peer's best."""
    summary: dict[str, Any] = {}
    for case in dict.fromkeys(r["case"] for r in rows):
        best = {b: _best(rows, case, b) for b in BACKENDS}
        by_mode = {mode: {b: _best(rows, case, b, mode) for b in POOL_BACKENDS} for mode in ("sync", "pool")}
        ours = best["torchwm"]
        summary[case] = {
            "best": {b: _brief(r) for b, r in best.items() if r},
            "best_by_mode": {m: {b: _brief(r) for b, r in bs.items() if r} for m, bs in by_mode.items()},
            "torchwm_best_x": {
                b: round(ours["steps_per_s"] / r["steps_per_s"], 2)
                for b, r in best.items()
                if ours and r and b != "torchwm"
            },
        }
    return summary


def _brief(row: dict[str, Any]) -> dict[str, Any]:
    return {k: row[k] for k in ("steps_per_s", "workers_envs", "mode", "batch_size")}


# The targets for TorchVectorizedEnv, checked on every run: (what, ratio, goal).
CHEAP_VS_BEST = 1.3
ONE_WORKER_VS_PUFFERLIB = 1.0
HEAVY_VS_BEST_OF_BOTH = 1.2
POOL_VS_PUFFERLIB = 1.0


def target_checks(rows: list[dict[str, Any]], summary: dict[str, Any]) -> list[dict[str, Any]]:
    """The targets of the process vectorizer's transport work, as measured by this run (where both
    sides of a ratio were measured): CartPole best vs PufferLib's best and Sync's; one worker vs
    PufferLib's one worker; the heavier env's best vs the best of PufferLib and Sync; each pool shape
    vs PufferLib's at the same batch."""
    checks = []

    def check(what: str, ratio: float | None, goal: float) -> None:
        if ratio is not None:
            checks.append({"target": what, "ratio": round(ratio, 2), "goal": goal, "met": ratio >= goal})

    for case, s in summary.items():
        x = s["torchwm_best_x"]
        if case == "cartpole":
            check("cartpole: torchwm best / pufferlib best", x.get("pufferlib"), CHEAP_VS_BEST)
            check("cartpole: torchwm best / gym_sync", x.get("gym_sync"), CHEAP_VS_BEST)
            for row in _one_worker_rows(rows, case):
                check(
                    f"cartpole {row['workers_envs']}: torchwm / pufferlib",
                    row.get("vs_pufferlib"),
                    ONE_WORKER_VS_PUFFERLIB,
                )
        if case == HEAVY_CASE and "torchwm" in s["best"]:
            peers = [s["best"][b]["steps_per_s"] for b in ("pufferlib", "gym_sync") if b in s["best"]]
            if peers:
                ratio = s["best"]["torchwm"]["steps_per_s"] / max(peers)
                check(f"{case}: torchwm best / best of pufferlib and gym_sync", ratio, HEAVY_VS_BEST_OF_BOTH)
        for row in rows:
            if row["case"] == case and row["backend"] == "torchwm" and row["mode"] == "pool":
                # Against PufferLib's faster pool at this shape, where both of its pools were measured.
                ratios = [row[k] for k in ("vs_pufferlib", "vs_pufferlib_async") if row.get(k) is not None]
                check(
                    f"{case} {row['workers_envs']} pool {row['batch_size']}: torchwm / pufferlib",
                    min(ratios) if ratios else None,
                    POOL_VS_PUFFERLIB,
                )
    return checks


def _one_worker_rows(rows: list[dict[str, Any]], case: str) -> Iterator[dict[str, Any]]:
    for row in rows:
        one_worker = row["workers_envs"].startswith("1x")
        if row["case"] == case and row["backend"] == "torchwm" and row["mode"] == "sync" and one_worker:
            yield row


def versions() -> dict[str, str | None]:
    """The measured packages' versions (``None`` for one not installed)."""
    from importlib.metadata import PackageNotFoundError, version

    found: dict[str, str | None] = {}
    for name in ("torchwm", "pufferlib-core", "gymnasium", "numpy"):
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            found[name] = None
    return found


def run_process_benchmarks(
    seconds: float = 2.0,
    rounds: int = 3,
    *,
    cases: list[str] | None = None,
    workers_envs: list[tuple[int, int]] | None = None,
    backends: list[str] | None = None,
    modes: tuple[str, ...] = ("sync", "pool"),
    policy_ms: float = 0.0,
    policy: str = "sleep",
    progress: Any = None,
) -> dict[str, Any]:
    """The whole suite: ``rounds`` interleaved rounds of ``seconds / rounds`` (at least 0.2 s) per
    config. Returns ``rows`` (``table_rows``), ``summary``, ``targets``, ``env_ms_per_step`` (one env
    alone, ms of CPU per step, per case) and the settings."""
    cases = list(cases or (*DEFAULT_CASES, *MA_CASES))
    unknown = set(cases) - set(CASES) - set(MA_CASES)
    if unknown:
        raise ValueError(f"unknown cases {sorted(unknown)}; choose from {sorted([*CASES, *MA_CASES])}")
    # PettingZoo cases (agents as rows) run apart: other backends, rows per second.
    multi_agent = [c for c in cases if c in MA_CASES]
    cases = [c for c in cases if c in CASES]
    workers_envs = workers_envs or default_workers_envs()
    backends = list(backends or DEFAULT_BACKENDS)
    rounds = max(1, int(rounds))
    per_run = max(0.2, seconds / rounds)
    configs = sweep(cases, workers_envs, backends, modes)
    if progress is not None:
        progress.total = len(configs) * rounds
    results = measure_rounds(configs, per_run, rounds, caller_work(policy, policy_ms), progress)
    multi_agent_report = run_multi_agent(per_run, rounds, multi_agent) if multi_agent else None
    rows = table_rows(results)
    summary = summarize(rows)
    return {
        "settings": {
            "cases": {c: CASES[c][1] for c in cases},
            "workers_envs": [f"{w}x{e}" for w, e in workers_envs],
            "backends": backends,
            "modes": list(modes),
            "rounds": rounds,
            "seconds_per_config_and_round": per_run,
            "policy_ms": policy_ms,
            "policy": policy,
            "cores": cpu_count(),
            "versions": versions(),
        },
        "env_ms_per_step": {c: round(process_envs.step_cost_ms(CASES[c][0]), 4) for c in cases},
        "rows": rows,
        "summary": summary,
        "targets": target_checks(rows, summary),
        "multi_agent": multi_agent_report,
    }

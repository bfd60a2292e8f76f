"""Process-vectorizer throughput, side by side in one run: TorchVectorizedEnv against PufferLib's
Multiprocessing (where it is installed) and gymnasium's SyncVectorEnv and AsyncVectorEnv.

For each case (an env: CartPole, CartPole with ~0.2 ms of numpy per step, ...) the sweep measures
workers x envs per worker (``1x32,2x16,4x8``) for torchwm and PufferLib, in sync mode (every env in
every batch) and pool mode (half the envs per batch: the first ready workers), and gymnasium's two
vector envs once over the same number of envs. Every configuration is measured once per round, the
rounds interleaved (a change of load on the machine hits all of them alike); rows carry the median, the
min and max over rounds, and what a batch cost: wall time, the caller's CPU time, the workers'. After
``rounds`` rounds, rounds of each backend's best point are added until the ratio of torchwm's best to
each other backend's best spreads by less than ``ratio_spread`` (``round_spread``), or ``max_rounds``.
``--policy-ms`` is the caller's time per batch (slept, or burned on the CPU), before every step.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from torchwm.benchmarks.core.cpu_time import cpu_source
from torchwm.benchmarks.core.machine import cores as machine_cores
from torchwm.benchmarks.core.policies import caller_work
from torchwm.benchmarks.core.rounds import measure_adaptively
from torchwm.benchmarks.multi_agent.cases import MA_CASES
from torchwm.benchmarks.multi_agent.grid import run_multi_agent
from torchwm.benchmarks.process.envs import busy_1ms, cartpole, numpy_cartpole, step_cost_ms
from torchwm.benchmarks.process.rounds import Config, Measured, measure_round
from torchwm.benchmarks.process.rows import table_rows
from torchwm.benchmarks.process.shapes import Shape, sync_and_pool
from torchwm.benchmarks.process.steppers import DEFAULT_BACKENDS, POOL_BACKENDS, POOL_ONLY_BACKENDS
from torchwm.benchmarks.process.summary import RATIO_SPREAD, summarize, unsettled
from torchwm.benchmarks.process.targets import target_checks

__all__ = ["CASES", "default_workers_envs", "run_process_benchmarks", "sweep"]

# name -> (factory, what it is). The factories are module-level (picklable under spawn).
CASES: dict[str, tuple[Callable[[], Any], str]] = {
    "cartpole": (cartpole, "CartPole-v1"),
    "cartpole_numpy": (numpy_cartpole, "CartPole-v1 + numpy work per step"),
    "busy_1ms": (busy_1ms, "1 ms of CPU burned per step"),
}
DEFAULT_CASES = ("cartpole", "cartpole_numpy")
MAX_ROUNDS = 15  # the cap on adaptive rounds: each adds every backend's best point once per case


def default_workers_envs(cores: int | None = None) -> list[tuple[int, int]]:
    """Worker counts 1, 2, 4, ... up to the core count (at least 4), sharing 32 envs (2 per core past
    16 cores): ``1x32, 2x16, 4x8`` on 2 cores, on to ``16x2`` on 16."""
    cores = cores or machine_cores()
    total = 32 if cores <= 16 else 2 * cores
    counts = []
    workers = 1
    while workers <= max(4, cores) and workers <= total:
        counts.append(workers)
        workers *= 2
    if cores not in counts and cores <= total:
        counts.append(cores)
    return [(w, total // w) for w in sorted(counts) if total % w == 0]


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


def contenders(results: list[Measured], summary: dict[str, Any], pairs: list[tuple[str, str]]) -> list[Measured]:
    """The points behind ``pairs`` (case, peer) of the summary: torchwm's best and each peer's best."""
    wanted = {(case, "torchwm") for case, _ in pairs} | set(pairs)
    chosen = []
    for r in results:
        c = r.config
        best = summary.get(c.case, {}).get("best", {}).get(c.backend)
        point = (c.label, c.shape.mode, c.shape.batch_size)
        if (c.case, c.backend) in wanted and best and r.skipped is None and point == _point(best):
            chosen.append(r)
    return chosen


def _point(best: dict[str, Any]) -> tuple[str, str, int]:
    return best["workers_envs"], best["mode"], best["batch_size"]


def _run_rounds(
    configs: list[Config],
    seconds: float,
    rounds: tuple[int, int],
    ratio_spread: float,
    caller: Callable[[], None] | None,
    progress: Any,
) -> tuple[list[Measured], int]:
    """``rounds`` (least, most) interleaved rounds: all configs, then the contenders of ratios not
    yet settled. Returns the results and the rounds run."""
    results = [Measured(c) for c in configs]
    factories = {case: CASES[case][0] for case in dict.fromkeys(c.case for c in configs)}
    if progress is not None:
        progress.total = len(configs) * rounds[0]

    def one_round(chosen: list[Measured], index: int) -> None:
        if progress is not None and index >= rounds[0]:
            progress.total += len(chosen)
        measure_round(chosen, index, factories, seconds, caller, progress)

    def pending(done: list[Measured], count: int) -> list[Measured]:
        summary = summarize(table_rows(done, count))
        return contenders(done, summary, unsettled(summary, ratio_spread))

    return results, measure_adaptively(results, one_round, rounds[0], rounds[1], pending)


def run_process_benchmarks(
    seconds: float = 2.0,
    rounds: int = 3,
    *,
    max_rounds: int | None = None,
    ratio_spread: float = RATIO_SPREAD,
    cases: list[str] | None = None,
    workers_envs: list[tuple[int, int]] | None = None,
    backends: list[str] | None = None,
    modes: tuple[str, ...] = ("sync", "pool"),
    policy_ms: float = 0.0,
    policy: str = "sleep",
    progress: Any = None,
    multi_agent_grid: bool = True,
) -> dict[str, Any]:
    """The whole suite (``multi_agent_grid=False``: the multi-agent cases at one configuration, a smoke run): ``rounds`` interleaved rounds of ``seconds / rounds`` (at least 0.2 s) per
    config, then rounds of the best points until every ratio of torchwm's best to a peer's best
    spreads by less than ``ratio_spread``, up to ``max_rounds`` (default ``MAX_ROUNDS``; at least
    ``rounds``). Returns ``rows`` (``table_rows``), ``summary``, ``targets``, ``env_ms_per_step``
    (one env alone, ms of CPU per step, per case), ``rounds`` (how many, whether the cap was hit and
    the ratios still unsettled) and the settings."""
    cases = list(cases or (*DEFAULT_CASES, *MA_CASES))
    unknown = set(cases) - set(CASES) - set(MA_CASES)
    if unknown:
        raise ValueError(f"unknown cases {sorted(unknown)}; choose from {sorted([*CASES, *MA_CASES])}")
    # PettingZoo cases (agents as rows) run apart: other backends, rows per second.
    multi_agent = [c for c in cases if c in MA_CASES]
    cases = [c for c in cases if c in CASES]
    workers_envs = workers_envs or default_workers_envs()
    backends = list(backends or DEFAULT_BACKENDS)
    least = max(1, int(rounds))
    most = max(least, MAX_ROUNDS if max_rounds is None else int(max_rounds))
    per_run = max(0.2, seconds / least)
    configs = sweep(cases, workers_envs, backends, modes)
    caller = caller_work(policy, policy_ms)
    results, done = _run_rounds(configs, per_run, (least, most), ratio_spread, caller, progress)
    multi_agent_report = (
        run_multi_agent(per_run, least, multi_agent, max_rounds=most, ratio_spread=ratio_spread, grid=multi_agent_grid)
        if multi_agent
        else None
    )
    rows = table_rows(results, done)
    summary = summarize(rows)
    left = unsettled(summary, ratio_spread)
    return {
        "settings": _settings(cases, workers_envs, backends, modes, per_run, policy_ms, policy),
        "rounds": {
            "run": done,
            "least": least,
            "most": most,
            "ratio_spread": ratio_spread,
            "cap_hit": bool(left),
            "unsettled": [f"{case}: torchwm / {peer}" for case, peer in left],
        },
        "env_ms_per_step": {c: round(step_cost_ms(CASES[c][0]), 4) for c in cases},
        "rows": rows,
        "summary": summary,
        "targets": target_checks(rows, summary),
        "multi_agent": multi_agent_report,
    }


def _settings(
    cases: list[str],
    workers_envs: list[tuple[int, int]],
    backends: list[str],
    modes: tuple[str, ...],
    per_run: float,
    policy_ms: float,
    policy: str,
) -> dict[str, Any]:
    return {
        "cases": {c: CASES[c][1] for c in cases},
        "workers_envs": [f"{w}x{e}" for w, e in workers_envs],
        "backends": backends,
        "modes": list(modes),
        "seconds_per_config_and_round": per_run,
        "policy_ms": policy_ms,
        "policy": policy,
        "cores": machine_cores(),
        "cpu_time_from": cpu_source(),
        "versions": versions(),
    }

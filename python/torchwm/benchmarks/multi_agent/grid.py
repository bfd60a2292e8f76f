"""The process suite's multi-agent cases: PettingZoo ParallelEnvs, agents as rows, side by side.

- ``torchwm``: ``TorchVectorizedEnv(factory, num_workers, envs_per_worker)`` (agents as rows).
- ``supersuit``: ``concat_vec_envs_v1(pettingzoo_env_to_vec_env_v1(env), num_envs, num_cpus=num_workers)``,
  SuperSuit's processes over the same envs (one worker: SuperSuit steps the envs in this process).
- ``pufferlib``: ``pufferlib.vector.Multiprocessing`` over ``pufferlib.emulation.PettingZooPufferEnv``,
  only where ``pufferlib.vector`` imports (skipped otherwise, with the reason, as in the CartPole case).

Every backend runs the same grid of workers x envs per worker (``configs``), in sync mode and, for
the two that have one (torchwm, PufferLib), in pool mode: a batch of half the workers, the first to
answer (``2x4 pool``, an even number of workers), and with more than two workers a batch of one
worker's envs (``4x4 pool1``: more workers than cores, one waiting for its actions leaves its core to
another), the same envs, seeds and actions (of its own action dtype), and hands its caller the
observations as its default does: torchwm and SuperSuit a copy (as gymnasium's ``AsyncVectorEnv``),
PufferLib views of its shared memory (zero-copy, which costs the caller nothing); each is judged at its
own best configuration. Rates are rows (agent steps) per second, the median of interleaved rounds
with their spread; the ratio's spread is over rounds, torchwm's best configuration against the best
other's in the same round. The grid picks each backend's best configuration; a final
(``multi_agent_final``) then measures torchwm's best against the best other's in adjacent pairs, and
its ratio judges the 1.3x target. Beside them: the CPU time of each backend's processes per row
(where psutil imports) and the env's own cost, one env stepped in this process with nothing around it,
which bounds any vectorizer on this machine at ``cores / env_ms_per_row`` (``ceiling``, all cores free),
and ``envs_alone``: at each configuration, that many processes stepping the envs with no vectorizer at
all, measured in the same rounds (so under the same load). Where the best of these is under 1.3x the
best other backend, no vectorizer can meet the target here: the env's own work is the bound.

A case whose env does not install here (``mpe2``, ``pymunk``) is skipped with the reason.
"""

from __future__ import annotations

import os
import time
import warnings
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np

from torchwm import _platform
from torchwm.benchmarks.core import round_spread
from torchwm.benchmarks.core.cpu_time import cpu_source
from torchwm.benchmarks.core.round_spread import RATIO_SPREAD, settled
from torchwm.benchmarks.multi_agent.final import final_line, run_final
from torchwm.benchmarks.process.steppers import Unavailable, pufferlib_missing

__all__ = ["MA_BACKENDS", "MA_CASES", "configs", "run_multi_agent", "summary_lines"]

MA_BACKENDS = ("torchwm", "supersuit", "pufferlib")
TARGET = 1.3  # torchwm / the best of the others
POOL_BACKENDS = ("torchwm", "pufferlib")  # the backends with a pool mode (a batch of the first workers ready)
ALONE = "envs_alone"  # the reference beside the backends: the envs stepped in processes, no vectorizer


def simple_spread() -> Any:
    from mpe2 import simple_spread_v3

    return simple_spread_v3.parallel_env(N=3, max_cycles=25)


def pistonball() -> Any:
    from pettingzoo.butterfly import pistonball_v6

    return pistonball_v6.parallel_env(n_pistons=8, max_cycles=125)


# case: (factory, description, envs per worker searched); the workers searched are 1, cores, 2 x cores.
MA_CASES: dict[str, tuple[Callable[[], Any], str, tuple[int, ...]]] = {
    "simple_spread": (simple_spread, "MPE simple_spread_v3, 3 agents (mpe2)", (4, 16)),
    "pistonball": (pistonball, "Butterfly pistonball_v6, 8 pistons (pymunk)", (1, 2)),
}


def cores() -> int:
    return _platform.usable_cores()


def configs(case: str, grid: bool = True) -> list[tuple[int, int]]:
    """The (workers, envs per worker) every backend runs for ``case``: one worker (SuperSuit then steps
    in the caller's process), one per core and two per core, each with the case's envs per worker;
    without ``grid`` (a smoke run), one per core with the case's fewest envs."""
    if not grid:
        return [(cores(), min(MA_CASES[case][2]))]
    workers = sorted({1, cores(), 2 * cores()})
    return [(w, e) for w in workers for e in MA_CASES[case][2]]


def agent_count(factory: Callable[[], Any]) -> int:
    """How many possible agents (rows) each env of ``factory`` has; the probe env is closed."""
    probe = factory()
    try:
        return len(probe.possible_agents)
    finally:
        probe.close()


def pool_fits(workers: int) -> bool:
    """Whether pool mode (half the workers per batch) takes ``workers``: an even number, 2 or more."""
    return workers >= 2 and workers % 2 == 0


def pool_sizes(workers: int) -> list[int]:
    """The batches of pool mode measured at ``workers``, in workers per batch: half of them (an even
    number, 2 or more), and one where that differs. With more workers than cores, a batch of one lets a
    worker that waits for its actions hand its core to another (a deeper pipeline)."""
    sizes = [workers // 2] if pool_fits(workers) else []
    return sizes + ([1] if workers > 2 else [])


class _Stepper:
    """One backend: ``reset(seed)``, ``step(actions)`` over a batch's rows, ``close()``; ``rows`` (of a
    batch: all of them, or in pool mode those of the first ``pool`` workers to answer), ``space``."""

    def __init__(self, backend: str, factory: Callable[[], Any], workers: int, envs: int, pool: int = 0) -> None:
        if pool and (backend not in POOL_BACKENDS or pool not in pool_sizes(workers)):
            raise ValueError(
                f"pool mode is for {POOL_BACKENDS}, a batch of {pool_sizes(workers) or 'no'} of {workers} workers, "
                f"got {backend!r} with {pool}"
            )
        agents = agent_count(factory)
        self.env = _open(backend, factory, workers, envs, agents, pool)
        self.backend = backend
        self.rows = (pool or workers) * envs * agents
        self.space = self.env.single_action_space if backend != "supersuit" else self.env.action_space

    def reset(self, seed: int) -> None:
        if self.backend == "pufferlib":
            self.env.async_reset(seed)
            self.env.recv()
        else:
            self.env.reset(seed=seed)

    def step(self, actions: np.ndarray) -> None:
        if self.backend == "pufferlib":
            self.env.send(actions)
            self.env.recv()
        else:
            self.env.step(actions)

    def close(self) -> None:
        self.env.close()
        # PufferLib's close() terminates its workers without waiting: wait, so that none still runs
        # while the next backend is measured.
        for process in getattr(self.env, "processes", []) if self.backend == "pufferlib" else []:
            process.join(timeout=10)


def _open(backend: str, factory: Callable[[], Any], workers: int, envs: int, agents: int, pool: int) -> Any:
    """``backend`` over ``workers`` x ``envs`` envs; ``pool``: the envs of that many workers per batch,
    the first to answer (torchwm's ``batch_size`` counts rows, PufferLib's envs); 0: sync mode."""
    if backend == "torchwm":
        from torchwm.process import TorchVectorizedEnv

        return TorchVectorizedEnv(factory, workers, envs, batch_size=pool * envs * agents if pool else None)
    if backend == "supersuit":
        try:
            import supersuit
        except ImportError as error:
            raise Unavailable(f"supersuit not importable here ({error})") from None
        base = supersuit.pettingzoo_env_to_vec_env_v1(factory())
        return supersuit.concat_vec_envs_v1(base, workers * envs, num_cpus=workers, base_class="gymnasium")
    if backend == "pufferlib":
        missing = pufferlib_missing()
        if missing:
            raise Unavailable(missing)
        import pufferlib.emulation
        import pufferlib.vector

        creator = partial(pufferlib.emulation.PettingZooPufferEnv, env_creator=factory)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return pufferlib.vector.make(
                creator,
                backend=pufferlib.vector.Multiprocessing,
                num_envs=workers * envs,
                num_workers=workers,
                batch_size=(pool or workers) * envs,
                overwork=True,  # it refuses more workers than cores otherwise: the grid goes to 2 x cores
            )
    raise ValueError(f"backend must be one of {MA_BACKENDS}, got {backend!r}")


def _cpu_seconds() -> float | None:
    """User + system CPU seconds of this process and its live children (the workers); None where other
    processes' CPU time cannot be read here (``cpu_time.cpu_source``)."""
    if cpu_source() is None:
        return None
    total = 0.0
    for pid in [os.getpid(), *_platform.child_pids()]:
        try:
            total += _platform.process_cpu_seconds(pid)
        except Exception:  # exited meanwhile (an OSError from /proc, psutil's NoSuchProcess)
            pass
    return total


def _rate(stepper: _Stepper, seconds: float, seed: int = 0) -> tuple[float, float | None]:
    """Rows per second over ``seconds`` of random actions (drawn ahead of the timing), and the CPU
    milliseconds all the backend's processes spent per row (None without psutil)."""
    stepper.space.seed(seed)
    kind = np.dtype(stepper.space.dtype).kind
    dtype = stepper.space.dtype if kind == "f" else np.int32 if stepper.backend == "pufferlib" else np.int64
    batches = [np.array([stepper.space.sample() for _ in range(stepper.rows)], dtype) for _ in range(16)]
    stepper.reset(seed)
    for i in range(5):
        stepper.step(batches[i % 16])
    cpu = _cpu_seconds()
    steps, start = 0, time.perf_counter()
    while (now := time.perf_counter()) < start + seconds:
        stepper.step(batches[steps % 16])
        steps += 1
    rows = steps * stepper.rows
    after = _cpu_seconds()
    return rows / (now - start), None if cpu is None or after is None else (after - cpu) * 1e3 / rows


def _measure(
    backend: str, case: str, workers: int, envs: int, seconds: float, pool: int = 0
) -> tuple[float, float | None]:
    stepper = _Stepper(backend, MA_CASES[case][0], workers, envs, pool)
    try:
        return _rate(stepper, seconds)
    finally:
        stepper.close()


def env_ms_per_row(factory: Callable[[], Any], seconds: float, seed: int = 0) -> float:
    """CPU milliseconds per row of one env stepped in this process, nothing around it (actions drawn
    ahead; the step after an episode ends resets, as the vectorizers' default autoreset does)."""
    env = factory()
    try:
        agents = list(env.possible_agents)
        space = env.action_space(agents[0])
        space.seed(seed)
        actions = [{agent: space.sample() for agent in agents} for _ in range(16)]
        env.reset(seed=seed)
        steps, start = 0, time.process_time()
        while (now := time.process_time()) < start + seconds or steps == 0:
            if env.agents:
                env.step({agent: actions[steps % 16][agent] for agent in env.agents})
            else:
                env.reset()
            steps += 1
        return (now - start) * 1e3 / (steps * len(agents))
    finally:
        env.close()


def _step_alone(factory: Callable[[], Any], envs: int, seconds: float, start: Any, rates: Any) -> None:
    """One process of ``alone_rate``: ``envs`` envs stepped in turn (actions drawn ahead), timed from
    the moment every process is ready; puts its rows per second."""
    group = [factory() for _ in range(envs)]
    agents = list(group[0].possible_agents)
    space = group[0].action_space(agents[0])
    space.seed(0)
    actions = [{agent: space.sample() for agent in agents} for _ in range(16)]
    for i, env in enumerate(group):
        env.reset(seed=i)
    start.wait()
    steps, begin = 0, time.perf_counter()
    while (now := time.perf_counter()) < begin + seconds or steps == 0:
        for env in group:
            if env.agents:
                env.step({agent: actions[steps % 16][agent] for agent in env.agents})
            else:
                env.reset()
        steps += 1
    rates.put(steps * envs * len(agents) / (now - begin))


def alone_rate(factory: Callable[[], Any], workers: int, envs: int, seconds: float) -> float:
    """Rows per second of ``workers`` processes each stepping ``envs`` envs with no vectorizer around
    them (nothing sent, copied or waited for): the most any vectorizer's workers could give at that
    shape, measured beside the backends, so under the same load."""
    import multiprocessing as mp

    ctx: Any = mp.get_context("fork" if "fork" in mp.get_all_start_methods() else "spawn")
    start, rates = ctx.Barrier(workers), ctx.Queue()
    processes = [ctx.Process(target=_step_alone, args=(factory, envs, seconds, start, rates)) for _ in range(workers)]
    for process in processes:
        process.start()
    total = sum(rates.get(timeout=seconds + 120) for _ in processes)
    for process in processes:
        process.join()
    return total


def _case_missing(case: str) -> str | None:
    try:
        MA_CASES[case][0]().close()
    except ImportError as error:
        return f"not installed here: {error}"
    return None


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
    over rounds), and the env's ceiling; then the final (``multi_agent_final``), whose ratio judges the
    1.3x target. ``grid=False``: one configuration, no final (a smoke run)."""
    most = max(rounds, max_rounds or rounds)
    results = []
    for case in cases or list(MA_CASES):
        skipped = _case_missing(case)
        runs: dict[str, dict[str, list[tuple[float, float | None]]]] = {b: {} for b in MA_BACKENDS}
        why: dict[str, str] = {}
        runs[ALONE] = {}
        env_ms: list[float] = []
        row = _case_row(case, runs, why, env_ms, skipped, grid)
        while not skipped and (len(env_ms) < rounds or (len(env_ms) < most and not _settled(row, ratio_spread))):
            _round(case, seconds, runs, why, env_ms, grid)
            row = _case_row(case, runs, why, env_ms, skipped, grid)
        if grid and "backends" in row:
            _add_final(row, case, seconds, ratio_spread)
        results.append(row)
    return {"target": TARGET, "cores": cores(), "ratio_spread": ratio_spread, "rows": results}


def _add_final(row: dict[str, Any], case: str, seconds: float, ratio_spread: float) -> None:
    """The head-to-head final of torchwm's best against the best other's (``multi_agent_final``); its
    ratio, measured in adjacent pairs, is the verdict (``target_met``) where it ran."""

    def measure(backend: str, workers: int, envs: int, pool: int) -> float:
        return _measure(backend, case, workers, envs, seconds, pool)[0]

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
                run = _measure(backend, case, workers, envs, seconds, pool)
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


def config_name(workers: int, envs: int, pool: int = 0) -> str:
    """``2x4`` (sync), ``2x4 pool`` (a batch of half the workers, the first to answer) or ``4x4 pool1``
    (a batch of one worker's envs, where that is not half)."""
    if not pool:
        return f"{workers}x{envs}"
    return f"{workers}x{envs} pool" + ("" if 2 * pool == workers else str(pool))


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


def summary_lines(report: dict[str, Any]) -> list[str]:
    """Per case: each backend's best configuration, median rows/s (min..max) and CPU per row; the ratio
    (median, spread over rounds) against the target; the env's ceiling on this machine's cores."""
    lines = []
    for row in report["rows"]:
        if "skipped" in row:
            lines.append(f"multi-agent {row['case']}: skipped ({row['skipped']})")
            continue
        lines.append(f"multi-agent {row['case']} (best of {', '.join(row['configs'])}), rows/s:")
        lines += [f"  {b:9s} {_best_text(v)}" for b, v in [*row["backends"].items(), (ALONE, row[ALONE])]]
        if row["backends"]["torchwm"].get("workers_envs") != row["torchwm_sync"].get("workers_envs") and row.get(
            "sync_ratio_vs_best_other"
        ):
            sync = row["torchwm_sync"]
            lines.append(
                f"  torchwm in sync mode: {_best_text(sync)}, {row['sync_ratio_vs_best_other']:.2f}x the best other"
            )
        lines.append(f"  {_verdict(row, report['target'])}")
        if row.get("final"):
            lines.append(f"  {final_line(row['final'], report['target'])}")
    return lines


def _best_text(best: dict[str, Any]) -> str:
    if "median" not in best:
        return f"skipped ({best.get('skipped')})"
    cpu = "" if best["cpu_ms_per_row"] is None else f", {best['cpu_ms_per_row']:.3f} ms CPU/row"
    return f"{best['median']:>9,.0f} ({best['min']:,.0f}..{best['max']:,.0f}) at {best['workers_envs']}{cpu}"


def _verdict(row: dict[str, Any], target: float) -> str:
    ratio, rounds = row["ratio_vs_best_other"], row["ratio_rounds"]
    text = "torchwm / best other n/a"
    if ratio is not None:
        # With a final, its pairs judge the target (the next line); the grid's rounds only pick the contenders.
        met = "" if row.get("final") else f", target {target}x {'met' if row['target_met'] else 'not met'}"
        text = f"torchwm / best other {ratio:.2f}x (rounds {min(rounds):.2f}..{max(rounds):.2f}){met}"
    ceiling, cpu, alone = row["ceiling_vs_best_other"], row["cpu_bound_vs_best_other"], row["alone_vs_best_other"]
    bound = f" = {ceiling:.2f}x the best other" if ceiling else ""
    bound += f"; its CPU/row over the env's: {cpu:.2f}x" if cpu else ""
    bound += f"; {ALONE} over it: {alone:.2f}x" if alone else ""
    return (
        f"{text}; env alone {row['env_ms_per_row']:.3f} ms CPU/row: ceiling {row['ceiling_rows_per_s']:,.0f} "
        f"rows/s on {cores()} cores{bound}"
    )

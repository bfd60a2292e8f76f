"""The process suite's multi-agent cases: PettingZoo ParallelEnvs, agents as rows, side by side.

- ``torchwm``: ``TorchVectorizedEnv(factory, num_workers, envs_per_worker)`` (agents as rows).
- ``supersuit``: ``concat_vec_envs_v1(pettingzoo_env_to_vec_env_v1(env), num_envs, num_cpus=num_workers)``,
  SuperSuit's processes over the same envs.
- ``pufferlib``: ``pufferlib.vector.Multiprocessing`` over ``pufferlib.emulation.PettingZooPufferEnv``,
  only where ``pufferlib.vector`` imports (skipped otherwise, with the reason, as in the CartPole case).

A case whose env does not install here (``mpe2``, ``pymunk``) is skipped with the reason. Rates are rows
(agent steps) per second, the median of interleaved rounds with their spread; rounds are added until
torchwm's per-round ratio to each other backend spreads by less than the target (``round_spread``), or
the cap.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np

from torchwm.benchmarks.process_backends import Unavailable, pufferlib_missing
from torchwm.benchmarks.round_spread import RATIO_SPREAD, paired_ratios, ratio_spread, settled

__all__ = ["MA_BACKENDS", "MA_CASES", "run_multi_agent"]

MA_BACKENDS = ("torchwm", "supersuit", "pufferlib")
TARGET = 1.3  # torchwm / the best of the others


def simple_spread() -> Any:
    from mpe2 import simple_spread_v3

    return simple_spread_v3.parallel_env(N=3, max_cycles=25)


def pistonball() -> Any:
    from pettingzoo.butterfly import pistonball_v6

    return pistonball_v6.parallel_env(n_pistons=8, max_cycles=125)


# case: (factory, description, (num_workers, envs_per_worker))
MA_CASES: dict[str, tuple[Callable[[], Any], str, tuple[int, int]]] = {
    "simple_spread": (simple_spread, "MPE simple_spread_v3, 3 agents (mpe2)", (2, 4)),
    "pistonball": (pistonball, "Butterfly pistonball_v6, 8 pistons (pymunk)", (2, 2)),
}


class _Stepper:
    """One backend: ``reset(seed)``, ``step(actions)`` over all rows, ``close()``; ``rows``, ``space``."""

    def __init__(self, backend: str, factory: Callable[[], Any], workers: int, envs: int) -> None:
        self.env = _open(backend, factory, workers, envs)
        self.backend = backend
        agents = len(factory().possible_agents)
        self.rows = workers * envs * agents
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


def _open(backend: str, factory: Callable[[], Any], workers: int, envs: int) -> Any:
    if backend == "torchwm":
        from torchwm.process import TorchVectorizedEnv

        return TorchVectorizedEnv(factory, workers, envs)
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
                creator, backend=pufferlib.vector.Multiprocessing, num_envs=workers * envs, num_workers=workers
            )
    raise ValueError(f"backend must be one of {MA_BACKENDS}, got {backend!r}")


def _rate(stepper: _Stepper, seconds: float, seed: int = 0) -> float:
    """Rows per second over ``seconds`` of random actions (drawn ahead of the timing)."""
    stepper.space.seed(seed)
    kind = np.dtype(stepper.space.dtype).kind
    dtype = stepper.space.dtype if kind == "f" else np.int32 if stepper.backend == "pufferlib" else np.int64
    batches = [np.array([stepper.space.sample() for _ in range(stepper.rows)], dtype) for _ in range(16)]
    stepper.reset(seed)
    for i in range(5):
        stepper.step(batches[i % 16])
    steps, start = 0, time.perf_counter()
    while (now := time.perf_counter()) < start + seconds:
        stepper.step(batches[steps % 16])
        steps += 1
    return steps * stepper.rows / (now - start)


def _measure(backend: str, case: str, seconds: float) -> float:
    factory, _, (workers, envs) = MA_CASES[case]
    stepper = _Stepper(backend, factory, workers, envs)
    try:
        return _rate(stepper, seconds)
    finally:
        stepper.env.close()


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
) -> dict[str, Any]:
    """Every case x backend in interleaved rounds of ``seconds`` each: ``rounds`` of them, then more
    until torchwm's per-round ratio to each other backend spreads by less than ``ratio_spread``, up
    to ``max_rounds`` (default: ``rounds``). Rows with the median, the spread (min, max) and torchwm's
    ratio to the best other backend against the 1.3x target."""
    most = max(rounds, max_rounds or rounds)
    results: list[dict[str, Any]] = []
    for case in cases or list(MA_CASES):
        skipped = _case_missing(case)
        rates: dict[str, list[float]] = {b: [] for b in MA_BACKENDS}
        why: dict[str, str] = {}
        done = 0
        while not skipped and (done < rounds or (done < most and not _settled(rates, ratio_spread))):
            for backend in (b for b in MA_BACKENDS if b not in why):
                try:
                    rates[backend].append(_measure(backend, case, seconds))
                except Unavailable as reason:
                    why[backend] = str(reason)
            done += 1
        results.append(_case_row(case, rates, why, skipped))
    return {"target": TARGET, "ratio_spread": ratio_spread, "rows": results}


def _versus(rates: dict[str, list[float]]) -> dict[str, Any]:
    """torchwm's per-round ratio to each other backend measured (all run in every round)."""
    return {b: ratio_spread(paired_ratios(rates["torchwm"], r)) for b, r in rates.items() if b != "torchwm" and r}


def _settled(rates: dict[str, list[float]], target: float) -> bool:
    return all(settled(spread, target) for spread in _versus(rates).values())


def _case_row(case: str, rates: dict[str, list[float]], why: dict[str, str], skipped: str | None) -> dict[str, Any]:
    workers, envs = MA_CASES[case][2]
    row: dict[str, Any] = {"case": case, "env": MA_CASES[case][1], "workers_envs": f"{workers}x{envs}"}
    if skipped:
        return {**row, "skipped": skipped}
    row["backends"] = {
        b: {"median": float(np.median(r)), "min": min(r), "max": max(r)} if r else {"skipped": why.get(b)}
        for b, r in rates.items()
    }
    others = [row["backends"][b]["median"] for b in MA_BACKENDS[1:] if "median" in row["backends"][b]]
    ours = row["backends"]["torchwm"].get("median")
    row["ratio_vs_best_other"] = ours / max(others) if ours and others else None
    row["rounds"] = len(rates["torchwm"])
    row["torchwm_ratio_spread"] = {b: s.spread for b, s in _versus(rates).items() if s and s.spread is not None}
    row["target_met"] = row["ratio_vs_best_other"] is not None and row["ratio_vs_best_other"] >= TARGET
    return row


def summary_lines(report: dict[str, Any]) -> list[str]:
    """One line per case: each backend's median rows/s (min..max) and the ratio against the target."""
    lines = []
    for row in report["rows"]:
        if "skipped" in row:
            lines.append(f"multi-agent {row['case']}: skipped ({row['skipped']})")
            continue
        parts = [
            f"{b} {v['median']:,.0f} ({v['min']:,.0f}..{v['max']:,.0f})" if "median" in v else f"{b} skipped"
            for b, v in row["backends"].items()
        ]
        ratio = row["ratio_vs_best_other"]
        verdict = "n/a" if ratio is None else f"{ratio:.2f}x ({'met' if row['target_met'] else 'not met'})"
        spreads = ", ".join(f"vs {b} {x:.0%}" for b, x in row.get("torchwm_ratio_spread", {}).items())
        lines.append(
            f"multi-agent {row['case']} {row['workers_envs']} rows/s: {', '.join(parts)}; "
            f"torchwm / best other {verdict}, target {report['target']}x; "
            f"{row.get('rounds', '?')} rounds, ratio spread {spreads or 'not measured'}"
        )
    return lines

"""Atari throughput, side by side in one run: each backend (``backends``) with the same game and
settings, one point at a time (a game, a backend, env count, batch size and the caller's policy), and
sweeps of points measured in interleaved repeats, with the raw single-thread emulator speed
(``emulator``) that bounds them all."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from torchwm.benchmarks.atari.backends import BACKENDS, FRAMESKIP
from torchwm.benchmarks.atari.emulator import raw_emulator_frames_per_second, stock_ale_frames_per_second
from torchwm.benchmarks.core.policies import describe, make_policy
from torchwm.benchmarks.core.timing import steps_per_second

__all__ = ["AtariResult", "Point", "measure_async_overlap", "measure_backend", "measure_points", "sweep_points"]


@dataclass
class AtariResult:
    backend: str
    num_envs: int
    steps_per_s: float
    frames_per_s: float
    mode: str = "sync"
    game: str = "breakout"
    policy: str = "none"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def measure_backend(
    backend: str,
    game: str,
    num_envs: int,
    seconds: float,
    *,
    batch_size: int = 0,
    policy: str = "none",
    policy_ms: float = 1.0,
) -> AtariResult:
    """One point: ``backend`` stepping ``num_envs`` envs of ``game`` (``batch_size`` of them per
    batch, all when 0) for ``seconds``, with ``policy`` (see ``policies``) called between steps."""
    batch = batch_size or num_envs
    # Backends warn about things the benchmark does on purpose (EnvPool: reset(seed=) is ignored).
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        env = BACKENDS[backend](game, num_envs, batch_size=batch_size)
        try:
            num_actions = int(env.single_action_space.n)
            rate = steps_per_second(
                env, seconds, batch_size=batch, num_actions=num_actions, policy=make_policy(policy, policy_ms)
            )
        finally:
            env.close()
    mode = "sync" if batch == num_envs else f"async{batch}"
    return AtariResult(backend, num_envs, rate, rate * FRAMESKIP, mode, game, describe(policy, policy_ms))


def measure_async_overlap(game: str, num_envs: int, seconds: float, policy_ms: float) -> list[AtariResult]:
    """torchwm sync (policy then step) against async halves (policy on one half while the other steps),
    with a sleep for the policy, as a GPU forward pass leaves the CPU to the envs."""
    half = max(1, num_envs // 2)
    return [
        measure_backend("torchwm", game, num_envs, seconds, batch_size=size, policy="sleep", policy_ms=policy_ms)
        for size in (num_envs, half)
    ]


@dataclass(frozen=True)
class Point:
    """One measurement of a sweep: a game, a backend, env count, batch size (0: sync) and policy."""

    game: str
    backend: str
    num_envs: int
    batch_size: int = 0
    policy: str = "none"


def measure_points(
    points: list[Point],
    seconds: float,
    policy_ms: float,
    repeats: int = 1,
    progress: Any = None,
    with_stock_ale: bool = True,
) -> tuple[list[AtariResult], dict[str, dict[str, float]]]:
    """Measures every point ``repeats`` times, interleaved so that drifting machine load hits all
    backends alike, and keeps the median of each. Also returns, per game, the median raw single-thread
    frames/s of torchwm's emulator and (``with_stock_ale``) of stock ALE, measured once per repeat."""
    emulators: dict[str, Callable[[str], float]] = {"torchwm": raw_emulator_frames_per_second}
    if with_stock_ale:
        emulators["ale_py"] = stock_ale_frames_per_second
    games = sorted({p.game for p in points})
    raw_rates: dict[tuple[str, str], list[float]] = {(g, e): [] for g in games for e in emulators}
    samples: dict[Point, list[AtariResult]] = {}
    for _ in range(repeats):
        for point in points:
            if progress is not None:
                progress.set_postfix_str(f"{point.game} {point.backend} x{point.num_envs}")
            result = measure_backend(
                point.backend,
                point.game,
                point.num_envs,
                seconds,
                batch_size=point.batch_size,
                policy=point.policy,
                policy_ms=policy_ms,
            )
            samples.setdefault(point, []).append(result)
            if progress is not None:
                progress.update(1)
        for game, emulator in raw_rates:
            raw_rates[(game, emulator)].append(emulators[emulator](game))
    results = [sorted(runs, key=lambda r: r.steps_per_s)[len(runs) // 2] for runs in samples.values()]
    raw_fps: dict[str, dict[str, float]] = {}
    for (game, emulator), rates in raw_rates.items():
        raw_fps.setdefault(game, {})[emulator] = float(np.median(rates))
    return results, raw_fps


def sweep_points(games: list[str], num_envs_list: list[int], backends: list[str], policy: str) -> list[Point]:
    """The default sweep: every game, env count and backend in sync mode, with one policy."""
    return [Point(game, backend, n, 0, policy) for game in games for n in num_envs_list for backend in backends]

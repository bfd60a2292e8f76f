"""Soak run: many million frames and many create/close cycles, watching for leaks (not a speed test).

What it reports (``snapshot``), each taken before and after (after a warm-up that loads everything
once, and after the env is closed and dropped): resident memory (and its slope over the long run, MiB
per million frames), the process's threads, its open file descriptors, its child processes and the
``/dev/shm`` segments it maps.
"""

from __future__ import annotations

import functools
import gc
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from torchwm.benchmarks.soak.snapshot import Snapshot, leaks, rss_mib

FRAMESKIP = 4  # AtariVectorEnv's default: one env step is 4 emulator frames


def _random_steps(env: Any, steps: int, rng: np.random.Generator) -> None:
    for _ in range(steps):
        env.step(rng.integers(0, env.single_action_space.n, env.num_envs))


def atari_frames(game: str, num_envs: int, million_frames: float, samples: int = 50) -> dict[str, Any]:
    """Steps one AtariVectorEnv for ``million_frames`` emulator frames; RSS sampled along the way."""
    from torchwm.atari import AtariVectorEnv

    total_steps = max(1, int(million_frames * 1e6 / (num_envs * FRAMESKIP)))
    chunk = max(1, total_steps // samples)
    rng = np.random.default_rng(0)
    _atari_cycle(game, num_envs)  # warm-up: everything loaded once
    gc.collect()
    before = Snapshot.take()
    env = AtariVectorEnv(game, num_envs)
    env.reset(seed=0)
    _random_steps(env, min(chunk, 500), rng)  # buffers and caches reach their size
    frames_done, curve, start = 0, [(0.0, rss_mib())], time.perf_counter()
    while frames_done < total_steps * num_envs * FRAMESKIP:
        _random_steps(env, chunk, rng)
        frames_done += chunk * num_envs * FRAMESKIP
        curve.append((frames_done / 1e6, rss_mib()))
        print(f"  {frames_done / 1e6:.2f}M frames, RSS {curve[-1][1]:.1f} MiB", file=sys.stderr, flush=True)
    elapsed = time.perf_counter() - start
    env.close()
    del env
    gc.collect()
    after = Snapshot.take()
    millions = np.array([c[0] for c in curve])
    rss = np.array([c[1] for c in curve])
    slope = float(np.polyfit(millions, rss, 1)[0]) if len(curve) > 2 else 0.0
    return {
        "game": game,
        "num_envs": num_envs,
        "million_frames": round(frames_done / 1e6, 3),
        "seconds": round(elapsed, 1),
        "frames_per_s": round(frames_done / elapsed),
        "rss_slope_mib_per_million_frames": round(slope, 4),
        "rss_growth_percent": round(100 * (rss[-1] - rss[0]) / rss[0], 3),
        "rss_mib_start_end": [round(rss[0], 1), round(rss[-1], 1)],
        **leaks(before, after),
    }


def _atari_cycle(game: str, num_envs: int) -> None:
    from torchwm.atari import AtariVectorEnv

    env = AtariVectorEnv(game, num_envs)
    env.reset(seed=0)
    _random_steps(env, 5, np.random.default_rng(0))
    env.close()


def _process_cycle(num_workers: int, envs_per_worker: int) -> None:
    import gymnasium as gym

    from torchwm.process import TorchVectorizedEnv

    factory = functools.partial(gym.make, "CartPole-v1")
    with TorchVectorizedEnv(factory, num_workers=num_workers, envs_per_worker=envs_per_worker) as env:
        env.reset(seed=0)
        _random_steps(env, 5, np.random.default_rng(0))


def cycles(cycle: Callable[[], None], count: int) -> dict[str, Any]:
    """``count`` create/use/close cycles after one warm-up cycle; resources before and after."""
    cycle()
    gc.collect()
    before = Snapshot.take()
    start = time.perf_counter()
    for _ in range(count):
        cycle()
    elapsed = time.perf_counter() - start
    gc.collect()
    return {"cycles": count, "seconds": round(elapsed, 1), **leaks(before, Snapshot.take())}


def process_steps(steps: int, num_workers: int = 2, envs_per_worker: int = 4) -> dict[str, Any]:
    """Steps one TorchVectorizedEnv (CartPole) ``steps`` times; the parent's resources before and after."""
    import gymnasium as gym

    from torchwm.process import TorchVectorizedEnv

    rng = np.random.default_rng(0)
    _process_cycle(num_workers, envs_per_worker)  # warm-up: everything loaded once
    gc.collect()
    before = Snapshot.take()
    factory = functools.partial(gym.make, "CartPole-v1")
    env = TorchVectorizedEnv(factory, num_workers=num_workers, envs_per_worker=envs_per_worker)
    env.reset(seed=0)
    _random_steps(env, 1000, rng)
    rss_start = rss_mib()
    start = time.perf_counter()
    _random_steps(env, steps, rng)
    elapsed = time.perf_counter() - start
    rss_end = rss_mib()
    env.close()
    held_after_close = Snapshot.take().fds
    num_envs = env.num_envs
    del env
    gc.collect()
    after = Snapshot.take()
    return {
        "num_workers": num_workers,
        "envs_per_worker": envs_per_worker,
        "env_steps": steps * num_envs,
        "seconds": round(elapsed, 1),
        "rss_growth_percent": round(100 * (rss_end - rss_start) / rss_start, 3),
        "rss_mib_start_end": [round(rss_start, 1), round(rss_end, 1)],
        "fds_released_only_when_dropped": held_after_close - after.fds,
        **leaks(before, after),
    }


def run_soak(
    game: str, num_envs: int, million_frames: float, atari_cycles: int, process_cycles: int, process_steps_count: int
) -> dict[str, Any]:
    """Every soak part, in order; the JSON-ready report."""
    return {
        "atari_frames": atari_frames(game, num_envs, million_frames),
        "atari_create_close": {"num_envs": num_envs, **cycles(lambda: _atari_cycle(game, num_envs), atari_cycles)},
        "process_steps": process_steps(process_steps_count),
        "process_create_close": {
            "num_workers": 2,
            "envs_per_worker": 2,
            **cycles(lambda: _process_cycle(2, 2), process_cycles),
        },
    }


def leak_summary(report: dict[str, Any]) -> list[str]:
    """One line per part: what grew, or that nothing did."""
    lines = []
    for part, result in report.items():
        grew = [
            f"{key}={result[key]}"
            for key in ("threads_leaked", "fds_leaked", "children_left", "shm_segments_added")
            if result[key] not in (0, None)
        ]
        rss = f"RSS {result['before']['rss_mib']:.1f} -> {result['after']['rss_mib']:.1f} MiB"
        unlisted = " (shared-memory segments not listed on this OS)" if result["shm_segments_added"] is None else ""
        leaked = ", ".join(grew) if grew else "no thread, fd, process or /dev/shm leaked"
        lines.append(f"{part}: {rss}; {leaked}{unlisted}")
    return lines

"""Atari throughput, side by side in one run: torchwm, ale_py's AtariVectorEnv, EnvPool (when
installed) and gymnasium's Sync/AsyncVectorEnv over AtariPreprocessing, all with the same game and
settings, plus the raw single-thread emulator speed that bounds them all."""

from __future__ import annotations

import importlib.util
import os
import time
import warnings
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from torchwm import _core
from torchwm._rom import rom_path
from torchwm.benchmarks.policies import make_policy
from torchwm.benchmarks.timing import steps_per_second


@dataclass
class AtariResult:
    backend: str
    num_envs: int
    steps_per_s: float
    frames_per_s: float
    mode: str = "sync"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


# The benchmark's settings: Breakout-style defaults (84x84 gray, stack 4, frameskip 4, noop 30, no
# sticky actions), expressed for each backend.
FRAMESKIP = 4


def _torchwm(game: str, num_envs: int, **extra: Any) -> Any:
    from torchwm import AtariVectorEnv

    return AtariVectorEnv(game, num_envs, **extra)


def _ale_py(game: str, num_envs: int, **extra: Any) -> Any:
    from ale_py.vector_env import AtariVectorEnv

    return AtariVectorEnv(game, num_envs, **extra)


def _envpool(game: str, num_envs: int, **extra: Any) -> Any:
    import envpool

    task = "".join(part.capitalize() for part in game.split("_")) + "-v5"
    return envpool.make_gymnasium(
        task,
        num_envs=num_envs,
        batch_size=num_envs,
        episodic_life=False,
        reward_clip=True,
        stack_num=4,
        img_height=84,
        img_width=84,
        noop_max=30,
        repeat_action_probability=0.0,
        use_fire_reset=True,
        seed=0,
    )


def _gymnasium(game: str, num_envs: int, vector: str) -> Any:
    import ale_py
    import gymnasium as gym

    gym.register_envs(ale_py)
    name = "".join(part.capitalize() for part in game.split("_"))

    def factory() -> gym.Env:
        env = gym.make(f"ALE/{name}-v5", frameskip=1, repeat_action_probability=0.0)
        env = gym.wrappers.AtariPreprocessing(env, noop_max=30, frame_skip=FRAMESKIP)
        return gym.wrappers.FrameStackObservation(env, 4, padding_type="zero")

    cls = gym.vector.SyncVectorEnv if vector == "sync" else gym.vector.AsyncVectorEnv
    return cls([factory for _ in range(num_envs)])


BACKENDS: dict[str, Callable[..., Any]] = {
    "torchwm": _torchwm,
    "ale_py": _ale_py,
    "envpool": _envpool,
    "gym_sync": lambda game, n: _gymnasium(game, n, "sync"),
    "gym_async": lambda game, n: _gymnasium(game, n, "async"),
}


def available_backends() -> list[str]:
    """Backends that can run here: EnvPool only when installed, gymnasium's AtariPreprocessing only
    with OpenCV (both come with the ``bench`` extra)."""
    names = ["torchwm", "ale_py"]
    if importlib.util.find_spec("envpool") is not None:
        names.append("envpool")
    if importlib.util.find_spec("cv2") is not None:
        names += ["gym_sync", "gym_async"]
    return names


def raw_emulator_frames_per_second(game: str, frames: int = 20_000) -> float:
    """Single-thread emulator frames/s with no preprocessing (Rust loop, no Python per frame)."""
    return _core.emulator_frames_per_second(str(rom_path(game)), frames)


def stock_ale_frames_per_second(game: str, frames: int = 20_000) -> float:
    """The same loop on ale_py's own ALEInterface (stock ALE, from Python, as the issue measured it):
    torchwm compiles ALE with a faster TIA pixel loop, so its raw speed is not stock ALE's."""
    from ale_py import ALEInterface, LoggerMode

    ALEInterface.setLoggerMode(LoggerMode.Error)
    ale = ALEInterface()
    ale.setInt("random_seed", 0)
    ale.loadROM(str(rom_path(game)))
    actions = ale.getMinimalActionSet()
    choices = np.random.default_rng(0).integers(len(actions), size=frames)
    start = time.perf_counter()
    for choice in choices:
        ale.act(actions[choice])
        if ale.game_over():
            ale.reset_game()
    return frames / (time.perf_counter() - start)


def measure_backend(
    backend: str,
    game: str,
    num_envs: int,
    seconds: float,
) -> AtariResult:
    # Backends warn about things the benchmark does on purpose (EnvPool: reset(seed=) is ignored).
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        env = BACKENDS[backend](game, num_envs)
        try:
            num_actions = int(env.single_action_space.n)
            rate = steps_per_second(env, seconds, batch_size=num_envs, num_actions=num_actions)
        finally:
            env.close()
    return AtariResult(backend, num_envs, rate, rate * FRAMESKIP)


def measure_async_overlap(game: str, num_envs: int, seconds: float, policy_ms: float) -> list[AtariResult]:
    """torchwm sync (policy then step) against async halves (policy on one half while the other steps)."""
    # A stand-in for the agent's forward pass: a sleep, as a GPU policy leaves the CPU to the envs.
    policy = make_policy("sleep", policy_ms)
    half = max(1, num_envs // 2)
    results = []
    for batch_size, mode in ((num_envs, "sync"), (half, f"async{half}")):
        env = _torchwm(game, num_envs, batch_size=batch_size)
        try:
            num_actions = int(env.single_action_space.n)
            rate = steps_per_second(env, seconds, batch_size=batch_size, num_actions=num_actions, policy=policy)
        finally:
            env.close()
        results.append(AtariResult("torchwm", num_envs, rate, rate * FRAMESKIP, mode=f"{mode}+policy{policy_ms:g}ms"))
    return results


def cpu_count() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def summarize(results: list[AtariResult], raw_fps: dict[str, float]) -> dict[str, Any]:
    """Ratios the targets are stated in: torchwm against each backend at each num_envs, and torchwm's
    emulator frames/s against cores x raw single-thread frames/s, of each raw emulator measured."""
    by_key = {(r.backend, r.num_envs, r.mode): r for r in results}
    ratios: dict[str, dict[str, float]] = {}
    for r in results:
        if r.mode != "sync" or r.backend == "torchwm":
            continue
        ours = by_key.get(("torchwm", r.num_envs, "sync"))
        if ours is not None:
            ratios.setdefault(str(r.num_envs), {})[r.backend] = ours.steps_per_s / r.steps_per_s
    efficiency = {
        emulator: {
            str(r.num_envs): r.frames_per_s / (cpu_count() * fps)
            for r in results
            if r.backend == "torchwm" and r.mode == "sync"
        }
        for emulator, fps in raw_fps.items()
    }
    return {
        "raw_single_thread_frames_per_s": raw_fps,
        "cores": cpu_count(),
        "torchwm_speedup": ratios,
        "torchwm_frames_vs_cores_x_raw": efficiency,
    }


def measure_all(
    game: str,
    num_envs_list: list[int],
    backends: list[str],
    seconds: float,
    policy_ms: float,
    progress: Any = None,
    repeats: int = 1,
) -> tuple[list[AtariResult], dict[str, float]]:
    """Runs every backend at every num_envs, ``repeats`` times, interleaved so that drifting machine
    load hits all backends alike, and keeps the median of each point. Also returns the median raw
    single-thread frames/s of torchwm's emulator and, when ale_py is benchmarked, of stock ALE."""
    emulators: dict[str, Callable[[str], float]] = {"torchwm": raw_emulator_frames_per_second}
    if "ale_py" in backends:
        emulators["ale_py"] = stock_ale_frames_per_second
    raw_rates = {name: [measure(game)] for name, measure in emulators.items()}
    samples: dict[tuple[str, int, str], list[AtariResult]] = {}
    for _ in range(repeats):
        for num_envs in num_envs_list:
            for backend in backends:
                if progress is not None:
                    progress.set_postfix_str(f"{backend} x{num_envs}")
                result = measure_backend(backend, game, num_envs, seconds)
                samples.setdefault((backend, num_envs, result.mode), []).append(result)
                if progress is not None:
                    progress.update(1)
        if policy_ms > 0:
            overlap_envs = 8 if 8 in num_envs_list else max(num_envs_list)
            for result in measure_async_overlap(game, overlap_envs, seconds, policy_ms):
                samples.setdefault((result.backend, result.num_envs, result.mode), []).append(result)
            if progress is not None:
                progress.update(2)
        for name, measure in emulators.items():
            raw_rates[name].append(measure(game))
    results = [sorted(runs, key=lambda r: r.steps_per_s)[len(runs) // 2] for runs in samples.values()]
    return results, {name: float(np.median(rates)) for name, rates in raw_rates.items()}

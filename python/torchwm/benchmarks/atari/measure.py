"""Atari throughput, side by side in one run: torchwm, ale_py's AtariVectorEnv, EnvPool (when
installed) and gymnasium's Sync/AsyncVectorEnv over AtariPreprocessing, all with the same game and
settings, plus the raw single-thread emulator speed that bounds them all."""

from __future__ import annotations

import functools
import importlib.util
import time
import warnings
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from torchwm import _core, _platform
from torchwm.atari.roms import rom_path
from torchwm.benchmarks.core.policies import describe, make_policy
from torchwm.benchmarks.core.timing import steps_per_second


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


# The benchmark's settings: Breakout-style defaults (84x84 gray, stack 4, frameskip 4, noop 30, no
# sticky actions), expressed for each backend.
FRAMESKIP = 4


def _torchwm(game: str, num_envs: int, batch_size: int = 0, **settings: Any) -> Any:
    from torchwm import AtariVectorEnv

    return AtariVectorEnv(game, num_envs, batch_size=batch_size, **settings)


def _ale_py(game: str, num_envs: int, batch_size: int = 0) -> Any:
    from ale_py.vector_env import AtariVectorEnv

    return AtariVectorEnv(game, num_envs, batch_size=batch_size)


class _EnvPoolBatches:
    """EnvPool's gymnasium env, stepped as torchwm and ale_py step theirs: each ``step`` answers the
    envs of the last batch (EnvPool's async mode needs their ids passed in)."""

    def __init__(self, env: Any) -> None:
        self._env = env
        self._env_ids: Any = None
        self.single_action_space = env.action_space
        self.batch_size = env.config["batch_size"]

    def reset(self, seed: int | None = None) -> tuple[Any, Any]:
        self._env.async_reset()
        obs, _, _, _, info = self._env.recv()
        self._env_ids = info["env_id"]
        return obs, info

    def step(self, actions: Any) -> tuple[Any, ...]:
        self._env.send(actions, self._env_ids)
        result = self._env.recv()
        self._env_ids = result[4]["env_id"]
        return result

    def close(self) -> None:
        self._env.close()


def _envpool(game: str, num_envs: int, batch_size: int = 0) -> Any:
    import envpool

    task = "".join(part.capitalize() for part in game.split("_")) + "-v5"
    env = envpool.make_gymnasium(
        task,
        num_envs=num_envs,
        batch_size=batch_size or num_envs,
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
    return env if batch_size in (0, num_envs) else _EnvPoolBatches(env)


def _gymnasium(game: str, num_envs: int, vector: str, batch_size: int = 0) -> Any:
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
    # torchwm's default is reset_ahead="auto"; these two pin it (always at nice 19, never).
    "torchwm_reset_ahead": functools.partial(_torchwm, reset_ahead=True),
    "torchwm_no_reset_ahead": functools.partial(_torchwm, reset_ahead=False),
    "ale_py": _ale_py,
    "envpool": _envpool,
    "gym_sync": lambda game, n, batch_size=0: _gymnasium(game, n, "sync"),
    "gym_async": lambda game, n, batch_size=0: _gymnasium(game, n, "async"),
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


def cpu_count() -> int:
    return _platform.usable_cores()


def point_label(result: AtariResult) -> str:
    """How ``summarize`` names a point of a game: ``"8 sync no policy"``."""
    return f"{result.num_envs} {result.mode} {result.policy}"


def summarize(results: list[AtariResult], raw_fps: dict[str, dict[str, float]]) -> dict[str, Any]:
    """Ratios the targets are stated in, per game: torchwm against each backend at each point (same
    num_envs, mode and policy), and torchwm's emulator frames/s against cores x raw single-thread
    frames/s, of each raw emulator measured (``raw_fps[game][emulator]``)."""
    by_key = {(r.game, r.backend, r.num_envs, r.mode, r.policy): r for r in results}
    games: dict[str, Any] = {}
    for r in results:
        game = games.setdefault(r.game, {"torchwm_speedup": {}, "torchwm_frames_vs_cores_x_raw": {}})
        point = point_label(r)
        ours = by_key.get((r.game, "torchwm", r.num_envs, r.mode, r.policy))
        if r.backend != "torchwm" and ours is not None:
            game["torchwm_speedup"].setdefault(point, {})[r.backend] = ours.steps_per_s / r.steps_per_s
        if r.backend == "torchwm":
            for emulator, fps in raw_fps.get(r.game, {}).items():
                efficiency = r.frames_per_s / (cpu_count() * fps)
                game["torchwm_frames_vs_cores_x_raw"].setdefault(emulator, {})[point] = efficiency
    return {"raw_single_thread_frames_per_s": raw_fps, "cores": cpu_count(), "games": games}


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

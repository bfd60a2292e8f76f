"""The Atari suite's summary: the ratios its targets are stated in, per game (torchwm against each
backend at the same point, and torchwm's frames/s against the cores times the raw emulator's)."""

from __future__ import annotations

from typing import Any

from torchwm.benchmarks.atari.measure import AtariResult
from torchwm.benchmarks.core.machine import cores

__all__ = ["point_label", "summarize"]


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
                efficiency = r.frames_per_s / (cores() * fps)
                game["torchwm_frames_vs_cores_x_raw"].setdefault(emulator, {})[point] = efficiency
    return {"raw_single_thread_frames_per_s": raw_fps, "cores": cores(), "games": games}

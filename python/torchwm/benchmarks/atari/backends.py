"""The Atari suite's backends, each made with the same game and settings: torchwm's AtariVectorEnv
(its ``reset_ahead`` default, and pinned either way), ale_py's AtariVectorEnv, EnvPool (when installed)
and gymnasium's Sync/AsyncVectorEnv over AtariPreprocessing (with OpenCV). Each maker takes the game,
the env count and ``batch_size`` (envs per batch; 0: all of them)."""

from __future__ import annotations

import functools
import importlib.util
from collections.abc import Callable
from typing import Any

__all__ = ["BACKENDS", "FRAMESKIP", "available_backends"]

# The benchmark's settings: Breakout-style defaults (84x84 gray, stack 4, frameskip 4, noop 30, no
# sticky actions), expressed for each backend.
FRAMESKIP = 4


def _torchwm(game: str, num_envs: int, batch_size: int = 0, **settings: Any) -> Any:
    from torchwm.atari import AtariVectorEnv

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

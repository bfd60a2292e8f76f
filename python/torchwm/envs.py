"""``make_env``: a gymnasium env whose observation is the env's real rendered frame at a chosen size."""

from __future__ import annotations

import difflib
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from torchwm.atari.roms import resolve_game

BACKENDS = ("auto", "gym", "gymnasium", "atari", "ale")


class PixelObservation(gym.Wrapper):
    """Observation ``{"image": uint8 (3, H, W)}`` from ``env.render()`` (rgb_array) resized to ``size``,
    plus ``"state"`` (the original observation) when that is not already the image. Optional action
    repeat: the action is applied ``action_repeat`` times (rewards summed, stopping at episode end)."""

    def __init__(self, env: gym.Env, size: tuple[int, int] = (64, 64), action_repeat: int = 1) -> None:
        super().__init__(env)
        if env.render_mode != "rgb_array":
            raise ValueError(f"PixelObservation needs render_mode='rgb_array', got {env.render_mode!r}")
        height, width = _check_size(size)
        if isinstance(action_repeat, bool) or not isinstance(action_repeat, int) or action_repeat < 1:
            raise ValueError(f"action_repeat must be a positive int, got {action_repeat!r}")
        self.size = (height, width)
        self.action_repeat = action_repeat
        original = env.observation_space
        self._state_is_image = (
            isinstance(original, spaces.Box)
            and original.dtype == np.uint8
            and len(original.shape) == 3
            and original.shape[-1] == 3
        )
        entries: dict[str, spaces.Space] = {"image": spaces.Box(0, 255, (3, height, width), np.uint8)}
        if not self._state_is_image:
            entries["state"] = original
        self.observation_space = spaces.Dict(entries)

    def _observation(self, state: Any) -> dict[str, Any]:
        frame = self.env.render()
        if frame is None:
            raise RuntimeError(f"{self.env} rendered nothing; it needs render_mode='rgb_array'")
        observation: dict[str, Any] = {"image": _resize_chw(np.asarray(frame), self.size)}
        if not self._state_is_image:
            observation["state"] = state
        return observation

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[dict, dict]:
        state, info = self.env.reset(seed=seed, options=options)
        return self._observation(state), info

    def step(self, action: Any) -> tuple[dict, float, bool, bool, dict]:
        total = 0.0
        for _ in range(self.action_repeat):
            state, reward, terminated, truncated, info = self.env.step(action)
            total += float(reward)
            if terminated or truncated:
                break
        return self._observation(state), total, terminated, truncated, info


def _check_size(size: Any) -> tuple[int, int]:
    if (
        not isinstance(size, (tuple, list))
        or len(size) != 2
        or not all(isinstance(s, (int, np.integer)) and not isinstance(s, bool) and s > 0 for s in size)
    ):
        raise ValueError(f"size must be (height, width) with positive ints, got {size!r}")
    return int(size[0]), int(size[1])


def _resize_chw(frame: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """An RGB (H, W, 3) frame resized with an area filter (Pillow's BOX) and moved to (3, H, W)."""
    from PIL import Image

    if frame.ndim != 3 or frame.shape[-1] < 3:
        raise ValueError(f"rendered frame must be (H, W, 3) RGB, got shape {frame.shape}")
    image = Image.fromarray(np.ascontiguousarray(frame[..., :3], dtype=np.uint8))
    if image.size != (size[1], size[0]):
        image = image.resize((size[1], size[0]), Image.Resampling.BOX)
    return np.ascontiguousarray(np.asarray(image).transpose(2, 0, 1))


def _atari_id(env_id: str) -> str | None:
    """``ALE/Pong-v5`` for ``"pong"``, ``"Pong"``, ``"ALE/Pong-v5"``...; None when no ROM matches."""
    import ale_py

    gym.register_envs(ale_py)
    if env_id in gym.registry:  # a registered id is taken as it is ("Blackjack-v1" is not Atari's blackjack)
        return env_id if gym.registry[env_id].entry_point == "ale_py.env:AtariEnv" else None
    try:
        rom_id = resolve_game(env_id)
    except ValueError:
        return None
    for spec in gym.registry.values():
        if spec.namespace == "ALE" and spec.version == 5 and spec.kwargs.get("game") == rom_id:
            return spec.id
    return None


def make_env(
    env_id: str, backend: str = "auto", size: tuple[int, int] = (64, 64), action_repeat: int = 1, **kwargs: Any
) -> gym.Env:
    """A gymnasium env (5-tuple API) with observations ``{"image": uint8 (3, H, W)[, "state": ...]}``.

    ``backend``: ``"gym"``/``"gymnasium"`` (any registered id), ``"atari"``/``"ale"`` (a ROM id such as
    ``"pong"`` or an ``ALE/...`` id), or ``"auto"`` (Atari when the id names a ROM). Picklable as a
    factory: ``functools.partial(make_env, "CartPole-v1", backend="gym")``.
    """
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; valid backends: {', '.join(BACKENDS)}")
    _check_size(size)
    atari_id = _atari_id(env_id) if backend in ("auto", "atari", "ale") else None
    if backend in ("atari", "ale") and atari_id is None:
        resolve_game(env_id)  # raises, naming the closest ROM ids
        raise ValueError(f"{env_id!r} is not an Atari game (ale-py registers no ALE/...-v5 id for it)")
    resolved = atari_id or env_id
    if resolved not in gym.registry:
        close = difflib.get_close_matches(env_id, list(gym.registry), n=8, cutoff=0.5)
        raise ValueError(
            f"unknown env id {env_id!r} for backend {backend!r}; close registered ids: {', '.join(close) or 'none'}"
        )
    env = gym.make(resolved, render_mode="rgb_array", **kwargs)
    return PixelObservation(env, size=size, action_repeat=action_repeat)

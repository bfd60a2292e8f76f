"""Adapts envs with the old Gym API (4-tuple step, reset returning obs only) to the 5-tuple API."""

from __future__ import annotations

from typing import Any

import gymnasium as gym


class OldApiAdapter(gym.Wrapper):
    """Turns ``done`` into ``terminated``/``truncated`` (``info["TimeLimit.truncated"]`` marks truncation)."""

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict]:
        try:
            result = self.env.reset(seed=seed, options=options)
        except TypeError:  # very old envs take no keywords; seed them the old way
            if seed is not None and hasattr(self.env, "seed"):
                self.env.seed(seed)
            result = self.env.reset()
        if isinstance(result, tuple) and len(result) == 2 and isinstance(result[1], dict):
            return result
        return result, {}

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        result = self.env.step(action)
        if len(result) == 5:
            return result
        obs, reward, done, info = result
        truncated = bool(info.get("TimeLimit.truncated", False))
        return obs, reward, bool(done) and not truncated, truncated, info


def adapt(env: Any) -> gym.Env:
    """``env`` itself when it is a gymnasium env (5-tuple API, no wrapper cost per step); otherwise
    an adapter that answers the 5-tuple API whichever API the object speaks."""
    if isinstance(env, gym.Env):
        return env
    if not all(hasattr(env, name) for name in ("reset", "step", "observation_space", "action_space")):
        raise TypeError(
            f"the env factory returned {type(env).__name__}, which lacks reset/step/observation_space/action_space"
        )
    return OldApiAdapter(_PlainEnv(env))


class _PlainEnv(gym.Env):
    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.observation_space = inner.observation_space
        self.action_space = inner.action_space
        self.metadata = getattr(inner, "metadata", {})

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        try:
            return self.inner.reset(seed=seed, options=options)
        except TypeError:
            if seed is not None and hasattr(self.inner, "seed"):
                self.inner.seed(seed)
            return self.inner.reset()

    def step(self, action: Any) -> Any:
        return self.inner.step(action)

    def render(self) -> Any:
        return self.inner.render()

    def close(self) -> None:
        if hasattr(self.inner, "close"):
            self.inner.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.__dict__["inner"], name)

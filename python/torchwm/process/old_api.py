"""The old Gym API (4-tuple ``step``, ``reset`` returning obs only), detected per call.

Any env — a ``gymnasium.Env`` subclass or a plain object — may answer either API; the worker calls
:func:`reset_env` and passes what ``step`` returned through :func:`five_tuple` when it is not a
5-tuple: both look at what came back (the tuple's length) and answer the 5-tuple API. Gymnasium envs
are not wrapped, so they pay no wrapper call per step.
"""

from __future__ import annotations

import inspect
from typing import Any

import gymnasium as gym


def adapt(env: Any) -> gym.Env:
    """``env`` itself when it is a gymnasium env; otherwise a ``gymnasium.Env`` shell around it (for
    ``get_wrapper_attr``/``set_wrapper_attr``/``close``). Neither converts the API: see :func:`five_tuple`."""
    if isinstance(env, gym.Env):
        return env
    if not all(hasattr(env, name) for name in ("reset", "step", "observation_space", "action_space")):
        raise TypeError(
            f"the env factory returned {type(env).__name__}, which lacks reset/step/observation_space/action_space"
        )
    return _PlainEnv(env)


def reset_keywords(env: Any) -> tuple[bool, bool]:
    """Whether ``env.reset`` takes ``seed=`` and ``options=`` (old-API envs often take neither)."""
    reset = _original(env).reset
    try:
        parameters = inspect.signature(reset).parameters
    except (TypeError, ValueError):  # builtins without a signature: assume the modern API
        return True, True
    if any(p.kind == inspect.Parameter.VAR_KEYWORD for p in parameters.values()):
        return True, True
    return "seed" in parameters, "options" in parameters


def reset_env(
    env: Any, keywords: tuple[bool, bool], seed: int | None, options: dict | None, space: Any
) -> tuple[Any, dict]:
    """``env.reset`` as ``(obs, info)`` whichever API it speaks; ``keywords`` from :func:`reset_keywords`."""
    takes_seed, takes_options = keywords
    kwargs: dict[str, Any] = {}
    if takes_seed:
        kwargs["seed"] = seed
    elif seed is not None:
        seeder = getattr(_original(env), "seed", None)
        if callable(seeder):
            seeder(seed)
    if takes_options:
        kwargs["options"] = options
    result = env.reset(**kwargs)
    # A 2-tuple observation whose second entry is a dict (a Tuple(..., Dict) space) reads the same:
    # it is an old-API observation when the space holds the whole tuple.
    if (
        isinstance(result, tuple)
        and len(result) == 2
        and isinstance(result[1], dict)
        and not (isinstance(space, gym.spaces.Tuple) and len(space.spaces) == 2 and _contains(space, result))
    ):
        return result
    return result, {}


def five_tuple(result: Any) -> tuple[Any, Any, Any, Any, dict]:
    """An old 4-tuple step result as the 5-tuple: ``done`` becomes ``terminated``, or ``truncated``
    when ``info["TimeLimit.truncated"]`` says so."""
    if len(result) == 5:
        return result
    if len(result) != 4:
        raise ValueError(f"step() returned {len(result)} values; expected 5 (gymnasium) or 4 (old gym API)")
    obs, reward, done, info = result
    truncated = bool(info.get("TimeLimit.truncated", False)) if isinstance(info, dict) else False
    return obs, reward, bool(done) and not truncated, truncated, info if isinstance(info, dict) else {}


def _original(env: Any) -> Any:
    """The object the factory returned: the env itself, or the one inside :func:`adapt`'s shell."""
    return env.inner if isinstance(env, _PlainEnv) else env


def _contains(space: gym.Space, value: Any) -> bool:
    try:
        return bool(space.contains(value))
    except Exception:
        return False


class _PlainEnv(gym.Env):
    """A gymnasium shell for an object that is not a ``gymnasium.Env`` (spaces, attributes, close)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.observation_space = inner.observation_space
        self.action_space = inner.action_space
        self.metadata = getattr(inner, "metadata", {})

    def reset(self, **kwargs: Any) -> Any:
        return self.inner.reset(**kwargs)

    def step(self, action: Any) -> Any:
        return self.inner.step(action)

    def render(self) -> Any:
        return self.inner.render()

    def close(self) -> None:
        if hasattr(self.inner, "close"):
            self.inner.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.__dict__["inner"], name)

"""Stable-Baselines3's per-env calls, run in a worker as SB3's ``SubprocVecEnv`` worker runs them.

SB3 addresses sub-envs one by one (``get_attr(name, indices)``, ``set_attr``, ``has_attr``,
``env_method``, ``env_is_wrapped``) with semantics of its own, unlike gymnasium's vector calls:
``get_attr`` returns the attribute (a method is not called), ``set_attr`` sets it on the outermost
wrapper (a new attribute included), ``has_attr`` says whether ``get_wrapper_attr`` finds it. These
functions reproduce them on one env; :meth:`TorchVectorizedEnv.sb3_call` sends them to the workers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["SB3_CALLS", "in_caller_order", "is_wrapped", "per_worker_indices", "sb3_call"]

SB3_CALLS = ("get_attr", "set_attr", "has_attr", "env_method", "is_wrapped")


def is_wrapped(env: Any, wrapper_class: type) -> bool:
    """SB3's ``is_wrapped``: some gymnasium wrapper around ``env`` is a ``wrapper_class``."""
    import gymnasium

    while isinstance(env, gymnasium.Wrapper):
        if isinstance(env, wrapper_class):
            return True
        env = env.env
    return False


def _has_attr(env: Any, name: str) -> bool:
    try:
        env.get_wrapper_attr(name)
    except AttributeError:
        return False
    return True


def sb3_call(env: Any, call: str, name: Any, args: tuple, kwargs: dict[str, Any]) -> Any:
    """One of :data:`SB3_CALLS` on ``env``: ``name`` is the attribute or method name (the wrapper class
    for ``is_wrapped``); ``args`` holds the value for ``set_attr`` and a method's arguments."""
    if call == "get_attr":
        return env.get_wrapper_attr(name)
    if call == "set_attr":
        setattr(env, name, args[0])
        return None
    if call == "has_attr":
        return _has_attr(env, name)
    if call == "env_method":
        return env.get_wrapper_attr(name)(*args, **kwargs)
    if call == "is_wrapped":
        return is_wrapped(env, name)
    raise ValueError(f"unknown SB3 call {call!r}; expected one of {SB3_CALLS}")


def per_worker_indices(
    indices: Sequence[int], envs_per_worker: int, num_workers: int
) -> tuple[list[int], list[list[int]]]:
    """``indices`` as ints, and each worker's share of them as its local env indices, in order (both
    vectorizers send each worker its part of a per-env call)."""
    positions = tuple(range(envs_per_worker * num_workers))
    chosen = [positions[i] for i in indices]  # as SubprocVecEnv's tuple of pipes reads them: -1 is the last
    local: list[list[int]] = [[] for _ in range(num_workers)]
    for i in chosen:
        local[i // envs_per_worker].append(i % envs_per_worker)
    return chosen, local


def in_caller_order(replies: Sequence[Sequence[Any]], chosen: list[int], envs_per_worker: int) -> list[Any]:
    """The workers' replies to a per-env call put back in the order of ``chosen`` (repeats included)."""
    per_worker = [iter(reply) for reply in replies]
    return [next(per_worker[i // envs_per_worker]) for i in chosen]

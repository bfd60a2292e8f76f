"""What ``TorchVectorizedEnv`` settles before its workers run: the start method, the factories as the
workers receive them, the vector env's observation space (gymnasium's ``observation_mode``) and the
check of every sub-env's spaces; and the copy of a batch that ``copy=True`` returns."""

from __future__ import annotations

import multiprocessing as mp
from collections.abc import Callable
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.spaces.utils import is_space_dtype_shape_equiv
from gymnasium.vector.utils import batch_differing_spaces, batch_space

import torchwm._platform as _platform
from torchwm.errors import InvalidArgumentError
from torchwm.process.old_api import adapt

__all__ = [
    "check_env_spaces",
    "context",
    "copy_tree",
    "max_concurrency",
    "observation_spaces",
    "pickled",
    "refuse_while_bootstrapping",
]


def observation_spaces(
    probe_space: spaces.Space, factories: list[Callable[[], Any]], observation_mode: Any, total_envs: int
) -> tuple[spaces.Space, spaces.Space]:
    """``(observation_space, single_observation_space)`` for ``observation_mode`` ("same", "different" or
    a pair of spaces), env 0's space being ``probe_space`` (gymnasium's ``AsyncVectorEnv`` rules)."""
    if isinstance(observation_mode, tuple) and len(observation_mode) == 2:
        if not all(isinstance(space, spaces.Space) for space in observation_mode):
            raise TypeError(
                "Expected both elements of observation_mode to be Spaces, got "
                f"{type(observation_mode[0])} and {type(observation_mode[1])}"
            )
        return observation_mode[0], observation_mode[1]
    if observation_mode == "same":
        return batch_space(probe_space, total_envs), probe_space
    if observation_mode == "different":
        env_spaces = [probe_space] + [_observation_space(f) for f in factories[1:]]
        return batch_differing_spaces(env_spaces), probe_space
    raise ValueError(
        "Invalid `observation_mode`, expected: 'same' or 'different' or tuple of single and batch "
        f"observation space, actual got {observation_mode}"
    )


def check_env_spaces(
    env_spaces: list[tuple[spaces.Space, spaces.Space]],
    single_observation_space: spaces.Space,
    single_action_space: spaces.Space,
    observation_mode: Any,
) -> None:
    """Every sub-env's ``(observation, action)`` spaces fit the vector env's (``RuntimeError`` as gymnasium)."""
    if observation_mode == "same":
        same_observations = all(obs == single_observation_space for obs, _ in env_spaces)
    else:
        same_observations = all(is_space_dtype_shape_equiv(single_observation_space, obs) for obs, _ in env_spaces)
    if not same_observations:
        if observation_mode == "same":
            raise RuntimeError(
                "TorchVectorizedEnv(..., observation_mode='same') however some of the sub-environments "
                "observation spaces are not equivalent. If this is intentional, use "
                "`observation_mode='different'` instead."
            )
        raise RuntimeError(
            "TorchVectorizedEnv(..., observation_mode='different' or custom space) however the "
            "sub-environment's observation spaces do not share a common shape and dtype."
        )
    if not all(act == single_action_space for _, act in env_spaces):
        raise RuntimeError(
            f"Some environments have an action space different from `{single_action_space}`. "
            "In order to batch actions, the action spaces from all environments must be equal."
        )


def max_concurrency(value: Any) -> int | None:
    """gymnasium 1.4's ``max_concurrency``: None or an integer >= 1 (its checks, classes and messages)."""
    if value is None:
        return None
    if not isinstance(value, (int, np.integer)):
        raise ValueError(f"`max_concurrency` must be an integer or None, got {type(value)}.")
    if value < 1:
        raise ValueError(f"`max_concurrency` must be a positive or None, got {value}.")
    return int(value)


def context(name: str | None) -> Any:
    """The start method's context (default: ``_platform.default_start_method``); an unknown one raises
    multiprocessing's own ``ValueError`` text (what ``AsyncVectorEnv`` and SB3's ``SubprocVecEnv``
    raise), as an ``InvalidArgumentError``."""
    try:
        return mp.get_context(name or _platform.default_start_method(mp.get_all_start_methods()))
    except ValueError as error:
        raise InvalidArgumentError(str(error)) from None


def refuse_while_bootstrapping() -> None:
    """Refuses to start workers from a process that is itself still starting: a worker started by spawn
    (Windows's and macOS's start method) imports the parent's main module, and a script that makes the
    vector env at its top level, without the ``if __name__ == "__main__":`` guard, would make one in
    every worker, each starting workers of its own. ``multiprocessing`` refuses that only once the
    worker starts its first process; this refuses it before the env is probed, with what to do. The
    parent then reports the worker's death (``WorkerCrashedError``, naming the guard)."""
    if getattr(mp.current_process(), "_inheriting", False):  # multiprocessing's own test (spawn.py)
        raise RuntimeError(
            "TorchVectorizedEnv was created while this process was starting as a worker process: the main "
            "module of a program whose workers are started by spawn (the default on Windows and macOS) is "
            "imported by each worker, so it must create the vector env (and anything that starts processes) "
            'only under\n\n    if __name__ == "__main__":\n        ...\n\nsee \'Safe importing of main '
            "module' in the multiprocessing documentation."
        )


def _observation_space(factory: Callable[[], Any]) -> spaces.Space:
    env = adapt(factory())
    try:
        return env.observation_space
    finally:
        env.close()


def pickled(factory: Callable[[], Any], context_name: str) -> bytes:
    import cloudpickle

    try:
        return cloudpickle.dumps(factory)
    except Exception as error:
        raise TypeError(
            f"env_factory cannot be pickled for the {context_name!r} start method ({error}). Define the "
            "factory at module scope (or a functools.partial of one) with picklable arguments, or use "
            "context='fork'."
        ) from error


def copy_tree(value: Any) -> Any:
    """A copy of a (nested dict/tuple of) array(s): what ``deepcopy`` gives, without its bookkeeping.
    Only plain tuples are walked: named tuples (``GraphInstance``) are deep-copied as they are."""
    if isinstance(value, np.ndarray):
        return value.copy()
    if type(value) is dict:
        return {key: copy_tree(item) for key, item in value.items()}
    if type(value) is tuple:
        return tuple(copy_tree(item) for item in value)
    from copy import deepcopy

    return deepcopy(value)

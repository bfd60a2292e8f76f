"""A batch for all envs cut into the workers' blocks (worker ``w`` holds envs ``w*k .. w*k+k-1``):
one implementation for the process and the Ray backends."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector.utils import iterate

__all__ = ["FLAT_ARRAY_SPACES", "action_blocks", "blocks", "is_array_space", "slice_views"]

# Spaces whose batch is one numpy array with the envs along the first axis.
FLAT_ARRAY_SPACES = (spaces.Box, spaces.Discrete, spaces.MultiDiscrete, spaces.MultiBinary)


def is_array_space(space: spaces.Space) -> bool:
    """Whether batches of ``space`` are (nested dicts/tuples of) fixed-shape numpy arrays."""
    if isinstance(space, spaces.Dict):
        return all(is_array_space(sub) for sub in space.spaces.values())
    if isinstance(space, spaces.Tuple):
        return all(is_array_space(sub) for sub in space.spaces)
    return isinstance(space, FLAT_ARRAY_SPACES)


def slice_views(views: Any, start: int, stop: int) -> Any:
    """The rows ``start:stop`` of every array in a (nested) dict/tuple of batched views, as views."""
    if isinstance(views, dict):
        return {key: slice_views(value, start, stop) for key, value in views.items()}
    if isinstance(views, tuple):
        return tuple(slice_views(value, start, stop) for value in views)
    if isinstance(views, np.ndarray):
        return views[start:stop]
    raise TypeError(f"cannot slice a batch of type {type(views).__name__}")


def blocks(values: Sequence[Any], per_worker: int, num_workers: int) -> list[list[Any]]:
    """Per-env values (seeds, masks, attribute values) as one list per worker."""
    return [list(values[w * per_worker : (w + 1) * per_worker]) for w in range(num_workers)]


def action_blocks(
    actions: Any, space: spaces.Space, batched: spaces.Space, per_worker: int, num_workers: int
) -> list[Any]:
    """Each worker's part of ``actions``, a batch of ``batched`` (``space`` for all envs): row views
    for an array space given as (nested dicts/tuples of) arrays, else the list of its envs' actions."""
    if is_array_space(space):
        with contextlib.suppress(TypeError):  # a leaf that is not an array (a list): cut per env
            return [slice_views(actions, w * per_worker, (w + 1) * per_worker) for w in range(num_workers)]
    return blocks(list(iterate(batched, actions)), per_worker, num_workers)

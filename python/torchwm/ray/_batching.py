"""Placing the workers' batches side by side, and cutting a batch of actions into workers' slices.

Each worker returns what gymnasium's ``SyncVectorEnv`` returns for its block; these functions give what
one ``SyncVectorEnv`` over all the envs would have returned, with gymnasium's batching utilities.
"""

from __future__ import annotations

from typing import Any, cast

import numpy as np
from gymnasium import spaces
from gymnasium.vector.utils import batch_space, concatenate, create_empty_array, iterate

from torchwm._worker_blocks import FLAT_ARRAY_SPACES, action_blocks
from torchwm.errors import InvalidArgumentError


def split_actions(space: spaces.Space, actions: Any, num_workers: int, per_worker: int) -> list[Any]:
    """``actions`` (a batch of ``space`` for all envs) as one batch per worker (each actor steps a
    ``SyncVectorEnv``): the shared cut (``action_blocks``), each non-array block batched again."""
    total = num_workers * per_worker
    if isinstance(space, FLAT_ARRAY_SPACES):
        actions = np.asarray(actions)
        if actions.ndim == 0 or actions.shape[0] != total:
            raise InvalidArgumentError(
                f"actions must have a leading dimension of num_envs={total}, got shape {actions.shape}"
            )
    parts = action_blocks(actions, space, batch_space(space, total), per_worker, num_workers)
    return [
        concatenate(space, part, cast(Any, create_empty_array(space, per_worker))) if isinstance(part, list) else part
        for part in parts
    ]


def join_observations(space: spaces.Space, batches: list[Any], per_worker: int) -> Any:
    """The workers' observation batches as one batch of ``space`` (a fresh array the caller owns)."""
    if isinstance(space, FLAT_ARRAY_SPACES):
        return np.concatenate([np.asarray(batch) for batch in batches], axis=0)
    worker_space = batch_space(space, per_worker)
    singles = [obs for batch in batches for obs in iterate(worker_space, batch)]
    return concatenate(space, singles, cast(Any, create_empty_array(space, len(singles))))


def join_infos(worker_infos: list[dict[str, Any] | None], per_worker: int) -> dict[str, Any]:
    """The workers' batched infos (``key`` and its mask ``_key``) as the batched infos of all envs."""
    total = len(worker_infos) * per_worker
    joined: dict[str, Any] = {}
    for w, infos in enumerate(worker_infos):
        if infos:
            _place(joined, infos, w * per_worker, total)
    return joined


def _place(joined: dict[str, Any], infos: dict[str, Any], start: int, total: int) -> None:
    """Copies one worker's ``infos`` into rows ``start...`` of ``joined`` (recursing into dicts)."""
    mask_keys = {f"_{key}" for key in infos}
    for key, value in infos.items():
        if key in mask_keys:
            continue
        # A VectorEnv block (ale_py's layout) may give keys without masks: every row then has the key.
        masked = f"_{key}" in infos
        if isinstance(value, dict):
            _place(joined.setdefault(key, {}), value, start, total)
        else:
            value = np.asarray(value)
            mask = np.asarray(infos[f"_{key}"], dtype=np.bool_) if masked else np.ones(len(value), dtype=np.bool_)
            if key not in joined:
                joined[key] = _empty_like_batch(value, total)
            joined[key][np.flatnonzero(mask) + start] = value[mask]
        if masked:
            rows = np.flatnonzero(np.asarray(infos[f"_{key}"], dtype=np.bool_)) + start
            joined.setdefault(f"_{key}", np.zeros(total, dtype=np.bool_))[rows] = True


def _empty_like_batch(value: np.ndarray, total: int) -> np.ndarray:
    """What gymnasium's ``VectorEnv._add_info`` starts a key with: ``None`` objects or zeros."""
    if value.dtype == object:
        return np.full(total, fill_value=None, dtype=object)
    return np.zeros((total, *value.shape[1:]), dtype=value.dtype)

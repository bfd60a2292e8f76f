"""One sub-environment's row of gymnasium's batched results (observations and ``info`` dicts).

SB3 wants per-env values (a list of info dicts, one ``terminal_observation`` each) where gymnasium's
vector envs return batches: arrays with a leading env axis, nested dicts/tuples of them, and info
dicts whose key ``k`` is paired with a boolean mask ``_k`` saying which envs have it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["FINAL_KEYS", "copy_batch", "info_row", "obs_row"]

# Keys of a SAME_STEP info that describe the finished episode: SB3 carries them elsewhere.
FINAL_KEYS = frozenset({"final_obs", "_final_obs", "final_info", "_final_info"})


def obs_row(batch: Any, index: int) -> Any:
    """Env ``index``'s observation as its own copy (the batch buffer may be reused by the next call)."""
    if isinstance(batch, dict):
        return {key: obs_row(value, index) for key, value in batch.items()}
    if isinstance(batch, tuple):
        return tuple(obs_row(value, index) for value in batch)
    row = batch[index]
    return row.copy() if isinstance(row, np.ndarray) else row


def _scalar(value: Any) -> Any:
    """A numpy scalar as the Python value a single env put into its info (batching made it numpy)."""
    return value.item() if isinstance(value, np.generic) else value


def info_row(infos: dict[str, Any], index: int, skip: frozenset[str] = frozenset()) -> dict[str, Any]:
    """Env ``index``'s info dict: the keys whose ``_key`` mask (if any) selects it, nested dicts too.

    A key without a mask (ale_py's ``AtariVectorEnv`` returns no masks) belongs to every env."""
    row: dict[str, Any] = {}
    for key, value in infos.items():
        if key in skip or (key.startswith("_") and key[1:] in infos):
            continue
        mask = infos.get(f"_{key}")
        if mask is not None and not mask[index]:
            continue
        row[key] = info_row(value, index) if isinstance(value, dict) else _scalar(value[index])
    return row


def copy_batch(batch: Any) -> Any:
    """A copy of a (nested dict/tuple of) batch array(s)."""
    if isinstance(batch, dict):
        return {key: copy_batch(value) for key, value in batch.items()}
    if isinstance(batch, tuple):
        return tuple(copy_batch(value) for value in batch)
    return np.array(batch, copy=True)

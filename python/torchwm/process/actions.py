"""Batches of actions: their structure, whether they lie in the action space, and their split over workers.

Every check runs in the parent, before anything is sent, and leaves the env usable: the structure
always (what gymnasium's ``iterate`` also refuses), the space with ``check_actions=True`` (by default an
action outside the space is delivered, as gymnasium delivers it).
The space check is vectorized: one ``min``/``max`` per array for Discrete, MultiDiscrete, MultiBinary
and Box spaces; other spaces (Text, Graph, custom...) are checked env by env with ``contains``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector.utils import iterate

from torchwm._worker_blocks import action_blocks, is_array_space
from torchwm.errors import InvalidArgumentError

# A check of one batch: None if it is in the space, else a description of what is wrong.
Check = Callable[[Any], "str | None"]


def as_batch(value: Any) -> Any:
    """A nested dict/tuple of batches as it is, anything else as an array."""
    return value if isinstance(value, (dict, tuple)) else np.asarray(value)


def check_structure(actions: Any, space: spaces.Space, total_envs: int, where: str = "actions") -> None:
    """``actions`` must have the structure of ``space`` (a dict with its keys for a Dict space, a
    tuple of its length for a Tuple space) and every array ``total_envs`` rows; else ``ValueError``."""
    if isinstance(space, spaces.Dict):
        if not isinstance(actions, dict):
            raise InvalidArgumentError(
                f"{where} must be a dict with keys {sorted(space.spaces)} (the action space is a Dict), "
                f"got {type(actions).__name__}"
            )
        missing = [key for key in space.spaces if key not in actions]
        if missing:
            raise InvalidArgumentError(
                f"{where} lacks keys {missing}; the Dict action space has keys {sorted(space.spaces)}"
            )
        for key, subspace in space.spaces.items():
            check_structure(as_batch(actions[key]), subspace, total_envs, f"{where}[{key!r}]")
    elif isinstance(space, spaces.Tuple):
        if not isinstance(actions, tuple) or len(actions) != len(space.spaces):
            got = f"a tuple of {len(actions)}" if isinstance(actions, tuple) else type(actions).__name__
            raise InvalidArgumentError(
                f"{where} must be a tuple of {len(space.spaces)} batches (the action space is a Tuple), got {got}"
            )
        for i, (value, subspace) in enumerate(zip(actions, space.spaces)):
            check_structure(as_batch(value), subspace, total_envs, f"{where}[{i}]")
    elif not is_array_space(space):
        sized = isinstance(actions, (tuple, list)) or (isinstance(actions, np.ndarray) and actions.ndim > 0)
        if not sized:
            raise _not_iterable(actions)
        if len(actions) != total_envs:
            raise InvalidArgumentError(
                f"{where} must be a tuple of total_envs={total_envs} actions (gymnasium batches {space} as a "
                f"Tuple), got {type(actions).__name__}"
            )
    else:
        if isinstance(actions, (dict, tuple)):
            raise InvalidArgumentError(
                f"{where} must be an array with a leading dimension of total_envs={total_envs}, "
                f"got a {type(actions).__name__}"
            )
        shape = np.shape(actions)
        if shape == ():
            raise _not_iterable(actions)
        if shape[0] != total_envs:
            raise InvalidArgumentError(
                f"{where} must have a leading dimension of total_envs={total_envs}, got shape {shape}"
            )


def _not_iterable(value: Any) -> TypeError:
    """A scalar where a batch is expected: gymnasium's ``iterate`` raises ``TypeError`` (this text)."""
    return TypeError(f"Unable to iterate over the following elements: {value}")


def space_check(space: spaces.Space) -> Check:
    """The check of a batch (structure already checked) against the single-env ``space``."""
    if isinstance(space, (spaces.Dict, spaces.Tuple)):
        items: Any = space.spaces.items() if isinstance(space, spaces.Dict) else enumerate(space.spaces)
        checks = [(key, space_check(sub)) for key, sub in items]

        def check_each(batch: Any) -> str | None:
            for key, check in checks:
                error = check(as_batch(batch[key]))
                if error is not None:
                    return f"[{key!r}]{error}"
            return None

        return check_each
    if not is_array_space(space):
        return lambda batch: _per_env(space, batch)
    return _array_check(space)


def _array_check(space: spaces.Space) -> Check:
    """A dtype and min/max check for Box, Discrete, MultiDiscrete and MultiBinary batches. Integer
    spaces take what gymnasium's ``contains`` takes: a dtype that ``np.can_cast`` to theirs (not uint64
    for int64); a Box takes numbers (bools for a bool Box)."""
    cast_to: Any = None
    if isinstance(space, (spaces.Discrete, spaces.MultiDiscrete)):
        nvec = space.n if isinstance(space, spaces.Discrete) else space.nvec
        kinds, low, high, cast_to = "iu", space.start, space.start + nvec - 1, space.dtype
    elif isinstance(space, spaces.MultiBinary):
        kinds, low, high = "biu", 0, 1
    else:
        assert isinstance(space, spaces.Box)
        kinds = {"b": "b", "i": "iu", "u": "iu"}.get(np.dtype(space.dtype).kind, "iuf")
        low, high = space.low, space.high
    low, high = _scalar_if_uniform(low), _scalar_if_uniform(high)
    shape = tuple(space.shape or ())

    def check(batch: np.ndarray) -> str | None:
        dtype_ok = batch.dtype.kind in kinds and (cast_to is None or np.can_cast(batch.dtype, cast_to))
        if dtype_ok and batch.shape[1:] == shape and _inside(batch, low, high):
            return None
        if not dtype_ok:
            return f" must have a dtype {space} contains, got dtype {batch.dtype}"
        if batch.shape[1:] != shape:
            return f" must have shape (total_envs, *{shape}), got {batch.shape}"
        return f" has values outside {space}: {_outside(batch, low, high)}"

    return check


# Up to this many values, Python's min/max over a list beat numpy's reductions (their call overhead).
_SMALL_BATCH = 64


def _inside(batch: np.ndarray, low: Any, high: Any) -> bool:
    """Every value in [low, high]; NaN is not."""
    if batch.size == 0 or batch.dtype.kind == "b":
        return True
    if isinstance(low, np.ndarray) or isinstance(high, np.ndarray):
        return bool(np.all(batch >= low) and np.all(batch <= high))
    kind = batch.dtype.kind
    if low == 0 and kind in "iu":  # seen as unsigned, a negative value is larger than any bound: one pass
        batch = batch.view(_UNSIGNED[batch.dtype.itemsize])
        return (max(batch.ravel().tolist()) if batch.size <= _SMALL_BATCH else batch.max()) <= high
    if batch.size <= _SMALL_BATCH:
        values = batch.ravel().tolist()
        if kind == "f":  # min/max skip NaN depending on its position: compare each value
            return all(low <= value <= high for value in values)
        return min(values) >= low and max(values) <= high
    return bool(batch.min() >= low and batch.max() <= high)  # a NaN makes min/max NaN: False


_UNSIGNED = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def _scalar_if_uniform(bound: Any) -> Any:
    array = np.asarray(bound)
    return array.flat[0].item() if array.size and np.all(array == array.flat[0]) else array


def _outside(batch: np.ndarray, low: Any, high: Any) -> str:
    """The sub-environments whose action lies outside [low, high] (for the error message; slow is fine)."""
    bad = ~((batch >= low) & (batch <= high))
    rows = np.flatnonzero(bad.reshape(len(batch), -1).any(axis=1))
    shown = ", ".join(f"sub-environment {i}: {batch[i]!r}" for i in rows[:4])
    return shown + (", ..." if len(rows) > 4 else "")


def _per_env(space: spaces.Space, batch: Any) -> str | None:
    for i, action in enumerate(batch):
        try:
            inside = bool(space.contains(action))
        except Exception:
            inside = False
        if not inside:
            return f" has an action outside {space} for sub-environment {i}: {action!r}"
    return None


def check_in_space(check: Check, actions: Any) -> None:
    """Runs ``check`` (from :func:`space_check`); ``InvalidArgumentError`` naming what is wrong."""
    error = check(actions)
    if error is not None:
        raise InvalidArgumentError(f"actions{error}")


def split(
    actions: Any, space: spaces.Space, batched: spaces.Space, envs_per_worker: int, num_workers: int
) -> list[Any]:
    """Each worker's part of a batch of actions: rows of arrays (plain ones as raw bytes: pickling a
    small ndarray costs more than the step of a cheap env), or a list of its envs' actions."""
    parts = action_blocks(actions, space, batched, envs_per_worker, num_workers)
    if isinstance(actions, np.ndarray) and actions.dtype != object:
        return [(part.dtype.str, part.shape, part.tobytes()) for part in parts]
    return parts


def actions_outside_space(
    action_space: spaces.Space, single_action_space: spaces.Space, actions: Any, env_rows: list[range]
) -> bool:
    """Whether each sub-env (its rows of the batch ``actions``: one, or one per agent) got an action that
    lies outside ``single_action_space`` (gymnasium's ``contains``: what the sub-env received); an action
    that cannot be read counts as outside."""
    try:
        received = list(iterate(action_space, actions))
        return all(any(not _contains_quietly(single_action_space, received[i]) for i in rows) for rows in env_rows)
    except Exception:
        return True


def _contains_quietly(space: spaces.Space, action: Any) -> bool:
    """``space.contains(action)`` without the ``Casting input x to numpy array.`` warning a Box logs for a
    non-array (a shape-() Box's rows are numpy scalars): gymnasium logs it only for what its envs check,
    never for this judgement of ours. The same cast as ``Box.contains``, so the same answer."""
    if isinstance(space, spaces.Box) and not isinstance(action, np.ndarray):
        try:
            action = np.asarray(action, dtype=space.dtype)
        except (ValueError, TypeError):
            return False
    return bool(space.contains(action))

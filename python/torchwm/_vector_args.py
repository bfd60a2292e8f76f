"""Parsing shared by both vectorizers: autoreset mode, ``reset(seed=, options=)``.

One place decides what a seed, a reset mask or an autoreset mode may be, and which exception (class
and wording, as ale_py 0.12.1 and gymnasium use) a bad one gets.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Collection, Mapping
from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode
from gymnasium.vector.async_vector_env import AsyncState

from torchwm.errors import InvalidArgumentError, InvalidArgumentTypeError

__all__ = [
    "MAX_ENV_COUNT",
    "FirstResetSeed",
    "already_pending_message",
    "async_state",
    "env_factories",
    "parse_autoreset_mode",
    "parse_batch_size",
    "parse_gymnasium_reset_mask",
    "parse_reset_mask",
    "parse_seeds",
    "parse_timeout",
    "positive_count",
    "split_options",
    "timeout_message",
    "worker_counts",
]

# A bound far above any real use, so that a huge value is refused at once instead of forking or
# building envs for hours (or overflowing numpy's index type).
MAX_ENV_COUNT = 2**16


def positive_count(name: str, value: Any) -> int:
    """A worker or env count: an integer in ``[1, MAX_ENV_COUNT]``."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 1 <= value <= MAX_ENV_COUNT:
        raise InvalidArgumentError(f"{name} must be an integer in [1, {MAX_ENV_COUNT}], got {value!r}")
    return int(value)


def worker_counts(num_workers: Any, envs_per_worker: Any) -> tuple[int, int]:
    """``(num_workers, envs_per_worker)`` checked, their product at most ``MAX_ENV_COUNT`` too."""
    workers, per_worker = positive_count("num_workers", num_workers), positive_count("envs_per_worker", envs_per_worker)
    if workers * per_worker > MAX_ENV_COUNT:
        raise InvalidArgumentError(
            f"num_workers * envs_per_worker must be at most {MAX_ENV_COUNT}, got {workers} * {per_worker}"
        )
    return workers, per_worker


def parse_batch_size(batch_size: Any, num_workers: int, envs_per_worker: int) -> int:
    """The process vectorizer's pool batch: None (every env) or whole workers, ``envs_per_worker`` to
    ``num_workers * envs_per_worker`` envs in steps of ``envs_per_worker``."""
    total = num_workers * envs_per_worker
    if batch_size is None:
        return total
    if (
        isinstance(batch_size, bool)
        or not isinstance(batch_size, (int, np.integer))
        or not envs_per_worker <= batch_size <= total
        or batch_size % envs_per_worker
    ):
        raise InvalidArgumentError(
            f"batch_size must be None or a multiple of envs_per_worker ({envs_per_worker}) in "
            f"[{envs_per_worker}, {total}] (a worker's envs come back together), got {batch_size!r}"
        )
    return int(batch_size)


def env_factories(env_factory: Any, total_envs: int) -> list[Any]:
    """One factory per env: ``env_factory`` repeated, or its list of ``total_envs`` callables."""
    if callable(env_factory):
        return [env_factory] * total_envs
    if isinstance(env_factory, (list, tuple)):
        if len(env_factory) != total_envs:
            raise InvalidArgumentError(
                f"env_factory list has {len(env_factory)} callables, expected total_envs = "
                f"num_workers * envs_per_worker = {total_envs}"
            )
        if not all(callable(f) for f in env_factory):
            raise TypeError("every entry of env_factory must be callable")
        return list(env_factory)
    raise TypeError(f"env_factory must be a callable or a list of callables, got {type(env_factory).__name__}")


def parse_autoreset_mode(value: Any, supported: Collection[AutoresetMode]) -> AutoresetMode:
    """``value`` as an :class:`AutoresetMode` (the enum or its string value), one of ``supported``."""
    names = ", ".join(mode.name for mode in supported)
    try:
        mode = AutoresetMode(value)
    except ValueError:
        raise InvalidArgumentError(f"autoreset_mode must be one of AutoresetMode.{{{names}}}, got {value!r}") from None
    if mode not in supported:
        raise InvalidArgumentError(f"autoreset_mode must be one of AutoresetMode.{{{names}}}, got {mode}")
    return mode


def split_options(options: Any) -> tuple[np.ndarray | None, dict[str, Any]]:
    """``reset(options=...)`` -> (the ``reset_mask`` entry or None, the other options)."""
    if options is None:
        return None, {}
    if not isinstance(options, Mapping):
        raise TypeError(f"options must be a dict or None, got {type(options).__name__}: {options!r}")
    rest = {key: value for key, value in options.items() if key != "reset_mask"}
    return options.get("reset_mask"), rest


def parse_reset_mask(mask: Any, num_envs: int) -> np.ndarray | None:
    """A ``reset_mask`` as ale_py 0.12.1 checks it: a bool numpy array of shape ``(num_envs,)``."""
    if mask is None:
        return None
    if not isinstance(mask, np.ndarray) or mask.dtype != np.bool_:
        raise TypeError(
            f"`reset_mask` must be a boolean numpy array, got {type(mask)} with dtype {getattr(mask, 'dtype', None)}"
        )
    if mask.shape != (num_envs,):
        raise ValueError(f"`reset_mask` must have shape {(num_envs,)}, got {mask.shape}")
    return mask


def parse_gymnasium_reset_mask(mask: Any, num_envs: int) -> np.ndarray | None:
    """A ``reset_mask`` as gymnasium 1.4's ``AsyncVectorEnv`` checks it: in its order, with its classes
    and messages (code may match on them): a numpy array, of shape ``(num_envs,)``, of bools, one True."""
    if mask is None:
        return None
    if not isinstance(mask, np.ndarray):
        raise TypeError(f"`options['reset_mask']` must be a numpy array, got {type(mask)}")
    if mask.shape != (num_envs,):
        raise ValueError(f"`options['reset_mask']` must have shape `({num_envs},)`, got {mask.shape}")
    if mask.dtype != np.bool_:
        raise TypeError(f"`options['reset_mask']` must have `dtype=np.bool_`, got {mask.dtype}")
    if not mask.any():
        raise InvalidArgumentError(
            f"`options['reset_mask']` must contain a boolean array with at least one True value, got reset_mask={mask}"
        )
    return mask


def _is_int(value: Any) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))


def _check_seed(seed: Any, limit: int | None) -> int | None:
    if seed is None:
        return None
    if not _is_int(seed):
        raise InvalidArgumentError(f"seeds must be integers, got {seed!r} ({type(seed).__name__})")
    value = int(seed)
    if value < 0 or (limit is not None and value >= limit):
        bound = f"[0, {limit})" if limit is not None else "[0, inf)"
        raise InvalidArgumentError(f"seeds must be integers in {bound}, got {value}")
    return value


def parse_seeds(seed: Any, count: int, *, limit: int | None = None) -> list[int | None]:
    """``reset(seed=...)`` -> one seed (or None: keep the env's RNG going) per env being reset.

    An int seeds them with consecutive values from it; a numpy array or a list/tuple gives one entry
    per env being reset (``count``); each seed must be an integer in ``[0, limit)``.
    """
    if seed is None:
        return [None] * count
    if _is_int(seed):
        first = int(seed)
        _check_seed(first, limit)
        if count:
            _check_seed(first + count - 1, limit)
        return list(range(first, first + count))
    if isinstance(seed, np.ndarray):
        if seed.shape != (count,):
            raise ValueError(
                f"`seed` must have one entry per sub-environment being reset, expected shape {(count,)}, "
                f"got {seed.shape}"
            )
        if seed.dtype.kind not in "iuO":
            raise InvalidArgumentError(f"seeds must be integers, got an array of dtype {seed.dtype}")
        return [_check_seed(s, limit) for s in seed.tolist()]
    if isinstance(seed, (list, tuple)):
        if len(seed) != count:
            raise ValueError(
                f"`seed` must have one entry per sub-environment being reset, expected {count}, got {len(seed)}"
            )
        return [_check_seed(s, limit) for s in seed]
    raise TypeError(
        f"Unsupported seed type: seed must be None, an int, a list of ints or a numpy array, got {type(seed).__name__}"
    )


def async_state(call: str) -> AsyncState:
    """gymnasium's ``AsyncState`` for a pending ``call``: get_attr, set_attr, render... count as calls."""
    return {"reset": AsyncState.WAITING_RESET, "step": AsyncState.WAITING_STEP}.get(call, AsyncState.WAITING_CALL)


def already_pending_message(call: str, pending: AsyncState) -> str:
    """gymnasium 1.4's ``AlreadyPendingCallError`` text for ``call`` (its ``reset_async`` has no full stop)."""
    stop = "" if call == "reset_async" else "."
    return f"Calling `{call}` while waiting for a pending call to `{pending.value}` to complete{stop}"


class FirstResetSeed:
    """The constructor's ``seed`` keyword (checked at once): the seeds of the first ``reset``, when that
    reset gives none. The first reset that is sent forgets it, seeded or not."""

    def __init__(self, seed: Any, count: int, *, limit: int | None = None) -> None:
        self._seeds = None if seed is None else parse_seeds(seed, count, limit=limit)

    def __call__(self, seed: Any) -> Any:
        """The seed a ``reset(seed=seed)`` uses."""
        return self._seeds if seed is None and self._seeds is not None else seed

    def forget(self) -> None:
        """Called once a reset was sent."""
        self._seeds = None


def timeout_message(what: str, timeout: float | None, missing: int) -> str:
    """The ``mp.TimeoutError`` of a wait for ``what`` (a pending ``reset``, ``step``, ``call``, or another
    command): gymnasium's ``AsyncVectorEnv`` sentence first, which code may match on, then how many workers
    did not answer."""
    call = f"`{what}_wait`" if what in ("reset", "step", "call") else what
    return (
        f"The call to {call} has timed out after {timeout} second(s). "
        f"{missing} worker(s) did not answer; call again to keep waiting."
    )


def parse_timeout(timeout: Any) -> float | None:
    """A ``*_wait(timeout=)`` or ``close(timeout=)``: None (wait for ever) or a number of seconds; a
    negative one is 0 (gymnasium's ``AsyncVectorEnv`` waits ``max(timeout, 0)``: what is in is taken,
    nothing is waited for). Callers check it before waiting, so a bad one leaves the pending call pending.

    Not a number (a string...): ``InvalidArgumentTypeError``, a ``TypeError`` as gymnasium raises; a bool
    too (gymnasium waits ``True`` as 1 s). NaN: ``InvalidArgumentError``, a ``ValueError`` as gymnasium's."""
    if timeout is None:
        return None
    if isinstance(timeout, (bool, np.bool_)) or not isinstance(timeout, numbers.Real):
        raise InvalidArgumentTypeError(
            f"timeout must be None or a number of seconds, got {timeout!r} ({type(timeout).__name__})"
        )
    seconds = float(timeout)
    if math.isnan(seconds):
        raise InvalidArgumentError(f"timeout must be None or a number of seconds, got {timeout!r}")
    return max(seconds, 0.0)

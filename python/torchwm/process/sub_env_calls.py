"""The calls that reach the sub-envs one attribute or method at a time (gymnasium's ``call``/``get_attr``/
``set_attr``, Stable-Baselines3's per-env calls, ``render``) over ``TorchVectorizedEnv``'s worker protocol.

A mixin of ``TorchVectorizedEnv`` alone: it uses that class's protocol (``_live_pool``, ``_send``, ``_wait``,
``_wait_now``) and counts (``num_workers``, ``envs_per_worker``, ``total_envs``). An exception in any of
these calls is raised to the caller and leaves the env usable.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium.vector import VectorEnv

from torchwm._worker_blocks import blocks
from torchwm.errors import InvalidArgumentError
from torchwm.process.protocol import Message
from torchwm.process.sb3_calls import in_caller_order, per_worker_indices

__all__ = ["SubEnvCallsMixin"]

# Vector-env methods that `call` must not reach in the sub-envs (gymnasium refuses the same names).
_RESERVED_CALLS = ("reset", "step", "close", "_setattr", "_check_spaces")


class SubEnvCallsMixin(VectorEnv):
    """``call``, ``get_attr``, ``set_attr``, ``sb3_call``, ``render``, ``np_random_seed``, ``np_random``."""

    num_workers: int
    envs_per_worker: int
    total_envs: int
    agents_per_env: int
    _env_count: int
    _live_pool: Any
    _send: Any
    _wait: Any
    _wait_now: Any

    def call_async(self, name: str, *args: Any, **kwargs: Any) -> None:
        pool = self._live_pool("call_async")
        if name in _RESERVED_CALLS:
            raise InvalidArgumentError(f"Trying to call function `{name}` with `call`, use `{name}` directly instead.")
        self._send(pool, Message.CALL, [(name, args, kwargs)] * self.num_workers, f"the arguments of {name}", "call")

    def call_wait(self, timeout: float | None = None) -> tuple[Any, ...]:
        """The results of ``call_async``; an exception of a sub-env is raised here (the env stays usable),
        ``multiprocessing.TimeoutError`` after ``timeout`` s (the call stays pending: wait again)."""
        return _flat(self._wait("call", "call", timeout))

    def call(self, name: str, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
        """Calls ``name(*args, **kwargs)`` on every sub-env (or reads it, if not callable). An
        exception (a missing attribute, a method that raises) is raised here; the env stays usable."""
        self.call_async(name, *args, **kwargs)
        return _flat(self._wait_now("call", "call"))

    def get_attr(self, name: str) -> tuple[Any, ...]:
        """``name`` of every sub-env, called if callable (as gymnasium's vector envs do)."""
        return self.call(name)

    def set_attr(self, name: str, values: Any) -> None:
        """Sets ``name`` on every sub-env: one value for all, or a list/tuple of ``total_envs`` values."""
        pool = self._live_pool("set_attr")
        count = self._env_count  # envs, not rows: the agents of a ParallelEnv share its attributes
        if not isinstance(values, (list, tuple)):
            values = [values] * count
        if len(values) != count:
            raise InvalidArgumentError(
                "Values must be a list or tuple with length equal to the number of environments. "
                f"Got `{len(values)}` values for {count} environments."
            )
        self._send(
            pool,
            Message.SET_ATTR,
            [(name, part) for part in blocks(values, self.envs_per_worker, self.num_workers)],
            f"values of {name}",
            "set_attr",
        )
        self._wait_now("set_attr", "set_attr")

    def sb3_call(self, call: str, name: Any, indices: Sequence[int], *args: Any, **kwargs: Any) -> list[Any]:
        """One of Stable-Baselines3's per-env calls (``get_attr``, ``set_attr``, ``has_attr``,
        ``env_method``, ``is_wrapped``: see :mod:`torchwm.process.sb3_calls`) on the envs ``indices``, in
        that order, as SB3's ``SubprocVecEnv`` runs it; what ``to_sb3()`` uses. An exception is raised
        here and the env stays usable."""
        pool = self._live_pool(call)
        if self.agents_per_env > 1:  # SB3 indexes rows: a row's call reaches the env of its agent
            rows = range(self.total_envs)
            indices = [rows[i] // self.agents_per_env for i in indices]
        chosen, local = per_worker_indices(indices, self.envs_per_worker, self.num_workers)
        payloads = [(call, name, args, kwargs, part) for part in local]
        self._send(pool, Message.SB3_CALL, payloads, f"the arguments of {call}", "sb3_call")
        return in_caller_order(self._wait_now("sb3_call", "sb3_call"), chosen, self.envs_per_worker)

    def render(self) -> tuple[Any, ...] | None:
        """Every sub-env's frame (``call("render")``)."""
        return self.call("render")

    @property
    def np_random_seed(self) -> tuple[int, ...]:  # type: ignore[override]
        """The ``np_random_seed`` of every sub-env."""
        return self.get_attr("np_random_seed")

    @property  # type: ignore[misc]
    def np_random(self) -> tuple[np.random.Generator, ...]:  # type: ignore[override]
        """The ``np_random`` generator of every sub-env."""
        return self.get_attr("np_random")


def _flat(replies: list[Any]) -> tuple[Any, ...]:
    """Every env's result, in env order, from the workers' lists of them."""
    return tuple(value for reply in replies for value in reply)

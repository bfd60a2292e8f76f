"""Pool mode of ``TorchVectorizedEnv`` (``batch_size < num_envs``): ``send`` steps the envs of the last
batch, ``recv`` returns the first ``batch_size`` envs to finish — whole workers, oldest result first —
named by ``info["env_id"]``; the other workers keep stepping meanwhile. The contract of
``AtariVectorEnv``'s async mode and EnvPool's.

A mixin of ``TorchVectorizedEnv`` alone (its pool, buffers and protocol helpers).
"""

from __future__ import annotations

import multiprocessing as mp
from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium.vector import VectorEnv
from gymnasium.vector.async_vector_env import AsyncState
from gymnasium.vector.utils import concatenate, create_empty_array

import torchwm.errors as errors
from torchwm._vector_args import parse_seeds, parse_timeout
from torchwm._worker_blocks import blocks
from torchwm.errors import InvalidArgumentError
from torchwm.process import actions as action_batches
from torchwm.process.agents import add_row_ids
from torchwm.process.protocol import Message
from torchwm.process.remote_errors import log_like_gymnasium

__all__ = ["PoolModeMixin"]

# Unlike a whole-batch step (which goes to the sub-envs, as gymnasium's), a pool-mode send steps the envs
# of the last batch: before the first reset there is none.
_NO_BATCH_YET = "send() before reset(): in pool mode (batch_size < num_envs) reset() gives the first batch"


class _BatchInfos:
    """What gymnasium's ``VectorEnv._add_info`` reads of its env: the length of the info arrays."""

    def __init__(self, num_envs: int) -> None:
        self.num_envs = num_envs

    def _add_info(self, infos: dict[str, Any], info: dict[str, Any], position: int) -> dict[str, Any]:
        return VectorEnv._add_info(self, infos, info, position)  # type: ignore[arg-type]


def take_rows(views: Any, rows: np.ndarray | slice) -> Any:
    """``rows`` of every array in a (nested) dict/tuple of batched views: copies for an index array,
    views for a slice."""
    if isinstance(views, dict):
        return {key: take_rows(value, rows) for key, value in views.items()}
    if isinstance(views, tuple):
        return tuple(take_rows(value, rows) for value in views)
    return views[rows]


def as_block(rows: np.ndarray) -> np.ndarray | slice:
    """``rows`` as a slice where they are one ascending block (a batch of consecutive workers, in
    order), else as they are."""
    if bool((np.diff(rows) == 1).all()):
        return slice(int(rows[0]), int(rows[0]) + len(rows))
    return rows


class PoolModeMixin:
    """``send``/``recv`` (both modes) and the pool-mode ``reset``/``step``."""

    batch_size: int
    copy: bool
    total_envs: int
    num_workers: int
    envs_per_worker: int
    agents_per_env: int
    _rows_per_worker: int
    _worker_rows: np.ndarray
    _env_count: int
    _agents: Any
    single_observation_space: Any
    single_action_space: Any
    action_space: Any
    _pool: Any
    _views: Any
    _has_reset: bool
    _reset_needed: str | None
    _action_check: Any
    _first_seed: Any
    _live_pool: Any
    _open_pool: Any
    _frames: Any
    _send_frames: Any
    _drop_steps_in_flight: Any
    step_async: Any
    step_wait: Any

    @property
    def pool_mode(self) -> bool:
        """Whether ``recv`` returns part of the envs (``batch_size < num_envs``)."""
        return self.batch_size < self.total_envs

    def send(self, actions: Any) -> None:
        """Steps the envs of the last batch (``info["env_id"]``, in that order) with ``actions``;
        returns at once. With ``batch_size == num_envs`` this is ``step_async``."""
        if not self.pool_mode:
            self.step_async(actions)
            return
        pool = self._live_pool("send")
        if not self._has_reset:
            raise errors.ResetNeeded(self._reset_needed or _NO_BATCH_YET)
        held = pool.held
        actions = self._pool_actions(actions)
        buffer = self._views.actions
        if buffer is not None and isinstance(actions, np.ndarray) and actions.dtype == buffer.dtype:
            buffer[self._rows_of(held)] = actions
            pool.step_shared(held, pending=AsyncState.WAITING_STEP)
        else:
            k = self._rows_per_worker
            parts = action_batches.split(actions, self.single_action_space, self.action_space, k, len(held))
            pool.send(self._frames(Message.STEP, parts, "actions"), held, pending=AsyncState.WAITING_STEP)

    def recv(self, timeout: float | None = None) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """The first ``batch_size`` envs to finish their step (see ``info["env_id"]``); with
        ``batch_size == num_envs`` this is ``step_wait``."""
        if not self.pool_mode:
            return self.step_wait(timeout)
        pool = self._open_pool()
        if pool.pending is not AsyncState.WAITING_STEP:
            raise errors.NoAsyncCallError("Calling `recv` without any prior call to `send`.", "step")
        workers, replies = self._gather_batch(pool, "step", parse_timeout(timeout))
        rows = self._rows_of(workers)
        observations, infos = self._batch_of(rows, replies)
        views = self._views
        return observations, views.rewards[rows], views.terminations[rows], views.truncations[rows], infos

    # ------------------------------------------------------------------------------------ pool mode

    def _pool_reset(self, seed: int | Sequence[int | None] | None, options: dict[str, Any] | None) -> Any:
        """Resets every env; returns the first batch. Steps in flight (a ``send`` not received
        included), results not taken and a reset interrupted (Ctrl-C) are dropped. Those steps are
        waited for at most ``STEPS_IN_FLIGHT_TIMEOUT_S`` (``multiprocessing.TimeoutError``: a worker
        hung in its step); that timeout, Ctrl-C meanwhile or a refused argument leave the env as it
        was (a step in flight still to ``recv``, a batch still waiting for its actions)."""
        pool = self._open_pool()
        # A step in flight or a reset interrupted is dropped by this reset; any other pending call is refused.
        if pool.pending not in (AsyncState.WAITING_STEP, AsyncState.WAITING_RESET):
            self._live_pool("reset")
        if options is not None and "reset_mask" in options:
            raise InvalidArgumentError(
                "reset(options={'reset_mask': ...}) is not supported in pool mode (batch_size < num_envs): "
                "every env is reset"
            )
        seeds = parse_seeds(self._first_seed(seed), self._env_count)
        k, n = self.envs_per_worker, self.num_workers
        # Pickled before anything is dropped: options that cannot be sent leave the env as it was.
        frames = self._frames(Message.RESET, [(s, options, None) for s in blocks(seeds, k, n)], "reset options")
        self._drop_steps_in_flight(pool)  # the last batch's workers are no longer waiting for actions
        self._send_frames(pool, frames, "reset")
        self._first_seed.forget()
        workers, replies = self._gather_batch(pool, "reset", None)
        self._has_reset = True
        return self._batch_of(self._rows_of(workers), replies)

    def _gather_batch(self, pool: Any, what: str, timeout: float | None) -> tuple[list[int], list[Any]]:
        """The next ``batch_size`` envs' workers and replies; the call is then over, the batch's workers
        waiting for actions (``pool.held``). A sub-env's exception is logged as gymnasium logs it and shuts
        the workers down; a timeout or Ctrl-C keeps the call pending, unless the Ctrl-C was raised once the
        batch was taken: its replies are lost then (as gymnasium's are), the call is over, and its workers
        wait for actions all the same (the pool holds them), so none is left out of the next ``send``."""
        try:
            return pool.gather_some(what, timeout, self.batch_size // self._rows_per_worker)
        except (mp.TimeoutError, KeyboardInterrupt):
            raise  # the pool says whether the call is still pending
        except BaseException:
            if not pool.closed:  # a sub-env raised: its worker goes on, but the batch is lost
                log_like_gymnasium(pool.last_raised)
                pool.shutdown()
            raise

    def _batch_of(self, rows: np.ndarray, replies: list[Any]) -> tuple[Any, dict[str, Any]]:
        """Observations and infos of ``rows`` (the rows of the workers that sent ``replies``,
        in that order), with ``env_id``."""
        replies = [reply or (None, None) for reply in replies]
        if self._views.observations is not None:
            # copy=False: the shared rows themselves where they are one block (as in sync mode; the
            # next send overwrites them), else a copy.
            observations = take_rows(self._views.observations, rows if self.copy else as_block(rows))
        else:
            flat = [obs for payload, _ in replies for obs in payload]
            empty: Any = create_empty_array(self.single_observation_space, n=self.batch_size, fn=np.zeros)
            observations = concatenate(self.single_observation_space, flat, empty)
        infos: dict[str, Any] = {}
        batch = _BatchInfos(self.batch_size)
        k = self._rows_per_worker
        for position, (_, worker_infos) in enumerate(replies):
            for i, env_infos in enumerate(worker_infos or ()):
                for info in env_infos or ():
                    infos = batch._add_info(infos, info, position * k + i)
        if self._agents is not None:  # rows of whole envs: each row's env, agent and mask
            add_row_ids(infos, rows, self._agents, self._views.agent_mask[rows])
        else:
            infos["env_id"] = rows.astype(np.int32)
        return observations, infos

    def _rows_of(self, workers: list[int]) -> np.ndarray:
        """The rows of ``workers`` (their env indices, unless envs have agents as rows), in order."""
        return self._worker_rows[workers].ravel()

    def _pool_actions(self, actions: Any) -> Any:
        """``actions`` checked against the batch's action space (``batch_size`` rows)."""
        if isinstance(actions, np.ndarray) or not isinstance(actions, (list, tuple, dict)):
            actions = action_batches.as_batch(actions)
        action_batches.check_structure(actions, self.single_action_space, self.batch_size)
        if self._action_check is not None:
            action_batches.check_in_space(self._action_check, actions)
        return actions

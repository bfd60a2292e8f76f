"""The shared-memory buffers parent and workers both see: observations, rewards and flags, actions.

Allocated once by the parent (before any worker starts) and passed to every worker, which writes and
reads only its own rows. Plain (non-atomic) memory: a write is visible to the other process because a
doorbell call follows it, whose Release the other side's wait acquires (see process/doorbells.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.error import CustomSpaceError
from gymnasium.vector.utils import batch_space, create_shared_memory, read_from_shared_memory

from torchwm._worker_blocks import FLAT_ARRAY_SPACES, is_array_space, slice_views


@dataclass(frozen=True)
class StepViews:
    """numpy views of rows of the shared buffers (all envs in the parent, its own in a worker)."""

    observations: Any  # None when observations travel through the pipes
    rewards: np.ndarray
    terminations: np.ndarray
    truncations: np.ndarray
    actions: np.ndarray | None  # None when actions travel through the pipes
    agent_mask: np.ndarray | None = None  # multi-agent rows: whether the row's agent is in its env


@dataclass(frozen=True)
class SharedBuffers:
    """The raw shared buffers (picklable to the workers) and what they hold."""

    observation_space: spaces.Space
    action_space: spaces.Space
    total_envs: int
    observations: Any  # gymnasium's shared memory, or None
    rewards: Any
    terminations: Any
    truncations: Any
    actions: Any  # one RawArray for Box/Discrete/MultiDiscrete/MultiBinary actions, or None
    agent_mask: Any = None  # multi-agent rows (process/agents.py): one bool a row, or None

    def views(self, start: int = 0, stop: int | None = None) -> StepViews:
        """Views of rows ``start:stop`` (default: all)."""
        rows = slice(start, self.total_envs if stop is None else stop)
        observations = None
        if self.observations is not None:
            all_rows = read_from_shared_memory(self.observation_space, self.observations, n=self.total_envs)
            observations = slice_views(all_rows, rows.start, rows.stop)
        actions = None
        if self.actions is not None:
            batched = batch_space(self.action_space, self.total_envs)
            actions = np.frombuffer(self.actions, dtype=batched.dtype).reshape(batched.shape)[rows]
        return StepViews(
            observations,
            np.frombuffer(self.rewards, dtype=np.float64)[rows],
            np.frombuffer(self.terminations, dtype=np.bool_)[rows],
            np.frombuffer(self.truncations, dtype=np.bool_)[rows],
            actions,
            None if self.agent_mask is None else np.frombuffer(self.agent_mask, dtype=np.bool_)[rows],
        )


def allocate(
    ctx: Any,
    observation_space: spaces.Space,
    action_space: spaces.Space,
    total_envs: int,
    shared_memory: bool,
    agent_rows: bool = False,
) -> SharedBuffers:
    """The buffers for ``total_envs`` rows of these (single-env) spaces; ``agent_rows``: with an agent mask."""
    return SharedBuffers(
        observation_space,
        action_space,
        total_envs,
        _observation_memory(ctx, observation_space, total_envs) if shared_memory else None,
        ctx.RawArray("d", total_envs),
        ctx.RawArray("b", total_envs),
        ctx.RawArray("b", total_envs),
        _action_memory(ctx, action_space, total_envs),
        ctx.RawArray("b", total_envs) if agent_rows else None,
    )


def _observation_memory(ctx: Any, space: spaces.Space, total_envs: int) -> Any:
    """gymnasium's shared memory for ``space``, or None where its views would not be arrays.

    Errors as gymnasium's ``AsyncVectorEnv(shared_memory=True)``: ``TypeError`` for dynamic spaces
    (Graph, Sequence), ``ValueError`` for custom ones. Text and OneOf get shared memory in gymnasium
    whose views are not arrays (strings, tuples) and are never refreshed; their observations travel
    through the pipes here instead, so they are always current."""
    try:
        memory = create_shared_memory(space, n=total_envs, ctx=ctx)
    except CustomSpaceError as error:
        raise ValueError(
            "Using `TorchVectorizedEnv(..., shared_memory=True)` caused an error, you can disable this feature "
            "with `shared_memory=False` however this is slower."
        ) from error
    return memory if is_array_space(space) else None


def _action_memory(ctx: Any, space: spaces.Space, total_envs: int) -> Any:
    """One buffer for a batch of plain numeric actions (a Box, Discrete, MultiDiscrete or MultiBinary space)."""
    if not isinstance(space, FLAT_ARRAY_SPACES):
        return None
    batched = batch_space(space, total_envs)
    dtype = np.dtype(batched.dtype)
    if dtype.kind not in "biuf":
        return None
    size = int(np.prod(batched.shape or ()))
    return ctx.RawArray("b", max(1, size * dtype.itemsize))

"""PettingZoo ``ParallelEnv``s in ``TorchVectorizedEnv``: each env contributes one row per possible agent.

Detection is by API, not by class (PettingZoo need not be installed in the parent, and wrappers from
SuperSuit or PettingZoo's own keep the API): an object with ``possible_agents`` whose
``observation_space``/``action_space`` are methods of the agent. A gymnasium env has them as
attributes, so the two cannot be confused; an AEC env (``agent_iter``/``last``) is refused with the
way out (``pettingzoo.utils.aec_to_parallel``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from torchwm.errors import InvalidArgumentError

__all__ = [
    "AgentLayout",
    "add_row_ids",
    "env_mask",
    "envs_done",
    "is_parallel_env",
    "refuse_aec_env",
    "same_space",
]

_PADDING = (
    "all agents must share one observation space and one action space: pad them with "
    "supersuit.pad_observations_v0 / supersuit.pad_action_space_v0 (or PettingZoo's padding wrappers)"
)


def is_parallel_env(env: Any) -> bool:
    """Whether ``env`` speaks PettingZoo's parallel API (dict-based ``reset``/``step``)."""
    if isinstance(env, gym.Env) or not hasattr(env, "possible_agents"):
        return False
    if hasattr(env, "agent_iter") and hasattr(env, "last"):
        return False  # an AEC env: refused by refuse_aec_env
    return callable(getattr(env, "observation_space", None)) and callable(getattr(env, "action_space", None))


def refuse_aec_env(env: Any) -> None:
    """A PettingZoo AEC env cannot be vectorized by rows: ``InvalidArgumentError`` with the way out."""
    if not isinstance(env, gym.Env) and hasattr(env, "agent_iter") and hasattr(env, "last"):
        raise InvalidArgumentError(
            f"the env factory returned {type(env).__name__}, a PettingZoo AEC env; TorchVectorizedEnv takes "
            "ParallelEnvs: pass parallel_env() or wrap it with pettingzoo.utils.aec_to_parallel"
        )


@dataclass(frozen=True)
class AgentLayout:
    """The rows of one env: its possible agents (in that order) and the space they all share."""

    agents: tuple[Any, ...]
    observation_space: spaces.Space
    action_space: spaces.Space

    @classmethod
    def of(cls, env: Any, env_index: int) -> AgentLayout:
        """The layout of sub-environment ``env_index``; ``InvalidArgumentError`` naming the first agent
        whose space differs from the first agent's."""
        agents = tuple(env.possible_agents)
        if not agents:
            raise InvalidArgumentError(f"sub-environment {env_index}: possible_agents is empty")
        first = agents[0]
        observation_space, action_space = env.observation_space(first), env.action_space(first)
        for agent in agents[1:]:
            for kind, space, theirs in (
                ("observation", observation_space, env.observation_space(agent)),
                ("action", action_space, env.action_space(agent)),
            ):
                if not same_space(theirs, space):
                    raise InvalidArgumentError(
                        f"sub-environment {env_index}: agent {agent!r} has the {kind} space {theirs}, unlike "
                        f"agent {first!r}'s {space}; {_PADDING}"
                    )
        return cls(agents, observation_space, action_space)

    @property
    def count(self) -> int:
        return len(self.agents)

    def check_same(self, other: AgentLayout, env_index: int) -> None:
        """Sub-environment ``env_index``'s layout (``other``) is env 0's (this one)."""
        if other.agents != self.agents:
            raise InvalidArgumentError(
                f"sub-environment {env_index} has possible_agents {list(other.agents)}, unlike sub-environment "
                f"0's {list(self.agents)}: every env must have the same agents"
            )
        if not (
            same_space(other.observation_space, self.observation_space)
            and same_space(other.action_space, self.action_space)
        ):
            raise InvalidArgumentError(
                f"sub-environment {env_index}'s agents have the spaces {other.observation_space} / "
                f"{other.action_space}, unlike sub-environment 0's {self.observation_space} / {self.action_space}"
            )


def same_space(a: spaces.Space, b: spaces.Space) -> bool:
    """``a == b``, at once when they are one object: envs return the same space object per agent and at
    every reset, and comparing two Boxes compares their bounds element by element (1.4 ms for one
    Pistonball observation space, 30 ms for the check of a reset of its 8 agents)."""
    return a is b or a == b


def env_mask(row_mask: np.ndarray, agents_per_env: int) -> np.ndarray:
    """A ``reset_mask`` over rows as one over envs: an env's rows must all agree (its agents reset together)."""
    per_env = row_mask.reshape(-1, agents_per_env)
    split = np.flatnonzero(per_env.any(axis=1) != per_env.all(axis=1))
    if split.size:
        raise InvalidArgumentError(
            f"reset_mask selects some rows of sub-environment {int(split[0])} but not all: the agents of an env "
            f"are reset together (rows {int(split[0]) * agents_per_env}..{(int(split[0]) + 1) * agents_per_env - 1})"
        )
    return per_env[:, 0].copy()


def envs_done(done_rows: np.ndarray, agent_mask: np.ndarray, agents_per_env: int) -> np.ndarray:
    """Per row, whether its env's episode ended this step: each of its rows ended now or holds no agent."""
    ended = (done_rows | ~agent_mask).reshape(-1, agents_per_env).all(axis=1)
    return np.repeat(ended, agents_per_env)


def add_row_ids(infos: dict[str, Any], rows: np.ndarray, layout: AgentLayout, agent_mask: np.ndarray) -> None:
    """``info["agent_mask"]``, ``info["env_id"]`` (the env of each row) and ``info["agent_id"]`` (its agent)."""
    count = layout.count
    infos["agent_mask"] = agent_mask
    infos["env_id"] = (rows // count).astype(np.int32)
    infos["agent_id"] = np.asarray(layout.agents, dtype=object)[rows % count]

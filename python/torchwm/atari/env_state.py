"""``AtariEnvState``: one env's saved state, from ``AtariVectorEnv.clone_states``."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from torchwm.errors import InvalidArgumentError

__all__ = ["AtariEnvState", "parse_env_ids"]


@dataclass(frozen=True)
class AtariEnvState:
    """Everything that makes an env's next step what it would have been: the emulator with its random
    state, the noop RNG, the frame stack and max-pool frames, the episode's counters, and a reset that
    already ran ahead. Opaque and picklable; it restores (``AtariVectorEnv.restore_states``) into any
    env of the same game and settings made by the same torchwm version, in this process or another.
    """

    game: str
    data: bytes = field(repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.data, bytes):
            raise InvalidArgumentError(f"AtariEnvState.data must be bytes, got {type(self.data).__name__}")


def parse_env_ids(env_ids: Any, num_envs: int, call: str) -> list[int]:
    """``env_ids`` as a list of ints (``None``: every env); range and duplicates are checked by the core."""
    if env_ids is None:
        return list(range(num_envs))
    ids = np.asarray(env_ids)
    if ids.ndim != 1 or (ids.size and ids.dtype.kind not in "iu"):
        raise InvalidArgumentError(f"{call}: env_ids must be a 1-d sequence of ints, got {env_ids!r}")
    if ids.size and ids.min() < 0:
        raise InvalidArgumentError(f"{call}: env ids must be in [0, {num_envs}), got {int(ids.min())}")
    return [int(i) for i in ids]


def state_bytes(states: Sequence[AtariEnvState]) -> list[bytes]:
    """The bytes of each state; anything else than an ``AtariEnvState`` is refused."""
    if isinstance(states, AtariEnvState) or not isinstance(states, Sequence):
        raise InvalidArgumentError("restore_states needs a sequence of AtariEnvState (one per env id)")
    bad = next((s for s in states if not isinstance(s, AtariEnvState)), None)
    if bad is not None:
        raise InvalidArgumentError(
            f"restore_states needs AtariEnvState objects (from clone_states), got {type(bad).__name__}"
        )
    return [s.data for s in states]

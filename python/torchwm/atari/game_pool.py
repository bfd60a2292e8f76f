"""The games of an ``AtariVectorEnv``: one game, or a mixed pool of several, assigned to the envs
round-robin (env ``i`` plays ``games[i % len(games)]``, so a list of ``num_envs`` games is an explicit
assignment)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from torchwm.atari.roms import resolve_game, rom_path
from torchwm.errors import InvalidArgumentError

__all__ = ["GamePool"]


@dataclass(frozen=True)
class GamePool:
    #: The games as given, one per position of the round-robin (ROM ids).
    assignment: tuple[str, ...]

    @classmethod
    def of(cls, game: str | Sequence[str]) -> GamePool:
        if isinstance(game, str):
            return cls((resolve_game(game),))
        if not isinstance(game, Sequence) or isinstance(game, bytes):
            raise TypeError(
                f"game must be a ROM id string such as 'breakout' (or a list of them), got {type(game).__name__}"
            )
        if len(game) == 0:
            raise InvalidArgumentError("game must be a ROM id such as 'breakout' or a non-empty list of them, got []")
        return cls(tuple(resolve_game(g) for g in game))

    @property
    def games(self) -> tuple[str, ...]:
        """The distinct games, in the order first given."""
        return tuple(dict.fromkeys(self.assignment))

    @property
    def is_mixed(self) -> bool:
        return len(self.games) > 1

    def rom_paths(self) -> str | list[str]:
        """What the core takes: one path, or one per position of the round-robin."""
        paths = [str(rom_path(game)) for game in self.assignment]
        return paths[0] if len(paths) == 1 else paths

    def env_games(self, num_envs: int) -> np.ndarray:
        """int32 ``(num_envs,)``: each env's game, as an index into :attr:`games`."""
        index = {game: i for i, game in enumerate(self.games)}
        return np.array([index[self.assignment[i % len(self.assignment)]] for i in range(num_envs)], dtype=np.int32)

    def settings(self, settings: dict[str, Any]) -> dict[str, Any]:
        """``settings`` for the core: a mixed pool takes the full action set, its one action space."""
        if not self.is_mixed:
            return settings
        if settings.get("full_action_space", True) is not True:
            raise InvalidArgumentError(
                "a pool of several games has one action space, the full set of 18 actions: it needs "
                f"full_action_space=True, got {settings['full_action_space']!r}"
            )
        return {**settings, "full_action_space": True}

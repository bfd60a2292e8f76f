"""ROM lookup: games are ale-py's ROM ids (snake_case), ROM files come from the installed ale-py."""

from __future__ import annotations

import difflib
import warnings
from pathlib import Path

from ale_py import roms


def all_rom_ids() -> list[str]:
    """Every ROM id that the installed ale-py ships."""
    return list(roms.get_all_rom_ids())


def rom_path(game: str) -> Path:
    """Path of ``game``'s ROM; ValueError naming the closest ids when the game is unknown."""
    if not isinstance(game, str):
        raise TypeError(f"game must be a ROM id string such as 'breakout', got {type(game).__name__}")
    ids = all_rom_ids()
    if game not in ids:
        snake = "".join(f"_{c.lower()}" if c.isupper() else c for c in game).lstrip("_")
        hint = f" (ROM ids are snake_case: did you mean {snake!r}?)" if snake in ids else ""
        close = difflib.get_close_matches(game.lower(), ids, n=5, cutoff=0.5)
        suggestions = f"; close names: {', '.join(close)}" if close else ""
        raise ValueError(f"unknown game {game!r}{hint}{suggestions}. Valid games: {', '.join(ids)}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        path = roms.get_rom_path(game)
    if path is None or not Path(path).is_file():
        raise ValueError(f"ROM for {game!r} is missing from the installed ale-py package")
    return Path(path)

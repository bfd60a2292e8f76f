"""ROM lookup: a game named in any form users meet -> ale-py's ROM id -> the ROM file ale-py ships.

ale-py names ROMs in snake_case (``"ms_pacman"``) and refuses anything else. torchwm also accepts the
names of gymnasium ids and of the ALE guides: ``"MsPacman"``, ``"mspacman"``, ``"ALE/MsPacman-v5"``,
``"MsPacmanNoFrameskip-v4"``. They all resolve to the same ROM id, and only when exactly one ROM
matches; a name that matches none raises, listing the closest ROM ids.
"""

from __future__ import annotations

import difflib
import functools
import re
import warnings
from pathlib import Path

from ale_py import roms

from torchwm.errors import InvalidArgumentError

__all__ = ["all_rom_ids", "resolve_game", "rom_path"]

# gymnasium's legacy Atari ids: "<Game>[NoFrameskip|Deterministic]-v<N>", optionally namespaced.
_VERSION = re.compile(r"-v\d+$")
_VARIANT = re.compile(r"(NoFrameskip|Deterministic)$")
# The spellings docs/atari.md documents, and nothing else (no whitespace, control or other characters):
# a ROM id or game name of ASCII letters, digits and underscores, optionally in a gymnasium id
# ("<Namespace>/<Game>-v<N>").
_SPELLING = re.compile(r"(?:[A-Za-z0-9_]+/)?[A-Za-z0-9_]+(?:-v[0-9]+)?")


def all_rom_ids() -> list[str]:
    """Every ROM id that the installed ale-py ships."""
    return list(roms.get_all_rom_ids())


def _key(name: str) -> str:
    """The comparison key of a game name: lower case, letters and digits only."""
    return re.sub(r"[^0-9a-z]", "", name.lower())


@functools.cache
def _ids_by_key() -> dict[str, str]:
    by_key: dict[str, str] = {}
    for rom_id in all_rom_ids():
        # Two ROM ids with one key would make a spelling ambiguous; ale-py 0.12.1 has none.
        assert _key(rom_id) not in by_key, f"ROM ids {by_key[_key(rom_id)]!r} and {rom_id!r} share a key"
        by_key[_key(rom_id)] = rom_id
    return by_key


def _game_part(name: str) -> str:
    """``"MsPacman"`` from ``"ALE/MsPacman-v5"`` or ``"MsPacmanNoFrameskip-v4"``; other names unchanged."""
    base = name.rsplit("/", 1)[-1]
    versionless = _VERSION.sub("", base)
    if versionless != base:
        versionless = _VARIANT.sub("", versionless)
    return versionless


def resolve_game(game: object) -> str:
    """The ROM id of ``game`` (``"ms_pacman"`` for ``"MsPacman"``, ``"ALE/MsPacman-v5"``...).

    Raises ``TypeError`` for a non-string and :class:`~torchwm.errors.InvalidArgumentError` (a
    ``ValueError``) naming the closest ROM ids when no ROM matches.
    """
    if not isinstance(game, str):
        raise TypeError(f"game must be a ROM id string such as 'breakout', got {type(game).__name__}")
    ids = _ids_by_key()
    if game in ids.values():
        return game
    rom_id = ids.get(_key(_game_part(game))) if _SPELLING.fullmatch(game) else None
    if rom_id is not None:
        return rom_id
    close = difflib.get_close_matches(_key(_game_part(game)), list(ids), n=5, cutoff=0.5)
    suggestions = f"; close names: {', '.join(ids[key] for key in close)}" if close else ""
    raise InvalidArgumentError(f"unknown game {game!r}{suggestions}. Valid games: {', '.join(ids.values())}")


def rom_path(game: object) -> Path:
    """Path of ``game``'s ROM (any spelling :func:`resolve_game` accepts)."""
    rom_id = resolve_game(game)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        path = roms.get_rom_path(rom_id)
    if path is None or not Path(path).is_file():
        raise InvalidArgumentError(f"ROM for {rom_id!r} is missing from the installed ale-py package")
    return Path(path)

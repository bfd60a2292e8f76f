"""Game names in every form users meet resolve to ale-py's ROM id; unknown names list close matches.

The oracle is ale-py itself: its ROM ids, its gymnasium registrations (``ALE/<Game>-v5`` and the
legacy ``<Game>NoFrameskip-v4`` ids each name their ROM in ``kwargs["game"]``) and its vector env.
"""

from __future__ import annotations

import difflib
import re
import warnings

import ale_py
import gymnasium as gym
import numpy as np
import pytest
from ale_py import roms
from ale_py.vector_env import AtariVectorEnv as AleVectorEnv

import torchwm
from torchwm.atari.roms import resolve_game, rom_path
from torchwm.errors import InvalidArgumentError

gym.register_envs(ale_py)
ALE_SPECS = [spec for spec in gym.registry.values() if spec.entry_point == "ale_py.env:AtariEnv"]


def test_every_rom_id_resolves_to_itself() -> None:
    for rom_id in roms.get_all_rom_ids():
        assert resolve_game(rom_id) == rom_id
        assert rom_path(rom_id) == roms.get_rom_path(rom_id)


@pytest.mark.parametrize("form", ["id", "name", "lower", "snake_of_name"])
def test_every_registered_atari_id_resolves_to_its_rom(form: str) -> None:
    """``ALE/MsPacman-v5``, ``MsPacman``, ``mspacman``, ... -> the ROM ale-py registered them with."""
    assert len(ALE_SPECS) > 100
    for spec in ALE_SPECS:
        name = spec.name.removesuffix("NoFrameskip").removesuffix("Deterministic")
        spelled = {
            "id": spec.id,
            "name": name,
            "lower": name.lower(),
            "snake_of_name": "".join(f"_{c.lower()}" if c.isupper() else c for c in name).lstrip("_"),
        }[form]
        assert resolve_game(spelled) == spec.kwargs["game"], spelled


@pytest.mark.parametrize("name", ["breakout", "Breakout", "ALE/Breakout-v5", "BreakoutNoFrameskip-v4", "Breakout-v4"])
def test_breakout_spellings_give_ale_py_breakout(name: str) -> None:
    assert rom_path(name) == roms.get_rom_path("breakout")


@pytest.mark.parametrize("name", ["MsPacman", "ms_pacman", "ALE/MsPacman-v5", "mspacman", "MsPacmanNoFrameskip-v4"])
def test_ms_pacman_spellings_step_as_ale_py_does(name: str) -> None:
    """torchwm's env from any spelling steps exactly as ale_py's env from the snake_case id."""
    actions = np.random.default_rng(0).integers(0, 9, size=(20, 2))
    ours = torchwm.AtariVectorEnv(name, 2)
    theirs = AleVectorEnv("ms_pacman", 2)
    try:
        assert ours.single_action_space == theirs.single_action_space
        obs_ours, _ = ours.reset(seed=3)
        obs_theirs, _ = theirs.reset(seed=3)
        np.testing.assert_array_equal(obs_ours, obs_theirs)
        for action in actions:
            step_ours = ours.step(action)
            step_theirs = theirs.step(action)
            for a, b in zip(step_ours[:4], step_theirs[:4]):
                np.testing.assert_array_equal(a, b)
    finally:
        ours.close()
        theirs.close()


def test_camel_case_is_refused_by_ale_py_and_accepted_by_torchwm() -> None:
    """The documented deliberate difference: ale_py asserts on ``"MsPacman"``; torchwm resolves it."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(AssertionError, match="snake_case"):
            AleVectorEnv("MsPacman", 1)
    env = torchwm.AtariVectorEnv("MsPacman", 1)
    env.close()


@pytest.mark.parametrize("name", ["MsPacmn", "ALE/Breakot-v5", "space_invader", "zzzz", ""])
def test_unknown_names_raise_listing_difflib_close_matches(name: str) -> None:
    key = re.sub(r"[^0-9a-z]", "", re.sub(r"-v\d+$", "", name.rsplit("/", 1)[-1]).lower())
    keys = {rom_id.replace("_", ""): rom_id for rom_id in roms.get_all_rom_ids()}
    expected = [keys[k] for k in difflib.get_close_matches(key, list(keys), n=5, cutoff=0.5)]
    with pytest.raises(InvalidArgumentError) as caught:
        rom_path(name)
    assert isinstance(caught.value, ValueError)
    assert isinstance(caught.value, gym.error.Error)
    message = str(caught.value)
    assert f"unknown game {name!r}" in message
    if expected:
        assert f"close names: {', '.join(expected)}" in message
    else:
        assert "close names" not in message
    with pytest.raises(ValueError, match="unknown game"):
        torchwm.AtariVectorEnv(name, 1)


def test_misspelling_suggests_the_intended_rom() -> None:
    with pytest.raises(ValueError, match="close names: ms_pacman"):
        resolve_game("MsPacmn")


@pytest.mark.parametrize("value", [None, 3, b"breakout", ["breakout"]])
def test_non_string_game_is_a_type_error(value: object) -> None:
    with pytest.raises(TypeError, match="game must be"):
        resolve_game(value)


@pytest.mark.parametrize(
    "name",
    [
        " breakout",
        "breakout\x00",
        "breakout\n",
        "\tbreakout",
        "Breakout ",
        "break out",
        "ALE/ Breakout-v5",
        "ms-pacman",
    ],
)
def test_stray_whitespace_and_control_characters_are_refused_as_ale_py_refuses_them(name: str) -> None:
    """Issue 22: only the documented spellings (letters, digits, underscores, in a gymnasium id or not)
    resolve; ale_py refuses these names too (an assertion), torchwm with ``InvalidArgumentError``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(AssertionError, match="not a ROM name"):
            AleVectorEnv(name, 1)
    with pytest.raises(InvalidArgumentError, match="unknown game"):
        resolve_game(name)
    with pytest.raises(InvalidArgumentError, match="unknown game"):
        torchwm.AtariVectorEnv(name, 1)

"""``mode=`` and ``difficulty=``: side by side with ale_py's single ``AtariEnv(game, mode=, difficulty=)``
under gymnasium's own preprocessing, and refused with the ROM's valid values when the ROM lacks them."""

from __future__ import annotations

import ale_py
import gymnasium as gym
import numpy as np
import pytest

import torchwm
from testing_support import ale_py_reset_seeds
from torchwm.errors import InvalidArgumentError

gym.register_envs(ale_py)


def _reference(game_id: str, mode: int | None, difficulty: int | None, count: int) -> gym.vector.SyncVectorEnv:
    def factory() -> gym.Env:
        env = gym.make(game_id, frameskip=1, repeat_action_probability=0.0, mode=mode, difficulty=difficulty)
        env = gym.wrappers.AtariPreprocessing(env, noop_max=0)
        return gym.wrappers.FrameStackObservation(env, 4, padding_type="zero")

    return gym.vector.SyncVectorEnv([factory for _ in range(count)])


@pytest.mark.parametrize(
    ("game", "game_id", "mode", "difficulty"),
    [
        ("space_invaders", "ALE/SpaceInvaders-v5", 3, None),
        ("breakout", "ALE/Breakout-v5", 12, 1),
        ("pong", "ALE/Pong-v5", None, 1),
        ("freeway", "ALE/Freeway-v5", 5, 1),
    ],
)
def test_matches_ale_py_atari_env_with_mode_and_difficulty(
    game: str, game_id: str, mode: int | None, difficulty: int | None
) -> None:
    seeds, ale_seeds = ale_py_reset_seeds(2)
    reference = _reference(game_id, mode, difficulty, len(seeds))
    ours = torchwm.AtariVectorEnv(
        game, len(seeds), noop_max=0, use_fire_reset=False, reward_clipping=False, mode=mode, difficulty=difficulty
    )
    try:
        obs_e, _ = reference.reset(seed=seeds)
        obs_g, _ = ours.reset(seed=ale_seeds)
        np.testing.assert_array_equal(obs_g, obs_e)
        rng = np.random.default_rng(4)
        for step in range(300):
            actions = rng.integers(0, ours.single_action_space.n, len(seeds))
            expected, got = reference.step(actions), ours.step(actions)
            np.testing.assert_array_equal(got[0], expected[0], err_msg=f"step {step}")
            np.testing.assert_array_equal(got[1], expected[1].astype(np.int32), err_msg=f"step {step}")
            np.testing.assert_array_equal(got[2], expected[2], err_msg=f"step {step}")
            np.testing.assert_array_equal(got[4]["lives"], expected[4]["lives"], err_msg=f"step {step}")
    finally:
        reference.close()
        ours.close()


def test_a_mode_changes_the_game_and_survives_seeded_resets() -> None:
    plain = torchwm.AtariVectorEnv("space_invaders", 1, noop_max=0)
    moded = torchwm.AtariVectorEnv("space_invaders", 1, noop_max=0, mode=3)
    try:
        first = [env.reset(seed=5)[0] for env in (plain, moded)]
        actions = np.ones(1, dtype=np.int64)
        differ = False
        for _ in range(200):
            differ |= not np.array_equal(plain.step(actions)[0], moded.step(actions)[0])
        assert differ, "mode=3 played exactly as the default mode"
        # A seeded reset reloads the ROM: the mode must be set again, and the episode start again alike.
        again = moded.reset(seed=5)[0]
        np.testing.assert_array_equal(again, first[1])
    finally:
        plain.close()
        moded.close()


@pytest.mark.parametrize(
    ("keyword", "value", "words"), [("mode", 7, "available modes"), ("difficulty", 9, "difficulties")]
)
def test_values_the_rom_lacks_are_refused_naming_the_game_and_the_valid_values(
    keyword: str, value: int, words: str
) -> None:
    with pytest.raises(InvalidArgumentError, match=rf"{keyword}={value} .*pong.*{words} are \[") as caught:
        torchwm.AtariVectorEnv("pong", 2, **{keyword: value})
    assert isinstance(caught.value, ValueError)


@pytest.mark.parametrize("value", [-1, True, 2.5, "3"])
def test_mode_must_be_none_or_an_integer(value: object) -> None:
    with pytest.raises((InvalidArgumentError, TypeError)):
        torchwm.AtariVectorEnv("pong", 1, mode=value)

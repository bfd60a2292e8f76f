"""AtariVectorEnv side by side with ale_py 0.12.1's: the same calls raise the same exception classes
(with ale_py's wording) and give the same results; AutoresetMode.DISABLED (which ale_py lacks)."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from ale_py.vector_env import AtariVectorEnv as AlePyVectorEnv
from gymnasium.vector import AutoresetMode

import torchwm

FIRST_ONLY = np.array([True, False, False, False])

# (construction keywords, calls before the one that fails, the failing call, a phrase of ale_py's message)
CASES: list[tuple[dict[str, Any], list[dict[str, Any]], dict[str, Any], str]] = [
    ({"batch_size": 2}, [{}], {"options": {"reset_mask": FIRST_ONLY}}, "batch_size < num_envs"),
    ({}, [], {"options": {"reset_mask": FIRST_ONLY}}, "first reset() must reset every"),
    ({}, [{}], {"options": {"reset_mask": [True, False, False, False]}}, "must be a boolean numpy array"),
    ({}, [{}], {"options": {"reset_mask": np.ones(4, dtype=np.int64)}}, "must be a boolean numpy array"),
    ({}, [{}], {"options": {"reset_mask": np.ones(3, dtype=bool)}}, "must have shape"),
    ({}, [], {"seed": np.arange(3)}, "one entry per sub-environment"),
    ({}, [{}], {"seed": np.arange(2), "options": {"reset_mask": FIRST_ONLY}}, "one entry per sub-environment"),
]


def _failure(make: Any, kwargs: dict[str, Any], before: list[dict[str, Any]], call: dict[str, Any]) -> Exception:
    env = make("breakout", 4, **kwargs)
    try:
        for reset_kwargs in before:
            env.reset(**reset_kwargs)
        with pytest.raises(Exception) as caught:
            env.reset(**call)
        return caught.value
    finally:
        env.close()


@pytest.mark.parametrize(("kwargs", "before", "call", "phrase"), CASES)
def test_reset_errors_match_ale_py(kwargs: dict, before: list, call: dict, phrase: str) -> None:
    theirs = _failure(AlePyVectorEnv, kwargs, before, call)
    ours = _failure(torchwm.AtariVectorEnv, kwargs, before, call)
    assert isinstance(ours, type(theirs)), (type(ours), type(theirs))
    assert phrase in str(theirs) and phrase in str(ours), (str(theirs), str(ours))


@pytest.mark.parametrize("kwargs", [{"frameskip": 0}, {"frameskip": -1}, {"frameskip": 2.5}, {"frameskip": "4"}])
def test_construction_errors_match_ale_py(kwargs: dict) -> None:
    with pytest.raises(gym.error.Error) as theirs:
        AlePyVectorEnv("breakout", 2, **kwargs)
    with pytest.raises(type(theirs.value), match="frameskip") as ours:
        torchwm.AtariVectorEnv("breakout", 2, **kwargs)
    assert isinstance(ours.value, ValueError)


def test_partial_reset_and_seed_list_match_ale_py() -> None:
    ours, theirs = torchwm.AtariVectorEnv("pong", 4), AlePyVectorEnv("pong", 4)
    try:
        # A plain list of ints seeds as gymnasium allows (ale_py needs an array: the same seeds).
        np.testing.assert_array_equal(ours.reset(seed=[3, 4, 5, 6])[0], theirs.reset(seed=np.arange(3, 7))[0])
        actions = np.array([0, 1, 2, 3])
        for _ in range(30):
            np.testing.assert_array_equal(ours.step(actions)[0], theirs.step(actions)[0])
        mask = np.array([False, True, False, True])
        got, expected = (
            ours.reset(seed=[9, 10], options={"reset_mask": mask}),
            theirs.reset(seed=np.array([9, 10]), options={"reset_mask": mask}),
        )
        np.testing.assert_array_equal(got[0], expected[0])
        for key in ("env_id", "lives", "frame_number", "episode_frame_number"):
            np.testing.assert_array_equal(got[1][key], expected[1][key], err_msg=key)
    finally:
        ours.close()
        theirs.close()


def test_disabled_autoreset_keeps_finished_envs_finished_until_reset() -> None:
    kwargs = {"max_num_frames_per_episode": 40, "noop_max": 0}
    disabled = torchwm.AtariVectorEnv("breakout", 2, autoreset_mode=AutoresetMode.DISABLED, **kwargs)
    next_step = torchwm.AtariVectorEnv("breakout", 2, **kwargs)
    try:
        assert disabled.metadata["autoreset_mode"] == AutoresetMode.DISABLED
        np.testing.assert_array_equal(disabled.reset(seed=1)[0], next_step.reset(seed=1)[0])
        actions = np.array([1, 0])
        for _ in range(10):  # 10 steps x 4 frames reach the 40-frame limit: the same up to there
            got, expected = disabled.step(actions), next_step.step(actions)
            for a, b in zip(got[:4], expected[:4]):
                np.testing.assert_array_equal(a, b)
        obs, _, _, truncated, info = got
        assert truncated.all()
        for _ in range(3):  # finished: not stepped, no reward, still truncated
            again = disabled.step(actions)
            np.testing.assert_array_equal(again[0], obs)
            assert not again[1].any() and again[3].all()
            np.testing.assert_array_equal(again[4]["frame_number"], info["frame_number"])
        reset_obs, reset_info = disabled.reset(options={"reset_mask": np.array([True, False])})
        assert reset_info["episode_frame_number"][0] < info["episode_frame_number"][0]
        np.testing.assert_array_equal(reset_obs[1], obs[1])
        stepped = disabled.step(actions)
        assert not stepped[3][0] and stepped[3][1]
    finally:
        disabled.close()
        next_step.close()


def test_the_ale_vector_guide_examples_run_as_written() -> None:
    """The guide's (seed 001) configuration example, keyword for keyword (game name in ROM-id form:
    the other forms are _rom.py's), then its async example (seed 004)."""
    from torchwm import VectorAtariEnv

    envs = VectorAtariEnv(
        game="breakout",
        num_envs=8,
        frame_skip=4,
        grayscale=True,
        stack_num=4,
        img_height=84,
        img_width=84,
        noop_max=30,
        fire_reset=True,
        episodic_life=False,
        max_episode_steps=108000,
        repeat_action_probability=0.0,
        full_action_space=False,
        batch_size=0,
        num_threads=0,
        thread_affinity_offset=-1,
        seed=0,
    )
    try:
        observations, info = envs.reset()
        assert observations.shape == (8, 4, 84, 84)
        observations, rewards, terminations, truncations, infos = envs.step(envs.action_space.sample())
        assert rewards.shape == (8,)
    finally:
        envs.close()
    envs = torchwm.AtariVectorEnv(game="breakout", num_envs=16, batch_size=4)
    try:
        observations, info = envs.reset()
        assert observations.shape == (4, 4, 84, 84) and len(info["env_id"]) == 4
        envs.send(envs.action_space.sample())
        observations, rewards, terminations, truncations, infos = envs.recv()
        assert len(set(infos["env_id"].tolist())) == 4
    finally:
        envs.close()

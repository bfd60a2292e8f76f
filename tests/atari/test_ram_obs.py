"""``obs_type="ram"``: observations are the RAM after each step, stacked, side by side with ale_py's
single ``AtariEnv(obs_type="ram")`` under gymnasium's zero-padded ``FrameStackObservation``."""

from __future__ import annotations

import ale_py
import gymnasium as gym
import numpy as np
import pytest

import torchwm
from testing_support import ale_py_reset_seeds
from torchwm.errors import InvalidArgumentError

gym.register_envs(ale_py)


@pytest.mark.parametrize("stack_num", [1, 4])
def test_ram_observations_match_ale_py(stack_num: int) -> None:
    seeds, ale_seeds = ale_py_reset_seeds(2)

    def factory() -> gym.Env:
        env = gym.make("ALE/Pong-v5", obs_type="ram", frameskip=4, repeat_action_probability=0.0)
        return gym.wrappers.FrameStackObservation(env, stack_num, padding_type="zero")

    reference = gym.vector.SyncVectorEnv([factory for _ in seeds])
    ours = torchwm.AtariVectorEnv(
        "pong",
        len(seeds),
        obs_type="ram",
        stack_num=stack_num,
        noop_max=0,
        use_fire_reset=False,
        reward_clipping=False,
    )
    try:
        assert ours.single_observation_space.shape == (stack_num, 128)
        assert ours.observation_space.shape == (2, stack_num, 128) and ours.obs_type == "ram"
        obs, _ = ours.reset(seed=ale_seeds)
        obs_e, _ = reference.reset(seed=seeds)
        np.testing.assert_array_equal(obs, obs_e)
        rng = np.random.default_rng(0)
        for step in range(150):
            actions = rng.integers(0, 6, len(seeds))
            obs, rewards, terminations, *_ = ours.step(actions)
            obs_e, rewards_e, terminations_e, *_ = reference.step(actions)
            assert not terminations_e.any(), "Pong's episodes are longer than the steps compared"
            np.testing.assert_array_equal(obs, obs_e, err_msg=f"step {step}")
            np.testing.assert_array_equal(rewards, rewards_e, err_msg=f"step {step}")
            assert ours.observation_space.contains(obs)
    finally:
        reference.close()
        ours.close()


def test_make_atari_vector_env_and_the_keyword_rules() -> None:
    envs = torchwm.make_atari_vector_env("breakout", 2, obs_type="ram", seed=0)
    try:
        obs, _ = envs.reset()
        assert obs.shape == (2, 4, 128) and obs.dtype == np.uint8
        assert envs.render_mode is None and not envs.grayscale
        # A saved RAM env restores like any other.
        states = envs.clone_states()
        expected = [envs.step(np.array([1, 3]))[0] for _ in range(5)]
        envs.restore_states(states)
        for want in expected:
            np.testing.assert_array_equal(envs.step(np.array([1, 3]))[0], want)
    finally:
        envs.close()
    with pytest.raises(TypeError, match="both 'grayscale' and 'obs_type'"):
        torchwm.AtariVectorEnv("pong", 1, grayscale=True, obs_type="rgb")
    with pytest.raises(InvalidArgumentError, match="obs_type must be one of"):
        torchwm.AtariVectorEnv("pong", 1, obs_type="pixels")
    rgb = torchwm.AtariVectorEnv("pong", 1, obs_type="rgb")
    try:
        assert rgb.single_observation_space.shape == (4, 84, 84, 3) and not rgb.grayscale
    finally:
        rgb.close()

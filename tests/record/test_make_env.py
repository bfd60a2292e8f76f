"""make_env: real rendered frames at the requested size, picklable factories, clear errors."""

from __future__ import annotations

import pickle
from functools import partial

import numpy as np
import pytest

from torchwm import TorchVectorizedEnv, make_env


def test_cartpole_image_is_the_rendered_cart_and_pole() -> None:
    env = make_env("CartPole-v1", backend="gym", size=(64, 96))
    obs, _ = env.reset(seed=0)
    assert env.observation_space["image"].shape == (3, 64, 96)
    assert obs["image"].shape == (3, 64, 96) and obs["image"].dtype == np.uint8
    assert obs["state"].shape == (4,)
    frame = env.unwrapped.render()
    assert frame.shape[-1] == 3 and frame.shape[0] > 64
    # White background with a dark cart: the picture has both.
    assert obs["image"].max() > 200 and obs["image"].min() < 100
    moved = obs["image"]
    for _ in range(5):
        obs, _, terminated, truncated, _ = env.step(1)
        assert not (terminated or truncated)
    assert not np.array_equal(moved, obs["image"])  # the cart moved in the picture
    env.close()


def test_atari_backend_and_action_repeat() -> None:
    env = make_env("pong", size=(84, 84), action_repeat=2)
    obs, _ = env.reset(seed=0)
    assert set(obs) == {"image"} and obs["image"].shape == (3, 84, 84)
    env.step(0)
    assert env.unwrapped.ale.getEpisodeFrameNumber() == 2 * 4  # 2 repeats x frameskip 4
    env.close()


def test_errors_list_valid_choices() -> None:
    with pytest.raises(ValueError, match="valid backends: auto, gym, gymnasium, atari, ale"):
        make_env("CartPole-v1", backend="mujoco")
    with pytest.raises(ValueError, match="CartPole-v1"):
        make_env("CartPole-v7", backend="gym")
    with pytest.raises(ValueError, match="pong"):
        make_env("pongg", backend="atari")
    with pytest.raises(ValueError, match="size"):
        make_env("CartPole-v1", size=(0, 64))


def test_picklable_factory_in_torch_vectorized_env() -> None:
    factory = partial(make_env, "CartPole-v1", backend="gym", size=(32, 32))
    pickle.dumps(factory)
    with TorchVectorizedEnv(factory, num_workers=2, envs_per_worker=2, context="spawn") as env:
        obs, _ = env.reset(seed=0)
        assert obs["image"].shape == (4, 3, 32, 32) and obs["state"].shape == (4, 4)
        obs, rewards, *_ = env.step(np.ones(4, dtype=np.int64))
        assert rewards.shape == (4,)

"""RLlib on torchwm: the plain id ``TorchWM/<Game>-v5`` in Ray worker processes, the frame connector, and one
PPO training iteration on Breakout with 2 env runners x 4 torchwm envs (``gym_env_vectorize_mode="vector_entry_point"``)."""

from __future__ import annotations

import math
import sys

import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip("ray.rllib")
import ray

pytestmark = pytest.mark.timeout(600)


@pytest.fixture(scope="module")
def local_ray():
    from ray_cluster import WORKERS_AT_DRIVER_PRIORITY

    ray.init(
        num_cpus=2,
        include_dashboard=False,
        object_store_memory=150 * 1024 * 1024,
        _system_config=WORKERS_AT_DRIVER_PRIORITY,
    )
    yield
    ray.shutdown()


@ray.remote(num_cpus=0)
def make_in_a_worker(env_id: str) -> tuple[str, tuple]:
    """In a Ray worker, with code that never imports torchwm: does the plain id resolve?"""
    envs = gym.make_vec(env_id, num_envs=2, vectorization_mode="vector_entry_point")
    try:
        return type(envs).__module__, envs.single_observation_space.shape
    finally:
        envs.close()


def test_plain_id_resolves_in_ray_workers(local_ray):
    try:
        module, shape = ray.get(make_in_a_worker.remote("TorchWM/Pong-v5"))
    except ray.exceptions.RayTaskError as error:
        pytest.fail(
            "TorchWM/Pong-v5 did not resolve in a Ray worker: is torchwm installed (pip install / maturin develop), "
            f"so that its torchwm-gymnasium.pth start-up hook is in site-packages? {error}"
        )
    assert module == "torchwm.atari.vector_env" and shape == (4, 84, 84)


def test_frame_connector_matches_rllib_atari_preprocessing():
    """Same values as RLlib's own NormalizedImageEnv, laid out channels-last as RLlib's CNN expects."""
    from ray.rllib.env.wrappers.atari_wrappers import NormalizedImageEnv

    from torchwm.ray.rllib import AtariFramesToModule

    rng = np.random.default_rng(0)
    for shape in [(4, 84, 84), (2, 84, 84, 3)]:
        space = gym.spaces.Box(0, 255, shape, np.uint8)
        connector = AtariFramesToModule(input_observation_space=space, input_action_space=gym.spaces.Discrete(4))
        frames = rng.integers(0, 256, shape, dtype=np.uint8)
        out = connector.preprocess(frames, episode=None)
        assert out in connector.observation_space and out.dtype == np.float32
        channels_last = np.moveaxis(frames, 0, 2).reshape(connector.observation_space.shape)
        normalizer = NormalizedImageEnv(gym.make("CartPole-v1"))  # only its observation() is used
        np.testing.assert_array_equal(out, normalizer.observation(channels_last))
    with pytest.raises(ValueError, match="uint8"):
        AtariFramesToModule(input_observation_space=gym.spaces.Box(0, 1, (4, 84, 84)), input_action_space=None)


def test_ppo_trains_one_iteration_on_breakout(local_ray):
    sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[2] / "examples"))
    try:
        from rllib_ppo_atari import build_config
    finally:
        sys.path.pop(0)

    algo = build_config(
        "Breakout", num_env_runners=2, num_envs_per_env_runner=4, rollout_fragment_length=32
    ).build_algo()
    try:
        envs = algo.env_runner_group.foreach_env_runner(
            lambda runner: (type(runner.env.unwrapped).__module__, runner.env.unwrapped.num_envs),
            local_env_runner=False,
        )
        assert envs == [("torchwm.atari.vector_env", 4)] * 2
        result = algo.train()
        assert result["env_runners"]["num_env_steps_sampled_lifetime"] >= 2 * 4 * 32
        learner = result["learners"]["default_policy"]
        assert math.isfinite(learner["policy_loss"]) and math.isfinite(learner["vf_loss"])
    finally:
        algo.stop()

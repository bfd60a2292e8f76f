"""``ram_in_info=True``: ``info["ram"]`` is each env's RAM after its step or reset, side by side with
ale_py's single AtariEnv (``getRAM()``) under gymnasium's preprocessing; off, ``info`` has no such key."""

from __future__ import annotations

import ale_py
import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import torchwm
from testing_support import ale_py_reset_seeds

gym.register_envs(ale_py)


@pytest.mark.parametrize("reset_ahead", [False, True])
def test_ram_matches_ale_py_at_every_step(reset_ahead: bool) -> None:
    seeds, ale_seeds = ale_py_reset_seeds(2)

    def factory() -> gym.Env:
        env = gym.make("ALE/Breakout-v5", frameskip=1, repeat_action_probability=0.0)
        return gym.wrappers.FrameStackObservation(
            gym.wrappers.AtariPreprocessing(env, noop_max=0), 4, padding_type="zero"
        )

    reference = gym.vector.SyncVectorEnv([factory for _ in seeds])
    ours = torchwm.AtariVectorEnv(
        "breakout",
        len(seeds),
        noop_max=0,
        use_fire_reset=False,
        reward_clipping=False,
        episodic_life=False,
        ram_in_info=True,
        reset_ahead=reset_ahead,
    )
    try:
        _, info = ours.reset(seed=ale_seeds)
        reference.reset(seed=seeds)
        rams = lambda: np.stack([env.unwrapped.ale.getRAM() for env in reference.envs])  # noqa: E731
        assert info["ram"].dtype == np.uint8 and info["ram"].shape == (2, 128)
        np.testing.assert_array_equal(info["ram"], rams())
        rng = np.random.default_rng(2)
        for step in range(250):
            actions = rng.integers(0, 4, len(seeds))
            obs_e, *_ = reference.step(actions)
            obs_g, *_, info = ours.step(actions)
            np.testing.assert_array_equal(obs_g, obs_e, err_msg=f"step {step}")
            np.testing.assert_array_equal(info["ram"], rams(), err_msg=f"step {step}")
    finally:
        reference.close()
        ours.close()


def test_off_by_default_and_with_async_batches_the_rows_follow_env_id() -> None:
    plain = torchwm.AtariVectorEnv("pong", 2)
    try:
        _, info = plain.reset(seed=0)
        assert "ram" not in info
    finally:
        plain.close()
    envs = torchwm.AtariVectorEnv("pong", 4, batch_size=2, ram_in_info=True, autoreset_mode=AutoresetMode.NEXT_STEP)
    singles = [torchwm.AtariVectorEnv("pong", 1, ram_in_info=True) for _ in range(4)]
    try:
        _, info = envs.reset(seed=[3, 4, 5, 6])
        for row, env_id in enumerate(info["env_id"]):
            _, single_info = singles[env_id].reset(seed=3 + int(env_id))
            np.testing.assert_array_equal(info["ram"][row], single_info["ram"][0])
    finally:
        envs.close()
        for env in singles:
            env.close()

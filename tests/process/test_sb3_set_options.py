"""``to_sb3().set_options(list_of_dicts)``: each env reset with its own options, as SB3's ``SubprocVecEnv``
resets them (an empty dict: no options), side by side; also for agents as rows (a PettingZoo env's rows
share its options)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

from torchwm import InvalidArgumentError, TorchVectorizedEnv

OPTIONS = [{"low": -0.01, "high": 0.01}, {}, {"low": 0.03, "high": 0.04}, {"low": -0.2, "high": -0.1}]


def make_cartpole() -> gym.Env:
    return gym.make("CartPole-v1")


def test_each_env_gets_its_own_options_as_subproc_vec_env_gives_them():
    pytest.importorskip("stable_baselines3")
    from stable_baselines3.common.vec_env import SubprocVecEnv

    ours = TorchVectorizedEnv(make_cartpole, 2, 2).to_sb3()
    theirs = SubprocVecEnv([make_cartpole] * 4, start_method="fork")
    try:
        for vec in (ours, theirs):
            vec.seed(3)
            vec.set_options(OPTIONS)
        np.testing.assert_array_equal(ours.reset(), theirs.reset())
        np.testing.assert_array_equal(ours.reset(), theirs.reset())  # options are used once, by both
    finally:
        ours.close()
        theirs.close()


def test_each_env_gets_its_own_options_as_its_own_reset_gives_them():
    """Without SB3 installed (its protocol, torchwm's own): the rows equal each env's own reset with the
    same seed and options, none for an empty dict."""
    ours = TorchVectorizedEnv(make_cartpole, 2, 2).to_sb3()
    try:
        ours.seed(3)
        ours.set_options(OPTIONS)
        obs = ours.reset()
    finally:
        ours.close()
    for i, options in enumerate(OPTIONS):
        env = make_cartpole()
        expected, _ = env.reset(seed=3 + i, options=options or None)
        np.testing.assert_array_equal(obs[i], expected)
        env.close()


def test_agent_rows_of_one_env_must_share_its_options():
    pytest.importorskip("pettingzoo")
    from multi_agent_envs import Departures

    ours = TorchVectorizedEnv(Departures, 1, 2).to_sb3()
    try:
        ours.set_options([{"offset": 1}] * 3 + [{"offset": 2}] * 3)
        obs = ours.reset()
        assert list(obs[:, 2]) == [1, 1, 1, 2, 2, 2]
        ours.set_options([{"offset": 1}] * 2 + [{}] * 4)
        with pytest.raises(InvalidArgumentError, match="rows of sub-environment 0"):
            ours.reset()
    finally:
        ours.close()

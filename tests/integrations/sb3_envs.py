"""Envs shared by test_sb3.py and its no-SB3 subprocess (this module must not import SB3)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
from gymnasium.vector import SyncVectorEnv

NUM_ENVS = 4


class StepInfo(gym.Wrapper):
    """Puts scalars, arrays and a nested dict into every info, so info batching is exercised."""

    def reset(self, **kwargs):
        obs, info = self.env.reset(**kwargs)
        self.t = 0
        info["reset_marker"] = 7
        return obs, info

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        self.t += 1
        info.update(t=self.t, vec=np.full(2, self.t, dtype=np.int16), nested={"half": self.t / 2})
        return obs, reward, terminated, truncated, info

    def scaled(self, k):
        return self.t * k


def make_cartpole():
    # Short time limit: episodes end by truncation as well as by termination.
    return StepInfo(gym.make("CartPole-v1", max_episode_steps=25))


def sync_env(mode):
    return SyncVectorEnv([make_cartpole] * NUM_ENVS, autoreset_mode=mode)

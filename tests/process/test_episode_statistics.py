"""gymnasium's RecordEpisodeStatistics is right over TorchVectorizedEnv in both autoreset modes:
the same episode returns and lengths as over SyncVectorEnv, and as SB3's Monitor counts them."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode, SyncVectorEnv
from gymnasium.wrappers.vector import RecordEpisodeStatistics

import torchwm

NUM_ENVS = 4


def make_cartpole():
    return gym.make("CartPole-v1", max_episode_steps=20)


def episodes(venv, steps=120):
    """(env index, return, length) of every episode that ends, in order."""
    env = RecordEpisodeStatistics(venv)
    env.reset(seed=11)
    rng = np.random.default_rng(2)
    found = []
    for _ in range(steps):
        _, _, _, _, info = env.step(rng.integers(0, 2, size=NUM_ENVS))
        if "episode" in info:
            for i in np.flatnonzero(info["_episode"]):
                found.append((int(i), float(info["episode"]["r"][i]), int(info["episode"]["l"][i])))
    env.close()
    return found


@pytest.mark.parametrize("mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP])
def test_record_episode_statistics_matches_sync_vector_env(mode):
    ours = episodes(torchwm.TorchVectorizedEnv(make_cartpole, num_workers=2, envs_per_worker=2, autoreset_mode=mode))
    theirs = episodes(SyncVectorEnv([make_cartpole] * NUM_ENVS, autoreset_mode=mode))
    assert ours == theirs and len(ours) > 10


def test_record_episode_statistics_matches_sb3_monitor():
    """An independent count: SB3's VecMonitor over its DummyVecEnv (same seeds, same actions)."""
    pytest.importorskip("stable_baselines3")
    from stable_baselines3.common.vec_env import DummyVecEnv, VecMonitor

    monitor = VecMonitor(DummyVecEnv([make_cartpole] * NUM_ENVS))
    monitor.seed(11)
    monitor.reset()
    rng = np.random.default_rng(2)
    expected = []
    for _ in range(120):
        _, _, _, infos = monitor.step(rng.integers(0, 2, size=NUM_ENVS))
        expected += [
            (i, float(info["episode"]["r"]), int(info["episode"]["l"]))
            for i, info in enumerate(infos)
            if "episode" in info
        ]
    monitor.close()
    ours = episodes(
        torchwm.TorchVectorizedEnv(
            make_cartpole, num_workers=2, envs_per_worker=2, autoreset_mode=AutoresetMode.SAME_STEP
        )
    )
    assert ours == expected

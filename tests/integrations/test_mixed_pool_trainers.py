"""A mixed pool (several games in one ``AtariVectorEnv``) through what trainers use: SB3's 4-tuple API
(``to_sb3()``), torch batches and recordings, each env equal to a one-game env with the same seed."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image

import torchwm

POOL = ["pong", "breakout"]
NUM_ENVS = 4
SETTINGS = {"max_num_frames_per_episode": 600}


def singles(**keywords: object) -> list[torchwm.AtariVectorEnv]:
    """One one-game env per env of the pool, with the pool's full action set (and ``keywords``)."""
    settings = {**SETTINGS, **keywords}
    return [torchwm.AtariVectorEnv(POOL[i % 2], 1, full_action_space=True, **settings) for i in range(NUM_ENVS)]


def test_sb3_steps_of_a_pool_are_its_games_alone() -> None:
    pytest.importorskip("stable_baselines3")
    pool = torchwm.AtariVectorEnv(POOL, NUM_ENVS, **SETTINGS).to_sb3()
    ones = [single.to_sb3() for single in singles()]
    try:
        pool.seed(7)
        for i, one in enumerate(ones):
            one.seed(7 + i)  # SB3's seed(s) gives env i the seed s + i
        obs = pool.reset()
        for i, one in enumerate(ones):
            np.testing.assert_array_equal(obs[i], one.reset()[0])
        rng = np.random.default_rng(1)
        dones_seen = 0
        for step in range(250):
            actions = rng.integers(0, 18, NUM_ENVS)
            obs, rewards, dones, infos = pool.step(actions)
            for i, one in enumerate(ones):
                one_obs, one_rewards, one_dones, one_infos = one.step(actions[i : i + 1])
                np.testing.assert_array_equal(obs[i], one_obs[0], err_msg=f"obs, env {i}, step {step}")
                assert (rewards[i], dones[i]) == (one_rewards[0], one_dones[0]), (i, step)
                assert infos[i]["game"] == i % 2 and "game" not in one_infos[0]
                for key in ("lives", "episode_frame_number", "TimeLimit.truncated"):
                    assert infos[i].get(key) == one_infos[0].get(key), (key, i, step)
                if one_dones[0]:
                    np.testing.assert_array_equal(
                        infos[i]["terminal_observation"], one_infos[0]["terminal_observation"]
                    )
            dones_seen += int(dones.sum())
        assert dones_seen >= NUM_ENVS, "episodes must end (600 frames), so SB3's restarts are compared too"
    finally:
        pool.close()
        for one in ones:
            one.close()


def test_torch_batches_of_a_pool_are_its_numpy_results() -> None:
    torch = pytest.importorskip("torch")
    tensors = torchwm.AtariVectorEnv(POOL, NUM_ENVS, **SETTINGS)
    arrays = torchwm.AtariVectorEnv(POOL, NUM_ENVS, **SETTINGS)
    try:
        batch = tensors.reset_batch(seed=3)
        obs, info = arrays.reset(seed=3)
        assert torch.equal(batch["obs"], torch.as_tensor(obs))
        assert torch.equal(batch["info"]["game"], torch.as_tensor(info["game"]))
        rng = np.random.default_rng(2)
        for _ in range(50):
            actions = rng.integers(0, 18, NUM_ENVS)
            batch = tensors.step_batch(torch.as_tensor(actions))
            obs, rewards, terminations, truncations, info = arrays.step(actions)
            assert torch.equal(batch["obs"], torch.as_tensor(obs))
            assert torch.equal(batch["reward"], torch.as_tensor(rewards, dtype=torch.float32))
            assert torch.equal(batch["done"], torch.as_tensor(terminations | truncations))
            assert torch.equal(batch["info"]["game"], torch.as_tensor(info["game"]))
    finally:
        tensors.close()
        arrays.close()


def test_a_pool_records_each_envs_own_game(tmp_path: Path) -> None:
    pool = torchwm.AtariVectorEnv(POOL, NUM_ENVS, render_mode="rgb_array", **SETTINGS)
    ones = singles(render_mode="rgb_array")
    try:
        summary = torchwm.record(pool, tmp_path / "pool.png", steps=2, seed=5, cols=2, scale=0.5, padding=2)
        assert summary["images"] == 3
        assert sorted(path.name for path in tmp_path.iterdir()) == [f"pool_{i:05d}.png" for i in range(3)]
        pool.reset(seed=5)
        for i, one in enumerate(ones):
            one.reset(seed=5 + i)
        frames = pool.render()
        for i, one in enumerate(ones):
            np.testing.assert_array_equal(frames[i], one.render()[0], err_msg=f"env {i}")
        still = np.asarray(Image.open(tmp_path / "pool_00000.png").convert("RGB"))
        for i, frame in enumerate(frames):  # a 2x2 grid of half-size tiles, 2 pixels apart
            y, x = i // 2 * (105 + 2), i % 2 * (80 + 2)
            np.testing.assert_array_equal(still[y : y + 105, x : x + 80], frame[1::2, 1::2], err_msg=f"tile {i}")
        assert not np.array_equal(frames[0], frames[1])  # pong and breakout: not the same screen
    finally:
        pool.close()
        for one in ones:
            one.close()

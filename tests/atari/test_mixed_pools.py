"""Several games in one ``AtariVectorEnv`` (a mixed pool), and modes, difficulties and sticky-action
probabilities given per env: side by side with ale_py's single ``AtariEnv`` under gymnasium's
preprocessing, equal env by env to one-game envs with the same seeds, and refused clearly when wrong."""

from __future__ import annotations

import ale_py
import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import torchwm
from testing_support import ale_py_reset_seeds
from torchwm.errors import InvalidArgumentError

gym.register_envs(ale_py)

POOL = ["pong", "breakout", "space_invaders", "ms_pacman"]


def test_a_mixed_pool_with_per_env_modes_matches_ale_py() -> None:
    games = [("freeway", "ALE/Freeway-v5", 5, 1), ("breakout", "ALE/Breakout-v5", 12, 0), ("pong", "ALE/Pong-v5", 1, 1)]
    seeds, ale_seeds = ale_py_reset_seeds(len(games))

    def factory(game_id: str, mode: int, difficulty: int):
        def make() -> gym.Env:
            env = gym.make(
                game_id, frameskip=1, repeat_action_probability=0.0, full_action_space=True, mode=mode,
                difficulty=difficulty,
            )  # fmt: skip
            env = gym.wrappers.AtariPreprocessing(env, noop_max=0)
            return gym.wrappers.FrameStackObservation(env, 4, padding_type="zero")

        return make

    reference = gym.vector.SyncVectorEnv([factory(game_id, m, d) for _, game_id, m, d in games])
    ours = torchwm.AtariVectorEnv(
        [game for game, *_ in games],
        len(games),
        noop_max=0,
        use_fire_reset=False,
        reward_clipping=False,
        mode=[m for *_, m, _ in games],
        difficulty=np.array([d for *_, d in games]),
    )
    try:
        assert ours.single_action_space == gym.spaces.Discrete(18)
        assert ours._core.settings["mode"] == [5, 12, 1] and ours._core.settings["difficulty"] == [1, 0, 1]
        obs_e, _ = reference.reset(seed=seeds)
        obs_g, info = ours.reset(seed=ale_seeds)
        np.testing.assert_array_equal(obs_g, obs_e)
        np.testing.assert_array_equal(info["game"], [0, 1, 2])
        rng = np.random.default_rng(7)
        for step in range(300):
            actions = rng.integers(0, 18, len(games))
            expected, got = reference.step(actions), ours.step(actions)
            np.testing.assert_array_equal(got[0], expected[0], err_msg=f"step {step}")
            np.testing.assert_array_equal(got[1], expected[1].astype(np.int32), err_msg=f"step {step}")
            np.testing.assert_array_equal(got[2], expected[2], err_msg=f"step {step}")
            np.testing.assert_array_equal(got[4]["lives"], expected[4]["lives"], err_msg=f"step {step}")
            if (expected[2] | expected[3]).any():
                break  # gymnasium's autoreset seeds differently from here on
        assert step >= 100, f"only {step} steps compared"
    finally:
        reference.close()
        ours.close()


@pytest.mark.parametrize("mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP])
def test_each_env_of_a_pool_steps_as_a_one_game_env_with_its_seed(mode: AutoresetMode) -> None:
    sticky = [0.0, 0.25, 0.1, 0.0, 0.25, 0.0, 0.5, 0.25]
    settings = {"autoreset_mode": mode, "max_num_frames_per_episode": 2000, "episode_statistics": True}
    pool = torchwm.AtariVectorEnv(POOL, 8, repeat_action_probability=sticky, **settings)
    singles = [
        torchwm.AtariVectorEnv(POOL[i % 4], 1, full_action_space=True, repeat_action_probability=sticky[i], **settings)
        for i in range(8)
    ]
    try:
        assert pool.games == tuple(POOL) and list(pool.env_games) == [0, 1, 2, 3, 0, 1, 2, 3]
        obs, info = pool.reset(seed=100)
        for i, single in enumerate(singles):
            single_obs, _ = single.reset(seed=100 + i)
            np.testing.assert_array_equal(obs[i], single_obs[0])
        rng = np.random.default_rng(0)
        ended = 0
        for step in range(700):
            actions = rng.integers(0, 18, 8)
            got = pool.step(actions)
            ended += int(np.sum(got[2] | got[3]))
            for i, single in enumerate(singles):
                want = single.step(actions[i : i + 1])
                for name, x, y in zip(("obs", "reward", "terminated", "truncated"), got[:4], want[:4]):
                    np.testing.assert_array_equal(x[i], y[0], err_msg=f"{name}, env {i}, step {step}")
                for key in ("lives", "frame_number", "raw_reward"):
                    assert got[4][key][i] == want[4][key][0], (key, i, step)
                if "episode" in want[4]:
                    assert got[4]["episode"]["r"][i] == want[4]["episode"]["r"][0]
                if mode == AutoresetMode.SAME_STEP and want[4].get("_final_obs", [False])[0]:
                    np.testing.assert_array_equal(got[4]["final_obs"][i], want[4]["final_obs"][0])
        assert ended >= 4, "episodes must end (the frame limit is 2000), so resets are compared too"
    finally:
        pool.close()
        for single in singles:
            single.close()


def test_pool_info_masks_render_states_and_async_rows() -> None:
    envs = torchwm.AtariVectorEnv(["pong", "breakout"], 4, batch_size=2)
    try:
        masks = envs.minimal_action_masks
        assert masks.shape == (4, 18) and masks.dtype == bool
        pong_minimal = torchwm.AtariVectorEnv("pong", 1).action_set
        np.testing.assert_array_equal(np.flatnonzero(masks[0]), pong_minimal)
        np.testing.assert_array_equal(masks[0], masks[2])
        _, info = envs.reset(seed=0)
        for _ in range(6):
            np.testing.assert_array_equal(info["game"], envs.env_games[info["env_id"]])
            envs.send(np.zeros(2, dtype=np.int64))
            *_, info = envs.recv()
    finally:
        envs.close()
    sync = torchwm.AtariVectorEnv(["pong", "breakout"], 4, render_mode="rgb_array")
    try:
        sync.reset(seed=1)
        assert all(frame.shape == (210, 160, 3) for frame in sync.render())
        states = sync.clone_states()
        assert [s.game for s in states] == ["pong", "breakout", "pong", "breakout"]
        sync.restore_states([states[0]], env_ids=[2])  # another pong env: fine
        with pytest.raises(InvalidArgumentError, match="of pong, and this env plays breakout"):
            sync.restore_states([states[0]], env_ids=[1])
    finally:
        sync.close()
    one = torchwm.AtariVectorEnv("pong", 2)
    try:
        assert "game" not in one.reset(seed=0)[1] and one.games == ("pong",)
        assert one.minimal_action_masks.all()
    finally:
        one.close()


def test_bad_pools_and_per_env_values_are_refused() -> None:
    with pytest.raises(InvalidArgumentError, match="full_action_space=True"):
        torchwm.AtariVectorEnv(["pong", "breakout"], 2, full_action_space=False)
    with pytest.raises(InvalidArgumentError, match="non-empty list"):
        torchwm.AtariVectorEnv([], 2)
    with pytest.raises(InvalidArgumentError, match="unknown game 'pongg'"):
        torchwm.AtariVectorEnv(["pong", "pongg"], 2)
    with pytest.raises(InvalidArgumentError, match="1 to num_envs=2 games, got 3"):
        torchwm.AtariVectorEnv(["pong", "breakout", "freeway"], 2)
    with pytest.raises(
        InvalidArgumentError, match="mode must be one value or one per env: got 3 values for num_envs=2"
    ):
        torchwm.AtariVectorEnv("pong", 2, mode=[0, 1, 0])
    with pytest.raises(InvalidArgumentError, match="mode=9 is not a mode of breakout"):
        torchwm.AtariVectorEnv(["pong", "breakout"], 2, mode=[0, 9])
    with pytest.raises(InvalidArgumentError, match=r"repeat_action_probability must be .* one per env"):
        torchwm.AtariVectorEnv("pong", 2, repeat_action_probability=[0.1, 1.5])
    with pytest.raises(InvalidArgumentError, match="frameskip must be"):
        torchwm.AtariVectorEnv("pong", 2, frameskip=[4, 4])
    # A list of num_envs games is an explicit assignment; one game in a list is no pool.
    explicit = torchwm.AtariVectorEnv(["breakout", "pong", "pong"], 3)
    single = torchwm.AtariVectorEnv(["pong"], 2)
    try:
        assert list(explicit.env_games) == [0, 1, 1] and explicit.games == ("breakout", "pong")
        assert single.games == ("pong",) and single.single_action_space == gym.spaces.Discrete(6)
    finally:
        explicit.close()
        single.close()

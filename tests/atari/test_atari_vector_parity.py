"""torchwm.AtariVectorEnv against ale_py 0.12.1's AtariVectorEnv and against gymnasium's own wrappers.

Same observations (bit-exact: our resize reproduces OpenCV's INTER_AREA), rewards, terminations,
truncations and info over random rollouts with resets, across a grid of settings and games.
"""

from __future__ import annotations

from typing import Any

import ale_py
import gymnasium as gym
import numpy as np
import pytest
from ale_py.vector_env import AtariVectorEnv as AlePyVectorEnv
from gymnasium.vector import AutoresetMode

import torchwm
from testing_support import ale_py_reset_seeds, native_or_emulated

gym.register_envs(ale_py)

# Under emulation, long enough for the truncations of the grid's 600-frame row at frameskip 4.
STEPS = native_or_emulated(300, 160)
NUM_ENVS = 3

# (game, AtariVectorEnv keywords): each row differs from the defaults in a few settings; together they
# cover gray/RGB, 84x84 and 210x160, stack 4/6, frameskip 1/4, noop 0/30, sticky 0/0.25, fire reset
# on/off, episodic life, life-loss info, no max-pool, no reward clipping, both autoreset modes.
GRID: list[tuple[str, dict[str, Any]]] = [
    ("breakout", {}),
    ("breakout", {"grayscale": False, "stack_num": 6}),
    ("pong", {"img_height": 210, "img_width": 160, "frameskip": 1}),
    ("space_invaders", {"repeat_action_probability": 0.25, "noop_max": 0}),
    ("ms_pacman", {"grayscale": False, "img_height": 210, "img_width": 160, "use_fire_reset": False}),
    ("seaquest", {"episodic_life": True, "autoreset_mode": AutoresetMode.SAME_STEP}),
    ("breakout", {"life_loss_info": True, "reward_clipping": False, "maxpool": False}),
    ("breakout", {"episodic_life": True, "max_num_frames_per_episode": 400, "frameskip": 1}),
    ("pong", {"autoreset_mode": AutoresetMode.SAME_STEP, "max_num_frames_per_episode": 600, "stack_num": 6}),
    (
        "space_invaders",
        {"grayscale": False, "repeat_action_probability": 0.25, "autoreset_mode": AutoresetMode.SAME_STEP},
    ),
    ("breakout", {"img_height": 64, "img_width": 48, "noop_max": 5}),
]


def _assert_same_step(expected: tuple, got: tuple, where: str) -> None:
    obs_e, rew_e, term_e, trunc_e, info_e = expected
    obs_g, rew_g, term_g, trunc_g, info_g = got
    assert obs_g.dtype == np.uint8 and obs_g.shape == obs_e.shape, where
    np.testing.assert_array_equal(obs_g, obs_e, err_msg=where)
    assert rew_g.dtype == np.int32, where
    np.testing.assert_array_equal(rew_g, rew_e, err_msg=where)
    assert term_g.dtype == np.bool_ and trunc_g.dtype == np.bool_
    np.testing.assert_array_equal(term_g, term_e, err_msg=where)
    np.testing.assert_array_equal(trunc_g, trunc_e, err_msg=where)
    for key in ("env_id", "lives", "frame_number", "episode_frame_number"):
        assert info_g[key].dtype == np.int32, key
        np.testing.assert_array_equal(info_g[key], info_e[key], err_msg=f"{where} info[{key}]")
    assert ("final_obs" in info_g) == ("final_obs" in info_e), where
    if "final_obs" in info_e:
        done = term_e | trunc_e
        np.testing.assert_array_equal(info_g["_final_obs"], done)
        np.testing.assert_array_equal(info_g["final_obs"][done], info_e["final_obs"][done], err_msg=where)
        assert not info_g["final_obs"][~done].any(), "rows of envs that did not finish must be zeros"


@pytest.mark.parametrize(("game", "kwargs"), GRID, ids=[f"{g}-{i}" for i, (g, _) in enumerate(GRID)])
def test_matches_ale_py_vector_env(game: str, kwargs: dict[str, Any]) -> None:
    reference = AlePyVectorEnv(game, NUM_ENVS, **kwargs)
    ours = torchwm.AtariVectorEnv(game, NUM_ENVS, **kwargs)
    try:
        assert ours.single_observation_space == reference.single_observation_space
        assert ours.single_action_space == reference.single_action_space
        assert ours.observation_space == reference.observation_space
        assert ours.action_space == reference.action_space
        obs_e, info_e = reference.reset(seed=11)
        obs_g, info_g = ours.reset(seed=11)
        np.testing.assert_array_equal(obs_g, obs_e)
        assert sorted(info_g) == sorted(info_e)
        rng = np.random.default_rng(5)
        for step in range(STEPS):
            actions = rng.integers(0, reference.single_action_space.n, NUM_ENVS)
            expected = reference.step(actions)
            got = ours.step(actions)
            _assert_same_step(expected, got, f"step {step}")
            if step == STEPS // 2:
                # A reseeding reset mid-run, with an explicit seed array.
                seeds = np.array([3, 1, 4])
                np.testing.assert_array_equal(ours.reset(seed=seeds)[0], reference.reset(seed=seeds)[0])
    finally:
        reference.close()
        ours.close()


def test_async_batches_match_ale_py_per_env() -> None:
    """batch_size < num_envs: batches depend on thread timing, each env's own trajectory does not."""

    def per_env_trajectories(env: gym.vector.VectorEnv) -> dict[int, list[tuple]]:
        trajectories: dict[int, list[tuple]] = {i: [] for i in range(6)}
        obs, info = env.reset(seed=21)
        # A seeded reset reloads the ROM, which takes as long as dozens of steps: run until every
        # env has a trajectory to compare (the cap only guards against a scheduler that starves one).
        for _ in range(5000):
            if min(len(t) for t in trajectories.values()) >= 15:
                break
            ids = info["env_id"]
            for row, env_id in enumerate(ids):
                trajectories[int(env_id)].append((obs[row].tobytes(), int(info["lives"][row])))
            # Each env's action depends only on that env's own history length.
            actions = np.array([(len(trajectories[int(i)]) * 7 + int(i)) % 4 for i in ids])
            obs, rewards, terms, truncs, info = env.step(actions)
        return trajectories

    kwargs = {"batch_size": 2, "repeat_action_probability": 0.25}
    reference = AlePyVectorEnv("breakout", 6, **kwargs)
    ours = torchwm.AtariVectorEnv("breakout", 6, **kwargs)
    try:
        expected = per_env_trajectories(reference)
        got = per_env_trajectories(ours)
    finally:
        reference.close()
        ours.close()
    for env_id in range(6):
        n = min(len(expected[env_id]), len(got[env_id]))
        assert n >= 10, (env_id, len(expected[env_id]), len(got[env_id]))
        assert got[env_id][:n] == expected[env_id][:n], env_id


def _gymnasium_reference(game_id: str, seeds: list[int], stack: int, mode: AutoresetMode, **pre: Any):
    sticky = pre.pop("repeat_action_probability", 0.0)

    def factory() -> gym.Env:
        env = gym.make(game_id, frameskip=1, repeat_action_probability=sticky)
        env = gym.wrappers.AtariPreprocessing(env, noop_max=0, **pre)
        return gym.wrappers.FrameStackObservation(env, stack, padding_type="zero")

    return gym.vector.SyncVectorEnv([factory for _ in seeds], autoreset_mode=mode)


GYM_GRID: list[dict[str, Any]] = [
    {},
    {"grayscale": False, "stack_num": 6},
    {"repeat_action_probability": 0.25},
    {"episodic_life": True, "autoreset_mode": AutoresetMode.SAME_STEP},
    {"frameskip": 1, "img_height": 210, "img_width": 160},
    {"autoreset_mode": AutoresetMode.SAME_STEP, "grayscale": False},
]


@pytest.mark.parametrize("kwargs", GYM_GRID, ids=[str(i) for i in range(len(GYM_GRID))])
def test_matches_gymnasium_atari_preprocessing_stack(kwargs: dict[str, Any]) -> None:
    """The ALE guide's equivalence: FrameStackObservation(AtariPreprocessing(...)) in a SyncVectorEnv."""
    seeds, ale_seeds = ale_py_reset_seeds(2)
    mode = kwargs.get("autoreset_mode", AutoresetMode.NEXT_STEP)
    height, width = kwargs.get("img_height", 84), kwargs.get("img_width", 84)
    reference = _gymnasium_reference(
        "ALE/Breakout-v5",
        seeds,
        kwargs.get("stack_num", 4),
        mode,
        frame_skip=kwargs.get("frameskip", 4),
        screen_size=(width, height),
        terminal_on_life_loss=kwargs.get("episodic_life", False),
        grayscale_obs=kwargs.get("grayscale", True),
        repeat_action_probability=kwargs.get("repeat_action_probability", 0.0),
    )
    ours = torchwm.AtariVectorEnv(
        "breakout", len(seeds), noop_max=0, use_fire_reset=False, reward_clipping=False, **kwargs
    )
    try:
        obs_e, info_e = reference.reset(seed=seeds)
        obs_g, info_g = ours.reset(seed=ale_seeds)
        np.testing.assert_array_equal(obs_g, obs_e)
        rng = np.random.default_rng(9)
        for step in range(400):
            actions = rng.integers(0, 4, len(seeds))
            obs_e, rew_e, term_e, trunc_e, info_e = reference.step(actions)
            obs_g, rew_g, term_g, trunc_g, info_g = ours.step(actions)
            where = f"step {step}"
            np.testing.assert_array_equal(obs_g, obs_e, err_msg=where)
            np.testing.assert_array_equal(rew_g, rew_e.astype(np.int32), err_msg=where)
            np.testing.assert_array_equal(term_g, term_e, err_msg=where)
            np.testing.assert_array_equal(trunc_g, trunc_e, err_msg=where)
            np.testing.assert_array_equal(info_g["lives"], info_e["lives"], err_msg=where)
            if mode == AutoresetMode.SAME_STEP and (term_e | trunc_e).any():
                done = term_e | trunc_e
                np.testing.assert_array_equal(info_g["_final_obs"], info_e["_final_obs"])
                for row in np.flatnonzero(done):
                    np.testing.assert_array_equal(info_g["final_obs"][row], info_e["final_obs"][row], err_msg=where)
    finally:
        reference.close()
        ours.close()

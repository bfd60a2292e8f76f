"""AtariVectorEnv as a gymnasium VectorEnv: spaces, info, async batches, resets, bad input, lifecycle."""

from __future__ import annotations

import os

import gymnasium as gym
import numpy as np
import pytest
from ale_py.vector_env import AtariVectorEnv as AlePyVectorEnv
from gymnasium.vector import AutoresetMode

import torchwm
from testing_support import torchwm_worker_threads


@pytest.fixture
def env():
    env = torchwm.AtariVectorEnv("breakout", num_envs=4)
    yield env
    env.close()


def test_spaces_dtypes_and_info(env: torchwm.AtariVectorEnv) -> None:
    assert isinstance(env, gym.vector.VectorEnv)
    assert env.num_envs == 4 and env.batch_size == 4
    assert env.single_observation_space == gym.spaces.Box(0, 255, (4, 84, 84), np.uint8)
    assert env.single_action_space == gym.spaces.Discrete(4)
    assert env.observation_space.shape == (4, 4, 84, 84)
    assert env.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
    obs, info = env.reset(seed=0)
    assert obs.shape == (4, 4, 84, 84) and obs.dtype == np.uint8
    assert set(info) == {"env_id", "lives", "frame_number", "episode_frame_number"}
    np.testing.assert_array_equal(info["env_id"], np.arange(4))
    assert all(v.dtype == np.int32 and v.shape == (4,) for v in info.values())
    obs, rewards, terms, truncs, info = env.step(env.action_space.sample())
    assert obs in env.observation_space
    assert rewards.dtype == np.int32 and terms.dtype == np.bool_ and truncs.dtype == np.bool_
    # The last stacked frame is new; the first three were zero padding before the first step.
    assert obs[:, -1].any()


def test_rgb_observations_and_full_action_space() -> None:
    env = torchwm.AtariVectorEnv("pong", 2, grayscale=False, stack_num=2, full_action_space=True)
    try:
        obs, _ = env.reset()
        assert obs.shape == (2, 2, 84, 84, 3)
        assert env.single_action_space == gym.spaces.Discrete(18)
    finally:
        env.close()


def test_async_send_recv_returns_first_ready_envs() -> None:
    env = torchwm.AtariVectorEnv("breakout", num_envs=6, batch_size=2)
    try:
        assert env.observation_space.shape == (2, 4, 84, 84)
        obs, info = env.reset(seed=1)
        assert obs.shape[0] == 2 and len(set(info["env_id"].tolist())) == 2
        seen = set()
        # A seeded reset reloads the ROM, which is slow: the other envs cycle meanwhile.
        for _ in range(5000):
            if seen == set(range(6)):
                break
            env.send(np.zeros(2, dtype=np.int64))
            obs, rewards, terms, truncs, info = env.recv()
            ids = info["env_id"].tolist()
            assert len(ids) == 2 and len(set(ids)) == 2 and all(0 <= i < 6 for i in ids)
            seen.update(ids)
        assert seen == set(range(6))
    finally:
        env.close()


def test_reset_mask_resets_only_masked_envs(env: torchwm.AtariVectorEnv) -> None:
    env.reset(seed=3)
    for _ in range(5):
        obs, *_, info = env.step(np.ones(4, dtype=np.int64))
    mask = np.array([True, False, True, False])
    new_obs, new_info = env.reset(options={"reset_mask": mask})
    np.testing.assert_array_equal(new_info["episode_frame_number"][~mask], info["episode_frame_number"][~mask])
    np.testing.assert_array_equal(new_obs[~mask], obs[~mask])
    assert (new_info["episode_frame_number"][mask] < info["episode_frame_number"][mask]).all()
    with pytest.raises(TypeError, match="boolean numpy array"):
        env.reset(options={"reset_mask": [True, False, True, False]})
    with pytest.raises(ValueError, match="shape"):
        env.reset(options={"reset_mask": np.ones(3, dtype=bool)})
    env.step(np.zeros(4, dtype=np.int64))


def test_partial_reset_needs_sync_mode() -> None:
    env = torchwm.AtariVectorEnv("breakout", num_envs=4, batch_size=2)
    try:
        env.reset()
        with pytest.raises(ValueError, match="batch_size < num_envs"):
            env.reset(options={"reset_mask": np.array([True, False, False, False])})
        env.step(np.zeros(2, dtype=np.int64))
    finally:
        env.close()


@pytest.mark.parametrize(
    ("actions", "match"),
    [
        (np.zeros(3, dtype=np.int64), r"shape \(4,\)"),
        (np.zeros((4, 1), dtype=np.int64), r"shape \(4,\)"),
        (np.zeros(4, dtype=np.float32), "integers"),
        (np.array([0, 1, np.nan, 2]), "integers"),
        (np.array([0, 1, 2, 4]), r"\[0, 4\)"),
        (np.array([-1, 0, 0, 0]), r"\[0, 4\)"),
        (np.array(["a", "b", "c", "d"]), "integers"),
        (None, "shape"),
    ],
)
def test_bad_actions_raise_and_env_stays_usable(env: torchwm.AtariVectorEnv, actions, match: str) -> None:
    env.reset(seed=0)
    with pytest.raises(ValueError, match=match):
        env.step(actions)
    obs, *_ = env.step([0, 1, 2, 3])  # plain lists of ints are fine
    assert obs.shape == (4, 4, 84, 84)


def test_protocol_errors_never_hang(env: torchwm.AtariVectorEnv) -> None:
    with pytest.raises(gym.error.NoAsyncCallError, match="before reset"):
        env.recv()
    with pytest.raises(torchwm.EnvStateError, match="before reset"):
        env.send(np.zeros(4, dtype=np.int64))
    env.reset()
    with pytest.raises(gym.error.NoAsyncCallError, match="without a matching send") as caught:
        env.recv()
    assert isinstance(caught.value, torchwm.EnvStateError) and caught.value.name == "recv"
    env.send(np.zeros(4, dtype=np.int64))
    with pytest.raises(gym.error.AlreadyPendingCallError, match="twice without recv") as pending:
        env.send(np.zeros(4, dtype=np.int64))
    assert isinstance(pending.value, torchwm.EnvStateError)
    env.recv()
    env.close()
    env.close()  # idempotent
    for call in (lambda: env.step(np.zeros(4, dtype=np.int64)), env.recv, env.reset):
        with pytest.raises(gym.error.ClosedEnvironmentError, match="closed") as closed:
            call()
        assert isinstance(closed.value, torchwm.EnvStateError)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"frameskip": 0}, "frameskip"),
        ({"frameskip": -2}, "frameskip"),
        ({"frameskip": 2.5}, "frameskip"),
        ({"frameskip": True}, "frameskip"),
        ({"stack_num": 0}, "stack_num"),
        ({"img_height": 0}, "img_height"),
        ({"img_width": -1}, "img_width"),
        ({"batch_size": 5}, "batch_size"),
        ({"num_envs": 0}, "num_envs"),
        ({"repeat_action_probability": 1.5}, "repeat_action_probability"),
        ({"noop_max": -1}, "noop_max"),
        ({"grayscale": "yes"}, "grayscale"),
        ({"autoreset_mode": "sometimes"}, "autoreset_mode"),
        ({"autoreset_mode": 1}, "autoreset_mode"),
        ({"num_envs": 2**63}, "num_envs"),
        ({"stack_num": np.uint64(2**64 - 1)}, "stack_num"),
        ({"frameskip": 4294967295}, "frameskip"),
        ({"frameskip": 200_000}, "max_num_frames_per_episode"),
        ({"noop_max": 2147483647}, "max_num_frames_per_episode"),
        ({"max_num_frames_per_episode": 2**40}, "max_num_frames_per_episode"),
        ({"repeat_action_probability": float("nan")}, "repeat_action_probability"),
        ({"thread_affinity_offset": -2}, "thread_affinity_offset"),
    ],
)
def test_bad_constructor_arguments(kwargs: dict, match: str) -> None:
    kwargs = {"num_envs": 4, **kwargs}
    with pytest.raises(torchwm.InvalidArgumentError, match=match) as caught:
        torchwm.AtariVectorEnv("breakout", **kwargs)
    # Caught by code written for torchwm (ValueError) and for ale_py (gymnasium.error.Error).
    assert isinstance(caught.value, ValueError) and isinstance(caught.value, gym.error.Error)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"num_envs": 2147483647},
        {"num_envs": 2, "stack_num": 2**31 - 1},
        {"num_envs": 1, "stack_num": 2147483647, "img_height": 4096, "img_width": 4096},
        {"num_envs": 2147483647, "batch_size": 3},
    ],
)
def test_sizes_beyond_memory_are_refused_before_allocating(kwargs: dict) -> None:
    with pytest.raises(MemoryError, match="num_envs"):
        torchwm.AtariVectorEnv("breakout", **kwargs)


@pytest.mark.parametrize("seed", [-1, 2**31 - 1, "7", 1.5])
def test_bad_seeds_are_rejected(env: torchwm.AtariVectorEnv, seed: object) -> None:
    with pytest.raises((ValueError, TypeError), match="seed"):
        env.reset(seed=seed)
    env.reset(seed=np.arange(4))  # an array of seeds, one per env


def test_unknown_game_lists_close_names() -> None:
    with pytest.raises(ValueError, match="breakout"):
        torchwm.AtariVectorEnv("breakuot")
    with pytest.raises(ValueError, match="ms_pacman"):
        torchwm.AtariVectorEnv("MsPacmna")
    with pytest.raises(TypeError, match="ROM id"):
        torchwm.AtariVectorEnv(3)


def test_same_seed_same_trajectory_for_any_thread_count() -> None:
    def rollout(num_threads: int) -> list[np.ndarray]:
        env = torchwm.AtariVectorEnv("space_invaders", 4, num_threads=num_threads, repeat_action_probability=0.25)
        try:
            out = [env.reset(seed=42)[0]]
            rng = np.random.default_rng(0)
            for _ in range(60):
                obs, rewards, *_ = env.step(rng.integers(0, 6, 4))
                out += [obs, rewards]
            return out
        finally:
            env.close()

    one, two = rollout(1), rollout(2)
    for a, b in zip(one, two):
        np.testing.assert_array_equal(a, b)


def test_same_step_final_obs_mask() -> None:
    env = torchwm.AtariVectorEnv("breakout", 2, autoreset_mode=AutoresetMode.SAME_STEP, max_num_frames_per_episode=40)
    try:
        assert env.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
        obs, _ = env.reset(seed=0)
        for step in range(10):  # noqa: B007 (read after the loop)
            obs, rewards, terms, truncs, info = env.step(np.zeros(2, dtype=np.int64))
            if truncs.any():
                break
        assert truncs.all() and step == 9  # 10 steps x 4 frames = the 40-frame limit
        np.testing.assert_array_equal(info["_final_obs"], [True, True])
        assert info["final_obs"].shape == obs.shape
        # The new episode starts from zero padding; the final observation has a full stack.
        assert not obs[:, 0].any() and info["final_obs"][:, 0].any()
    finally:
        env.close()


def test_continuous_actions_match_ale_py() -> None:
    kwargs = {"continuous": True}
    ours = torchwm.AtariVectorEnv("breakout", 2, **kwargs)
    reference = AlePyVectorEnv("breakout", 2, **kwargs)
    try:
        assert ours.single_action_space == reference.single_action_space
        np.testing.assert_array_equal(ours.reset(seed=1)[0], reference.reset(seed=1)[0])
        rng = np.random.default_rng(2)
        for _ in range(100):
            actions = np.stack(
                [rng.uniform(0, 1, 2), rng.uniform(-np.pi, np.pi, 2), rng.uniform(0, 1, 2)], axis=1
            ).astype(np.float32)
            got, expected = ours.step(actions), reference.step(actions)
            np.testing.assert_array_equal(got[0], expected[0])
            np.testing.assert_array_equal(got[1], expected[1])
        with pytest.raises(ValueError, match="finite"):
            ours.step(np.full((2, 3), np.nan, dtype=np.float32))
        with pytest.raises(ValueError, match=r"\(2, 3\)"):
            ours.step(np.zeros((2,), dtype=np.float32))
    finally:
        ours.close()
        reference.close()


def test_make_atari_vector_env_follows_the_torchwm_docs() -> None:
    env = torchwm.make_atari_vector_env(game="pong", num_envs=2, obs_type="rgb", seed=0)
    twin = torchwm.AtariVectorEnv("pong", 2, grayscale=False, repeat_action_probability=0.25)
    try:
        assert isinstance(env, torchwm.AtariVectorEnv)
        assert env.single_observation_space.shape == (4, 84, 84, 3)
        np.testing.assert_array_equal(env.reset()[0], twin.reset(seed=0)[0])
    finally:
        env.close()
        twin.close()
    with pytest.raises(ValueError, match="obs_type"):
        torchwm.make_atari_vector_env("pong", 2, obs_type="screen")


def test_dropping_an_env_joins_its_threads() -> None:
    env = torchwm.AtariVectorEnv("breakout", 2, num_threads=2)
    env.reset()
    env.send(np.zeros(2, dtype=np.int64))  # a step still in flight when the env is dropped
    assert torchwm_worker_threads()
    del env
    import gc

    gc.collect()
    assert torchwm_worker_threads() == []


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_fork_after_threads_started_does_not_deadlock() -> None:
    env = torchwm.AtariVectorEnv("breakout", 2)
    try:
        env.reset(seed=0)
        pid = os.fork()
        if pid == 0:  # child: the old env reports a clear error; a new env works
            code = 1
            try:
                try:
                    env.step(np.zeros(2, dtype=np.int64))
                except torchwm.EnvStateError:
                    child_env = torchwm.AtariVectorEnv("breakout", 2)
                    child_env.reset(seed=0)
                    child_env.step(np.zeros(2, dtype=np.int64))
                    child_env.close()
                    code = 0
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
        env.step(np.zeros(2, dtype=np.int64))  # the parent's env is unaffected
    finally:
        env.close()


def test_gymnasium_registry() -> None:
    gym.register_envs(torchwm)
    env = gym.make_vec("TorchWM/Breakout-v5", num_envs=2)
    try:
        inner = env.unwrapped if hasattr(env, "unwrapped") else env
        assert isinstance(inner, torchwm.AtariVectorEnv)
        assert env.observation_space.shape == (2, 4, 84, 84)
    finally:
        env.close()
    ale_ids = {spec.name for spec in gym.registry.values() if spec.namespace == "ALE" and spec.version == 5}
    ours = {spec.name for spec in gym.registry.values() if spec.namespace == "TorchWM"}
    assert ale_ids == ours and len(ours) > 100
    for name in ("Breakout", "Pong", "MsPacman"):
        assert gym.spec(f"TorchWM/{name}-v5").kwargs == gym.spec(f"ALE/{name}-v5").kwargs
    assert gym.spec("TorchWM/Breakout-v5").kwargs["repeat_action_probability"] == 0.25
    single = gym.make("TorchWM/Breakout-v5")
    try:
        assert single.observation_space.shape == (210, 160, 3)
    finally:
        single.close()

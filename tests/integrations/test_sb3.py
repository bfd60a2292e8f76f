"""torchwm.sb3.SB3VecEnv against Stable-Baselines3's own DummyVecEnv, side by side, call for call."""

from __future__ import annotations

import contextlib
import pickle
import subprocess
import sys
import textwrap
from functools import partial

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AsyncVectorEnv, AutoresetMode, SyncVectorEnv

pytest.importorskip("stable_baselines3")
from sb3_envs import NUM_ENVS, StepInfo, make_cartpole, sync_env
from stable_baselines3 import PPO
from stable_baselines3.common.monitor import Monitor
from stable_baselines3.common.vec_env import (
    DummyVecEnv,
    VecEnv,
    VecFrameStack,
    VecMonitor,
    VecNormalize,
    VecTransposeImage,
)

import torchwm
from testing_support import logs_sub_env_errors
from torchwm.errors import AlreadyPendingCallError, InvalidArgumentError, NoAsyncCallError
from torchwm.sb3 import SB3VecEnv


def process_env(mode):
    return torchwm.TorchVectorizedEnv(make_cartpole, num_workers=2, envs_per_worker=2, autoreset_mode=mode)


VECTOR_ENVS = {
    "sync-next": lambda: sync_env(AutoresetMode.NEXT_STEP),
    "sync-same": lambda: sync_env(AutoresetMode.SAME_STEP),
    "sync-disabled": lambda: sync_env(AutoresetMode.DISABLED),
    "async-next": lambda: AsyncVectorEnv([make_cartpole] * NUM_ENVS, autoreset_mode=AutoresetMode.NEXT_STEP),
    "torchwm-next": lambda: process_env(AutoresetMode.NEXT_STEP),
    "torchwm-same": lambda: process_env(AutoresetMode.SAME_STEP),
}


def assert_same_value(got, expected, where):
    assert type(got) is type(expected), f"{where}: {type(got)} != {type(expected)}"
    if isinstance(expected, dict):
        assert list(got) == list(expected), f"{where}: keys {list(got)} != {list(expected)}"
        for key in expected:
            assert_same_value(got[key], expected[key], f"{where}[{key!r}]")
    elif isinstance(expected, np.ndarray):
        assert got.dtype == expected.dtype and got.shape == expected.shape, where
        np.testing.assert_array_equal(got, expected, err_msg=where)
    else:
        assert got == expected, f"{where}: {got!r} != {expected!r}"


def assert_same_step(got, expected, step):
    names = ("obs", "rewards", "dones")
    for name, a, b in zip(names, got[:3], expected[:3]):
        assert_same_value(a, b, f"step {step} {name}")
    assert len(got[3]) == len(expected[3])
    for i, (a, b) in enumerate(zip(got[3], expected[3])):
        assert_same_value(a, b, f"step {step} infos[{i}]")


@pytest.fixture(params=sorted(VECTOR_ENVS))
def pair(request):
    adapter = SB3VecEnv(VECTOR_ENVS[request.param]())
    reference = DummyVecEnv([make_cartpole] * NUM_ENVS)
    yield adapter, reference
    adapter.close()
    reference.close()


def test_is_an_sb3_vec_env(pair):
    adapter, reference = pair
    assert isinstance(adapter, VecEnv)
    assert adapter.num_envs == reference.num_envs
    assert adapter.observation_space == reference.observation_space
    assert adapter.action_space == reference.action_space
    assert adapter.render_mode == reference.render_mode


def test_steps_match_dummy_vec_env(pair):
    adapter, reference = pair
    for vec in pair:
        vec.seed(123)
    assert_same_value(adapter.reset(), reference.reset(), "reset obs")
    assert_same_value(adapter.reset_infos, reference.reset_infos, "reset_infos")
    rng = np.random.default_rng(0)
    done_seen = truncation_seen = 0
    for step in range(150):
        actions = rng.integers(0, 2, size=NUM_ENVS)
        got, expected = adapter.step(actions), reference.step(actions)
        assert_same_step(got, expected, step)
        assert_same_value(adapter.reset_infos, reference.reset_infos, f"step {step} reset_infos")
        done_seen += int(expected[2].sum())
        truncation_seen += sum(info["TimeLimit.truncated"] for info in expected[3])
    assert done_seen > 10 and truncation_seen > 0  # both ways of ending an episode were compared


def test_reseeding_and_options_reach_the_next_reset(pair):
    for vec in pair:
        vec.seed(5)
        vec.set_options({"low": -0.01, "high": 0.01})
    first = [vec.reset() for vec in pair]
    assert_same_value(first[0], first[1], "reset with options")
    assert np.abs(first[0]).max() <= 0.01
    # Seeds and options are used once: the next reset is unseeded, so runs differ from a seeded one.
    for vec in pair:
        vec.seed(5)
    second = [vec.reset() for vec in pair]
    assert_same_value(second[0], second[1], "reseeded")
    assert np.abs(second[0]).max() > 0.01 or not np.array_equal(second[0], first[0])


def test_sub_env_calls_match_dummy_vec_env(pair):
    adapter, reference = pair
    for vec in pair:
        vec.seed(1)
        vec.reset()
        vec.step(np.ones(NUM_ENVS, dtype=np.int64))
    for call in (
        lambda v: v.get_attr("t"),
        lambda v: v.get_attr("t", indices=[2, 0]),
        lambda v: v.get_attr("render_mode", indices=1),
        lambda v: v.env_method("scaled", 3),
        lambda v: v.env_method("scaled", k=2, indices=[3, 2, 1, 0]),
        lambda v: v.env_is_wrapped(StepInfo),
        lambda v: v.env_is_wrapped(Monitor, indices=[1]),
        lambda v: v.has_attr("t"),
        lambda v: v.has_attr("no_such_attribute"),
    ):
        assert_same_value(call(adapter), call(reference), "sub-env call")
    for vec in pair:
        vec.set_attr("t", 40, indices=[1, 3])
    assert_same_value(adapter.get_attr("t"), reference.get_attr("t"), "after set_attr")
    for vec in pair:
        with pytest.raises(IndexError):
            vec.get_attr("t", indices=[NUM_ENVS])
        # Last: gymnasium's AsyncVectorEnv shuts its workers down after this (its own behaviour), and
        # logs the worker's error first.
        logged = isinstance(getattr(vec, "venv", None), AsyncVectorEnv)
        with logs_sub_env_errors() if logged else contextlib.nullcontext(), pytest.raises(AttributeError):
            vec.get_attr("no_such_attribute")


def test_a_method_on_some_remote_envs_is_refused_and_the_env_stays_usable():
    # gymnasium's AsyncVectorEnv calls every env at once (TorchVectorizedEnv runs SB3's per-env calls:
    # test_sb3_subproc.py).
    adapter = SB3VecEnv(AsyncVectorEnv([make_cartpole] * NUM_ENVS))
    adapter.reset()
    with pytest.raises(InvalidArgumentError, match="every sub-environment"):
        adapter.env_method("scaled", 2, indices=[0])
    assert adapter.env_method("scaled", 2) == [0] * NUM_ENVS
    adapter.step(np.zeros(NUM_ENVS, dtype=np.int64))
    adapter.close()


def test_async_protocol_errors_are_gymnasium_classes():
    adapter = SB3VecEnv(sync_env(AutoresetMode.NEXT_STEP))
    adapter.reset()
    with pytest.raises(NoAsyncCallError):
        adapter.step_wait()
    adapter.step_async(np.zeros(NUM_ENVS, dtype=np.int64))
    with pytest.raises(AlreadyPendingCallError):
        adapter.step_async(np.zeros(NUM_ENVS, dtype=np.int64))
    assert isinstance(NoAsyncCallError("x", "y"), gym.error.NoAsyncCallError)
    adapter.reset()  # cancels the pending step, as SB3 specifies
    obs, rewards, dones, _infos = adapter.step(np.zeros(NUM_ENVS, dtype=np.int64))
    assert obs.shape == (NUM_ENVS, 4) and rewards.dtype == np.float32 and dones.dtype == np.bool_
    adapter.close()


def test_different_options_per_env_are_refused():
    adapter = SB3VecEnv(sync_env(AutoresetMode.NEXT_STEP))
    adapter.set_options([{"low": -0.01}] + [{}] * (NUM_ENVS - 1))
    with pytest.raises(InvalidArgumentError, match="same options"):
        adapter.reset()
    adapter.set_options(None)
    adapter.reset()
    adapter.close()


def test_a_non_vector_env_is_refused():
    with pytest.raises(InvalidArgumentError, match="vector env"):
        SB3VecEnv(gym.make("CartPole-v1"))


def test_sb3_wrappers_match_dummy_vec_env():
    """VecMonitor, VecNormalize and VecFrameStack see the same data through both."""

    def wrapped(venv):
        return VecFrameStack(VecNormalize(VecMonitor(venv), gamma=0.9), n_stack=3)

    adapter = wrapped(SB3VecEnv(process_env(AutoresetMode.SAME_STEP)))
    reference = wrapped(DummyVecEnv([make_cartpole] * NUM_ENVS))
    for vec in (adapter, reference):
        vec.seed(9)
    np.testing.assert_allclose(adapter.reset(), reference.reset())
    rng = np.random.default_rng(1)
    episodes = 0
    for step in range(80):
        actions = rng.integers(0, 2, size=NUM_ENVS)
        got, expected = adapter.step(actions), reference.step(actions)
        np.testing.assert_allclose(got[0], expected[0], err_msg=f"step {step}")
        np.testing.assert_allclose(got[1], expected[1], err_msg=f"step {step}")
        np.testing.assert_array_equal(got[2], expected[2])
        for a, b in zip(got[3], expected[3]):
            if "episode" in b:
                episodes += 1
                assert (a["episode"]["r"], a["episode"]["l"]) == (b["episode"]["r"], b["episode"]["l"])
            np.testing.assert_allclose(a.get("terminal_observation", 0), b.get("terminal_observation", 0))
    assert episodes > 5
    adapter.close()
    reference.close()


class ImageEnv(gym.Env):
    """Channels-last uint8 frames: what VecTransposeImage exists for."""

    observation_space = gym.spaces.Box(0, 255, (12, 10, 3), np.uint8)
    action_space = gym.spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return self.np_random.integers(0, 256, (12, 10, 3), dtype=np.uint8), {}

    def step(self, action):
        frame = self.np_random.integers(0, 256, (12, 10, 3), dtype=np.uint8)
        return frame, float(action), bool(frame[0, 0, 0] < 20), False, {}


def test_vec_transpose_image_matches_dummy_vec_env():
    adapter = VecTransposeImage(SB3VecEnv(SyncVectorEnv([ImageEnv] * 2)))
    reference = VecTransposeImage(DummyVecEnv([ImageEnv] * 2))
    for vec in (adapter, reference):
        vec.seed(3)
    assert_same_value(adapter.reset(), reference.reset(), "reset")
    for step in range(40):
        actions = np.array([step % 2, 1])
        assert_same_step(adapter.step(actions), reference.step(actions), step)


def test_cnn_policy_trains_on_atari_vector_env(one_torch_thread):
    """PPO CnnPolicy on AtariVectorEnv's (4, 84, 84) uint8 frames, episodes short enough to end."""
    venv = torchwm.AtariVectorEnv("breakout", 4, max_num_frames_per_episode=400)
    env = VecMonitor(SB3VecEnv(venv))
    model = PPO("CnnPolicy", env, n_steps=64, batch_size=128, n_epochs=1, seed=0, device="cpu")
    assert not isinstance(model.get_env(), VecTransposeImage)  # channels-first already
    model.learn(total_timesteps=512)
    assert model.num_timesteps >= 512
    assert len(model.ep_info_buffer) >= 4  # the NEXT_STEP resets reached VecMonitor as episode ends
    assert all(info["l"] <= 100 for info in model.ep_info_buffer)
    env.close()


def test_atari_done_envs_restart_with_terminal_observation_kept():
    venv = torchwm.AtariVectorEnv("pong", 2, max_num_frames_per_episode=80)
    adapter = SB3VecEnv(venv)
    adapter.seed(0)
    obs = adapter.reset()
    assert obs.shape == (2, 4, 84, 84) and obs.dtype == np.uint8
    for _ in range(25):
        obs, _rewards, dones, infos = adapter.step(np.zeros(2, dtype=np.int64))
        if dones.any():
            break
    assert dones.all()
    for i in range(2):
        assert infos[i]["TimeLimit.truncated"] is True
        assert infos[i]["terminal_observation"].shape == (4, 84, 84)
        assert adapter.reset_infos[i]["episode_frame_number"] < infos[i]["episode_frame_number"]
        # The new episode's first frame stack is the reset's: its older frames are blank.
        assert not obs[i, 0].any() and infos[i]["terminal_observation"][0].any()
    adapter.close()


def test_async_atari_batches_are_refused():
    venv = torchwm.AtariVectorEnv("pong", 4, batch_size=2)
    with pytest.raises(InvalidArgumentError, match="batch_size"):
        SB3VecEnv(venv)
    venv.close()


@pytest.fixture
def one_torch_thread():
    """Small nets train fastest on one thread; more only fight the env workers for the cores."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def test_ppo_learns_cartpole_through_torch_vectorized_env(one_torch_thread):
    from stable_baselines3.common.evaluation import evaluate_policy

    venv = torchwm.TorchVectorizedEnv(
        lambda: gym.make("CartPole-v1"), num_workers=2, envs_per_worker=4, autoreset_mode=AutoresetMode.SAME_STEP
    )
    env = VecMonitor(SB3VecEnv(venv))
    # rl-zoo's CartPole hyper-parameters.
    model = PPO(
        "MlpPolicy",
        env,
        n_steps=32,
        batch_size=256,
        gae_lambda=0.8,
        gamma=0.98,
        n_epochs=20,
        ent_coef=0.0,
        learning_rate=0.001,
        clip_range=0.2,
        seed=0,
        device="cpu",
    )
    model.learn(total_timesteps=16_000)
    eval_env = Monitor(gym.make("CartPole-v1"))
    eval_env.reset(seed=100)
    mean_return, _ = evaluate_policy(model, eval_env, n_eval_episodes=10, deterministic=True)
    env.close()
    assert mean_return > 150, mean_return  # a random policy averages about 22


def test_works_without_stable_baselines3_installed():
    """With SB3 unimportable the adapter is a plain class and gives the same results."""
    script = textwrap.dedent(
        """
        import pickle, sys
        import numpy as np
        sys.modules["stable_baselines3"] = None  # import fails as if not installed
        sys.path.insert(0, sys.argv[1])
        from sb3_envs import NUM_ENVS, sync_env
        from gymnasium.vector import AutoresetMode
        from torchwm.sb3 import SB3VecEnv
        assert "torch" not in sys.modules
        env = SB3VecEnv(sync_env(AutoresetMode.NEXT_STEP))
        env.seed(4)
        out = [env.reset()]
        for step in range(60):
            out.append(env.step(np.arange(NUM_ENVS) % 2))
        out.append(env.reset_infos)
        sys.stdout.buffer.write(pickle.dumps((type(env).__mro__[1].__module__, out)))
        """
    )
    tests_dir = __file__.rsplit("/", 1)[0]
    result = subprocess.run([sys.executable, "-c", script, tests_dir], capture_output=True, check=True)
    base_module, plain = pickle.loads(result.stdout)
    assert base_module == "torchwm.integrations.sb3_protocol"
    env = SB3VecEnv(sync_env(AutoresetMode.NEXT_STEP))
    env.seed(4)
    assert_same_value(plain[0], env.reset(), "reset")
    for step in range(60):
        assert_same_step(plain[step + 1], env.step(np.arange(NUM_ENVS) % 2), step)
    assert_same_value(plain[-1], env.reset_infos, "reset_infos")
    env.close()


def test_atari_next_step_emulation_equals_same_step():
    """The masked reset after a NEXT_STEP step gives what SAME_STEP autoreset gives: same frames,
    rewards, dones and terminal observations (infos differ only for done envs: NEXT_STEP keeps the
    terminal step's, AtariVectorEnv's SAME_STEP has only the new episode's)."""
    envs = [
        SB3VecEnv(torchwm.AtariVectorEnv("breakout", 3, max_num_frames_per_episode=160, autoreset_mode=mode))
        for mode in ("NextStep", "SameStep")
    ]
    try:
        compare_atari_modes(envs)
    finally:
        for vec in envs:
            vec.close()


def compare_atari_modes(envs):
    for vec in envs:
        vec.seed(4)
    assert_same_value(envs[0].reset(), envs[1].reset(), "reset")
    rng = np.random.default_rng(0)
    dones = 0
    for step in range(150):
        actions = rng.integers(0, 4, 3)
        (obs_a, rew_a, done_a, infos_a), (obs_b, rew_b, done_b, infos_b) = (vec.step(actions) for vec in envs)
        for name, a, b in (("obs", obs_a, obs_b), ("rewards", rew_a, rew_b), ("dones", done_a, done_b)):
            assert_same_value(a, b, f"step {step} {name}")
        for i in range(3):
            if done_a[i]:
                assert_same_value(infos_a[i]["terminal_observation"], infos_b[i]["terminal_observation"], "terminal")
                assert_same_value(envs[0].reset_infos[i], envs[1].reset_infos[i], "reset_infos")
            else:
                assert_same_value(infos_a[i], infos_b[i], f"step {step} infos[{i}]")
        dones += int(done_a.sum())
    assert dones >= 6


def test_to_sb3_is_the_four_tuple_api_of_both_vectorizers() -> None:
    """``envs.to_sb3()`` (README's one line) is ``SB3VecEnv(envs)`` for either vectorizer."""
    import gymnasium as gym

    import torchwm
    from torchwm.sb3 import SB3VecEnv

    for envs in (
        torchwm.AtariVectorEnv("pong", num_envs=2),
        torchwm.TorchVectorizedEnv(partial(gym.make, "CartPole-v1"), num_workers=1, envs_per_worker=2),
    ):
        vec_env = envs.to_sb3()
        try:
            assert isinstance(vec_env, SB3VecEnv)
            obs = vec_env.reset()
            assert obs.shape[0] == 2
            obs, rewards, dones, infos = vec_env.step(np.zeros(2, dtype=np.int64))
            assert rewards.shape == (2,) and dones.dtype == bool and len(infos) == 2
        finally:
            vec_env.close()

"""torchwm.integrations.torch_batches: batches as tensors, checked against torch.as_tensor of the same env's numpy results."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

torch = pytest.importorskip("torch")

import torchwm
from torchwm.integrations.torch_batches import TorchBatcher, TorchBatchMixin

DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


# Both vectorizers carry the mixin: one env of each makes tensors, its twin the numpy results.
TorchAtari = torchwm.AtariVectorEnv
TorchProcesses = torchwm.TorchVectorizedEnv


def test_both_vectorizers_have_torch_batches() -> None:
    assert issubclass(torchwm.AtariVectorEnv, TorchBatchMixin)
    assert issubclass(torchwm.TorchVectorizedEnv, TorchBatchMixin)


def make_cartpole():
    return gym.make("CartPole-v1", max_episode_steps=8)


def reference(value):
    """What ``torch.as_tensor`` gives for a (nested) batch: the expected tensors, dtypes included."""
    if isinstance(value, dict):
        return {key: reference(item) for key, item in value.items()}
    if isinstance(value, np.ndarray) and value.dtype.kind in "biuf":
        return torch.as_tensor(value)
    return value


def assert_same(got, expected, device, where="batch"):
    if isinstance(expected, dict):
        assert list(got) == list(expected), where
        for key in expected:
            assert_same(got[key], expected[key], device, f"{where}[{key!r}]")
    elif isinstance(expected, torch.Tensor):
        assert isinstance(got, torch.Tensor) and got.device.type == device, where
        assert got.dtype == expected.dtype and got.shape == expected.shape, where
        assert torch.equal(got.cpu(), expected), where
    else:
        assert type(got) is type(expected), where


def pair(kind):
    if kind == "atari":

        def make(cls):
            return cls("breakout", 3, max_num_frames_per_episode=120)

        return make(TorchAtari), make(torchwm.AtariVectorEnv), 4

    def make(cls):
        return cls(make_cartpole, num_workers=1, envs_per_worker=3, autoreset_mode=AutoresetMode.SAME_STEP)

    return make(TorchProcesses), make(torchwm.TorchVectorizedEnv), 2


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("kind", ["atari", "processes"])
def test_batches_equal_as_tensor_of_the_numpy_results(kind, device):
    env, twin, num_actions = pair(kind)
    try:
        assert_same(
            env.reset_batch(seed=3, device=device), reference(dict(zip(("obs", "info"), twin.reset(seed=3)))), device
        )
        rng = np.random.default_rng(0)
        batches, dones_seen = [], 0
        for step in range(40):
            actions = rng.integers(0, num_actions, size=3)
            action_tensor = torch.as_tensor(actions, device=device)
            got = env.step_batch(action_tensor, device=device)
            obs, rewards, terminations, truncations, info = twin.step(actions)
            expected = reference({"obs": obs, "info": info})
            expected["reward"] = torch.as_tensor(rewards.astype(np.float32))
            expected["terminated"], expected["truncated"] = torch.as_tensor(terminations), torch.as_tensor(truncations)
            expected["done"] = torch.as_tensor(terminations | truncations)
            assert_same({key: got[key] for key in expected}, expected, device, f"step {step}")
            batches.append((got, expected))
            dones_seen += int(expected["done"].sum())
        assert dones_seen > 0  # final_obs / masks went through too
        # Pinned buffers are reused: every earlier batch must still hold its own data.
        for got, expected in batches:
            assert torch.equal(got["obs"].cpu(), expected["obs"]) and torch.equal(
                got["reward"].cpu(), expected["reward"]
            )
    finally:
        env.close()
        twin.close()


def test_cpu_tensors_share_the_env_arrays():
    batcher = TorchBatcher()
    obs = np.arange(12, dtype=np.uint8).reshape(3, 4)
    assert batcher.tree(obs).data_ptr() == obs.ctypes.data
    frozen = obs.copy()
    frozen.flags.writeable = False
    assert torch.equal(batcher.tree(frozen), torch.as_tensor(obs))  # a read-only array is copied


def test_object_arrays_stay_numpy():
    final_obs = np.array([None, np.zeros(2)], dtype=object)
    out = TorchBatcher().tree({"final_obs": final_obs, "_final_obs": np.array([False, True])})
    assert out["final_obs"] is final_obs and out["_final_obs"].dtype == torch.bool

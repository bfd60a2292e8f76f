"""TorchVectorizedEnv refuses bad input in the parent and stays in step with its workers (issue 12):
actions outside the action space (``check_actions=True``; by default they are delivered, issue 22),
values that cannot be pickled, seeds gymnasium refuses."""

from __future__ import annotations

import threading
from functools import partial
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces

from torchwm import TorchVectorizedEnv
from torchwm.errors import InvalidArgumentError

# Deliberate: these tests make sub-envs raise (and close envs with a call pending) on gymnasium's vector
# envs and on torchwm's, side by side; both report that through gymnasium's logger, whose errors and
# warnings are UserWarnings ("ERROR: Received the following error from Worker-i ...", "WARN: Calling
# `close` while ..."). Only those are expected here; test_torch_vectorized_env_gymnasium14.py compares them.
pytestmark = pytest.mark.filterwarnings(r"ignore:.*(ERROR|WARN)\W:UserWarning")


def cartpole() -> gym.Env:
    return gym.make("CartPole-v1")


class StrictEnv(gym.Env):
    """Asserts that every action lies in its action space (as CartPole does for Discrete)."""

    observation_space = spaces.Box(-10, 10, (2,), np.float32)

    def __init__(self, action_space: spaces.Space) -> None:
        self.action_space = action_space

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        return np.zeros(2, np.float32), {}

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict]:
        assert self.action_space.contains(action), f"{action!r} not in {self.action_space}"
        if isinstance(action, dict):
            action = action["move"]
        value = float(len(action)) if isinstance(action, str) else float(np.sum(action))
        return np.full(2, value, np.float32), value, False, False, {}


def _steps_like_sync(ours: TorchVectorizedEnv, make: Any, actions: list[Any]) -> None:
    """``ours`` (already reset with seed 0 and after some refused calls) steps exactly as a fresh
    SyncVectorEnv would: the refused calls changed nothing."""
    reference = gym.vector.SyncVectorEnv([make] * ours.num_envs)
    reference.reset(seed=0)
    try:
        for action in actions:
            for got, expected in zip(ours.step(action), reference.step(action)):
                if isinstance(got, dict):
                    assert got.keys() == expected.keys()
                else:
                    np.testing.assert_array_equal(got, expected)
    finally:
        reference.close()


BAD_DISCRETE = {
    "float": np.array([0.0, 1.0, 0.5, 1.0]),
    "nan": np.array([0.0, np.nan, 1.0, 0.0]),
    "bool": np.array([True, False, True, False]),
    "int64_min": np.array([0, np.iinfo(np.int64).min, 1, 0]),
    "too_big": np.array([0, 1, 2, 0]),
    "negative": [0, -1, 1, 0],
    "matrix": np.zeros((4, 1), np.int64),
    "objects": np.array([0, 1, None, 0], dtype=object),
}


@pytest.mark.parametrize("name", list(BAD_DISCRETE))
def test_actions_outside_a_discrete_space_are_refused_and_the_env_stays_usable(name: str) -> None:
    with TorchVectorizedEnv(cartpole, 2, 2, check_actions=True) as env:
        env.reset(seed=0)
        with pytest.raises(InvalidArgumentError) as caught:
            env.step(BAD_DISCRETE[name])
        assert isinstance(caught.value, ValueError) and "actions" in str(caught.value)
        _steps_like_sync(env, cartpole, [np.array([0, 1, 1, 0]), [1, 1, 0, 0]])


@pytest.mark.parametrize(
    ("space", "bad"),
    [
        (spaces.Box(-1, 1, (2,), np.float32), np.array([[0, 0], [0, 2], [0, 0], [0, 0]], np.float32)),
        (spaces.Box(-1, 1, (2,), np.float32), np.array([[0, 0], [0, np.nan], [0, 0], [0, 0]])),
        (spaces.Box(-1, 1, (2,), np.float32), np.zeros((4, 3), np.float32)),
        (spaces.MultiDiscrete([2, 3]), np.array([[0, 0], [1, 3], [0, 0], [0, 0]])),
        (spaces.MultiBinary(3), np.array([[0, 0, 1], [0, 2, 0], [0, 0, 0], [1, 1, 1]])),
        (spaces.Dict({"move": spaces.Discrete(3)}), {"move": np.array([0, 1, 3, 0])}),
        (spaces.Text(3), ("ab", "abcd", "a", "b")),
    ],
    ids=["box_high", "box_nan", "box_shape", "multidiscrete", "multibinary", "dict", "text"],
)
def test_actions_outside_other_spaces_are_refused(space: spaces.Space, bad: Any) -> None:
    make = partial(StrictEnv, space)
    with TorchVectorizedEnv(make, 2, 2, check_actions=True) as env:
        env.reset(seed=0)
        with pytest.raises(InvalidArgumentError, match="actions"):
            env.step(bad)
        env.action_space.seed(1)
        _steps_like_sync(env, make, [env.action_space.sample() for _ in range(3)])


@pytest.mark.parametrize("name", list(BAD_DISCRETE))
def test_by_default_bad_actions_reach_the_env_and_its_error_leaves_the_vector_env_usable(name: str) -> None:
    with TorchVectorizedEnv(cartpole, 2, 2) as env:
        env.reset(seed=0)
        with pytest.raises(AssertionError, match="invalid"):  # CartPole's own assertion, from its worker
            env.step(BAD_DISCRETE[name])
        assert not env.closed
        with pytest.raises(gym.error.ResetNeeded, match="outside the action space"):
            env.step(np.zeros(4, np.int64))
        env.reset(seed=0)
        _steps_like_sync(env, cartpole, [np.array([0, 1, 1, 0]), [1, 1, 0, 0]])


def test_unpicklable_action_leaves_parent_and_workers_in_step() -> None:
    make = partial(StrictEnv, spaces.Text(3))
    with TorchVectorizedEnv(make, 2, 2, check_actions=False) as env:
        env.reset(seed=0)
        lock = threading.Lock()
        with pytest.raises(InvalidArgumentError, match="cannot be sent"):
            env.step(("a", "b", "c", lock))  # the lock is in the last worker's part: nothing is sent
        env.action_space.seed(2)
        _steps_like_sync(env, make, [env.action_space.sample() for _ in range(3)])


def test_unpicklable_set_attr_value_changes_nothing() -> None:
    with TorchVectorizedEnv(cartpole, 2, 2) as env:
        env.reset(seed=0)
        with pytest.raises(InvalidArgumentError, match="cannot be sent"):
            env.set_attr("gravity", [1.0, 2.0, 3.0, threading.Lock()])
        assert env.get_attr("gravity") == (9.8,) * 4  # not even the first worker's envs changed
        env.set_attr("gravity", [lambda: 1.0] * 4)  # cloudpickle carries what plain pickle refuses
        assert env.get_attr("gravity") == (1.0,) * 4  # get_attr calls what is callable, as gymnasium
        env.set_attr("gravity", 9.8)
        _steps_like_sync(env, cartpole, [np.array([0, 1, 1, 0])] * 3)


@pytest.mark.parametrize(
    "seed",
    [np.array([0.5, 1.0, 2.0, 3.0]), [0.5, 1.0, 2.0, 3.0], [-1, 0, 1, 2], 1.5, [1, 2]],
    ids=["float_array", "float_list", "negative", "float", "too_few"],
)
def test_seeds_gymnasium_refuses_are_refused(seed: Any) -> None:
    theirs = gym.vector.AsyncVectorEnv([cartpole] * 4)
    try:
        with pytest.raises(Exception) as expected:
            theirs.reset(seed=seed)
    finally:
        theirs.close(terminate=True)
    with TorchVectorizedEnv(cartpole, 2, 2) as ours:
        with pytest.raises(Exception) as got:
            ours.reset(seed=seed)
        assert isinstance(got.value, type(expected.value)), (got.value, expected.value)
        ours.reset(seed=0)  # usable


@pytest.mark.parametrize(
    ("num_workers", "envs_per_worker"), [(1, 2**64), (1, 2**16 + 1), (2**16 + 1, 1), (300, 300), (1, np.uint64(2**63))]
)
def test_absurd_worker_and_env_counts_are_refused_at_once(num_workers: Any, envs_per_worker: Any) -> None:
    with pytest.raises(InvalidArgumentError, match="65536"):
        TorchVectorizedEnv(cartpole, num_workers, envs_per_worker)


@pytest.mark.parametrize("timeout", ["x", float("nan"), True])
def test_a_bad_timeout_keeps_the_call_pending(timeout: Any) -> None:
    with TorchVectorizedEnv(cartpole, 1, 2) as env:
        env.reset(seed=0)
        env.step_async(np.zeros(2, dtype=np.int64))
        with pytest.raises(InvalidArgumentError, match="timeout"):
            env.step_wait(timeout=timeout)
        obs, *_ = env.step_wait()  # the step was kept: its replies are still there
        assert obs.shape == (2, 4)
        env.reset(seed=1)

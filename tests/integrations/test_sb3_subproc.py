"""``TorchVectorizedEnv(...).to_sb3()`` beside Stable-Baselines3's own ``SubprocVecEnv`` (issue 22): the
same calls on both, comparing results and exception classes and messages."""

from __future__ import annotations

from functools import partial
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces

pytest.importorskip("stable_baselines3")
from sb3_envs import NUM_ENVS, StepInfo, make_cartpole
from stable_baselines3.common.monitor import Monitor
from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv, VecFrameStack, VecMonitor, VecNormalize

import torchwm
from torchwm.integrations.sb3 import SB3VecEnv


def pair(make: Any = make_cartpole) -> tuple[Any, Any]:
    ours = torchwm.TorchVectorizedEnv(make, 2, NUM_ENVS // 2).to_sb3()
    theirs = SubprocVecEnv([make] * NUM_ENVS, start_method="fork")
    for vec in (ours, theirs):
        vec.seed(3)
        vec.reset()
    return ours, theirs


def outcome(call: Any) -> tuple[str, Any]:
    try:
        return "ok", call()
    except Exception as error:
        return type(error).__name__, str(error)


def assert_same(got: Any, expected: Any) -> None:
    if isinstance(expected, np.ndarray):
        np.testing.assert_array_equal(got, expected)
    elif isinstance(expected, (list, tuple)):
        assert len(got) == len(expected)
        for a, b in zip(got, expected):
            assert_same(a, b)
    elif isinstance(expected, dict):
        assert got.keys() == expected.keys()
        for key in expected:
            assert_same(got[key], expected[key])
    else:
        assert got == expected, (got, expected)


CALLS = [
    ("set a new attribute on one env", lambda v: v.set_attr("new_attr", 5, indices=1)),
    ("read it back", lambda v: v.get_attr("new_attr", indices=1)),
    ("has_attr needs every env", lambda v: v.has_attr("new_attr")),
    ("set it on every env", lambda v: v.set_attr("new_attr", 7)),
    ("now every env has it", lambda v: v.has_attr("new_attr")),
    ("read from all", lambda v: v.get_attr("new_attr")),
    ("an inner attribute", lambda v: v.get_attr("gravity", indices=[3, 1])),
    ("shadowed on the outermost wrapper", lambda v: v.set_attr("gravity", 1.5, indices=[0, 2])),
    ("read through get_wrapper_attr", lambda v: v.get_attr("gravity")),
    ("a method is not called by get_attr", lambda v: callable(v.get_attr("scaled", indices=0)[0])),
    ("env_method on some envs, in order", lambda v: v.env_method("scaled", 3, indices=[2, 0])),
    ("env_method, repeated index", lambda v: v.env_method("scaled", k=2, indices=[1, 1])),
    ("env_method on all", lambda v: v.env_method("scaled", 4)),
    ("env_is_wrapped", lambda v: v.env_is_wrapped(StepInfo, indices=[0, 3])),
    ("env_is_wrapped, absent wrapper", lambda v: v.env_is_wrapped(Monitor)),
    ("has_attr of nothing", lambda v: v.has_attr("no_such_attribute")),
]


def test_sub_env_calls_have_subproc_vec_envs_semantics() -> None:
    ours, theirs = pair()
    try:
        ours.step(np.ones(NUM_ENVS, np.int64))
        theirs.step(np.ones(NUM_ENVS, np.int64))
        for what, call in CALLS:
            got, expected = outcome(partial(call, ours)), outcome(partial(call, theirs))
            assert got[0] == expected[0] == "ok", (what, got, expected)
            assert_same(got[1], expected[1])
    finally:
        ours.close()
        theirs.close()


def test_a_missing_attribute_raises_and_torchwm_stays_usable() -> None:
    """SubprocVecEnv's worker dies of the ``AttributeError`` (its parent then sees the pipe close);
    torchwm raises the ``AttributeError`` itself and every worker goes on (the safer difference)."""
    ours, theirs = pair()
    try:
        theirs_class, _ = outcome(lambda: theirs.get_attr("no_such_attribute"))
        assert theirs_class != "ok"
        with pytest.raises(AttributeError):
            ours.get_attr("no_such_attribute", indices=[2])
        assert ours.get_attr("t", indices=[2]) == [0]
        ours.step(np.zeros(NUM_ENVS, np.int64))
    finally:
        ours.close()
        theirs.close(terminate=True) if hasattr(theirs, "terminate") else None


# Every form SB3's ``VecEnvIndices`` takes (None, an int, an iterable of ints), negative ones included,
# and the bad ones: SubprocVecEnv indexes its list of pipes with them, so Python's list rules apply.
INDICES = [
    None,
    2,
    -1,
    [0, -1],
    [-4, 3, -2],
    (1, 1),
    range(1, 3),
    range(-3, 0),
    np.array([0, -1]),
    [np.int64(1), np.int32(-2)],
    [],
    True,
    NUM_ENVS,
    -NUM_ENVS - 1,
    [0, NUM_ENVS],
    np.int64(1),
    1.0,
    [1.5],
    "01",
]


def dummy_pair() -> tuple[Any, Any]:
    """SB3VecEnv over gymnasium's SyncVectorEnv, beside SB3's DummyVecEnv (both hold the env objects)."""
    ours = SB3VecEnv(gym.vector.SyncVectorEnv([make_cartpole] * NUM_ENVS))
    theirs = DummyVecEnv([make_cartpole] * NUM_ENVS)
    for vec in (ours, theirs):
        vec.seed(3)
        vec.reset()
    return ours, theirs


@pytest.mark.parametrize("make_pair", [pair, dummy_pair], ids=["SubprocVecEnv", "DummyVecEnv"])
@pytest.mark.parametrize("indices", INDICES, ids=repr)
def test_indices_read_as_sb3_reads_them(indices: Any, make_pair: Any) -> None:
    """The same ``indices`` through get_attr, set_attr, env_method and env_is_wrapped on both: the same
    results, or the same exception class and message; after a refused one both still answer."""
    ours, theirs = make_pair()
    try:
        for vec in (ours, theirs):
            vec.env_method("step", 1, indices=[1, 2, 2])  # distinct ``t`` per env: results name the envs
        calls = [
            lambda v: v.get_attr("t", indices=indices),
            lambda v: v.set_attr("marker", 9, indices=indices),
            lambda v: v.get_attr("marker", indices=indices),
            lambda v: v.env_method("has_wrapper_attr", "marker"),  # which envs were set
            lambda v: v.env_method("scaled", 2, indices=indices),
            lambda v: v.env_is_wrapped(StepInfo, indices=indices),
        ]
        for call in calls:
            got, expected = outcome(partial(call, ours)), outcome(partial(call, theirs))
            assert got[0] == expected[0], (indices, got, expected)
            assert_same(got[1], expected[1])
        assert ours.get_attr("t") == theirs.get_attr("t")  # both still usable
    finally:
        ours.close()
        theirs.close()


class SpaceActions(gym.Env):
    """Observes and rewards a number made of its (Dict or Tuple) action; episodes end every 3rd step."""

    observation_space = spaces.Box(-100, 100, (1,), np.float32)

    def __init__(self, action_space: spaces.Space) -> None:
        self.action_space = action_space
        self.t = 0

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        self.t = 0
        return np.zeros(1, np.float32), {}

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict]:
        if not self.action_space.contains(action):
            raise AssertionError(f"{action!r} invalid")
        values = action.values() if isinstance(action, dict) else action
        value = float(sum(np.sum(v) for v in values))
        self.t += 1
        return np.full(1, value, np.float32), value, self.t % 3 == 0, False, {}


def dict_actions() -> gym.Env:
    return SpaceActions(spaces.Dict({"move": spaces.Discrete(3), "power": spaces.Box(0, 1, (2,), np.float32)}))


def tuple_actions() -> gym.Env:
    return SpaceActions(spaces.Tuple((spaces.Discrete(2), spaces.Discrete(5))))


@pytest.mark.parametrize("make", [dict_actions, tuple_actions], ids=["dict", "tuple"])
def test_per_env_action_lists_for_dict_and_tuple_spaces(make: Any) -> None:
    ours, theirs = pair(make)
    try:
        ours.action_space.seed(0)
        for _ in range(7):
            actions = [ours.action_space.sample() for _ in range(NUM_ENVS)]
            got, expected = ours.step(actions), theirs.step(actions)
            assert_same(got[0], expected[0])
            # SB3's two VecEnvs differ here: SubprocVecEnv stacks float64 rewards, DummyVecEnv (and
            # torchwm) float32 ones; the values are the same.
            assert_same(got[1], expected[1].astype(np.float32))
            assert_same(got[2], expected[2])
            assert_same(list(got[3]), list(expected[3]))
    finally:
        ours.close()
        theirs.close()


def test_an_unknown_start_method_raises_multiprocessings_value_error() -> None:
    got = outcome(lambda: torchwm.TorchVectorizedEnv(make_cartpole, 2, 2, context="illegal_method").to_sb3())
    expected = outcome(lambda: SubprocVecEnv([make_cartpole] * 2, start_method="illegal_method"))
    assert expected == ("ValueError", "cannot find context for 'illegal_method'")
    assert got == ("InvalidArgumentError", expected[1])  # a ValueError subclass


def test_seeded_steps_through_sb3_wrappers_match_subproc_vec_env() -> None:
    """seed, reset, reset_infos, steps (terminal observations, TimeLimit.truncated) and the render calls
    through VecMonitor, VecNormalize and VecFrameStack, as SubprocVecEnv gives them."""
    ours, theirs = (
        VecFrameStack(VecNormalize(VecMonitor(vec), gamma=0.9), n_stack=2)
        for vec in (
            torchwm.TorchVectorizedEnv(make_cartpole, 2, NUM_ENVS // 2).to_sb3(),
            SubprocVecEnv([make_cartpole] * NUM_ENVS, start_method="fork"),
        )
    )
    try:
        for vec in (ours, theirs):
            vec.seed(11)
        np.testing.assert_allclose(ours.reset(), theirs.reset(), rtol=1e-6)
        assert_same(list(ours.reset_infos), list(theirs.reset_infos))
        rng = np.random.default_rng(0)
        for _ in range(40):
            actions = rng.integers(0, 2, NUM_ENVS)
            got, expected = ours.step(actions), theirs.step(actions)
            np.testing.assert_allclose(got[0], expected[0], rtol=1e-5)
            np.testing.assert_allclose(got[1], expected[1], rtol=1e-5)
            assert_same(got[2], expected[2])
            for a, b in zip(got[3], expected[3]):
                assert a.keys() == b.keys()
                if "terminal_observation" in b:
                    np.testing.assert_allclose(a["terminal_observation"], b["terminal_observation"], rtol=1e-5)
                    assert a["TimeLimit.truncated"] == b["TimeLimit.truncated"]
                    assert (a["episode"]["r"], a["episode"]["l"]) == (
                        b["episode"]["r"],
                        b["episode"]["l"],
                    )  # "t": clock
        with pytest.warns(UserWarning, match="render mode") as our_warnings:
            our_images = ours.get_images()
        with pytest.warns(UserWarning, match="render mode") as their_warnings:
            their_images = theirs.get_images()
        assert our_images == their_images
        assert [str(w.message) for w in our_warnings] == [str(w.message) for w in their_warnings]
    finally:
        ours.close()
        theirs.close()

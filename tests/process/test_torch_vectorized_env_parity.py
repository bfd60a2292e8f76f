"""TorchVectorizedEnv beside gymnasium's AsyncVectorEnv / SyncVectorEnv: same calls, same results and
exception classes (issue 11). Where torchwm deliberately differs, the test says so and why."""

from __future__ import annotations

import copy
import gc
import os
import warnings
from functools import partial
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces
from gymnasium.vector import AutoresetMode

from testing_support import assert_same
from torchwm import SubEnvError, TorchVectorizedEnv, _platform
from torchwm.errors import EnvStateError

# Deliberate: these tests make sub-envs raise (and close envs with a call pending) on gymnasium's vector
# envs and on torchwm's, side by side; both report that through gymnasium's logger, whose errors and
# warnings are UserWarnings ("ERROR: Received the following error from Worker-i ...", "WARN: Calling
# `close` while ..."). Only those are expected here; test_torch_vectorized_env_gymnasium14.py compares them.
pytestmark = pytest.mark.filterwarnings(r"ignore:.*(ERROR|WARN)\W:UserWarning")


class SpaceEnv(gym.Env):
    """Observations sampled from any space (seeded by reset); the reward depends on the action, which
    must lie in the action space; episodes end every third step."""

    def __init__(self, observation_space: spaces.Space, action_space: spaces.Space | None = None) -> None:
        # Own copies: a space shared by envs in one process would share its RNG too.
        self.observation_space = copy.deepcopy(observation_space)
        self.action_space = copy.deepcopy(action_space) if action_space is not None else spaces.Discrete(2)

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[Any, dict]:
        super().reset(seed=seed)
        self.observation_space.seed(int(self.np_random.integers(2**31)))
        self.t = 0
        return self.observation_space.sample(), {"t": self.t}

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        assert self.action_space.contains(action), f"{action!r} not in {self.action_space}"
        self.t += 1
        reward = float(len(repr(action)) % 7)
        return self.observation_space.sample(), reward, self.t % 3 == 0, False, {"t": self.t}

    def fail(self, error: str) -> None:
        raise {"value": ValueError, "key": KeyError}[error]("failing on purpose")


class UnpicklableError(Exception):
    def __init__(self) -> None:
        super().__init__("cannot travel")
        self.lock = __import__("threading").Lock()


class RaisingEnv(SpaceEnv):
    def __init__(self, error: str) -> None:
        super().__init__(spaces.Box(0, 1, (2,), np.float32))
        self.error = error

    def step(self, action: Any) -> Any:
        if action == 1:
            raise ValueError("step refuses action 1") if self.error == "value" else UnpicklableError()
        return super().step(action)


def cartpole(render_mode: str | None = None) -> gym.Env:
    return gym.make("CartPole-v1", render_mode=render_mode)


def run_both(make_ours: Any, make_theirs: Any, script: Any) -> None:
    """Runs ``script(env)`` on both envs and compares every value it yields."""
    ours, theirs = make_ours(), make_theirs()
    try:
        for got, expected in zip(script(ours), script(theirs), strict=True):
            assert_same(got, expected)
    finally:
        ours.close()
        theirs.close()


def rollout(env: Any, steps: int = 7, seed: int = 3) -> Any:
    yield env.reset(seed=seed)
    env.action_space.seed(seed)
    for _ in range(steps):
        yield env.step(env.action_space.sample())


# ---------------------------------------------------------------------------------- spaces


@pytest.mark.parametrize(
    "action_space",
    [
        spaces.Text(6),
        spaces.Sequence(spaces.Discrete(3)),
        spaces.OneOf([spaces.Discrete(2), spaces.Box(0, 1, (2,), np.float32)]),
        spaces.Graph(spaces.Box(0, 1, (2,), np.float32), spaces.Discrete(3)),
        spaces.Dict({"text": spaces.Text(4), "move": spaces.Discrete(3)}),
    ],
    ids=["text", "sequence", "oneof", "graph", "dict_with_text"],
)
def test_tuple_batched_action_spaces_step_with_sampled_actions(action_space: spaces.Space) -> None:
    make = partial(SpaceEnv, spaces.Box(0, 1, (2,), np.float32), action_space)
    run_both(
        lambda: TorchVectorizedEnv(make, 2, 2),
        lambda: gym.vector.SyncVectorEnv([make] * 4),
        rollout,
    )


@pytest.mark.parametrize("shared_memory", [True, False])
def test_graph_observations_are_graph_instances(shared_memory: bool) -> None:
    make = partial(SpaceEnv, spaces.Graph(spaces.Box(0, 1, (2,), np.float32), spaces.Discrete(3)))
    if shared_memory:  # a dynamic shape: gymnasium refuses shared memory, and so do we (same class)
        with pytest.raises(Exception) as expected:
            gym.vector.AsyncVectorEnv([make] * 2, shared_memory=True)
        with pytest.raises(type(expected.value)):
            TorchVectorizedEnv(make, 1, 2, shared_memory=True)
        return
    run_both(
        lambda: TorchVectorizedEnv(make, 2, 1, shared_memory=False),
        lambda: gym.vector.AsyncVectorEnv([make] * 2, shared_memory=False),
        rollout,
    )
    with TorchVectorizedEnv(make, 2, 1, shared_memory=False) as env:
        obs, _ = env.reset(seed=0)
        assert all(isinstance(graph, spaces.GraphInstance) for graph in obs)
        assert obs in env.observation_space


@pytest.mark.parametrize(
    "observation_space",
    [spaces.Text(5), spaces.OneOf([spaces.Discrete(2), spaces.Box(0, 1, (2,), np.float32)])],
    ids=["text", "oneof"],
)
def test_text_and_oneof_observations_with_shared_memory(observation_space: spaces.Space) -> None:
    """Deliberate difference: gymnasium's AsyncVectorEnv(shared_memory=True) returns the initial
    contents of its (string/tuple) shared-memory views for these spaces at every step; torchwm returns
    the real observations, as SyncVectorEnv and AsyncVectorEnv(shared_memory=False) do."""
    make = partial(SpaceEnv, observation_space)
    run_both(
        lambda: TorchVectorizedEnv(make, 2, 2, shared_memory=True),
        lambda: gym.vector.SyncVectorEnv([make] * 4),
        rollout,
    )


class BoundsEnv(SpaceEnv):
    def __init__(self, high: float) -> None:
        super().__init__(spaces.Box(0, high, (3,), np.float32))


def test_observation_mode_different_and_custom() -> None:
    factories = [partial(BoundsEnv, 1.0), partial(BoundsEnv, 2.0)]
    with pytest.raises(Exception) as expected:  # other bounds: "same" refuses them
        gym.vector.AsyncVectorEnv(factories, observation_mode="same")
    with pytest.raises(type(expected.value)):
        TorchVectorizedEnv(factories, 2, 1, observation_mode="same")
    run_both(
        lambda: TorchVectorizedEnv(factories, 2, 1, observation_mode="different"),
        lambda: gym.vector.AsyncVectorEnv(factories, observation_mode="different"),
        lambda env: [env.observation_space, env.single_observation_space, *rollout(env)],
    )
    custom = (spaces.Box(0, 5, (2, 3), np.float32), spaces.Box(0, 5, (3,), np.float32))
    run_both(
        lambda: TorchVectorizedEnv(factories, 2, 1, observation_mode=custom),
        lambda: gym.vector.AsyncVectorEnv(factories, observation_mode=custom),
        lambda env: [env.observation_space, env.single_observation_space, *rollout(env)],
    )
    for bad in ("other", (spaces.Discrete(2), "x")):
        with pytest.raises(Exception) as expected:
            gym.vector.AsyncVectorEnv(factories, observation_mode=bad)
        with pytest.raises(type(expected.value)):
            TorchVectorizedEnv(factories, 2, 1, observation_mode=bad)


# ---------------------------------------------------------------------------------- API


def test_np_random_seed_and_np_random_are_tuples_over_sub_envs() -> None:
    def script(env: Any) -> Any:
        env.reset(seed=11)
        yield env.np_random_seed
        generators = env.np_random
        yield type(generators), len(generators)
        yield tuple(g.bit_generator.state["state"]["state"] for g in generators)

    run_both(lambda: TorchVectorizedEnv(cartpole, 2, 2), lambda: gym.vector.AsyncVectorEnv([cartpole] * 4), script)


def test_async_calls_with_timeouts_and_render() -> None:
    make = partial(cartpole, "rgb_array")

    def script(env: Any) -> Any:
        env.reset_async(seed=4, options=None)
        yield env.reset_wait(timeout=30)
        env.call_async("get_wrapper_attr", "gravity")
        yield env.call_wait(timeout=30)
        frames = env.render()
        yield type(frames), len(frames)
        yield frames
        env.step_async(np.array([0, 1, 1, 0]))
        yield env.step_wait(timeout=30)

    run_both(lambda: TorchVectorizedEnv(make, 2, 2), lambda: gym.vector.AsyncVectorEnv([make] * 4), script)


def test_autoreset_disabled_matches_sync_and_async() -> None:
    make = partial(SpaceEnv, spaces.Box(0, 1, (2,), np.float32))

    def script(env: Any) -> Any:
        yield env.metadata["autoreset_mode"]
        yield env.reset(seed=5)
        for step in range(8):
            out = env.step(np.array([step % 2, 1, 0, 1]))
            yield out
            done = out[2] | out[3]
            if done.any():
                yield env.reset(options={"reset_mask": done})

    for reference in (gym.vector.SyncVectorEnv, gym.vector.AsyncVectorEnv):
        run_both(
            lambda: TorchVectorizedEnv(make, 2, 2, autoreset_mode=AutoresetMode.DISABLED),
            lambda: reference([make] * 4, autoreset_mode=AutoresetMode.DISABLED),  # noqa: B023
            script,
        )
    # Stepping an env that ended without resetting it: SyncVectorEnv refuses (an assertion), and so
    # do we, with EnvStateError (AsyncVectorEnv steps it on).
    with TorchVectorizedEnv(make, 2, 2, autoreset_mode=AutoresetMode.DISABLED) as env:
        env.reset(seed=0)
        for _ in range(3):
            env.step(np.zeros(4, np.int64))
        with pytest.raises(EnvStateError, match=r"sub-environments \[0, 1, 2, 3\] ended"):
            env.step(np.zeros(4, np.int64))
        env.reset(options={"reset_mask": np.array([True, True, True, True])})
        env.step(np.zeros(4, np.int64))


# ---------------------------------------------------------------------------------- errors


def _error_of(call: Any) -> BaseException:
    try:
        call()
    except Exception as error:
        return error
    raise AssertionError(f"{call} did not raise")


def test_protocol_errors_and_misuse_raise_gymnasiums_classes() -> None:
    """Each case: (setup, misuse, cleanup). gymnasium's env is made afresh for each (some misuse kills
    its workers); ours is one env throughout, and stays usable."""

    def nothing(env: Any) -> None:
        pass

    def reset_pending(env: Any) -> None:
        env.reset_async(seed=0)

    def finish_reset(env: Any) -> None:
        env.reset_wait()

    cases = [
        (nothing, lambda env: env.step_wait(), nothing),
        (nothing, lambda env: env.reset_wait(), nothing),
        (nothing, lambda env: env.call_wait(), nothing),
        (reset_pending, lambda env: env.step_async(np.zeros(4, np.int64)), finish_reset),
        (reset_pending, lambda env: env.reset_async(), finish_reset),
        (reset_pending, lambda env: env.call_async("render"), finish_reset),
        (reset_pending, lambda env: env.set_attr("gravity", 1.0), finish_reset),
        (nothing, lambda env: env.call("reset"), nothing),
        (nothing, lambda env: env.set_attr("gravity", [1.0]), nothing),
        (nothing, lambda env: env.reset(seed=[0.5, 1.5, 2.5, 3.5]), nothing),  # gymnasium.error.Error
        (nothing, lambda env: env.reset(seed=[1, 2]), nothing),
    ]
    with TorchVectorizedEnv(cartpole, 2, 2) as ours:
        for setup, misuse, cleanup in cases:
            theirs = gym.vector.AsyncVectorEnv([cartpole] * 4)
            try:
                setup(theirs)
                expected = _error_of(lambda: misuse(theirs))  # noqa: B023
            finally:
                theirs.close(terminate=True)
            setup(ours)
            got = _error_of(lambda: misuse(ours))  # noqa: B023
            cleanup(ours)
            assert isinstance(got, type(expected)), (got, expected)
        ours.step(np.zeros(4, np.int64))  # still usable after all of that
    theirs = gym.vector.AsyncVectorEnv([cartpole] * 4)
    theirs.close()
    for action in (lambda env: env.step(np.zeros(4, np.int64)), lambda env: env.reset(), lambda env: env.call("x")):
        expected, got = _error_of(lambda: action(theirs)), _error_of(lambda: action(ours))  # noqa: B023
        assert isinstance(got, type(expected)) and isinstance(got, gym.error.ClosedEnvironmentError)


@pytest.mark.parametrize("error", ["value", "key"])
def test_sub_env_exception_in_call_keeps_its_class(error: str) -> None:
    make = partial(SpaceEnv, spaces.Box(0, 1, (2,), np.float32))
    theirs = gym.vector.AsyncVectorEnv([make] * 2)
    expected = _error_of(lambda: theirs.call("fail", error))
    theirs.close(terminate=True)
    with TorchVectorizedEnv(make, 1, 2) as ours:
        got = _error_of(lambda: ours.call("fail", error))
        # Both envs fail: the last one's (gymnasium raises the last error it logs).
        assert type(got) is type(expected) and got.env_index == 1
        ours.reset()  # usable


def test_sub_env_exception_in_step_keeps_its_class_or_becomes_sub_env_error() -> None:
    theirs = gym.vector.AsyncVectorEnv([partial(RaisingEnv, "value")] * 2)
    theirs.reset()
    expected = _error_of(lambda: theirs.step(np.array([0, 1])))
    theirs.close(terminate=True)
    with TorchVectorizedEnv(partial(RaisingEnv, "value"), 2, 1) as ours:
        ours.reset()
        got = _error_of(lambda: ours.step(np.array([0, 1])))
        assert type(got) is type(expected) is ValueError and got.env_index == 1
        assert "step refuses action 1" in str(got.__cause__) and ours.closed
    with TorchVectorizedEnv(partial(RaisingEnv, "unpicklable"), 2, 1) as ours:
        ours.reset()
        with pytest.raises(SubEnvError, match="UnpicklableError") as caught:
            ours.step(np.array([1, 0]))
        assert caught.value.env_index == 0 and "cannot travel" in caught.value.remote_traceback


class FailsInWorker(SpaceEnv):
    """Builds in the process that made the vector env, fails in any other (a worker)."""

    creator = 0

    def __init__(self) -> None:
        if os.getpid() != FailsInWorker.creator:
            raise OSError("no display in the worker")
        super().__init__(spaces.Box(0, 1, (2,), np.float32))


def test_start_up_failure_reports_its_traceback_every_time() -> None:
    FailsInWorker.creator = os.getpid()
    # Repeated: both workers fail at once, and each time the first failure's traceback must win. The
    # portable column spawns its workers (a second or more each), so it repeats fewer times; the forked
    # column, which starts them in milliseconds, keeps the 12 that would catch a race.
    for _ in range(4 if _platform.PORTABLE else 12):
        with pytest.raises(OSError, match="no display in the worker") as caught:
            TorchVectorizedEnv(FailsInWorker, 2, 2)
        assert 'raise OSError("no display in the worker")' in caught.value.remote_traceback


def test_unclosed_env_collected_in_a_forked_worker_leaves_its_workers_alone() -> None:
    holder = [TorchVectorizedEnv(cartpole, 1, 2, context="fork")]  # the subject: a forked worker's copy
    holder[0].reset(seed=0)

    parent = os.getpid()

    def factory() -> gym.Env:
        if os.getpid() != parent:  # in a worker of the new env, the old env's last reference goes
            holder.clear()
            gc.collect()
        return cartpole()

    with warnings.catch_warnings(record=True), TorchVectorizedEnv(factory, 2, 1, context="fork") as newer:
        newer.reset()
    old = holder[0]
    assert all(p.is_alive() for p in old._pool.processes)
    old.step(np.zeros(2, np.int64))
    old.close()

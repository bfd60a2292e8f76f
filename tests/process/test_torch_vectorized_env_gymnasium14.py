"""TorchVectorizedEnv beside gymnasium 1.4's AsyncVectorEnv, for the differences issue 22 lists: the same
calls on both, comparing results, warnings, exception classes and messages (never hand-written
expectations). Where torchwm stays deliberately safer, the test says so."""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import os
import sys
import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from decimal import Decimal
from functools import partial
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces
from gymnasium.envs.classic_control import CartPoleEnv
from gymnasium.vector import AsyncVectorEnv

from testing_support import logs_sub_env_errors
from torchwm import TorchVectorizedEnv, WorkerCrashedError
from torchwm.errors import InvalidArgumentError, InvalidArgumentTypeError

NUM_ENVS = 3


def cartpole() -> gym.Env:
    return gym.make("CartPole-v1")


@contextmanager
def both(factory: Callable[[], gym.Env] = cartpole, reset: bool = True, **kwargs: Any) -> Iterator[tuple[Any, Any]]:
    """torchwm's env (3 workers of 1 env, as AsyncVectorEnv's 3 processes) and gymnasium's, reset
    (unless ``reset=False``)."""
    ours = TorchVectorizedEnv(factory, NUM_ENVS, 1, **kwargs)
    theirs = AsyncVectorEnv([factory] * NUM_ENVS, **kwargs)
    try:
        if reset:
            ours.reset(seed=0)
            theirs.reset(seed=0)
        yield ours, theirs
    finally:
        for env in (ours, theirs):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                env.close(terminate=True)


def outcome(call: Callable[[], Any]) -> tuple[type[BaseException] | None, str]:
    try:
        call()
    except Exception as error:
        return type(error), str(error)
    return None, ""


def assert_same_outcome(ours: Callable[[], Any], theirs: Callable[[], Any]) -> None:
    """The same exception (torchwm's may be a subclass of gymnasium's class) and message, or none."""
    (our_class, our_message), (their_class, their_message) = outcome(ours), outcome(theirs)
    if their_class is None:
        assert our_class is None, our_message
        return
    assert our_class is not None and issubclass(our_class, their_class), (our_class, their_class)
    assert our_message == their_message


@pytest.mark.parametrize("actions", [0, 1.5, np.int64(1)], ids=["int", "float", "numpy_scalar"])
def test_a_scalar_for_a_vector_env_is_a_type_error(actions: Any) -> None:
    with both() as (ours, theirs):
        assert_same_outcome(lambda: ours.step(actions), lambda: theirs.step(actions))
        ours.step(np.zeros(NUM_ENVS, np.int64))  # usable


@pytest.mark.parametrize(
    "mask",
    [
        np.ones(1, bool),
        np.ones((NUM_ENVS, 1), bool),
        [True] * NUM_ENVS,
        np.ones(NUM_ENVS, int),
        np.zeros(NUM_ENVS, bool),
    ],
    ids=["short", "2d", "list", "ints", "none_true"],
)
def test_reset_mask_errors_are_gymnasiums(mask: Any) -> None:
    with both() as (ours, theirs):
        assert_same_outcome(
            lambda: ours.reset(options={"reset_mask": mask}), lambda: theirs.reset(options={"reset_mask": mask})
        )


def test_an_unknown_start_method_raises_multiprocessings_value_error() -> None:
    assert_same_outcome(
        lambda: TorchVectorizedEnv(cartpole, 2, 1, context="illegal_method"),
        lambda: AsyncVectorEnv([cartpole] * 2, context="illegal_method"),
    )


# ---------------------------------------------------------------------------------- warnings


def recorded_warnings(call: Callable[[], Any]) -> tuple[list[tuple[type[Warning], str]], type[BaseException] | None]:
    """The warnings ``call`` emits (category, message) and the class of what it raised."""
    raised = None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            call()
        except Exception as error:
            raised = type(error)
    return [(warning.category, str(warning.message)) for warning in caught], raised


@pytest.mark.parametrize("call", ["step", "reset", "call"])
def test_close_while_a_call_is_pending_warns_as_gymnasium(call: str) -> None:
    start = {
        "step": lambda env: env.step_async(np.zeros(NUM_ENVS, np.int64)),
        "reset": lambda env: env.reset_async(seed=1),
        "call": lambda env: env.call_async("render"),
    }[call]
    with both() as (ours, theirs):
        results = []
        for env in (ours, theirs):
            start(env)
            results.append(recorded_warnings(env.close))
            assert env.closed
        assert results[0] == results[1] and len(results[0][0]) == 1


class Failing(gym.Wrapper):
    """CartPole that raises ``ValueError`` in ``step`` on action 1 and in ``reset`` with ``options={"fail": 1}``."""

    def __init__(self) -> None:
        super().__init__(gym.make("CartPole-v1"))

    def step(self, action: Any) -> Any:
        if action == 1:
            raise ValueError("step refuses action 1")
        return self.env.step(action)

    def reset(self, **kwargs: Any) -> Any:
        if (kwargs.get("options") or {}).get("fail"):
            raise ValueError("reset refuses to fail")
        return self.env.reset(**kwargs)


def comparable(logged: list[tuple[type[Warning], str]]) -> list[tuple[type[Warning], str]]:
    """A logged remote traceback is compared by its last line (the frames above are each worker's own)."""
    return [(category, text.rstrip().split("\n")[-1]) for category, text in logged]


@pytest.mark.parametrize("call", ["step", "reset"])
def test_a_sub_env_error_is_logged_through_gymnasiums_logger_before_it_is_raised(call: str) -> None:
    act = {
        "step": lambda env: env.step(np.array([0, 1, 0])),
        "reset": lambda env: env.reset(options={"fail": 1}),
    }[call]
    with both(Failing) as (ours, theirs):
        (our_log, our_error), (their_log, their_error) = (
            recorded_warnings(lambda: act(ours)),
            recorded_warnings(lambda: act(theirs)),
        )
        assert their_error is ValueError and our_error is ValueError
        # One pair per failing env (the order gymnasium's workers answer in varies), then the last line.
        assert sorted(comparable(our_log), key=str) == sorted(comparable(their_log), key=str)
        assert our_log[-1] == their_log[-1] and len(our_log) == {"step": 3, "reset": 7}[call]
        assert "Traceback (most recent call last)" in our_log[1][1]


# ---------------------------------------------------------------------------------- step before reset


def cartpole_unwrapped() -> gym.Env:
    """CartPole without gym.make's wrappers: its own ``step`` fails before a reset (an AssertionError)."""
    return CartPoleEnv()


class Bare(gym.Env):
    """Not made by gym.make (no OrderEnforcing), and able to step before any reset: its counter is the
    observation, the reward and the info; an episode ends once it reaches 4."""

    observation_space = spaces.Box(0, 100, (1,), np.float32)
    action_space = spaces.Discrete(2)
    t = 0  # a class attribute: the state a step before any reset reads

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        self.t = 0
        return np.zeros(1, np.float32), {"t": self.t}

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict]:
        self.t += 1 + int(action)
        return np.full(1, self.t, np.float32), float(self.t), self.t >= 4, False, {"t": self.t}


@pytest.mark.parametrize("factory", [cartpole, cartpole_unwrapped], ids=["gym.make", "unwrapped"])
def test_a_step_before_reset_goes_to_the_sub_envs_and_their_error_comes_back_as_gymnasiums(
    factory: Callable[[], gym.Env],
) -> None:
    """gym.make's env refuses it (``ResetNeeded``), CartPole's own step fails (``AssertionError``): the
    same exception, message and logged warnings from both. Deliberately safer: torchwm's env is then
    usable once reset (gymnasium's workers are shut down)."""
    actions = np.zeros(NUM_ENVS, np.int64)
    with both(factory, reset=False) as (ours, theirs):
        (our_log, our_error), (their_log, their_error) = (
            recorded_warnings(lambda: ours.step(actions)),
            recorded_warnings(lambda: theirs.step(actions)),
        )
        assert our_error is their_error and their_error is not None
        assert sorted(comparable(our_log), key=str) == sorted(comparable(their_log), key=str)
        assert our_log[-1] == their_log[-1] and len(our_log) == 2 * NUM_ENVS + 1
        again_log, again_error = recorded_warnings(lambda: ours.step(actions))  # still there: refused again
        assert again_error is their_error and comparable(again_log) == comparable(our_log)
        reference = gym.vector.SyncVectorEnv([factory] * NUM_ENVS)
        for env in (ours, reference):
            env.reset(seed=5)
        np.testing.assert_array_equal(ours.step(actions)[0], reference.step(actions)[0])
        reference.close()


@pytest.mark.parametrize("mode", ["NextStep", "SameStep", "Disabled"])
def test_a_bare_env_steps_before_reset_as_in_gymnasium(mode: str) -> None:
    """An env without OrderEnforcing steps before any reset: the same batches from both, episode ends
    and autoreset included, until the first reset; then the same again."""
    rng = np.random.default_rng(0)
    with both(Bare, reset=False, autoreset_mode=gym.vector.AutoresetMode(mode)) as (ours, theirs):
        for step in range(4):
            actions = rng.integers(0, 2, NUM_ENVS)
            if mode == "Disabled" and step > 0:  # an ended episode must be reset first (both refuse a step)
                for env in (ours, theirs):
                    env.reset(options={"reset_mask": np.ones(NUM_ENVS, bool)})
            got, expected = ours.step(actions), theirs.step(actions)
            for a, b in zip(got[:4], expected[:4]):
                assert a.dtype == b.dtype
                np.testing.assert_array_equal(a, b)
            assert got[4].keys() == expected[4].keys()
            for key in expected[4]:
                if not isinstance(expected[4][key], dict):
                    np.testing.assert_array_equal(got[4][key], expected[4][key])
        np.testing.assert_array_equal(ours.reset(seed=1)[0], theirs.reset(seed=1)[0])


# ---------------------------------------------------------------------------------- max_concurrency

_running: Any = None  # (now running, most at once, how many may run at once), shared with the workers (fork)
# Only a vector env that never lets the expected number of envs in at once waits this long.
MEET_TIMEOUT_S = 60.0


class Counting(gym.Wrapper):
    """CartPole whose ``step`` counts how many envs are inside ``step`` at once. Each waits there until as
    many as may run at once are inside (an event, not a pause: on a busy machine the others may start
    late), then stays 50 ms more, so that an env let in beyond the limit would be counted too."""

    def __init__(self) -> None:
        super().__init__(gym.make("CartPole-v1"))

    def step(self, action: Any) -> Any:
        now, most, allowed = _running
        with now.get_lock():
            now.value += 1
            most.value = max(most.value, now.value)
        deadline = time.monotonic() + MEET_TIMEOUT_S
        while most.value < allowed and time.monotonic() < deadline:
            time.sleep(0.001)
        time.sleep(0.05)
        with now.get_lock():
            now.value -= 1
        return self.env.step(action)


@pytest.mark.parametrize("limit", [1, 2, None])
def test_max_concurrency_limits_how_many_envs_step_at_once_as_gymnasium(limit: int | None) -> None:
    global _running
    ctx = mp.get_context("fork")
    most = []
    for make in (
        lambda: TorchVectorizedEnv(Counting, 4, 1, max_concurrency=limit, context="fork"),
        lambda: AsyncVectorEnv([Counting] * 4, max_concurrency=limit, context="fork"),
    ):
        _running = (ctx.Value("i", 0), ctx.Value("i", 0), limit or 4)
        env = make()
        try:
            assert env.max_concurrency == limit
            env.reset(seed=0)
            for _ in range(3):
                env.step(np.zeros(4, np.int64))
        finally:
            env.close()
        most.append(_running[1].value)
    assert most[0] == most[1] == (limit or 4)


@pytest.mark.parametrize("limit", [0, -1, 1.5, "2"])
def test_a_bad_max_concurrency_is_refused_as_gymnasium_refuses_it(limit: Any) -> None:
    assert_same_outcome(
        lambda: TorchVectorizedEnv(cartpole, 2, 1, max_concurrency=limit),
        lambda: AsyncVectorEnv([cartpole] * 2, max_concurrency=limit),
    )


# ---------------------------------------------------------------------------------- actions delivered


class Words(spaces.Space):
    """A custom space whose elements are strings, not arrays."""

    def __init__(self) -> None:
        super().__init__(None, None)

    def sample(self, mask: Any = None, probability: Any = None) -> str:
        return str(self.np_random.choice(["left", "right"]))

    def contains(self, x: Any) -> bool:
        return x in ("left", "right")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Words)


class Lenient(gym.Env):
    """Takes whatever action it is given (clamping nothing): the reward is a number made of it."""

    observation_space = spaces.Box(-10, 10, (2,), np.float32)

    def __init__(self, action_space: spaces.Space) -> None:
        self.action_space = action_space

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        return np.zeros(2, np.float32), {}

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict]:
        value = float(len(action)) if isinstance(action, str) else float(np.sum(np.asarray(action, dtype=float)))
        return np.full(2, value, np.float32), value, False, False, {"type": type(action).__name__}


DELIVERED = {
    "bool_box": (spaces.Box(0, 1, (2,), np.bool_), np.array([[True, False], [True, True], [False, False]])),
    "custom_strings_list": (Words(), ["left", "right", "left"]),
    "custom_strings_tuple": (Words(), ("right", "right", "left")),
    "discrete_out_of_range": (spaces.Discrete(2), np.array([0, 5, -1])),
    "discrete_uint64": (spaces.Discrete(2), np.array([0, 1, 1], np.uint64)),
}


@pytest.mark.parametrize("name", list(DELIVERED))
def test_by_default_every_action_gymnasium_delivers_is_delivered(name: str) -> None:
    space, actions = DELIVERED[name]
    with both(partial(Lenient, space)) as (ours, theirs):
        for got, expected in zip(ours.step(actions), theirs.step(actions), strict=True):
            if isinstance(expected, dict):
                assert got.keys() == expected.keys() and list(got["type"]) == list(expected["type"])
            else:
                np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("dtype", [np.uint64, np.int64, np.uint32])
@pytest.mark.parametrize("space", [spaces.Discrete(3), spaces.MultiDiscrete([3, 3])], ids=["discrete", "multi"])
def test_uint64_actions_follow_gymnasiums_contains(space: spaces.Space, dtype: Any) -> None:
    """gymnasium's ``contains`` wants ``np.can_cast`` to the space's dtype: uint64 is outside an int64
    space. By default it is delivered (as gymnasium delivers it) and an env that asserts ``contains``
    raises the same error; torchwm's vector env then stays usable (reset). ``check_actions=True``
    refuses exactly what ``contains`` refuses, before sending."""
    actions = np.ones((NUM_ENVS, *space.shape), dtype)
    inside = space.contains(actions[0])
    strict = partial(StrictEnv, space)
    with both(strict) as (ours, theirs):
        with contextlib.nullcontext() if inside else logs_sub_env_errors():  # both log the envs' errors
            assert_same_outcome(lambda: ours.step(actions), lambda: theirs.step(actions))
        if not inside:
            ours.reset(seed=0)
        ours.step(np.zeros((NUM_ENVS, *space.shape), np.int64))
    with TorchVectorizedEnv(strict, NUM_ENVS, 1, check_actions=True) as checked:
        checked.reset(seed=0)
        outcome_class, message = outcome(lambda: checked.step(actions))
        assert (outcome_class is None) == inside, message
        if not inside:
            assert outcome_class is InvalidArgumentError and "dtype uint64" in message
            checked.step(np.zeros((NUM_ENVS, *space.shape), np.int64))  # refused before sending: usable


class StrictEnv(Lenient):
    """Asserts that its action lies in its action space, as CartPole does."""

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict]:
        if not self.action_space.contains(action):  # not `assert`: pytest would rewrite its message
            raise AssertionError(f"{action!r} ({type(action)}) invalid")
        return super().step(action)


# ---------------------------------------------------------------------------------- sys.exit in a worker


class Exiting(gym.Wrapper):
    """CartPole that calls ``sys.exit(3)`` in ``step`` on action 1."""

    def __init__(self) -> None:
        super().__init__(gym.make("CartPole-v1"))

    def step(self, action: Any) -> Any:
        if action == 1:
            sys.exit(3)
        return self.env.step(action)


def exits_in_workers(parent: int) -> gym.Env:
    """CartPole in the process ``parent`` (the test's own: a vector env may build an env there), and
    ``sys.exit(3)`` in any other: a worker, forked or spawned. ``parent`` travels with the factory: a
    module-level pid would be the worker's own under spawn, which imports this module again."""
    if os.getpid() != parent:
        sys.exit(3)
    return gym.make("CartPole-v1")


def test_sys_exit_in_step_comes_back_as_an_exception_never_ending_the_caller() -> None:
    """gymnasium's worker dies and its pipe raises ``EOFError``; torchwm's ``WorkerCrashedError`` is an
    ``EOFError`` too, and carries the exit code and the remote traceback."""
    with both(Exiting) as (ours, theirs):
        actions = np.array([0, 1, 0])
        their_class, _ = outcome(lambda: theirs.step(actions))
        with pytest.raises(WorkerCrashedError) as caught:
            ours.step(actions)
        assert their_class is EOFError and isinstance(caught.value, their_class)
        assert caught.value.exit_code == 3 and caught.value.env_index == 1
        assert "sys.exit(3)" in (caught.value.remote_traceback or "") and ours.closed


def test_sys_exit_in_the_factory_inside_the_worker_comes_back_as_an_exception() -> None:
    """gymnasium's constructor sees the worker's pipe break (an ``OSError`` or ``EOFError``); torchwm's
    raises ``WorkerCrashedError`` (an ``EOFError``) with the exit code: neither ends the caller."""
    factory = partial(exits_in_workers, os.getpid())
    their_class, _ = outcome(lambda: AsyncVectorEnv([factory] * 2))
    assert their_class is not None and issubclass(their_class, (OSError, EOFError))
    with pytest.raises(WorkerCrashedError) as caught:
        TorchVectorizedEnv(factory, 2, 1)
    assert isinstance(caught.value, EOFError) and caught.value.exit_code == 3
    assert "sys.exit(3)" in (caught.value.remote_traceback or "")


@pytest.mark.parametrize("context", ["spawn", "forkserver"])
def test_max_concurrency_under_every_start_method(context: str) -> None:
    """The permits reach workers that are not forked (they rebuild the semaphore by name)."""
    with TorchVectorizedEnv(cartpole, 3, 1, max_concurrency=1, context=context) as ours:
        ours.reset(seed=0)
        theirs = AsyncVectorEnv([cartpole] * 3, max_concurrency=1, context=context)
        try:
            theirs.reset(seed=0)
            for got, expected in zip(ours.step(np.ones(3, np.int64)), theirs.step(np.ones(3, np.int64))):
                if not isinstance(expected, dict):
                    np.testing.assert_array_equal(got, expected)
        finally:
            theirs.close()


@pytest.mark.parametrize("pending", ["reset", "step"])
@pytest.mark.parametrize("call", ["reset_async", "step_async", "call_async", "set_attr"])
def test_already_pending_messages_are_gymnasiums_word_for_word(pending: str, call: str) -> None:
    """The text and the name of AlreadyPendingCallError, side by side with gymnasium's AsyncVectorEnv."""
    from torchwm.errors import AlreadyPendingCallError as OurError

    def start(envs: Any) -> None:
        if pending == "reset":
            envs.reset_async(seed=0)
        else:
            envs.reset(seed=0)
            envs.step_async(envs.action_space.sample())

    def attempt(envs: Any) -> Any:
        with pytest.raises(Exception) as caught:
            if call == "reset_async":
                envs.reset_async()
            elif call == "step_async":
                envs.step_async(envs.action_space.sample())
            elif call == "call_async":
                envs.call_async("render")
            else:
                envs.set_attr("gravity", 9.8)
        return caught.value

    reference = gym.vector.AsyncVectorEnv([lambda: gym.make("CartPole-v1")] * 2)
    ours = TorchVectorizedEnv(lambda: gym.make("CartPole-v1"), 2, 1)
    try:
        start(reference)
        start(ours)
        expected, got = attempt(reference), attempt(ours)
        assert isinstance(got, OurError) and isinstance(got, type(expected))
        assert str(got) == str(expected) and got.name == expected.name
    finally:
        for envs in (reference, ours):
            with contextlib.suppress(Exception):
                (envs.reset_wait if pending == "reset" else envs.step_wait)()
            envs.close()


# ---------------------------------------------------------------------------------- timeouts


def replies_in(env: Any) -> None:
    """Waits until every sub-env's reply to the pending call is in, not taken."""
    if isinstance(env, TorchVectorizedEnv):
        deadline = time.monotonic() + 30
        while not all(env._pool.bells.is_done(w) for w in range(NUM_ENVS)) and time.monotonic() < deadline:
            time.sleep(0.01)
    else:
        assert all(pipe.poll(30) for pipe in env.parent_pipes)


PENDING = {
    "reset": lambda env: env.reset_async(seed=1),
    "step": lambda env: env.step_async(np.zeros(NUM_ENVS, np.int64)),
    "call": lambda env: env.call_async("np_random_seed"),
}


@pytest.mark.parametrize("call", list(PENDING))
def test_a_negative_timeout_takes_the_replies_in_as_gymnasium(call: str) -> None:
    with both() as (ours, theirs):
        results = []
        for env in (ours, theirs):
            PENDING[call](env)
            replies_in(env)
            results.append(getattr(env, f"{call}_wait")(timeout=-1))
        got, expected = results
        if call == "call":
            assert got == expected
        else:
            np.testing.assert_array_equal(got[0], expected[0])


class SlowStep(gym.Wrapper):
    def step(self, action: Any) -> Any:
        time.sleep(1.0)
        return super().step(action)


def slow_cartpole() -> gym.Env:
    return SlowStep(cartpole())


def test_a_negative_timeout_on_a_step_not_done_times_out_as_gymnasium() -> None:
    with both(slow_cartpole) as (ours, theirs):
        raised = []
        for env in (ours, theirs):
            env.step_async(np.zeros(NUM_ENVS, np.int64))
            start = time.monotonic()
            raised.append(outcome(lambda env=env: env.step_wait(timeout=-1))[0])
            assert time.monotonic() - start < 0.5
        assert raised == [mp.TimeoutError, mp.TimeoutError]


def test_a_timeout_says_what_gymnasium_says_first() -> None:
    """Code may match on gymnasium's sentence: torchwm's message starts with it, then says which workers."""
    with both(slow_cartpole) as (ours, theirs):
        messages = []
        for env in (ours, theirs):
            env.step_async(np.zeros(NUM_ENVS, np.int64))
            raised, message = outcome(lambda env=env: env.step_wait(timeout=0.05))
            assert raised is mp.TimeoutError
            messages.append(message)
        ours_said, theirs_said = messages
        assert theirs_said == "The call to `step_wait` has timed out after 0.05 second(s)."
        assert ours_said.startswith(theirs_said) and "did not answer" in ours_said, messages


NOT_NUMBERS = {"str": "1", "list": [1], "decimal": Decimal(1), "complex": 1j, "nan": float("nan")}


@pytest.mark.parametrize(
    ("call", "timeout"),
    [*(("step", value) for value in NOT_NUMBERS.values()), ("reset", "1"), ("call", "1")],
    ids=[*(f"step-{name}" for name in NOT_NUMBERS), "reset-str", "call-str"],
)
def test_a_timeout_that_is_not_a_number_raises_gymnasiums_class_and_keeps_the_call(call: str, timeout: Any) -> None:
    """gymnasium's AsyncVectorEnv fails on its arithmetic with the timeout: ``TypeError`` for a
    non-number, ``ValueError`` for NaN, the call still pending. torchwm checks it before it waits: a
    subclass of the same class (and an ``InvalidArgumentError``), the call pending too."""
    with both() as (ours, theirs):
        raised = []
        for env in (ours, theirs):
            PENDING[call](env)
            raised.append(outcome(lambda env=env: getattr(env, f"{call}_wait")(timeout=timeout))[0])
            getattr(env, f"{call}_wait")(timeout=30)  # still pending: waiting again gets it
        our_class, their_class = raised
        assert their_class in (TypeError, ValueError) and our_class is not None, raised
        assert issubclass(our_class, their_class) and issubclass(our_class, InvalidArgumentError), raised


def test_a_bool_timeout_is_refused_where_gymnasium_waits_it_as_seconds() -> None:
    """Deliberately safer: gymnasium waits ``timeout=True`` as 1 s (a bool is an int to it); torchwm
    refuses a flag where seconds are expected, as it refuses a string (a ``TypeError``), the step kept."""
    with both() as (ours, theirs):
        for env in (ours, theirs):
            env.step_async(np.zeros(NUM_ENVS, np.int64))
        assert theirs.step_wait(timeout=True)[0].shape == (NUM_ENVS, 4)
        with pytest.raises(InvalidArgumentTypeError, match="timeout") as refused:
            ours.step_wait(timeout=True)
        assert isinstance(refused.value, TypeError)
        assert ours.step_wait(timeout=30)[0].shape == (NUM_ENVS, 4)


@pytest.mark.parametrize("pending", [None, "step"])
def test_close_with_a_negative_timeout_closes_as_gymnasium(pending: str | None) -> None:
    with both() as (ours, theirs):
        results = []
        for env in (ours, theirs):
            if pending is not None:
                PENDING[pending](env)
            results.append(recorded_warnings(lambda env=env: env.close(timeout=-1)))
            assert env.closed
        assert results[0] == results[1] and results[0][1] is None


@pytest.mark.parametrize("pending", [None, "step"])
def test_close_with_a_timeout_that_is_not_a_number_as_gymnasium(pending: str | None) -> None:
    """gymnasium reads close's timeout only to wait for a pending call: with none, any value closes the env;
    with one, that wait fails (``TypeError``) and the env stays open. torchwm does the same (its class a
    subclass of gymnasium's), and a later ``close()`` closes it."""
    with both() as (ours, theirs):
        raised = []
        for env in (ours, theirs):
            if pending is not None:
                PENDING[pending](env)
            raised.append(recorded_warnings(lambda env=env: env.close(timeout="soon"))[1])
            assert env.closed == (pending is None)
        our_class, their_class = raised
        if their_class is None:
            assert our_class is None
        else:
            assert our_class is not None and issubclass(our_class, their_class), raised
        # The step still pending: this close() warns as gymnasium's does.
        warns = pytest.warns(UserWarning, match="pending call to `step`") if pending else contextlib.nullcontext()
        with warns:
            ours.close()
        assert ours.closed

"""TorchVectorizedEnv beside gymnasium 1.4's AsyncVectorEnv, for the differences issue 22 lists: the same
calls on both, comparing results, warnings, exception classes and messages (never hand-written
expectations). Where torchwm stays deliberately safer, the test says so."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AsyncVectorEnv

from torchwm import TorchVectorizedEnv

NUM_ENVS = 3


def cartpole() -> gym.Env:
    return gym.make("CartPole-v1")


@contextmanager
def both(factory: Callable[[], gym.Env] = cartpole, **kwargs: Any) -> Iterator[tuple[Any, Any]]:
    """torchwm's env (3 workers of 1 env, as AsyncVectorEnv's 3 processes) and gymnasium's, reset."""
    ours = TorchVectorizedEnv(factory, NUM_ENVS, 1, **kwargs)
    theirs = AsyncVectorEnv([factory] * NUM_ENVS, **kwargs)
    try:
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

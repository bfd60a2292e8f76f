"""A sub-env that raises in step: torchwm logs the warnings gymnasium's AsyncVectorEnv logs, no more
(counted side by side), whatever the action space's shape."""

from __future__ import annotations

import functools
import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces

from torchwm import TorchVectorizedEnv


class RaisesInStep(gym.Env):
    def __init__(self, shape: tuple[int, ...]) -> None:
        self.observation_space = spaces.Box(-1, 1, (2,), np.float32)
        self.action_space = spaces.Box(-1, 1, shape, np.float32)

    def reset(self, *, seed=None, options=None):
        return np.zeros(2, np.float32), {}

    def step(self, action):
        raise RuntimeError("step failed")


def _warnings_of_a_failing_step(venv) -> list[str]:
    venv.reset(seed=0)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with pytest.raises(RuntimeError, match="step failed"):
                venv.step(venv.action_space.sample())
    finally:
        venv.close()
    # The tracebacks name each library's own files: compare the kind of each warning, in order.
    return sorted(str(w.message).split("\n")[0].replace("Worker-1", "Worker-0") for w in caught)


@pytest.mark.parametrize("shape", [(), (2,)])
def test_the_same_warnings_as_async_vector_env(shape):
    factory = functools.partial(RaisesInStep, shape)
    theirs = _warnings_of_a_failing_step(gym.vector.AsyncVectorEnv([factory] * 2))
    ours = _warnings_of_a_failing_step(TorchVectorizedEnv(factory, 2, 1))
    assert ours == theirs
    assert not any("Casting input x to numpy array" in message for message in ours)

"""AtariVectorEnv.xla() side by side with ale_py 0.12.1's: the same calls under jax.jit and lax.scan,
with seeds, reset masks and continuous actions, give the same arrays; and the same as torchwm's own
reset/step."""

from __future__ import annotations

import importlib.util
import sys
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from ale_py.vector_env import AtariVectorEnv as AlePyVectorEnv
from gymnasium.vector import AutoresetMode

import torchwm


# JAX starts threads of its own: its tests run in their own interpreter (tests/own_interpreter.py),
# and JAX is imported there only, never in the pytest process, which forks for other tests.
def uses_jax(test: Any) -> Any:
    test = pytest.mark.skipif(importlib.util.find_spec("jax") is None, reason="needs jax (torchwm[xla])")(test)
    return pytest.mark.own_interpreter(test)


NUM_ENVS = 3


def _jax() -> tuple[Any, Any]:
    import jax
    import jax.numpy as jnp

    return jax, jnp


def _rollout(step, handle, actions):
    jax, _ = _jax()

    @jax.jit
    def run(handle, actions):
        def body(handle, action):
            handle, (obs, rewards, terminations, truncations, info) = step(handle, action)
            return handle, (obs, rewards, terminations, truncations, *info.values())

        return jax.lax.scan(body, handle, actions)

    return run(handle, actions)


def _assert_same(got, expected) -> None:
    jax, _ = _jax()
    for g, e in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(expected)):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(e))


@pytest.mark.parametrize(
    "kwargs",
    [{}, {"repeat_action_probability": 0.25, "max_num_frames_per_episode": 300}, {"continuous": True}],
    ids=["default", "sticky-short-episodes", "continuous"],
)
@uses_jax
def test_jit_scan_matches_ale_py_xla(kwargs) -> None:
    jax, jnp = _jax()
    ours = torchwm.AtariVectorEnv("breakout", NUM_ENVS, **kwargs)
    reference = AlePyVectorEnv("breakout", NUM_ENVS, **kwargs)
    try:
        handle, reset, step = ours.xla()
        ref_handle, ref_reset, ref_step = reference.xla()
        assert handle.shape == ref_handle.shape and handle.dtype == ref_handle.dtype
        handle, got = jax.jit(lambda h: reset(h, seed=7))(handle)
        ref_handle, expected = ref_reset(ref_handle, seed=7)
        _assert_same(got, expected)
        assert sorted(got[1]) == sorted(expected[1])
        rng = np.random.default_rng(1)
        if kwargs.get("continuous"):
            actions = jnp.asarray(rng.uniform([0, -np.pi, 0], [1, np.pi, 1], (120, NUM_ENVS, 3)), jnp.float32)
        else:
            actions = jnp.asarray(rng.integers(0, 4, (120, NUM_ENVS)), jnp.int32)
        handle, got = _rollout(step, handle, actions)
        ref_handle, expected = _rollout(ref_step, ref_handle, actions)
        _assert_same(got, expected)
    finally:
        ours.close()
        reference.close()


@uses_jax
def test_seeds_and_reset_masks_match_ale_py_and_own_reset() -> None:
    ours = torchwm.AtariVectorEnv("pong", NUM_ENVS)
    plain = torchwm.AtariVectorEnv("pong", NUM_ENVS)
    reference = AlePyVectorEnv("pong", NUM_ENVS)
    try:
        handle, reset, step = ours.xla()
        ref_handle, ref_reset, ref_step = reference.xla()
        seeds = np.array([4, 5, 6], dtype=np.int32)
        handle, got = reset(handle, seed=seeds)
        ref_handle, expected = ref_reset(ref_handle, seed=seeds)
        _assert_same(got, expected)
        _assert_same(got, plain.reset(seed=seeds))
        actions = np.array([1, 2, 3], dtype=np.int32)
        for _ in range(5):
            handle, got = step(handle, actions)
            ref_handle, expected = ref_step(ref_handle, actions)
            _assert_same(got, expected)
            _assert_same(got, plain.step(actions))
        mask = np.array([False, True, True])
        handle, got = reset(handle, seed=11, reset_mask=mask)
        ref_handle, expected = ref_reset(ref_handle, seed=11, reset_mask=mask)
        _assert_same(got, expected)
        _assert_same(got, plain.reset(seed=11, options={"reset_mask": mask}))
    finally:
        for env in (ours, plain, reference):
            env.close()


@uses_jax
def test_bad_input_raises_the_env_errors_and_keeps_it_usable() -> None:
    jax, jnp = _jax()
    env = torchwm.AtariVectorEnv("pong", NUM_ENVS)
    try:
        handle, reset, step = env.xla()
        handle, _ = reset(handle, seed=0)
        with pytest.raises(Exception, match="actions must be integers"):
            jax.block_until_ready(step(handle, jnp.full((NUM_ENVS,), 99, jnp.int32)))
        handle, (obs, *_rest) = step(handle, jnp.zeros((NUM_ENVS,), jnp.int32))
        assert obs.shape == (NUM_ENVS, 4, 84, 84)
    finally:
        env.close()


@uses_jax  # xla() imports JAX before it checks the mode
def test_needs_next_step_autoreset() -> None:
    env = torchwm.AtariVectorEnv("pong", 2, autoreset_mode=AutoresetMode.SAME_STEP)
    try:
        with pytest.raises(torchwm.InvalidArgumentError, match="NEXT_STEP"):
            env.xla()
    finally:
        env.close()


def test_without_jax_names_the_extra(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "jax", None)
    env = torchwm.AtariVectorEnv("pong", 2)
    try:
        with pytest.raises(gym.error.DependencyNotInstalled, match=r"torchwm\[xla\]"):
            env.xla()
    finally:
        env.close()

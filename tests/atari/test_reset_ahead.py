"""Resets run ahead (``reset_ahead=True``, next-step autoreset): a pool thread resets an env whose episode ended while the
caller works on the batch that ended it. Nothing of it may show: every result, render and partial or
full reset in between must be what ale_py 0.12.1's AtariVectorEnv gives, which resets on the next step.

The pauses give the pool time to run the resets ahead before the next call (the ordinary parity tests
cover the calls racing them).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import pytest
from ale_py.vector_env import AtariVectorEnv as AlePyVectorEnv
from gymnasium.vector import AutoresetMode
from test_atari_vector_parity import _assert_same_step

import torchwm
from testing_support import torchwm_worker_threads

NUM_ENVS = 3
PAUSE_S = 0.05

# Short episodes, so that many end: a frame limit, or a lost life in episodic-life mode.
CASES: list[tuple[str, dict[str, Any]]] = [
    ("breakout", {"max_num_frames_per_episode": 160}),
    ("breakout", {"episodic_life": True, "repeat_action_probability": 0.25}),
    ("pong", {"max_num_frames_per_episode": 120, "grayscale": False, "noop_max": 5}),
]


def _reset_both(ours: Any, reference: Any, rng: np.random.Generator, kind: int) -> None:
    """Between steps: a partial reset of the envs that did not just end, an unseeded or a seeded reset."""
    if kind == 0:
        return
    if kind == 1:
        mask = np.zeros(NUM_ENVS, dtype=bool)
        mask[rng.integers(0, NUM_ENVS)] = True
        got, expected = ours.reset(options={"reset_mask": mask}), reference.reset(options={"reset_mask": mask})
    elif kind == 2:
        got, expected = ours.reset(), reference.reset()
    else:
        seeds = rng.integers(0, 1000, NUM_ENVS)
        got, expected = ours.reset(seed=seeds), reference.reset(seed=seeds)
    np.testing.assert_array_equal(got[0], expected[0], err_msg=f"reset kind {kind}")
    for key in ("env_id", "lives", "frame_number", "episode_frame_number"):
        np.testing.assert_array_equal(got[1][key], expected[1][key], err_msg=f"reset kind {kind} info[{key}]")


@pytest.mark.parametrize("reset_ahead", [True, "auto"])
@pytest.mark.parametrize(("game", "kwargs"), CASES, ids=[f"{g}-{i}" for i, (g, _) in enumerate(CASES)])
def test_results_match_ale_py_with_resets_run_ahead(game: str, kwargs: dict[str, Any], reset_ahead: object) -> None:
    """``"auto"`` (the default) runs them ahead behind the pauses, which leave the cores idle."""
    reference = AlePyVectorEnv(game, NUM_ENVS, **kwargs)
    ours = torchwm.AtariVectorEnv(game, NUM_ENVS, reset_ahead=reset_ahead, **kwargs)
    rng = np.random.default_rng(3)
    ended = 0
    try:
        np.testing.assert_array_equal(ours.reset(seed=7)[0], reference.reset(seed=7)[0])
        for step in range(160):
            actions = rng.integers(0, reference.single_action_space.n, NUM_ENVS)
            expected = reference.step(actions)
            got = ours.step(actions)
            _assert_same_step(expected, got, f"step {step}")
            if (expected[2] | expected[3]).any():
                ended += 1
                time.sleep(PAUSE_S)
                _reset_both(ours, reference, rng, ended % 4)
    finally:
        reference.close()
        ours.close()
    assert ended >= 4, "the case must end episodes for the test to mean anything"


def test_render_shows_the_ended_episode_until_the_next_step() -> None:
    """The env that resets ahead renders what the same env without autoreset renders: the last screen."""
    kwargs = {"max_num_frames_per_episode": 120, "render_mode": "rgb_array"}
    ours = torchwm.AtariVectorEnv("breakout", NUM_ENVS, reset_ahead=True, **kwargs)
    without_autoreset = torchwm.AtariVectorEnv("breakout", NUM_ENVS, autoreset_mode=AutoresetMode.DISABLED, **kwargs)
    try:
        ours.reset(seed=1)
        without_autoreset.reset(seed=1)
        actions = np.ones(NUM_ENVS, dtype=np.int64)
        for _ in range(200):
            got = ours.step(actions)
            expected = without_autoreset.step(actions)
            np.testing.assert_array_equal(got[0], expected[0])
            if got[3].any():
                break
        assert got[3].all(), "every env ends at the frame limit together"
        time.sleep(PAUSE_S)
        for got_screen, expected_screen in zip(ours.render(), without_autoreset.render()):
            np.testing.assert_array_equal(got_screen, expected_screen)
        # A partial reset reports the envs it leaves out as the ended episode left them.
        mask = np.array([True, False, False])
        got_obs, _ = ours.reset(options={"reset_mask": mask})
        expected_obs, _ = without_autoreset.reset(options={"reset_mask": mask})
        np.testing.assert_array_equal(got_obs, expected_obs)
    finally:
        ours.close()
        without_autoreset.close()


def test_close_while_resets_run_ahead_joins_every_thread() -> None:
    for _ in range(5):
        env = torchwm.AtariVectorEnv("breakout", 4, max_num_frames_per_episode=8, noop_max=4, reset_ahead=True)
        env.reset(seed=0)
        # Every step ends every episode, so each returns with four resets queued ahead.
        env.step(np.zeros(4, dtype=np.int64))
        env.step(np.zeros(4, dtype=np.int64))
        env.close()


@pytest.mark.parametrize(
    ("kwargs", "reset_threads"),
    [
        ({}, True),
        ({"reset_ahead": True}, True),
        ({"reset_ahead": False}, False),
        ({"batch_size": 2}, False),
        ({"autoreset_mode": AutoresetMode.SAME_STEP}, False),
    ],
)
def test_reset_threads_only_where_resets_can_run_ahead(kwargs: dict[str, Any], reset_threads: bool) -> None:
    """Sync mode in next-step autoreset has reset threads unless ``reset_ahead=False``; async mode and the
    other autoreset modes never run a reset ahead, and start none."""
    env = torchwm.AtariVectorEnv("breakout", 4, num_threads=1, **kwargs)
    try:
        assert env._core.settings["reset_ahead"] == kwargs.get("reset_ahead", "auto")
        env.reset(seed=0)
        env.step(np.zeros(env.batch_size, dtype=np.int64))
        # Pool threads name themselves when they first run: wait for them (up to 5 s on a busy machine).
        for _ in range(100):
            if any(name.startswith("torchwm-reset") for name in torchwm_worker_threads()) or not reset_threads:
                break
            time.sleep(0.05)
        assert any(name.startswith("torchwm-reset") for name in torchwm_worker_threads()) == reset_threads
    finally:
        env.close()


def test_reset_ahead_takes_a_bool_or_auto() -> None:
    with pytest.raises(torchwm.InvalidArgumentError, match='reset_ahead must be a bool or "auto"'):
        torchwm.AtariVectorEnv("breakout", 2, reset_ahead="sometimes")

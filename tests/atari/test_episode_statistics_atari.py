"""AtariVectorEnv(episode_statistics=True): unclipped rewards and each ended episode's raw return, steps
and frames, side by side with ale_py's AtariVectorEnv run without reward clipping on the same seeds and
actions (wrapped in gymnasium's RecordEpisodeStatistics where its episodes are ours)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from ale_py.vector_env import AtariVectorEnv as AlePyVectorEnv
from gymnasium.vector import AutoresetMode
from gymnasium.wrappers.vector import RecordEpisodeStatistics

import torchwm

GAME = "breakout"
NUM_ENVS = 3
# 200 steps: some games end by game over, some by truncation.
MAX_FRAMES = 800
STEPS = 900
SEED = 7


def _actions(steps: int, num_envs: int, num_actions: int = 4) -> np.ndarray:
    return np.random.default_rng(SEED).integers(0, num_actions, size=(steps, num_envs))


def _ours(num_envs: int = NUM_ENVS, **settings: Any) -> torchwm.AtariVectorEnv:
    settings.setdefault("max_num_frames_per_episode", MAX_FRAMES)
    return torchwm.AtariVectorEnv(GAME, num_envs, episode_statistics=True, **settings)


def _theirs(num_envs: int = NUM_ENVS, **settings: Any) -> AlePyVectorEnv:
    return AlePyVectorEnv(
        GAME, num_envs=num_envs, reward_clipping=False, max_num_frames_per_episode=MAX_FRAMES, **settings
    )


@pytest.mark.parametrize(
    ("mode", "reset_ahead"),
    [(AutoresetMode.NEXT_STEP, "auto"), (AutoresetMode.NEXT_STEP, True), (AutoresetMode.SAME_STEP, "auto")],
)
@pytest.mark.parametrize("episodic_life", [False, True])
def test_matches_record_episode_statistics_over_ale_py(
    mode: AutoresetMode, reset_ahead: object, episodic_life: bool
) -> None:
    """Under episodic_life ale_py resets the game after a lost life, so each life is an episode for both.
    With ``reset_ahead=True`` the row of each step that ends an episode is the copy it made before its reset
    started: its statistics must be the same."""
    ours = _ours(autoreset_mode=mode, episodic_life=episodic_life, reset_ahead=reset_ahead)
    theirs = RecordEpisodeStatistics(_theirs(autoreset_mode=mode, episodic_life=episodic_life))
    try:
        _, our_info = ours.reset(seed=SEED)
        _, their_info = theirs.reset(seed=SEED)
        starts = their_info["episode_frame_number"].astype(np.int64)
        resetting = np.zeros(NUM_ENVS, dtype=bool)
        ended = {"terminated": 0, "truncated": 0}
        for actions in _actions(STEPS, NUM_ENVS):
            _, rewards, terms, truncs, our_info = ours.step(actions)
            _, their_rewards, their_terms, their_truncs, their_info = theirs.step(actions)
            np.testing.assert_array_equal(our_info["raw_reward"], their_rewards)
            assert our_info["raw_reward"].dtype == np.int32
            np.testing.assert_array_equal(rewards, np.clip(their_rewards, -1, 1))
            np.testing.assert_array_equal(terms, their_terms)
            np.testing.assert_array_equal(truncs, their_truncs)
            assert ("_episode" in our_info) == ("_episode" in their_info)
            if "_episode" in their_info:
                mask = their_info["_episode"]
                np.testing.assert_array_equal(our_info["_episode"], mask)
                episode = our_info["episode"]
                assert set(episode) == {"r", "l", "frames"}
                assert episode["r"].dtype == np.float64 and episode["l"].dtype == np.int64
                np.testing.assert_array_equal(episode["r"], their_info["episode"]["r"])
                np.testing.assert_array_equal(episode["l"], their_info["episode"]["l"])
                _check_frames(episode, mask, truncs, starts, their_info, mode)
                ended["terminated"] += int(np.count_nonzero(mask & terms))
                ended["truncated"] += int(np.count_nonzero(mask & truncs))
            # The step after an episode's end resets the env (NEXT_STEP): its counters start the next one.
            starts = np.where(resetting, their_info["episode_frame_number"], starts)
            resetting = their_terms | their_truncs
        assert ended["terminated"] > 0 and (episodic_life or ended["truncated"] > 0), ended
    finally:
        ours.close()
        theirs.close()


def _check_frames(
    episode: dict[str, np.ndarray],
    mask: np.ndarray,
    truncs: np.ndarray,
    starts: np.ndarray,
    their_info: dict[str, Any],
    mode: AutoresetMode,
) -> None:
    frames, steps = episode["frames"], episode["l"]
    assert frames.dtype == np.int64
    np.testing.assert_array_equal(frames[~mask], 0)
    np.testing.assert_array_equal(frames[mask & truncs], MAX_FRAMES)
    # Each step runs the 4 frames of its frameskip, the last one perhaps fewer.
    assert np.all((frames[mask] > 4 * (steps[mask] - 1)) & (frames[mask] <= 4 * steps[mask]))
    if mode == AutoresetMode.NEXT_STEP:
        # ALE's own count since the reset, less the reset's no-ops.
        expected = their_info["episode_frame_number"] - starts
        np.testing.assert_array_equal(frames[mask], expected[mask])


def test_life_loss_info_reports_only_the_end_of_the_game() -> None:
    ours = _ours(life_loss_info=True)
    theirs = _theirs(life_loss_info=True)
    try:
        ours.reset(seed=SEED)
        theirs.reset(seed=SEED)
        returns = np.zeros(NUM_ENVS, dtype=np.int64)
        lengths = np.zeros(NUM_ENVS, dtype=np.int64)
        resetting = np.zeros(NUM_ENVS, dtype=bool)
        life_losses = games = 0
        for actions in _actions(STEPS, NUM_ENVS):
            _, _, _, _, info = ours.step(actions)
            _, their_rewards, terms, truncs, their_info = theirs.step(actions)
            np.testing.assert_array_equal(info["raw_reward"], their_rewards)
            returns = np.where(resetting, 0, returns + their_rewards)
            lengths = np.where(resetting, 0, lengths + 1)
            # A termination with lives left is a lost life: the game goes on.
            game_over = truncs | (terms & (their_info["lives"] == 0))
            life_losses += int(np.count_nonzero(terms & ~game_over))
            games += int(np.count_nonzero(game_over))
            mask = info.get("_episode", np.zeros(NUM_ENVS, dtype=bool))
            np.testing.assert_array_equal(mask, game_over)
            if game_over.any():
                np.testing.assert_array_equal(info["episode"]["r"], np.where(game_over, returns, 0))
                np.testing.assert_array_equal(info["episode"]["l"], np.where(game_over, lengths, 0))
            resetting = game_over
        assert life_losses > 0 and games > 0
    finally:
        ours.close()
        theirs.close()


def _first_episodes(steps: int) -> tuple[np.ndarray, np.ndarray]:
    """Each env's first episode (raw return, steps) from ale_py with RecordEpisodeStatistics."""
    theirs = RecordEpisodeStatistics(_theirs())
    returns = np.full(NUM_ENVS, np.nan)
    lengths = np.zeros(NUM_ENVS, dtype=np.int64)
    try:
        theirs.reset(seed=SEED)
        for actions in _actions(steps, NUM_ENVS):
            info = theirs.step(actions)[4]
            if "_episode" not in info:
                continue
            first = info["_episode"] & np.isnan(returns)
            returns[first] = info["episode"]["r"][first]
            lengths[first] = info["episode"]["l"][first]
    finally:
        theirs.close()
    assert not np.isnan(returns).any(), "every env must end an episode"
    return returns, lengths


def test_disabled_autoreset_reports_each_episode_once() -> None:
    expected_returns, expected_lengths = _first_episodes(STEPS)
    ours = _ours(autoreset_mode=AutoresetMode.DISABLED)
    reported = np.zeros(NUM_ENVS, dtype=np.int64)
    try:
        ours.reset(seed=SEED)
        for actions in _actions(STEPS, NUM_ENVS):
            _, _, terms, truncs, info = ours.step(actions)
            over = reported > 0
            np.testing.assert_array_equal(info["raw_reward"][over], 0)
            if "_episode" in info:
                mask = info["_episode"]
                assert not (mask & over).any(), "an ended episode is reported once"
                np.testing.assert_array_equal(info["episode"]["r"][mask], expected_returns[mask])
                np.testing.assert_array_equal(info["episode"]["l"][mask], expected_lengths[mask])
                reported += mask
        np.testing.assert_array_equal(reported, 1)
        # After a reset the envs play and count again from zero.
        ours.reset(options={"reset_mask": np.ones(NUM_ENVS, dtype=bool)})
        info = ours.step(np.zeros(NUM_ENVS, dtype=np.int64))[4]
        assert "_episode" not in info
    finally:
        ours.close()


def test_async_batches_report_by_env_id() -> None:
    """batch_size < num_envs: rows are info["env_id"]; each env's episodes equal the sync run's."""
    num_envs, steps = 4, 900
    per_env_actions = _actions(steps, num_envs)
    theirs = RecordEpisodeStatistics(_theirs(num_envs))
    expected: list[list[tuple[float, int]]] = [[] for _ in range(num_envs)]
    try:
        theirs.reset(seed=SEED)
        for actions in per_env_actions:
            info = theirs.step(actions)[4]
            for env_id in np.flatnonzero(info.get("_episode", [])):
                expected[env_id].append((info["episode"]["r"][env_id], info["episode"]["l"][env_id]))
    finally:
        theirs.close()
    ours = _ours(num_envs, batch_size=2)
    got: list[list[tuple[float, int]]] = [[] for _ in range(num_envs)]
    taken = np.zeros(num_envs, dtype=np.int64)
    try:
        info = ours.reset(seed=SEED)[1]
        while (taken < steps).all():
            env_ids = info["env_id"]
            ours.send(per_env_actions[taken[env_ids], env_ids])
            taken[env_ids] += 1
            info = ours.recv()[4]
            for row in np.flatnonzero(info.get("_episode", [])):
                got[info["env_id"][row]].append((info["episode"]["r"][row], info["episode"]["l"][row]))
    finally:
        ours.close()
    for env_id in range(num_envs):
        assert got[env_id], env_id
        assert got[env_id] == expected[env_id][: len(got[env_id])], env_id


def test_default_info_keys_are_ale_pys() -> None:
    plain = torchwm.AtariVectorEnv(GAME, NUM_ENVS, max_num_frames_per_episode=400)
    theirs = AlePyVectorEnv(GAME, num_envs=NUM_ENVS, max_num_frames_per_episode=400)
    stats = _ours(max_num_frames_per_episode=400)
    try:
        assert set(plain.reset(seed=SEED)[1]) == set(theirs.reset(seed=SEED)[1]) == set(stats.reset(seed=SEED)[1])
        ended = 0
        for actions in _actions(300, NUM_ENVS):
            info = plain.step(actions)[4]
            their_info = theirs.step(actions)[4]
            stats_info = stats.step(actions)[4]
            assert set(info) == set(their_info)
            episode_keys = {"episode", "_episode"} if "_episode" in stats_info else set()
            assert set(stats_info) == set(their_info) | {"raw_reward"} | episode_keys
            ended += len(episode_keys)
        assert ended > 0
    finally:
        plain.close()
        theirs.close()
        stats.close()
    with pytest.raises(torchwm.InvalidArgumentError, match="episode_statistics"):
        torchwm.AtariVectorEnv(GAME, 1, episode_statistics=1)

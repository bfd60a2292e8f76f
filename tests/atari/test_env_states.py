"""``clone_states`` / ``restore_states``: a restored env steps bit-identically to the env it was cloned
from (in every autoreset mode, across episode ends, through pickle and into another env); its emulator
part is ale_py's ``cloneState(include_rng=True)``, and after a restore it steps as ale_py's single
AtariEnv does after its ``restore_state``, side by side; bad states are refused and change nothing."""

from __future__ import annotations

import pickle

import ale_py
import ale_py.roms
import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import torchwm
from testing_support import ale_py_reset_seeds
from torchwm import _core
from torchwm.errors import EnvStateError, InvalidArgumentError

gym.register_envs(ale_py)

# Short episodes (frame limit) and sticky actions, so that clones fall on episode ends and resets.
SHORT = {"repeat_action_probability": 0.25, "max_num_frames_per_episode": 160}


def run(envs: torchwm.AtariVectorEnv, actions: np.ndarray) -> list[tuple]:
    return [envs.step(a) for a in actions]


def assert_same_steps(got: list[tuple], expected: list[tuple]) -> None:
    for step, (g, e) in enumerate(zip(got, expected, strict=True)):
        for name, x, y in zip(("obs", "rewards", "terminations", "truncations"), g[:4], e[:4]):
            np.testing.assert_array_equal(x, y, err_msg=f"{name} at step {step}")
        for key in ("lives", "frame_number", "episode_frame_number"):
            np.testing.assert_array_equal(g[4][key], e[4][key], err_msg=f"info[{key!r}] at step {step}")


@pytest.mark.parametrize(
    ("mode", "reset_ahead"),
    [(AutoresetMode.NEXT_STEP, True), (AutoresetMode.NEXT_STEP, False), (AutoresetMode.SAME_STEP, False)],
)
def test_restored_envs_repeat_their_steps_across_episode_ends(mode: AutoresetMode, reset_ahead: bool) -> None:
    envs = torchwm.AtariVectorEnv("breakout", 3, autoreset_mode=mode, reset_ahead=reset_ahead, **SHORT)
    rng = np.random.default_rng(1)
    try:
        envs.reset(seed=5)
        checked_after_an_end = False
        for _ in range(6):
            *_, terminations, truncations, _ = envs.step(rng.integers(0, 4, 3))
            states = envs.clone_states()
            actions = rng.integers(0, 4, (30, 3))
            expected = run(envs, actions)
            envs.restore_states(states)
            assert_same_steps(run(envs, actions), expected)
            checked_after_an_end |= bool(np.any(terminations | truncations))
            for _ in range(int(rng.integers(1, 20))):
                envs.step(rng.integers(0, 4, 3))
        assert checked_after_an_end or any(np.any(step[2] | step[3]) for step in expected), (
            "the episodes must end within the steps checked"
        )
    finally:
        envs.close()


def test_autoreset_disabled_keeps_an_ended_episode_across_a_restore() -> None:
    envs = torchwm.AtariVectorEnv("pong", 2, autoreset_mode=AutoresetMode.DISABLED, **SHORT)
    try:
        envs.reset(seed=0)
        ended = False
        while not ended:
            *_, terminations, truncations, _ = envs.step(np.array([1, 2]))
            ended = bool(np.all(terminations | truncations))
        states = envs.clone_states()
        expected = run(envs, np.zeros((3, 2), dtype=np.int64))
        envs.restore_states(states)
        assert_same_steps(run(envs, np.zeros((3, 2), dtype=np.int64)), expected)
    finally:
        envs.close()


def test_states_pickle_and_restore_into_other_envs_in_any_order() -> None:
    source = torchwm.AtariVectorEnv("space_invaders", 3, **SHORT)
    target = torchwm.AtariVectorEnv("space_invaders", 3, **SHORT)
    rng = np.random.default_rng(3)
    try:
        source.reset(seed=11)
        target.reset(seed=99)
        for _ in range(25):
            source.step(rng.integers(0, 6, 3))
        states = pickle.loads(pickle.dumps(source.clone_states()))
        assert all(isinstance(s, torchwm.AtariEnvState) and s.game == "space_invaders" for s in states)
        actions = rng.integers(0, 6, (40, 3))
        expected = run(source, actions)
        order = [2, 0, 1]
        target.restore_states([states[i] for i in order])
        for step, (got, want) in enumerate(zip(run(target, actions[:, order]), expected)):
            np.testing.assert_array_equal(got[0], want[0][order], err_msg=f"obs at step {step}")
            np.testing.assert_array_equal(got[1], want[1][order], err_msg=f"rewards at step {step}")
        # Some envs only: the others keep their own state.
        only = target.clone_states([1])
        before = target.clone_states([0, 2])
        target.restore_states(states[:1], env_ids=[1])
        assert [s.data for s in target.clone_states([0, 2])] == [s.data for s in before]
        assert target.clone_states([1])[0].data != only[0].data
    finally:
        source.close()
        target.close()


def test_the_emulator_state_is_ale_pys_clone_state_with_rng() -> None:
    rom = str(ale_py.roms.get_rom_path("seaquest"))
    ours, theirs = _core.Ale(), ale_py.ALEInterface()
    ours.set_int("random_seed", 7)
    theirs.setInt("random_seed", 7)
    ours.set_float("repeat_action_probability", 0.25)
    theirs.setFloat("repeat_action_probability", 0.25)
    ours.load_rom(rom)
    theirs.loadROM(rom)
    rng = np.random.default_rng(0)
    for action in rng.integers(0, 18, 300):
        assert ours.act(int(action)) == theirs.act(ale_py.Action(int(action)))
    saved = ours.serialize_state()
    assert saved == theirs.cloneState(include_rng=True).serialize()
    # Our bytes restored into ale_py's emulator, and ale_py's into ours: both then step alike.
    theirs.restoreState(ale_py.ALEState(saved))
    ours.restore_serialized_state(theirs.cloneState(include_rng=True).serialize())
    for action in rng.integers(0, 18, 300):
        assert ours.act(int(action)) == theirs.act(ale_py.Action(int(action)))
        np.testing.assert_array_equal(ours.screen_raw(), theirs.getScreen())


def test_after_a_restore_steps_match_ale_pys_after_its_restore_state() -> None:
    """Side by side with gymnasium's preprocessing over ale_py's AtariEnv, sticky actions on. ale_py's
    restore_state leaves out the action sticky actions repeat (torchwm keeps it), so the steps around
    the clone and the restore use one action: then both emulators repeat the same one."""
    seeds, ale_seeds = ale_py_reset_seeds(2)

    def factory() -> gym.Env:
        env = gym.make("ALE/Breakout-v5", frameskip=1, repeat_action_probability=0.25)
        return gym.wrappers.FrameStackObservation(
            gym.wrappers.AtariPreprocessing(env, noop_max=0), 4, padding_type="zero"
        )

    reference = gym.vector.SyncVectorEnv([factory for _ in seeds])
    ours = torchwm.AtariVectorEnv(
        "breakout",
        len(seeds),
        noop_max=0,
        use_fire_reset=False,
        reward_clipping=False,
        episodic_life=False,
        repeat_action_probability=0.25,
        ram_in_info=True,
    )
    rng = np.random.default_rng(4)
    actions = rng.integers(0, 4, (100, len(seeds)))
    actions[36:40] = actions[96:100] = 1  # the same action before the clone and before the restore
    try:
        ours.reset(seed=ale_seeds)
        reference.reset(seed=seeds)
        for a in actions[:40]:
            ours.step(a)
            reference.step(a)
        our_states = ours.clone_states()
        their_states = [env.unwrapped.clone_state(include_rng=True) for env in reference.envs]
        expected = run(ours, actions[40:])
        for a in actions[40:]:
            reference.step(a)
        ours.restore_states(our_states)
        for env, state in zip(reference.envs, their_states):
            env.unwrapped.restore_state(state)
        for step, a in enumerate(actions[40:]):
            obs, rewards, terminations, _, info = ours.step(a)
            obs_e, rewards_e, terminations_e, *_ = reference.step(a)
            assert not terminations_e.any(), "the episodes must not end: gymnasium would reset them"
            # gymnasium's frame stack is not part of ale_py's state: the newest frame is compared.
            np.testing.assert_array_equal(obs[:, -1], obs_e[:, -1], err_msg=f"step {step}")
            np.testing.assert_array_equal(rewards, rewards_e, err_msg=f"step {step}")
            np.testing.assert_array_equal(terminations, terminations_e, err_msg=f"step {step}")
            rams = np.stack([env.unwrapped.ale.getRAM() for env in reference.envs])
            np.testing.assert_array_equal(info["ram"], rams, err_msg=f"step {step}")
            # And torchwm's whole observation is what the cloned env showed.
            np.testing.assert_array_equal(obs, expected[step][0], err_msg=f"step {step}")
    finally:
        reference.close()
        ours.close()


def test_bad_states_are_refused_and_change_nothing() -> None:
    envs = torchwm.AtariVectorEnv("pong", 2, **SHORT)
    twin = torchwm.AtariVectorEnv("pong", 2, **SHORT)
    other_game = torchwm.AtariVectorEnv("breakout", 2, **SHORT)
    other_settings = torchwm.AtariVectorEnv("pong", 2, **{**SHORT, "stack_num": 2})
    try:
        for env in (envs, twin, other_game, other_settings):
            env.reset(seed=1)
        good = envs.clone_states()
        data = good[0].data
        flipped = bytearray(data)
        flipped[len(data) // 2] ^= 1
        bad_states = {
            "truncated": torchwm.AtariEnvState("pong", data[:-10]),
            "damaged": torchwm.AtariEnvState("pong", bytes(flipped)),
            "not a state": torchwm.AtariEnvState("pong", b"pickle me"),
            "empty": torchwm.AtariEnvState("pong", b""),
            "other game": other_game.clone_states([0])[0],
            "other settings": other_settings.clone_states([0])[0],
        }
        messages = {}
        for name, bad in bad_states.items():
            with pytest.raises(InvalidArgumentError) as caught:
                # The good state first: nothing is restored when any state is refused.
                envs.restore_states([good[1], bad])
            messages[name] = str(caught.value)
        assert "damaged or truncated" in messages["truncated"] and "damaged" in messages["damaged"]
        assert "not a torchwm env state" in messages["not a state"]
        assert "of breakout, and this env plays pong" in messages["other game"]
        assert "other settings" in messages["other settings"]
        with pytest.raises(InvalidArgumentError, match="one state per env"):
            envs.restore_states(good, env_ids=[0])
        with pytest.raises(InvalidArgumentError, match="AtariEnvState"):
            envs.restore_states([data, data])  # type: ignore[list-item]
        with pytest.raises(InvalidArgumentError, match="AtariEnvState"):
            envs.restore_states(good[0])  # type: ignore[arg-type]
        with pytest.raises(InvalidArgumentError, match="out of range"):
            envs.clone_states([2])
        with pytest.raises(InvalidArgumentError, match="duplicate env id 0"):
            envs.restore_states(good, env_ids=[0, 0])
        with pytest.raises(InvalidArgumentError, match="env ids must be in"):
            envs.clone_states([-1])
        # Still usable, and unchanged: it steps as its twin does.
        actions = np.array([[2, 3]] * 20)
        assert_same_steps(run(envs, actions), run(twin, actions))
    finally:
        for env in (envs, twin, other_game, other_settings):
            env.close()


def test_only_between_steps_in_sync_mode() -> None:
    envs = torchwm.AtariVectorEnv("pong", 2)
    async_envs = torchwm.AtariVectorEnv("pong", 4, batch_size=2)
    try:
        with pytest.raises(EnvStateError, match="before reset"):
            envs.clone_states()
        envs.reset(seed=0)
        states = envs.clone_states()
        envs.send(np.array([0, 0]))
        with pytest.raises(EnvStateError, match="recv"):
            envs.clone_states()
        with pytest.raises(EnvStateError, match="recv"):
            envs.restore_states(states)
        envs.recv()
        envs.restore_states(states)
        async_envs.reset(seed=0)
        with pytest.raises(InvalidArgumentError, match="async mode"):
            async_envs.clone_states()
        envs.close()
        with pytest.raises(torchwm.errors.ClosedEnvironmentError):
            envs.clone_states()
    finally:
        envs.close()
        async_envs.close()

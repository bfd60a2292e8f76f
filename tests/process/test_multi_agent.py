"""PettingZoo ParallelEnvs in TorchVectorizedEnv, agents as rows: side by side with stepping the same envs
by hand in this process (agents that leave early, every autoreset mode), and the malformed-env errors."""

from __future__ import annotations

import functools

import numpy as np
import pytest

pytest.importorskip("pettingzoo")

from gymnasium.vector import AutoresetMode
from multi_agent_envs import Departures, NoReward, Shapeshifter, Stranger, Uneven

from testing_support import logs_sub_env_errors
from torchwm import InvalidArgumentError, TorchVectorizedEnv
from torchwm.errors import EnvStateError

WORKERS, PER_WORKER, AGENTS = 2, 2, 3
ENVS = WORKERS * PER_WORKER


class ByHand:
    """The same envs stepped in this process, their agents laid out as rows (env-major, agents in
    ``possible_agents`` order): an absent agent's row is zeros, reward 0, flags False, mask False."""

    def __init__(self, envs: list, mode: AutoresetMode) -> None:
        self.envs, self.mode = envs, mode
        self.count = len(envs[0].possible_agents)
        self.ended = [False] * len(envs)

    def _rows(self, e: int, observations: dict, infos: dict, rows: dict) -> None:
        for a, agent in enumerate(self.envs[e].possible_agents):
            r = e * self.count + a
            rows["obs"][r] = observations.get(agent, np.zeros(3, np.float32))
            rows["mask"][r] = agent in observations
            rows["infos"][r] = infos.get(agent, {}) if agent in observations else {}

    def _blank(self) -> dict:
        n = len(self.envs) * self.count
        return {
            "obs": np.zeros((n, 3), np.float32),
            "rew": np.zeros(n),
            "term": np.zeros(n, bool),
            "trunc": np.zeros(n, bool),
            "mask": np.zeros(n, bool),
            "infos": [{} for _ in range(n)],
            "final": {},
        }

    def reset(self, seed: int) -> dict:
        rows = self._blank()
        for e, env in enumerate(self.envs):
            self._rows(e, *env.reset(seed=seed + e), rows)
            self.ended[e] = False
        return rows

    def step(self, actions: np.ndarray) -> dict:
        rows = self._blank()
        for e, env in enumerate(self.envs):
            if self.ended[e] and self.mode == AutoresetMode.NEXT_STEP:
                self._rows(e, *env.reset(), rows)
                self.ended[e] = False
                continue
            live = {agent: actions[e * self.count + env.possible_agents.index(agent)] for agent in env.agents}
            observations, rewards, terminations, truncations, infos = env.step(live)
            self._rows(e, observations, infos, rows)
            for agent in observations:
                r = e * self.count + env.possible_agents.index(agent)
                rows["rew"][r], rows["term"][r], rows["trunc"][r] = (
                    rewards[agent],
                    terminations[agent],
                    truncations[agent],
                )
            self.ended[e] = not env.agents
            if self.ended[e] and self.mode == AutoresetMode.SAME_STEP:
                for a in range(self.count):
                    r = e * self.count + a
                    rows["final"][r] = (rows["obs"][r].copy(), rows["infos"][r])
                self._rows(e, *env.reset(), rows)
                self.ended[e] = False
        return rows


def _check_rows(obs, rewards, terminations, truncations, infos, expected: dict, mode: AutoresetMode) -> None:
    np.testing.assert_array_equal(obs, expected["obs"])
    np.testing.assert_array_equal(rewards, expected["rew"])
    np.testing.assert_array_equal(terminations, expected["term"])
    np.testing.assert_array_equal(truncations, expected["trunc"])
    np.testing.assert_array_equal(infos["agent_mask"], expected["mask"])
    for r, info in enumerate(expected["infos"]):
        for key, value in info.items():
            assert infos[f"_{key}"][r] and infos[key][r] == value, (r, key)
    if mode == AutoresetMode.SAME_STEP:
        ended = np.zeros(len(obs), bool)
        for r, (final_obs, final_info) in expected["final"].items():
            ended[r] = True
            np.testing.assert_array_equal(infos["final_obs"][r], final_obs)
            for key, value in final_info.items():  # batched as gymnasium batches a nested dict
                assert infos["final_info"][f"_{key}"][r] and infos["final_info"][key][r] == value
        np.testing.assert_array_equal(infos.get("_final_obs", np.zeros(len(obs), bool)), ended)


@pytest.mark.parametrize("mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP])
@pytest.mark.parametrize("shared_memory", [True, False])
def test_departing_agents_match_stepping_by_hand(mode, shared_memory):
    by_hand = ByHand([Departures(AGENTS) for _ in range(ENVS)], mode)
    rng = np.random.default_rng(1)
    with TorchVectorizedEnv(Departures, WORKERS, PER_WORKER, autoreset_mode=mode, shared_memory=shared_memory) as venv:
        assert venv.num_envs == ENVS * AGENTS and venv.possible_agents == tuple(Departures().possible_agents)
        obs, infos = venv.reset(seed=7)
        expected = by_hand.reset(7)
        np.testing.assert_array_equal(obs, expected["obs"])
        np.testing.assert_array_equal(infos["env_id"], np.repeat(np.arange(ENVS), AGENTS))
        assert list(infos["agent_id"]) == Departures().possible_agents * ENVS
        assert list(infos["leaves_at"]) == [info["leaves_at"] for info in expected["infos"]]
        for _ in range(30):
            actions = rng.integers(0, 4, ENVS * AGENTS)
            _check_rows(*venv.step(actions), by_hand.step(actions), mode)


def test_disabled_mode_waits_for_a_reset_of_the_ended_envs():
    by_hand = ByHand([Departures(AGENTS) for _ in range(ENVS)], AutoresetMode.DISABLED)
    with TorchVectorizedEnv(Departures, WORKERS, PER_WORKER, autoreset_mode=AutoresetMode.DISABLED) as venv:
        venv.reset(seed=3)
        by_hand.reset(3)
        actions = np.ones(ENVS * AGENTS, np.int64)
        for _ in range(40):
            if any(by_hand.ended):
                with pytest.raises(EnvStateError, match="must be reset"):
                    venv.step(actions)
                ended = np.repeat(by_hand.ended, AGENTS)
                obs, _ = venv.reset(options={"reset_mask": ended})
                for e, env in enumerate(by_hand.envs):
                    if by_hand.ended[e]:
                        env.reset()
                        by_hand.ended[e] = False
            _check_rows(*venv.step(actions), by_hand.step(actions), AutoresetMode.DISABLED)


def test_a_reset_mask_must_take_whole_envs():
    with TorchVectorizedEnv(Departures, 1, 2, autoreset_mode=AutoresetMode.DISABLED) as venv:
        venv.reset(seed=0)
        mask = np.zeros(2 * AGENTS, bool)
        mask[1] = True
        with pytest.raises(InvalidArgumentError, match="sub-environment 0 but not all"):
            venv.reset(options={"reset_mask": mask})
        venv.reset(options={"reset_mask": np.repeat([False, True], AGENTS)})  # still usable


def test_seeds_options_and_calls_reach_the_envs():
    with TorchVectorizedEnv(Departures, 2, 1) as venv:
        obs, infos = venv.reset(seed=5, options={"offset": 2})
        assert (obs[:, 2] == 2).all()
        for e in range(2):
            expected = Departures()
            expected.reset(seed=5 + e)
            assert list(infos["leaves_at"][e * AGENTS : (e + 1) * AGENTS]) == list(expected.leave.values())
        assert venv.get_attr("label") == ("departures", "departures")  # one per env, not per row
        venv.set_attr("label", ["x", "y"])
        assert venv.call("observation_space", "agent_0") == (venv.single_observation_space,) * 2
        assert venv.get_attr("label") == ("x", "y")


def test_pool_mode_returns_whole_envs_with_their_ids():
    with TorchVectorizedEnv(Departures, 2, 1, batch_size=AGENTS) as venv:
        obs, infos = venv.reset(seed=0)
        assert obs.shape == (AGENTS, 3)
        for _ in range(20):
            env = int(infos["env_id"][0])
            assert list(infos["env_id"]) == [env] * AGENTS
            assert list(infos["agent_id"]) == Departures().possible_agents
            obs, rewards, _, _, infos = venv.step(np.zeros(AGENTS, np.int64))
            assert (obs[~infos["agent_mask"]] == 0).all() and (rewards[~infos["agent_mask"]] == 0).all()


@pytest.mark.parametrize(
    ("factory", "message"),
    [
        (Stranger, r"sub-environment \d: agent 'stranger' in the observations is not one of possible_agents"),
        (NoReward, r"sub-environment \d: step\(\) returned an observation of agent 'agent_0' but no reward"),
    ],
)
def test_a_malformed_step_names_the_env_and_closes_cleanly(factory, message):
    venv = TorchVectorizedEnv(factory, 2, 1)
    venv.reset(seed=0)
    with logs_sub_env_errors(), pytest.raises(ValueError, match=message):
        venv.step(np.zeros(2 * AGENTS, np.int64))
    assert venv.closed
    venv.close()


def test_a_space_that_changes_is_refused_at_reset():
    with TorchVectorizedEnv(Shapeshifter, 1, 2) as venv:
        venv.reset(seed=0)
        # Both envs change: each is logged, the last raised (as gymnasium raises the last it logs).
        with (
            logs_sub_env_errors(),
            pytest.raises(ValueError, match=r"sub-environment 1's agents have the spaces Box\(.*\(4,\)"),
        ):
            venv.reset(seed=0)


def test_agents_with_different_spaces_are_refused_naming_the_agent():
    with pytest.raises(InvalidArgumentError, match=r"agent 'agent_2' has the action space Discrete\(5\).*pad"):
        TorchVectorizedEnv(Uneven, 1, 1)


def test_envs_with_other_agents_are_refused_naming_the_env():
    factories = [Departures, Departures, functools.partial(Departures, 2), Departures]
    with pytest.raises(ValueError, match=r"sub-environment 2 has possible_agents \['agent_0', 'agent_1'\]"):
        TorchVectorizedEnv(factories, 2, 2)


def test_an_aec_env_is_refused_with_the_way_out():
    mpe2 = pytest.importorskip("mpe2")
    from mpe2 import simple_spread_v3

    with pytest.raises(InvalidArgumentError, match="aec_to_parallel"):
        TorchVectorizedEnv(simple_spread_v3.env, 1, 1)
    assert mpe2 is not None


def test_to_sb3_rows_are_the_same_in_either_autoreset_mode_with_departing_agents():
    """SB3's rows do not depend on how the vector env resets (SB3VecEnv resets an ended env in the
    step that ended it either way): NEXT_STEP and SAME_STEP side by side, agents leaving early."""
    envs = [TorchVectorizedEnv(Departures, 2, 2, autoreset_mode=m).to_sb3() for m in ("NextStep", "SameStep")]
    try:
        for env in envs:
            env.seed(9)
        first = [env.reset() for env in envs]
        np.testing.assert_array_equal(*first)
        rng = np.random.default_rng(2)
        for _ in range(30):
            actions = rng.integers(0, 4, ENVS * AGENTS)
            (obs, rewards, dones, infos), (obs2, rewards2, dones2, infos2) = (env.step(actions) for env in envs)
            np.testing.assert_array_equal(obs, obs2)
            np.testing.assert_array_equal(rewards, rewards2)
            np.testing.assert_array_equal(dones, dones2)
            for r, (info, info2) in enumerate(zip(infos, infos2)):
                assert ("terminal_observation" in info) == bool(dones[r]) == ("terminal_observation" in info2)
                if dones[r]:
                    np.testing.assert_array_equal(info["terminal_observation"], info2["terminal_observation"])
                assert info["agent_mask"] == info2["agent_mask"]
                if not info["agent_mask"]:
                    assert (obs[r] == 0).all() and rewards[r] == 0 and not dones[r]
    finally:
        for env in envs:
            env.close()


def test_a_killed_worker_is_reported_and_the_env_closed():
    import os
    import signal

    from torchwm import WorkerCrashedError

    venv = TorchVectorizedEnv(Departures, 2, 1)
    venv.reset(seed=0)
    os.kill(venv.worker_pids[1], signal.SIGKILL)
    with pytest.raises(WorkerCrashedError, match="worker 1"):
        venv.step(np.zeros(2 * AGENTS, np.int64))
    assert venv.closed


def test_the_ray_backends_workers_refuse_a_parallel_env_clearly():
    """What each Ray actor builds its envs with (no Ray needed to call it): a ParallelEnv gets a clear
    error pointing to the process backend, not a failure deep in SyncVectorEnv."""
    from torchwm.ray._worker import build_block

    with pytest.raises(InvalidArgumentError, match=r"not supported by the Ray backend yet.*backend='process'"):
        build_block([Departures] * 2, AutoresetMode.NEXT_STEP)


def test_ctrl_c_while_waiting_keeps_the_step_pending():
    import _thread
    import signal
    import threading

    from multi_agent_envs import Slow

    # A process started in the background by a shell without job control inherits SIGINT ignored, and
    # Python then installs no handler: interrupt_main would do nothing. Ctrl-C as a terminal gives it.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with TorchVectorizedEnv(Slow, 2, 1) as venv:
            venv.reset(seed=0)
            venv.step_async(np.zeros(2 * AGENTS, np.int64))
            threading.Timer(0.1, _thread.interrupt_main).start()
            with pytest.raises(KeyboardInterrupt):
                venv.step_wait()
            obs, rewards, *_, infos = venv.step_wait()  # the replies of the step interrupted
            assert obs.shape == (2 * AGENTS, 3) and infos["agent_mask"].all() and (rewards == 0.5).all()
    finally:
        signal.signal(signal.SIGINT, previous)

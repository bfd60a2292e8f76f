"""TorchVectorizedEnv over real PettingZoo ParallelEnvs, side by side with SuperSuit's
``concat_vec_envs_v1(pettingzoo_env_to_vec_env_v1(env), ...)``: the same seeds and actions give the same
rows (observations, rewards, flags, terminal observations). SuperSuit resets an env in the step that
ends it, so the comparison runs torchwm with ``autoreset_mode=SAME_STEP``."""

from __future__ import annotations

import functools
import warnings

import numpy as np
import pytest

pytest.importorskip("pettingzoo")
ss = pytest.importorskip("supersuit")

from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space

from torchwm import TorchVectorizedEnv


def _simple_spread():
    from mpe2 import simple_spread_v3

    return simple_spread_v3.parallel_env(N=3, max_cycles=7)


def _simple_reference():
    from mpe2 import simple_reference_v3

    return simple_reference_v3.parallel_env(max_cycles=5)


def _pistonball():
    # PettingZoo 1.27 deprecates importing an env's module in favour of its registry's make(), which
    # 1.24 (the oldest version the suite takes) lacks: that warning, raised at the first import, is expected.
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "The old environment creation API has been deprecated", DeprecationWarning)
        from pettingzoo.butterfly import pistonball_v6

    return pistonball_v6.parallel_env(n_pistons=4, max_cycles=6)


def _installed(factory):
    try:
        factory().close()
    except ImportError as error:  # mpe2 or pymunk missing: that case is skipped, the others run
        return pytest.param(factory, marks=pytest.mark.skip(reason=f"not installed: {error}"))
    return factory


CASES = [_installed(_simple_spread), _installed(_simple_reference), _installed(_pistonball)]


def _supersuit(factory, envs):
    return ss.concat_vec_envs_v1(ss.pettingzoo_env_to_vec_env_v1(factory()), envs, num_cpus=0, base_class="gymnasium")


@pytest.mark.parametrize("factory", CASES)
def test_rows_match_supersuit_concat_vec_envs(factory):
    theirs = _supersuit(factory, 4)
    ours = TorchVectorizedEnv(factory, 2, 2, autoreset_mode=AutoresetMode.SAME_STEP)
    try:
        assert ours.num_envs == theirs.num_envs
        assert ours.single_observation_space == theirs.observation_space
        assert ours.single_action_space == theirs.action_space
        our_obs, infos = ours.reset(seed=11)
        their_obs, _ = theirs.reset(seed=11)
        np.testing.assert_array_equal(our_obs, their_obs)
        assert infos["agent_mask"].all()
        batched = batch_space(ours.single_action_space, ours.num_envs)
        batched.seed(3)
        for _ in range(12):
            actions = batched.sample()
            our_obs, our_rewards, our_terms, our_truncs, infos = ours.step(actions)
            their_obs, their_rewards, their_terms, their_truncs, their_infos = theirs.step(actions)
            np.testing.assert_array_equal(our_obs, their_obs)
            np.testing.assert_array_equal(our_rewards.astype(np.float32), their_rewards)
            np.testing.assert_array_equal(our_terms, their_terms.astype(bool))
            np.testing.assert_array_equal(our_truncs, their_truncs.astype(bool))
            ended = [r for r, info in enumerate(their_infos) if "terminal_observation" in info]
            np.testing.assert_array_equal(np.flatnonzero(infos.get("_final_obs", [])), ended)
            for r in ended:
                np.testing.assert_array_equal(infos["final_obs"][r], their_infos[r]["terminal_observation"])
    finally:
        ours.close()
        theirs.close()


def test_a_different_factory_per_env_keeps_the_env_major_layout():
    factories = [_simple_spread, functools.partial(_simple_spread)]
    with TorchVectorizedEnv(factories, 2, 1) as venv:
        _, infos = venv.reset(seed=0)
        assert list(infos["env_id"]) == [0, 0, 0, 1, 1, 1]
        assert list(infos["agent_id"]) == ["agent_0", "agent_1", "agent_2"] * 2


@pytest.mark.parametrize("mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP])
def test_to_sb3_gives_what_supersuits_sb3_wrapper_gives(mode):
    """SuperSuit's ``base_class="stable_baselines3"`` wrapper returns its gymnasium vector env's rows with
    ``dones = terminations | truncations``: the same rows here, from ``to_sb3()`` in either autoreset mode."""
    theirs = _supersuit(_simple_spread, 4)
    ours = TorchVectorizedEnv(_simple_spread, 2, 2, autoreset_mode=mode).to_sb3()
    try:
        ours.seed(5)
        np.testing.assert_array_equal(ours.reset(), theirs.reset(seed=5)[0])
        rng = np.random.default_rng(0)
        for _ in range(16):
            actions = rng.integers(0, 5, ours.num_envs)
            obs, rewards, dones, infos = ours.step(actions)
            their_obs, their_rewards, terms, truncs, their_infos = theirs.step(actions)
            np.testing.assert_array_equal(obs, their_obs)
            np.testing.assert_array_equal(rewards, their_rewards)
            np.testing.assert_array_equal(dones, terms.astype(bool) | truncs.astype(bool))
            for info, their_info in zip(infos, their_infos):
                assert ("terminal_observation" in info) == ("terminal_observation" in their_info)
                if "terminal_observation" in info:
                    np.testing.assert_array_equal(info["terminal_observation"], their_info["terminal_observation"])
        agents = ["agent_0", "agent_1", "agent_2"]
        assert ours.get_attr("possible_agents", indices=[0, 5]) == [agents, agents]  # rows 0 and 5: envs 0 and 1
    finally:
        ours.close()
        theirs.close()

"""TorchVectorizedEnv's pool mode (batch_size < num_envs): the first workers to finish come back,
named by info["env_id"]; each env's own trajectory is what gymnasium's SyncVectorEnv gives it."""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
import threading
import time
from collections import defaultdict
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import torchwm.process.pending_calls
import torchwm.process.pool
from testing_support import CtrlCOnce, logs_sub_env_errors
from torchwm import InvalidArgumentError, TorchVectorizedEnv, WorkerCrashedError, _platform
from torchwm.errors import AlreadyPendingCallError, EnvStateError, NoAsyncCallError, ResetNeeded

NUM_WORKERS, ENVS_PER_WORKER, BATCH = 4, 2, 4


def cartpole() -> gym.Env:
    return gym.make("CartPole-v1")


def action_for(env_id: int, t: int) -> int:
    """A fixed action per env and per step of that env, so trajectories can be replayed elsewhere."""
    return (env_id * 7 + t * 3 + t // 5) % 2


class InfoEnv(gym.Env):
    """Reports its env number and step count in every info."""

    observation_space = gym.spaces.Box(0.0, 1e6, (2,), np.float32)
    action_space = gym.spaces.Discrete(3)

    def __init__(self, number: int) -> None:
        self.number = number

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[np.ndarray, dict]:
        self.t = 0
        return np.array([self.number, 0], np.float32), {"number": self.number}

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict]:
        self.t += 1
        time.sleep(0.0005 * (self.number % 3))  # workers finish in varying order
        return np.array([self.number, self.t], np.float32), float(action), False, self.t % 9 == 0, {"t": self.t}


class ExitOnStepEnv(gym.Env):
    observation_space = gym.spaces.Box(0.0, 1.0, (1,), np.float32)
    action_space = gym.spaces.Discrete(2)

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[np.ndarray, dict]:
        return np.zeros(1, np.float32), {}

    def step(self, action: int) -> Any:
        os._exit(3)


class QuickEnv(ExitOnStepEnv):
    def step(self, action: int) -> Any:
        return np.zeros(1, np.float32), 0.0, False, False, {}


def info_envs() -> list[Any]:
    return [lambda number=i: InfoEnv(number) for i in range(NUM_WORKERS * ENVS_PER_WORKER)]


@pytest.fixture
def pool_env():
    envs = TorchVectorizedEnv(cartpole, NUM_WORKERS, ENVS_PER_WORKER, batch_size=BATCH)
    yield envs
    envs.close()


def test_batches_are_whole_workers_and_every_env_comes_back(pool_env):
    assert pool_env.num_envs == 8 and pool_env.batch_size == BATCH and pool_env.pool_mode
    assert pool_env.observation_space == gym.vector.utils.batch_space(pool_env.single_observation_space, BATCH)
    assert pool_env.action_space == gym.vector.utils.batch_space(pool_env.single_action_space, BATCH)
    obs, info = pool_env.reset(seed=0)
    assert obs.shape == (BATCH, 4) and info["env_id"].dtype == np.int32
    seen: set[int] = set()
    # 60 batches at least, then on until every env came back (first-ready: on a busy machine a worker may
    # miss many batches in a row); only a worker that never finishes its step meets the deadline.
    steps, deadline = 0, time.monotonic() + 120
    while steps < 60 or (seen != set(range(8)) and time.monotonic() < deadline):
        steps += 1
        ids = info["env_id"]
        assert len(set(ids.tolist())) == BATCH
        assert all(ids[i] // ENVS_PER_WORKER == ids[i + 1] // ENVS_PER_WORKER for i in range(0, BATCH, 2))
        seen.update(ids.tolist())
        obs, rewards, terminations, truncations, info = pool_env.step(np.zeros(BATCH, np.int64))
        assert obs.shape == (BATCH, 4) and rewards.shape == terminations.shape == truncations.shape == (BATCH,)
    assert seen == set(range(8))


def test_each_env_follows_the_trajectory_gymnasium_gives_it():
    """Whatever order the workers come back in, env i's observations, rewards and flags for its own
    sequence of actions are those of env i in gymnasium's SyncVectorEnv (same seeds, NEXT_STEP)."""
    steps = 40
    ours: dict[int, list[tuple]] = defaultdict(list)
    counts = np.zeros(8, int)
    envs = TorchVectorizedEnv(cartpole, NUM_WORKERS, ENVS_PER_WORKER, batch_size=BATCH)
    try:
        obs, info = envs.reset(seed=11)
        first = {int(i): o.copy() for i, o in zip(info["env_id"], obs)}
        while counts.min() < steps:
            ids = info["env_id"]
            envs.send(np.array([action_for(int(i), counts[i]) for i in ids], np.int64))
            obs, rewards, terminations, truncations, info = envs.recv()
            counts[ids] += 1
            for row, i in enumerate(info["env_id"]):
                first.setdefault(int(i), obs[row].copy())
                if counts[i] and len(ours[int(i)]) < counts[i]:
                    ours[int(i)].append((obs[row].copy(), rewards[row], terminations[row], truncations[row]))
    finally:
        envs.close()
    reference = gym.vector.SyncVectorEnv([cartpole] * 8)
    try:
        obs, _ = reference.reset(seed=11)
        for i in range(8):
            np.testing.assert_array_equal(first[i], obs[i])
        for t in range(steps):
            actions = np.array([action_for(i, t) for i in range(8)], np.int64)
            obs, rewards, terminations, truncations, _ = reference.step(actions)
            for i in range(8):
                if t < len(ours[i]):
                    got = ours[i][t]
                    np.testing.assert_array_equal(got[0], obs[i])
                    assert (got[1], got[2], got[3]) == (rewards[i], terminations[i], truncations[i])
    finally:
        reference.close()
    assert all(len(ours[i]) >= steps - 1 for i in range(8))


def test_infos_are_batched_over_the_batch_in_env_id_order():
    envs = TorchVectorizedEnv(info_envs(), NUM_WORKERS, ENVS_PER_WORKER, batch_size=BATCH)
    try:
        obs, info = envs.reset()
        np.testing.assert_array_equal(info["number"], info["env_id"])
        for _ in range(30):
            obs, rewards, terminations, truncations, info = envs.step(np.full(BATCH, 2, np.int64))
            np.testing.assert_array_equal(obs[:, 0], info["env_id"])
            stepped = info.get("_t", np.zeros(BATCH, bool))
            reset = info.get("_number", np.zeros(BATCH, bool))  # the first resets, and autoresets
            assert (stepped ^ reset).all()
            if stepped.any():
                np.testing.assert_array_equal(info["t"][stepped], obs[stepped, 1])
            if reset.any():
                np.testing.assert_array_equal(info["number"][reset], info["env_id"][reset])
            assert not rewards[reset].any() and not (terminations | truncations)[reset].any()
    finally:
        envs.close()


def _block(env_ids: np.ndarray) -> range | None:
    """The buffer rows of a batch that is one ascending block of envs (consecutive workers, in order)."""
    first = int(env_ids[0])
    return range(first, first + len(env_ids)) if (env_ids == np.arange(first, first + len(env_ids))).all() else None


@pytest.mark.parametrize("copy", [True, False])
@pytest.mark.parametrize("batch_size", [ENVS_PER_WORKER, BATCH])
def test_copy_false_hands_out_a_block_of_workers_rows_themselves(batch_size, copy):
    """copy=False, as in sync mode: a batch that is one block of the shared buffer (one worker, or
    consecutive workers in order) is that block itself, which the next send overwrites; a batch of
    workers out of order is a copy. copy=True: every batch is the caller's own."""
    envs = TorchVectorizedEnv(info_envs(), NUM_WORKERS, ENVS_PER_WORKER, batch_size=batch_size, copy=copy)
    try:
        obs, info = envs.reset()
        earlier: list[tuple[np.ndarray, range | None]] = []
        for _ in range(40):
            np.testing.assert_array_equal(obs[:, 0], info["env_id"])
            block = _block(info["env_id"])
            for old_obs, old_block in earlier:
                shared = not copy and block is not None and old_block is not None and bool(set(block) & set(old_block))
                assert np.shares_memory(old_obs, obs) == shared, (old_block, block)
            earlier.append((obs, block))
            obs, rewards, terminations, truncations, info = envs.step(np.zeros(batch_size, np.int64))
        assert copy or any(block is not None for _, block in earlier)
    finally:
        envs.close()


def test_calls_wait_for_the_steps_in_flight_and_keep_their_results(pool_env):
    obs, info = pool_env.reset(seed=0)
    pool_env.send(np.zeros(BATCH, np.int64))
    with pytest.raises(AlreadyPendingCallError):
        pool_env.send(np.zeros(BATCH, np.int64))
    pool_env.recv()
    assert len(pool_env.get_attr("spec")) == 8  # other workers still stepping: they finish first
    pool_env.set_attr("marker", list(range(8)))
    assert pool_env.get_attr("marker") == tuple(range(8))
    # Every env comes back in some batch. Steps until it has (first-ready: on a busy machine a worker
    # may miss many batches in a row); only a worker that never finishes its step meets the deadline.
    seen: set[int] = set()
    deadline = time.monotonic() + 120
    while seen != set(range(8)) and time.monotonic() < deadline:
        obs, *_, info = pool_env.step(np.zeros(BATCH, np.int64))
        seen.update(info["env_id"].tolist())
    assert seen == set(range(8))


def test_a_reset_drops_what_the_workers_were_doing(pool_env):
    fresh, info = pool_env.reset(seed=5)
    fresh_by_env = dict(zip(info["env_id"].tolist(), fresh))
    for _ in range(5):
        pool_env.step(np.ones(BATCH, np.int64))
    pool_env.send(np.ones(BATCH, np.int64))  # still in flight when reset() comes
    obs, info = pool_env.reset(seed=5)
    for i, o in zip(info["env_id"].tolist(), obs):
        if i in fresh_by_env:
            np.testing.assert_array_equal(o, fresh_by_env[i])


def test_reset_options_that_cannot_be_sent_leave_the_step_in_flight(pool_env):
    pool_env.reset(seed=0)
    pool_env.send(np.zeros(BATCH, np.int64))
    with pytest.raises(InvalidArgumentError, match="reset options cannot be sent"):
        pool_env.reset(options={"lock": threading.Lock()})  # a lock cannot be pickled
    obs, rewards, *_, info = pool_env.recv()  # the step in flight was not dropped
    assert obs.shape == (BATCH, 4) and len(info["env_id"]) == BATCH
    pool_env.step(np.zeros(BATCH, np.int64))


@pytest.mark.parametrize("batch_size", [0, 3, 10, 2.0, True, -2, "4"])
def test_batch_sizes_that_are_not_whole_workers_are_refused(batch_size):
    with pytest.raises(InvalidArgumentError, match="batch_size must be None or a multiple of envs_per_worker"):
        TorchVectorizedEnv(cartpole, NUM_WORKERS, ENVS_PER_WORKER, batch_size=batch_size)


def test_calls_that_make_no_sense_in_pool_mode_are_refused_and_the_env_stays_usable(pool_env):
    with pytest.raises(NoAsyncCallError):
        pool_env.recv()
    with pytest.raises(ResetNeeded):
        pool_env.send(np.zeros(BATCH, np.int64))
    pool_env.reset(seed=0)
    with pytest.raises(InvalidArgumentError, match="reset_mask"):
        pool_env.reset(options={"reset_mask": np.ones(8, bool)})
    with pytest.raises(EnvStateError, match="pool mode"):
        pool_env.reset_async()
    with pytest.raises(InvalidArgumentError):
        pool_env.send(np.zeros(8, np.int64))  # a batch is BATCH envs
    with pytest.raises(InvalidArgumentError, match="batch_size == num_envs"):
        pool_env.to_sb3()
    pool_env.reset(seed=0)
    assert pool_env.step(np.zeros(BATCH, np.int64))[0].shape == (BATCH, 4)


def test_disabled_autoreset_needs_reset_masks_and_is_refused():
    with pytest.raises(InvalidArgumentError, match="DISABLED"):
        TorchVectorizedEnv(cartpole, 2, 2, batch_size=2, autoreset_mode=AutoresetMode.DISABLED)


def test_a_dead_worker_is_reported_in_pool_mode():
    envs = TorchVectorizedEnv(ExitOnStepEnv, 2, 1, batch_size=1)
    try:
        envs.reset()
        with pytest.raises(WorkerCrashedError):
            for _ in range(3):
                envs.step(np.zeros(1, np.int64))
        assert envs.closed
    finally:
        envs.close()


class SlowResetCounter(gym.Env):
    """Observes the steps since its last reset, which takes 0.3 s."""

    observation_space = gym.spaces.Box(0, 1000, (1,), np.float32)
    action_space = gym.spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        time.sleep(0.3)
        self.count = 0
        return np.zeros(1, np.float32), {}

    def step(self, action):
        self.count += 1
        return np.full(1, self.count, np.float32), 0.0, False, False, {}


def interrupt_after(seconds: float) -> None:
    """Ctrl-C in ``seconds`` (SIGALRM raising KeyboardInterrupt, as Python's SIGINT handler does)."""

    def raise_interrupt(signum, frame):
        raise KeyboardInterrupt

    signal.signal(signal.SIGALRM, raise_interrupt)
    signal.setitimer(signal.ITIMER_REAL, seconds)


def test_a_reset_interrupted_by_ctrl_c_is_dropped_by_the_next_reset():
    previous = signal.getsignal(signal.SIGALRM)
    envs = TorchVectorizedEnv(SlowResetCounter, 3, 1, batch_size=1)
    try:
        envs.reset(seed=0)
        envs.send(np.zeros(1, np.int64))
        envs.recv()  # a batch waits for its actions: the reset below must forget it
        interrupt_after(0.1)
        with pytest.raises(KeyboardInterrupt):
            envs.reset(seed=1)
        with pytest.raises(AlreadyPendingCallError):
            envs.send(np.zeros(1, np.int64))  # the interrupted reset is still pending
        observations, infos = envs.reset(seed=2)
        steps = {int(infos["env_id"][0]): 0}
        assert observations[0, 0] == 0
        for _ in range(12):
            envs.send(np.zeros(1, np.int64))
            observations, _, _, _, infos = envs.recv()
            env_id = int(infos["env_id"][0])
            steps[env_id] = steps.get(env_id, -1) + 1  # an env's first batch after the reset is the reset
            assert observations[0, 0] == steps[env_id], (env_id, steps)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        envs.close()


def test_ctrl_c_once_recv_took_a_batch_loses_none_of_its_workers(monkeypatch):
    """A Ctrl-C raised as the pool hands recv its batch (``gather_some`` returns): the batch's replies are
    lost, as gymnasium's are once taken, and the step is over; its workers wait for actions, so the next
    send steps them, and every env keeps coming back."""
    envs = TorchVectorizedEnv(cartpole, 2, 1, batch_size=1)
    try:
        envs.reset(seed=0)
        envs.send(np.zeros(1, np.int64))  # one env steps; the other's reset reply is not taken yet
        deadline = time.monotonic() + 30
        while not all(envs._pool.bells.is_done(w) for w in range(2)) and time.monotonic() < deadline:
            time.sleep(0.01)  # both replies in: the other env's cannot come after many steps of this one
        pool_class = torchwm.process.pool.WorkerPool
        monkeypatch.setattr(pool_class, "gather_some", CtrlCOnce(pool_class, "gather_some", after=True).gather_some)
        with pytest.raises(KeyboardInterrupt):
            envs.recv(timeout=30)  # took a batch, then Ctrl-C
        with pytest.raises(NoAsyncCallError):
            envs.recv(timeout=30)
        seen: list[int] = []
        while set(seen) != {0, 1} and time.monotonic() < deadline:  # the first send steps the lost batch's env
            envs.send(np.zeros(1, np.int64))
            seen += envs.recv(timeout=30)[4]["env_id"].tolist()
        assert set(seen) == {0, 1}, f"an env never came back: {seen}"
    finally:
        envs.close()


def test_a_dead_worker_is_reported_while_the_others_keep_answering():
    # Worker 0's env dies at its first step; worker 1's answers at once, every batch.
    factories = [ExitOnStepEnv, QuickEnv]
    envs = TorchVectorizedEnv(factories, 2, 1, batch_size=1)
    try:
        envs.reset(seed=0)
        deadline = time.monotonic() + 30
        with pytest.raises(WorkerCrashedError, match="worker 0"):
            while time.monotonic() < deadline:
                envs.send(np.zeros(1, np.int64))
                envs.recv()
    finally:
        envs.close()


def test_an_idle_vectorizer_burns_no_cpu():
    """Workers waiting for a command sleep (after a spin of well under a millisecond)."""
    envs = TorchVectorizedEnv(cartpole, 2, 2)
    try:
        envs.reset(seed=0)
        pids = envs.worker_pids
        before = [_platform.process_cpu_seconds(pid) for pid in pids]
        time.sleep(2.0)
        used = [_platform.process_cpu_seconds(pid) - start for pid, start in zip(pids, before)]
        assert max(used) < 0.2, used
    finally:
        envs.close()


class GatedStepEnv(QuickEnv):
    """Its step waits until the file ``gate`` exists: a worker hung in its step until the test lets it go."""

    def __init__(self, gate: str) -> None:
        self.gate = gate

    def step(self, action: int) -> Any:
        while not os.path.exists(self.gate):
            time.sleep(0.01)
        return super().step(action)


def gated_and_quick_envs(gate: str) -> TorchVectorizedEnv:
    """Two workers of one env each, batches of one: env 0 steps only once the file ``gate`` exists."""
    return TorchVectorizedEnv([lambda: GatedStepEnv(gate), QuickEnv], 2, 1, batch_size=1)


@pytest.fixture
def env_0_hung(tmp_path):
    """``gated_and_quick_envs`` with env 0 in its step (until the gate file is made) and env 1's batch
    waiting; yields the env and the gate. Restores SIGALRM (``interrupt_after``) and closes the env."""
    previous = signal.getsignal(signal.SIGALRM)
    gate = str(tmp_path / "gate")
    envs = gated_and_quick_envs(gate)
    try:
        hang_env_0_in_its_step(envs)
        yield envs, gate
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        envs.close()


def hang_env_0_in_its_step(envs: TorchVectorizedEnv) -> None:
    """Resets ``gated_and_quick_envs`` and sends env 0 into its step; returns with env 1's batch waiting."""
    _, info = envs.reset(seed=0)
    while info["env_id"].tolist() != [0]:  # until env 0 is in the batch to step
        envs.send(np.zeros(1, np.int64))
        _, _, _, _, info = envs.recv()
    envs.send(np.zeros(1, np.int64))  # env 0 hangs in this step
    _, _, _, _, info = envs.recv()
    assert info["env_id"].tolist() == [1]


@pytest.mark.timeout(30)  # without a timeout of their own, the calls below hung for ever
def test_calls_do_not_hang_on_a_worker_hung_in_its_step(env_0_hung, monkeypatch):
    envs, gate = env_0_hung
    interrupt_after(0.2)
    with pytest.raises(KeyboardInterrupt):  # Ctrl-C while it waits for the steps in flight
        envs.get_attr("action_space")
    # A call without a timeout gives up on the steps in flight after STEPS_IN_FLIGHT_TIMEOUT_S, unsent.
    monkeypatch.setattr(torchwm.process.pending_calls, "STEPS_IN_FLIGHT_TIMEOUT_S", 0.2)
    with pytest.raises(mp.TimeoutError):
        envs.get_attr("action_space")
    with pytest.raises(mp.TimeoutError):
        envs.set_attr("marker", 1)
    # call_wait(timeout) raises gymnasium's class, and the call stays pending.
    envs.call_async("action_space")
    with pytest.raises(mp.TimeoutError):
        envs.call_wait(timeout=0.2)
    with pytest.raises(AlreadyPendingCallError):
        envs.send(np.zeros(1, np.int64))
    open(gate, "w").close()  # the step ends: the call goes out, the step's result waits for recv
    assert envs.call_wait(timeout=30) == (gym.spaces.Discrete(2),) * 2
    envs.send(np.zeros(1, np.int64))
    _, _, _, _, info = envs.recv()
    assert info["env_id"].tolist() == [0]
    # Env 1's step may still be in flight: on a busy machine it may take longer than 0.2 s.
    monkeypatch.setattr(torchwm.process.pending_calls, "STEPS_IN_FLIGHT_TIMEOUT_S", 60.0)
    with logs_sub_env_errors(), pytest.raises(AttributeError):
        envs.get_attr("marker")  # the set_attr that timed out was never sent


@pytest.mark.timeout(30)  # reset() waited for the steps in flight without limit: it hung for ever
def test_reset_does_not_hang_on_a_worker_hung_in_its_step(env_0_hung, monkeypatch):
    envs, gate = env_0_hung
    monkeypatch.setattr(torchwm.process.pending_calls, "STEPS_IN_FLIGHT_TIMEOUT_S", 0.2)
    with pytest.raises(mp.TimeoutError, match="reset"):
        envs.reset(seed=1)
    monkeypatch.setattr(torchwm.process.pending_calls, "STEPS_IN_FLIGHT_TIMEOUT_S", 60.0)
    interrupt_after(0.2)
    with pytest.raises(KeyboardInterrupt):  # Ctrl-C while reset() waits for the steps in flight
        envs.reset(seed=1)
    # The env as it was: env 1's batch waits for its actions, env 0 is still in its step.
    for _ in range(3):
        envs.send(np.zeros(1, np.int64))
        _, _, _, _, info = envs.recv()
        assert info["env_id"].tolist() == [1]
    open(gate, "w").close()  # env 0's step ends: the next reset drops it and resets every env
    observations, info = envs.reset(seed=1)
    assert observations.shape == (1, 1) and info["env_id"].tolist() in ([0], [1])
    envs.send(np.zeros(1, np.int64))
    assert envs.recv()[4]["env_id"].tolist() in ([0], [1])

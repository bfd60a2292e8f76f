"""RayVectorEnv on a real two-node Ray cluster: actors spread over the nodes, results equal to gymnasium's
SyncVectorEnv over the same seeds and actions, gymnasium's exception classes, a lost node -> WorkerCrashedError."""

from __future__ import annotations

import contextlib
import gc
import multiprocessing as mp
import os
import subprocess
import sys
import textwrap
import time

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

ray = pytest.importorskip("ray")

from ray_cluster import local_cluster

from testing_support import logs_sub_env_errors
from torchwm.errors import WorkerCrashedError
from torchwm.ray import RayVectorEnv

pytestmark = pytest.mark.timeout(300)
# The workers are other processes that cannot import this test module: its env classes travel by value.
ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])

NUM_WORKERS, PER_WORKER = 2, 3
NUM_ENVS = NUM_WORKERS * PER_WORKER


def cartpole() -> gym.Env:
    return gym.make("CartPole-v1")


class FailingStep(gym.Wrapper):
    """CartPole whose step raises ValueError on the chosen call."""

    def __init__(self, fail_at: int) -> None:
        super().__init__(gym.make("CartPole-v1"))
        self.fail_at, self.calls = fail_at, 0

    def step(self, action):
        self.calls += 1
        if self.calls == self.fail_at:
            raise ValueError("bad action on purpose")
        return super().step(action)


class SlowStep(gym.Wrapper):
    def __init__(self, seconds: float) -> None:
        super().__init__(gym.make("CartPole-v1"))
        self.seconds = seconds

    def step(self, action):
        time.sleep(self.seconds)
        return super().step(action)


@pytest.fixture(scope="module")
def cluster():
    """Head (1 CPU) and a second node (1 CPU); a third node ("doomed") is added by the test that removes it."""
    with local_cluster([{"num_cpus": 1}]) as running:
        yield running


def assert_same_infos(ours, theirs, where="info"):
    assert ours.keys() == theirs.keys(), f"{where}: keys {sorted(ours)} != {sorted(theirs)}"
    for key, value in theirs.items():
        if isinstance(value, dict):
            assert_same_infos(ours[key], value, f"{where}[{key!r}]")
            continue
        assert ours[key].dtype == value.dtype and ours[key].shape == value.shape, f"{where}[{key!r}]"
        if value.dtype == object:
            for a, b in zip(ours[key], value):
                if isinstance(b, dict):
                    assert_same_infos(a, b, f"{where}[{key!r}][...]")
                else:
                    assert np.array_equal(np.asarray(a), np.asarray(b)), f"{where}[{key!r}]"
        else:
            assert np.array_equal(ours[key], value), f"{where}[{key!r}]"


def assert_same_step(ours, theirs):
    for a, b in zip(ours[:4], theirs[:4]):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_array_equal(a, b)
    assert_same_infos(ours[4], theirs[4])


def make_env(mode=AutoresetMode.NEXT_STEP, factory=cartpole, **kwargs) -> RayVectorEnv:
    return RayVectorEnv(factory, NUM_WORKERS, PER_WORKER, autoreset_mode=mode, num_cpus=1, **kwargs)


def test_actors_are_spread_over_the_nodes(cluster):
    with make_env() as envs:
        assert len(set(envs.worker_nodes)) == NUM_WORKERS
        assert set(envs.worker_nodes) <= {node["NodeID"] for node in ray.nodes() if node["Alive"]}


@pytest.mark.parametrize("mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP, AutoresetMode.DISABLED])
def test_equal_to_sync_vector_env(cluster, mode):
    reference = gym.vector.SyncVectorEnv([cartpole] * NUM_ENVS, autoreset_mode=mode)
    with make_env(mode) as envs:
        assert envs.observation_space == reference.observation_space
        assert envs.action_space == reference.action_space
        assert envs.metadata["autoreset_mode"] == mode
        ours, theirs = envs.reset(seed=7), reference.reset(seed=7)
        np.testing.assert_array_equal(ours[0], theirs[0])
        assert_same_infos(ours[1], theirs[1])
        rng = np.random.default_rng(0)
        finished = np.zeros(NUM_ENVS, dtype=np.bool_)
        for _ in range(120):
            if mode == AutoresetMode.DISABLED and finished.any():
                mask = finished.copy()
                ours = envs.reset(options={"reset_mask": mask})
                theirs = reference.reset(options={"reset_mask": mask.copy()})
                np.testing.assert_array_equal(ours[0], theirs[0])
                assert_same_infos(ours[1], theirs[1])
            actions = rng.integers(0, 2, NUM_ENVS)
            ours, theirs = envs.step(actions), reference.step(actions)
            assert_same_step(ours, theirs)
            finished = ours[2] | ours[3]
    reference.close()


def test_partial_reset_and_attributes_match_sync_vector_env(cluster):
    reference = gym.vector.SyncVectorEnv([cartpole] * NUM_ENVS)
    with make_env() as envs:
        envs.reset(seed=1), reference.reset(seed=1)
        for _ in range(5):
            envs.step(np.ones(NUM_ENVS, dtype=np.int64)), reference.step(np.ones(NUM_ENVS, dtype=np.int64))
        mask = np.array([True, False, False, False, True, False])  # worker 1 untouched, worker 0 partly
        ours = envs.reset(seed=list(range(10, 16)), options={"reset_mask": mask})
        theirs = reference.reset(seed=list(range(10, 16)), options={"reset_mask": mask.copy()})
        np.testing.assert_array_equal(ours[0], theirs[0])
        assert_same_infos(ours[1], theirs[1])
        assert envs.get_attr("gravity") == reference.get_attr("gravity")
        envs.set_attr("gravity", [float(i) for i in range(NUM_ENVS)])
        assert envs.get_attr("gravity") == tuple(float(i) for i in range(NUM_ENVS))
        assert [s.id for s in envs.call("spec")] == ["CartPole-v1"] * NUM_ENVS
        with pytest.raises(AttributeError):
            envs.get_attr("no_such_attribute")
        envs.step(np.zeros(NUM_ENVS, dtype=np.int64))  # still usable after the caller's error


def test_protocol_errors_are_gymnasiums_classes(cluster):
    reference = gym.vector.AsyncVectorEnv([cartpole] * 2)
    with make_env() as envs:
        for env, n in ((envs, NUM_ENVS), (reference, 2)):
            env.reset(seed=0)
            with pytest.raises(gym.error.NoAsyncCallError):
                env.step_wait()
            env.step_async(np.zeros(n, dtype=np.int64))
            with pytest.raises(gym.error.AlreadyPendingCallError):
                env.step_async(np.zeros(n, dtype=np.int64))
            env.step_wait()
            env.close()
            with pytest.raises(gym.error.ClosedEnvironmentError):
                env.step_async(np.zeros(n, dtype=np.int64))
    with make_env() as envs:
        envs.reset(seed=0)
        with pytest.raises(ValueError, match="leading dimension"):
            envs.step(np.zeros(NUM_ENVS + 1, dtype=np.int64))
        envs.step(np.zeros(NUM_ENVS, dtype=np.int64))  # still usable


class Bare(gym.Env):
    """Not made by gym.make (no OrderEnforcing): steps before any reset, its counter as the observation."""

    observation_space = gym.spaces.Box(0, 100, (1,), np.float32)
    action_space = gym.spaces.Discrete(2)
    t = 0  # a class attribute: the state a step before any reset reads

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return np.zeros(1, np.float32), {}

    def step(self, action):
        self.t += 1 + int(action)
        return np.full(1, self.t, np.float32), float(self.t), self.t >= 4, False, {}


def test_a_step_before_reset_goes_to_the_sub_envs_as_in_gymnasium(cluster):
    """No refusal of its own: gym.make's envs refuse it (the same exception and message as gymnasium's
    AsyncVectorEnv gives), an env without OrderEnforcing steps (the same batches)."""
    actions = np.zeros(NUM_ENVS, dtype=np.int64)
    reference = gym.vector.AsyncVectorEnv([cartpole] * NUM_ENVS)
    try:
        with logs_sub_env_errors(), pytest.raises(gym.error.ResetNeeded) as theirs:
            reference.step(actions)
    finally:
        reference.close(terminate=True)
    with make_env() as envs, pytest.raises(gym.error.ResetNeeded) as ours:
        envs.step(actions)
    assert str(ours.value) == str(theirs.value)
    reference = gym.vector.AsyncVectorEnv([Bare] * NUM_ENVS)
    with make_env(factory=Bare) as envs:
        try:
            for step in range(3):
                actions = np.array([step % 2, 1, 0, 1, 0, 1], dtype=np.int64)
                for got, expected in zip(envs.step(actions)[:4], reference.step(actions)[:4]):
                    np.testing.assert_array_equal(got, expected)
        finally:
            reference.close()


def mountain_car() -> gym.Env:
    return gym.make("MountainCar-v0")


@pytest.mark.parametrize(("num_workers", "per_worker"), [(1, 2), (2, 1)])
def test_mismatched_spaces_raise_as_gymnasium(cluster, num_workers, per_worker):
    """Within a worker or across workers: the exception class of gymnasium's AsyncVectorEnv."""
    with pytest.raises(Exception) as theirs:
        gym.vector.AsyncVectorEnv([cartpole, mountain_car])
    with pytest.raises(Exception) as ours:
        RayVectorEnv([cartpole, mountain_car], num_workers, per_worker, num_cpus=0)
    assert type(ours.value) is type(theirs.value)


@pytest.mark.parametrize(
    "settings",
    [
        {"num_workers": 0},
        {"envs_per_worker": True},
        {"num_cpus": -1},
        {"scheduling_strategy": "EVERYWHERE"},
        {"actor_options": {"num_cpus": 2}},
        {"autoreset_mode": "Sometimes"},
    ],
)
def test_bad_settings_are_refused_before_any_actor_starts(settings):
    arguments = {"num_workers": 1, "envs_per_worker": 1, **settings}
    with pytest.raises(ValueError) as caught:
        RayVectorEnv(cartpole, **arguments)
    assert isinstance(caught.value, gym.error.Error)
    assert next(iter(settings)) in str(caught.value)


def test_sub_env_exception_keeps_its_class(cluster):
    with make_env(factory=lambda: FailingStep(fail_at=2)) as envs:
        envs.reset(seed=0)
        envs.step(np.zeros(NUM_ENVS, dtype=np.int64))
        with pytest.raises(ValueError, match="bad action on purpose") as caught:
            envs.step(np.zeros(NUM_ENVS, dtype=np.int64))
        assert "remote traceback" in str(caught.value.__cause__)
        assert envs.closed


def test_step_wait_timeout_leaves_the_step_pending(cluster):
    with make_env(factory=lambda: SlowStep(0.5)) as envs:
        envs.reset(seed=0)
        envs.step_async(np.zeros(NUM_ENVS, dtype=np.int64))
        with pytest.raises(mp.TimeoutError):
            envs.step_wait(timeout=0.05)
        with pytest.raises(TypeError, match="timeout"):  # not a number: what gymnasium raises, the step kept
            envs.step_wait(timeout="1")
        observations, *_ = envs.step_wait(timeout=60)
        assert observations.shape == (NUM_ENVS, 4)


def wait_until_stepped(env) -> None:
    """Returns once every worker of ``env`` (ours or gymnasium's ``AsyncVectorEnv``) has its reply in."""
    if isinstance(env, RayVectorEnv):
        _, waiting = ray.wait(env._pending, num_returns=len(env._pending), timeout=60)
        assert not waiting, "the workers did not step within 60 s"
    else:
        assert all(pipe.poll(60) for pipe in env.parent_pipes), "the workers did not step within 60 s"


@pytest.mark.parametrize("timeout", [0, -1])
def test_a_zero_or_negative_timeout_takes_the_replies_in_as_gymnasium(cluster, timeout):
    """gymnasium's AsyncVectorEnv waits max(timeout, 0), polling its pipes once: a step whose replies are
    all in is returned; one not done times out at once (``multiprocessing.TimeoutError``)."""
    with make_env() as envs:
        reference = gym.vector.AsyncVectorEnv([cartpole] * 2)
        try:
            for env, n in ((envs, NUM_ENVS), (reference, 2)):
                env.reset(seed=0)
                env.step_async(np.zeros(n, dtype=np.int64))
                wait_until_stepped(env)
                observations, rewards, *_ = env.step_wait(timeout=timeout)
                assert observations.shape == (n, 4) and rewards.tolist() == [1.0] * n, type(env).__name__
        finally:
            reference.close(terminate=True)
    with make_env(factory=lambda: SlowStep(3.0)) as envs:
        reference = gym.vector.AsyncVectorEnv([lambda: SlowStep(3.0)] * 2)
        try:
            for env, n in ((envs, NUM_ENVS), (reference, 2)):
                env.reset(seed=0)
                env.step_async(np.zeros(n, dtype=np.int64))
                started = time.monotonic()
                with pytest.raises(mp.TimeoutError):
                    env.step_wait(timeout=timeout)
                assert time.monotonic() - started < 1.5, type(env).__name__
            observations, *_ = envs.step_wait(timeout=60)  # ours keeps the step pending: it comes
            assert observations.shape == (NUM_ENVS, 4)
        finally:
            reference.close(terminate=True)


def test_killed_actor_raises_worker_crashed_naming_it(cluster):
    envs = make_env()
    envs.reset(seed=0)
    ray.kill(envs._actors[1], no_restart=True)
    start = time.monotonic()
    with pytest.raises(WorkerCrashedError, match="worker 1 "):
        for _ in range(100):
            envs.step(np.zeros(NUM_ENVS, dtype=np.int64))
    assert time.monotonic() - start < 30
    assert envs.closed


def test_removed_node_raises_worker_crashed(cluster):
    doomed = cluster.add_node(num_cpus=1, resources={"doomed": 1}, object_store_memory=80 * 1024 * 1024)
    cluster.wait_for_nodes()
    # Worker 0 on the head/second node, worker 1 (and only it) on the doomed node.
    envs = RayVectorEnv(cartpole, 2, 2, num_cpus=0, actor_options={"resources": {"doomed": 0.5}})
    try:
        envs.reset(seed=0)
        assert envs.worker_nodes == (doomed.node_id, doomed.node_id)
        envs.step(np.zeros(4, dtype=np.int64))
        cluster.remove_node(doomed)
        start = time.monotonic()
        with pytest.raises(WorkerCrashedError, match=r"worker [01] ") as caught:
            for _ in range(1000):
                envs.step(np.zeros(4, dtype=np.int64))
        elapsed = time.monotonic() - start
        assert elapsed < 60, f"the lost node was reported after {elapsed:.1f} s"
        assert doomed.node_id in str(caught.value)
    finally:
        envs.close()


def test_close_and_driver_exit_kill_the_actors(cluster):
    with make_env() as envs:
        pids = [ray.get(actor.describe.remote())["pid"] for actor in envs._actors]
    wait_until_gone(pids)
    # Dropped without close(): its finalizer kills them.
    envs = make_env()
    pids = [ray.get(actor.describe.remote())["pid"] for actor in envs._actors]
    del envs
    gc.collect()
    wait_until_gone(pids)
    # A driver that exits without close(): Ray kills the actors it owns.
    script = textwrap.dedent(
        f"""
        import gymnasium as gym, ray
        from torchwm.ray import RayVectorEnv
        envs = RayVectorEnv(lambda: gym.make("CartPole-v1"), 2, 1, num_cpus=0, address={cluster.address!r})
        print(*[ray.get(a.describe.remote())["pid"] for a in envs._actors])
        """
    )
    output = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True)
    wait_until_gone([int(pid) for pid in output.stdout.split()])


def wait_until_gone(pids, seconds=30.0):
    deadline = time.monotonic() + seconds
    alive = list(pids)
    while alive and time.monotonic() < deadline:
        alive = [pid for pid in alive if _alive(pid)]
        time.sleep(0.1)
    assert not alive, f"actor processes {alive} outlived their RayVectorEnv"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open(f"/proc/{pid}/stat") as stat:  # a zombie is gone, only not reaped yet
            return stat.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_atari_vector_env_blocks_equal_one_atari_vector_env(cluster):
    """Each worker steps a torchwm.AtariVectorEnv of its envs (the Rust pool on that node)."""
    import functools

    import torchwm

    block = functools.partial(torchwm.AtariVectorEnv, "pong", num_envs=2, num_threads=1)
    reference = torchwm.AtariVectorEnv("pong", num_envs=4, num_threads=1)
    with RayVectorEnv(block, 2, 2, num_cpus=1) as envs, contextlib.closing(reference):
        assert envs.single_observation_space == reference.single_observation_space
        seeds = [11, 12, 13, 14]
        ours, theirs = envs.reset(seed=seeds), reference.reset(seed=np.array(seeds))
        np.testing.assert_array_equal(ours[0], theirs[0])
        assert_same_infos(ours[1], theirs[1])
        rng = np.random.default_rng(1)
        for _ in range(40):
            actions = rng.integers(0, reference.single_action_space.n, 4)
            assert_same_step(envs.step(actions), reference.step(actions))


def test_torchwm_exposes_ray_vector_env_without_importing_ray_itself():
    import torchwm
    import torchwm.ray

    assert torchwm.RayVectorEnv is torchwm.ray.RayVectorEnv
    code = "import sys, torchwm; print('ray' in sys.modules)"
    output = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert output.stdout.strip() == "False"


def test_process_keywords_mean_the_same_on_ray(cluster):
    """TorchVectorizedEnv(backend="ray") takes the process backend's keywords; check_actions=True
    refuses an action outside the space before anything is sent, and the env stays usable."""
    from torchwm import InvalidArgumentError, TorchVectorizedEnv

    kwargs = {"copy": False, "shared_memory": False, "daemon": False, "check_actions": True, "max_concurrency": 2}
    envs = TorchVectorizedEnv(cartpole, NUM_WORKERS, PER_WORKER, backend="ray", num_cpus=1, **kwargs)
    reference = gym.vector.SyncVectorEnv([cartpole] * NUM_ENVS)
    try:
        assert isinstance(envs, RayVectorEnv)
        np.testing.assert_array_equal(envs.reset(seed=3)[0], reference.reset(seed=3)[0])
        with pytest.raises(InvalidArgumentError):
            envs.step(np.full(NUM_ENVS, 5))
        actions = np.ones(NUM_ENVS, dtype=np.int64)
        assert_same_step(envs.step(actions), reference.step(actions))
    finally:
        envs.close()
        reference.close()


@pytest.mark.parametrize(
    ("settings", "reason"),
    [
        ({"context": "spawn"}, "Ray starts its actors itself"),
        ({"observation_mode": "different"}, "use the process backend"),
        ({"max_concurrency": 1}, "use num_workers=max_concurrency"),
        ({"batch_size": 1}, "pool mode .* is the process backend's"),
    ],
)
def test_process_only_keywords_are_refused_saying_why(settings, reason):
    from torchwm import InvalidArgumentError, TorchVectorizedEnv

    with pytest.raises(InvalidArgumentError, match=reason):
        TorchVectorizedEnv(cartpole, 2, 1, backend="ray", **settings)


def test_to_sb3_and_torch_batches_on_ray(cluster):
    """to_sb3()'s per-env calls behave as SB3's SubprocVecEnv's; reset_batch/step_batch give tensors."""
    pytest.importorskip("stable_baselines3")
    import torch
    from stable_baselines3.common.vec_env import SubprocVecEnv

    envs = make_env()
    ours = envs.to_sb3()
    theirs = SubprocVecEnv([cartpole] * NUM_ENVS)
    try:
        for vec in (ours, theirs):
            vec.seed(5)
            vec.reset()
            vec.set_attr("marker", 7, indices=[1, 4])
        assert ours.get_attr("marker", indices=[1, 4]) == theirs.get_attr("marker", indices=[1, 4])
        # Negative indices count from the end, as in SubprocVecEnv's tuple of pipes (-5 is 1, -2 is 4).
        assert ours.get_attr("marker", indices=[-5, -2]) == theirs.get_attr("marker", indices=[-5, -2])
        for bad in (NUM_ENVS, [0, -NUM_ENVS - 1]):
            with pytest.raises(IndexError) as our_error:
                ours.get_attr("marker", indices=bad)
            with pytest.raises(IndexError) as their_error:
                theirs.get_attr("marker", indices=bad)
            assert str(our_error.value) == str(their_error.value)
        assert ours.env_method("get_wrapper_attr", "spec", indices=[0])[0].id == "CartPole-v1"
        assert ours.env_is_wrapped(gym.wrappers.TimeLimit) == theirs.env_is_wrapped(gym.wrappers.TimeLimit)
        batch = envs.reset_batch(seed=0)
        assert isinstance(batch["obs"], torch.Tensor) and batch["obs"].shape == (NUM_ENVS, 4)
        stepped = envs.step_batch(np.zeros(NUM_ENVS, dtype=np.int64))
        assert isinstance(stepped["reward"], torch.Tensor)
    finally:
        ours.close()
        theirs.close()

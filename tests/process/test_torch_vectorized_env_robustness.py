"""TorchVectorizedEnv failure modes a review found: each test fails without its fix."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time

import gymnasium as gym
import numpy as np
import pytest

import torchwm
import torchwm.process
import torchwm.process.channel
import torchwm.process.doorbells
import torchwm.process.pool
import torchwm.process.protocol
import torchwm.process.worker
from testing_support import CtrlCOnce, logs_sub_env_errors, measured_s, prompt_within_s, python_with_ctrl_c
from torchwm import TorchVectorizedEnv, WorkerCrashedError, _platform
from torchwm.process.protocol import Message, write_frame


def _gone(pid: int) -> bool:
    """The process has exited (a zombie that nobody reaped yet counts as exited)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except (FileNotFoundError, ProcessLookupError):
        return True


def _wait_gone(pids: list[int], seconds: float) -> list[int]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and not all(_gone(pid) for pid in pids):
        time.sleep(0.05)
    return [pid for pid in pids if not _gone(pid)]


def _kill(pids: list[int]) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


class ForkingEnv(gym.Env):
    """Forks a child that holds every inherited descriptor (the worker's pipe included) and sleeps;
    action 1 kills the worker without a word."""

    observation_space = gym.spaces.Box(0, 1, (1,), np.float32)
    action_space = gym.spaces.Discrete(2)

    def __init__(self, pid_file: str) -> None:
        pid = os.fork()
        if pid == 0:
            time.sleep(30)
            os._exit(0)
        with open(pid_file, "a") as f:
            f.write(f"{pid}\n")

    def reset(self, *, seed=None, options=None):
        return np.zeros(1, np.float32), {}

    def step(self, action):
        if action == 1:
            os._exit(3)
        return np.zeros(1, np.float32), 0.0, False, False, {}


@pytest.fixture
def forking_env(tmp_path):
    """Makes ``TorchVectorizedEnv`` of ``ForkingEnv`` (``num_workers`` workers, one env each); closes it
    and kills the children its envs forked."""
    pid_file = tmp_path / "children"
    made: list[TorchVectorizedEnv] = []

    def make(num_workers: int) -> TorchVectorizedEnv:
        made.append(TorchVectorizedEnv(lambda: ForkingEnv(str(pid_file)), num_workers=num_workers, envs_per_worker=1))
        return made[-1]

    yield make
    for env in made:
        env.close()
    if pid_file.exists():
        _kill([int(line) for line in pid_file.read_text().split()])


def test_dead_worker_whose_forked_child_holds_the_pipe_is_detected(forking_env) -> None:
    env = forking_env(2)
    env.reset()
    step_s = measured_s(lambda: env.step(np.array([0, 0])))
    start = time.monotonic()
    with pytest.raises(WorkerCrashedError, match="worker 1"):
        env.step(np.array([0, 1]))
    assert time.monotonic() - start < prompt_within_s(step_s)
    assert env.closed and all(not p.is_alive() for p in env._pool.processes)


@pytest.mark.timeout(30)  # the parent's write of the command's rest blocked for ever
def test_a_command_larger_than_the_pipe_to_a_dead_worker_whose_child_holds_the_pipe_is_reported(forking_env) -> None:
    env = forking_env(1)
    os.kill(env.worker_pids[0], signal.SIGKILL)  # dies idle: no reply of it is awaited
    assert not _wait_gone(env.worker_pids, 5)
    with pytest.raises(WorkerCrashedError, match="worker 0"):
        env.set_attr("blob", bytes(8 << 20))  # far more than the pipe's buffer
    assert env.closed


class OldApiGymEnv(gym.Env):
    """The Gym vector guide's ``DictEnv``: a gymnasium.Env speaking the old API (reset() -> obs,
    step() -> 4-tuple)."""

    observation_space = gym.spaces.Dict(
        {
            "position": gym.spaces.Box(-1.0, 1.0, (3,), np.float32),
            "velocity": gym.spaces.Box(-1.0, 1.0, (2,), np.float32),
        }
    )
    action_space = gym.spaces.Dict({"fire": gym.spaces.Discrete(2), "jump": gym.spaces.Discrete(2)})

    def reset(self):
        self.t = 0
        return {"position": np.zeros(3, np.float32), "velocity": np.zeros(2, np.float32)}

    def step(self, action):
        self.t += 1
        observation = {
            "position": np.full(3, self.t / 10, np.float32),
            "velocity": np.full(2, action["jump"], np.float32),
        }
        info = {"TimeLimit.truncated": True} if self.t == 3 else {}
        return observation, float(action["fire"]), self.t >= 3, info


def test_old_api_gymnasium_env_subclass_is_adapted() -> None:
    with TorchVectorizedEnv(OldApiGymEnv, num_workers=2, envs_per_worker=2, seed=0) as env:
        obs, info = env.reset()
        assert obs["position"].shape == (4, 3) and info == {}
        actions = {"fire": np.array([1, 0, 1, 0]), "jump": np.array([0, 1, 0, 1])}
        obs, rewards, terminations, truncations, _ = env.step(actions)
        np.testing.assert_array_equal(rewards, [1, 0, 1, 0])
        np.testing.assert_array_equal(obs["velocity"][:, 0], [0, 1, 0, 1])
        assert not terminations.any() and not truncations.any()
        env.step(actions)
        obs, rewards, terminations, truncations, _ = env.step(actions)
        assert truncations.all() and not terminations.any()  # done + TimeLimit.truncated
        obs, *_ = env.step(actions)  # next-step autoreset through the old reset()
        np.testing.assert_array_equal(obs["position"], np.zeros((4, 3)))


class OptionsEnv(gym.Env):
    """Reset observation = ``options["start"]`` + the number of resets; refuses a reset_mask."""

    observation_space = gym.spaces.Box(0, 1000, (2,), np.float32)
    action_space = gym.spaces.Discrete(2)

    def __init__(self) -> None:
        self.resets = 0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        if options is not None and "reset_mask" in options:
            raise AssertionError("reset_mask reached the sub-environment")
        self.resets += 1
        self.t = 0
        start = 0 if options is None else options.get("start", 0)
        return np.array([start + self.resets, 0], np.float32), {"resets": self.resets}

    def step(self, action):
        self.t += 1
        return np.array([self.resets, self.t], np.float32), 1.0, self.t >= 2 + int(action), False, {}


def test_reset_mask_matches_sync_vector_env() -> None:
    ours = TorchVectorizedEnv(OptionsEnv, num_workers=2, envs_per_worker=2)
    reference = gym.vector.SyncVectorEnv([OptionsEnv] * 4)
    try:
        results = []
        for env in (ours, reference):
            out = [env.reset(seed=1, options={"start": 10})]
            out.append(env.step(np.array([0, 1, 0, 1])))
            out.append(env.step(np.array([0, 1, 0, 1])))  # envs 0 and 2 terminate
            mask = np.array([True, True, False, False])
            out.append(env.reset(options={"reset_mask": mask, "start": 100}))
            for _ in range(3):
                out.append(env.step(np.array([1, 1, 1, 1])))  # env 2 autoresets, 0 and 1 do not
            results.append(out)
        for got, expected in zip(*results):
            for a, b in zip(got, expected):
                if isinstance(a, dict):
                    assert set(a) == set(b)
                    for key in a:
                        np.testing.assert_array_equal(a[key], b[key])
                else:
                    np.testing.assert_array_equal(a, b)
        with pytest.raises(TypeError, match="numpy array"):
            ours.reset(options={"reset_mask": [True] * 4})
        with pytest.raises(ValueError, match="at least one"):
            ours.reset(options={"reset_mask": np.zeros(4, bool)})
    finally:
        ours.close()
        reference.close()


class DictActionEnv(gym.Env):
    observation_space = gym.spaces.Box(0, 1, (1,), np.float32)
    action_space = gym.spaces.Dict(
        {"jump": gym.spaces.Discrete(2), "turn": gym.spaces.Box(-1.0, 1.0, (2,), np.float32)}
    )
    speed = 3.0

    def reset(self, *, seed=None, options=None):
        return np.zeros(1, np.float32), {}

    def step(self, action):
        return np.full(1, action["jump"], np.float32), float(action["turn"][0]), False, False, {}

    def explode(self, reason: str):
        raise KeyError(f"explode: {reason}")


def test_malformed_actions_and_failing_calls_leave_the_env_usable() -> None:
    with TorchVectorizedEnv(DictActionEnv, num_workers=2, envs_per_worker=2) as env:
        env.reset(seed=0)
        good = {"jump": np.array([1, 0, 1, 0]), "turn": np.full((4, 2), 0.5, np.float32)}
        with pytest.raises(ValueError, match=r"lacks keys \['turn'\].*'jump', 'turn'"):
            env.step({"jump": good["jump"]})
        with pytest.raises(ValueError, match="must be a dict with keys"):
            env.step(np.zeros(4, dtype=np.int64))
        with pytest.raises(ValueError, match=r"actions\['turn'\] must have a leading dimension of total_envs=4"):
            env.step({"jump": good["jump"], "turn": np.zeros((3, 2), np.float32)})
        with logs_sub_env_errors(), pytest.raises(AttributeError, match="no_such_attribute"):
            env.get_attr("no_such_attribute")
        with logs_sub_env_errors(), pytest.raises(AttributeError):
            env.call("no_such_method")
        with logs_sub_env_errors(), pytest.raises(KeyError, match="explode: boom") as caught:
            env.call("explode", "boom")
        assert "remote traceback" in str(caught.value.__cause__)
        env.set_attr("speed", [1.0, 2.0, 3.0, 4.0])
        assert env.get_attr("speed") == (1.0, 2.0, 3.0, 4.0)
        obs, rewards, *_ = env.step(good)  # still usable, every worker still there
        np.testing.assert_array_equal(obs[:, 0], [1, 0, 1, 0])
        np.testing.assert_array_equal(rewards, [0.5] * 4)
        assert not env.closed and all(p.is_alive() for p in env._pool.processes)


class TupleActionEnv(DictActionEnv):
    action_space = gym.spaces.Tuple((gym.spaces.Discrete(2), gym.spaces.Box(-1.0, 1.0, (2,), np.float32)))

    def step(self, action):
        return np.full(1, action[0], np.float32), float(action[1][0]), False, False, {}


def test_malformed_tuple_action() -> None:
    with TorchVectorizedEnv(TupleActionEnv, num_workers=1, envs_per_worker=2) as env:
        env.reset()
        with pytest.raises(ValueError, match=r"tuple of 2 batches.*got a tuple of 1"):
            env.step((np.array([0, 1]),))
        obs, rewards, *_ = env.step((np.array([0, 1]), np.full((2, 2), 0.25, np.float32)))
        np.testing.assert_array_equal(rewards, [0.25, 0.25])


@pytest.mark.parametrize("context", ["fork", "forkserver"])
def test_workers_exit_when_the_parent_is_killed(context: str) -> None:
    # The parent also forks a long-lived bystander that inherits (and so holds open) the workers' pipes:
    # the workers must notice the parent's death without the pipes' EOF.
    code = (
        "import multiprocessing as mp, time\n"
        "import gymnasium as gym\n"
        "from functools import partial\n"
        "from torchwm import TorchVectorizedEnv\n"
        "if __name__ == '__main__':\n"
        f"    env = TorchVectorizedEnv(partial(gym.make, 'CartPole-v1'), 2, 2, context={context!r})\n"
        "    env.reset()\n"
        "    bystander = mp.get_context('fork').Process(target=time.sleep, args=(30,), daemon=False)\n"
        "    bystander.start()\n"
        "    print(bystander.pid, *(p.pid for p in env._pool.processes), flush=True)\n"
        "    time.sleep(60)\n"
    )
    parent = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    pids: list[int] = []
    try:
        pids = [int(pid) for pid in parent.stdout.readline().split()]
        assert len(pids) == 3, "the parent did not start"
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait(10)
        assert _wait_gone(pids[1:], 5) == []
    finally:
        _kill([parent.pid, *pids])
        parent.stdout.close()


def test_error_classes_are_exported() -> None:
    for name in ("SubEnvError", "WorkerCrashedError", "TorchVectorizedEnv"):
        assert getattr(torchwm, name) is getattr(torchwm.process, name)
        assert name in torchwm.__all__ and name in torchwm.process.__all__


def test_copy_false_returns_the_shared_buffer() -> None:
    with TorchVectorizedEnv(OptionsEnv, num_workers=2, envs_per_worker=1, copy=False) as env:
        first, _ = env.reset(options={"start": 10})
        second, *_ = env.step(np.zeros(2, dtype=np.int64))
        assert second is first  # the buffer itself, overwritten in place
        np.testing.assert_array_equal(first[:, 1], [1, 1])
    with TorchVectorizedEnv(OptionsEnv, num_workers=2, envs_per_worker=1) as env:
        first, _ = env.reset(options={"start": 10})
        second, *_ = env.step(np.zeros(2, dtype=np.int64))
        np.testing.assert_array_equal(first[:, 1], [0, 0])  # a copy: the step did not touch it
        assert second is not first


_CTRL_C_SCRIPT = """
import os, time, numpy as np, gymnasium as gym
from torchwm import TorchVectorizedEnv

class SlowStep(gym.Env):
    observation_space = gym.spaces.Box(0, 1, (1,), np.float32)
    action_space = gym.spaces.Discrete(2)
    def reset(self, *, seed=None, options=None):
        return np.zeros(1, np.float32), {}
    def step(self, action):
        # The worker shares the script's stdout: the test waits for this line. One write, so that the
        # two workers' lines cannot interleave (print writes the line and its end apart when unbuffered).
        os.write(1, b"in step\\n")
        time.sleep(2)
        return np.ones(1, np.float32), 1.0, False, False, {}

if __name__ == "__main__":
    env = TorchVectorizedEnv(SlowStep, 2, 1)
    env.reset()
    print(*(p.pid for p in env._pool.processes), flush=True)
    try:
        env.step(np.zeros(2, np.int64))
    except KeyboardInterrupt:
        print("interrupted", flush=True)
    try:  # the step is still pending: waiting again gets it (or, if the workers got the Ctrl-C too, an error)
        print("waited", float(env.step_wait(timeout=10)[1].sum()), flush=True)
    except Exception as error:
        print("wait failed", type(error).__name__, flush=True)
    # exits without close()
"""


@pytest.mark.parametrize("whole_group", [False, True], ids=["parent_only", "terminal_ctrl_c"])
def test_ctrl_c_during_step_leaves_no_worker_behind(whole_group: bool) -> None:
    child = subprocess.Popen(
        python_with_ctrl_c(_CTRL_C_SCRIPT), stdout=subprocess.PIPE, text=True, start_new_session=True
    )
    pids: list[int] = []
    try:
        pids = [int(pid) for pid in child.stdout.readline().split()]
        assert len(pids) == 2, "the env did not start"
        # Both workers inside step(): the parent has sent the step to both and waits for it (a fixed
        # pause could end, on a busy machine, before the step was even sent).
        assert [child.stdout.readline() for _ in pids] == ["in step\n"] * len(pids)
        if whole_group:
            os.killpg(child.pid, signal.SIGINT)
        else:
            os.kill(child.pid, signal.SIGINT)
        out, _ = child.communicate(timeout=30)
        assert "interrupted" in out
        if not whole_group:
            assert "waited 2.0" in out  # the env stayed usable
        assert _wait_gone(pids, 10) == []
    finally:
        _kill([child.pid, *pids])
        child.stdout.close()


_MID_FRAME_MARKER = "torchwm-test: the worker dies in the middle of this reply " * 8


class MarkerEnv(gym.Env):
    observation_space = gym.spaces.Box(0, 1, (1,), np.float32)
    action_space = gym.spaces.Discrete(2)
    marker = _MID_FRAME_MARKER

    def reset(self, *, seed=None, options=None):
        return np.zeros(1, np.float32), {}

    def step(self, action):
        return np.zeros(1, np.float32), 0.0, False, False, {}

    def big(self) -> bytes:
        return bytes(8 << 20)  # far more than a pipe's buffer


@pytest.mark.timeout(30)  # the parent's read of the frame's rest blocked for ever
def test_a_worker_dying_in_the_middle_of_a_reply_while_its_child_holds_the_pipe_is_reported(
    tmp_path, monkeypatch
) -> None:
    pid_file = tmp_path / "child"

    def write_half_then_die(fd: int, data: bytes, reader_alive, written=None) -> None:
        """In the worker: the marker's reply is cut short by the worker's death; its child holds the pipe."""
        if _MID_FRAME_MARKER.encode() not in data:
            write_frame(fd, data, reader_alive, written)
            return
        os.write(fd, data[: len(data) // 2])
        child = os.fork()
        if child == 0:
            time.sleep(60)  # killed by the test (outlives the timeout below)
            os._exit(0)
        pid_file.write_text(str(child))
        os._exit(3)

    # The worker's pipe writes its frames with it; forked workers inherit the patch.
    monkeypatch.setattr(torchwm.process.channel, "write_frame", write_half_then_die)
    env = TorchVectorizedEnv(MarkerEnv, num_workers=1, envs_per_worker=1, context="fork")
    try:
        with pytest.raises(WorkerCrashedError, match="worker 0"):
            env.get_attr("marker")
        assert env.closed and all(not p.is_alive() for p in env._pool.processes)
    finally:
        env.close()
        if pid_file.exists():
            _kill([int(pid_file.read_text())])


def test_close_takes_a_pending_reply_larger_than_the_pipe_and_the_workers_exit_on_their_own() -> None:
    env = TorchVectorizedEnv(MarkerEnv, num_workers=2, envs_per_worker=1)
    processes = env._pool.processes
    env.call_async("big")  # replies nobody takes: each worker blocks writing its reply
    with pytest.warns(UserWarning, match="pending call to `call`"):
        env.close()
    # Not terminated after a wait (-SIGTERM): the workers wrote their replies, read CLOSE and exited.
    assert [p.exitcode for p in processes] == [0, 0]


class SleepyStepEnv(MarkerEnv):
    """Its step creates the file ``began``, then sleeps: hung, as far as close() can tell."""

    def __init__(self, began: str) -> None:
        self.began = began

    def step(self, action):
        open(self.began, "w").close()
        time.sleep(30)
        return super().step(action)


@pytest.mark.timeout(30)
def test_close_with_a_timeout_gives_a_pending_step_that_long_then_terminates_the_workers(tmp_path) -> None:
    # A step that ends in time: the workers close their envs and exit on their own (gymnasium's order).
    env = TorchVectorizedEnv(MarkerEnv, num_workers=1, envs_per_worker=1)
    processes = env._pool.processes
    env.reset(seed=0)
    env.step_async(np.zeros(1, np.int64))
    with pytest.warns(UserWarning, match="pending call to `step`"):
        env.close(timeout=10)
    assert [p.exitcode for p in processes] == [0]
    # A step hung: terminated once the timeout is over (was: after CLOSE_TIMEOUT_S, 5 s, whatever the timeout).
    began = str(tmp_path / "began")
    env = TorchVectorizedEnv(lambda: SleepyStepEnv(began), num_workers=1, envs_per_worker=1)
    processes = env._pool.processes
    env.reset(seed=0)
    env.step_async(np.zeros(1, np.int64))
    deadline = time.monotonic() + 10
    while not os.path.exists(began) and time.monotonic() < deadline:  # the worker is in its step
        time.sleep(0.01)
    start = time.monotonic()
    with pytest.warns(UserWarning, match="pending call to `step`"):
        env.close(timeout=0.2)
    assert time.monotonic() - start < 3.0
    assert [p.exitcode for p in processes] == [-signal.SIGTERM]


@pytest.mark.skipif(_platform.PORTABLE, reason="the portable column's file has no seals (macOS has none)")
def test_the_doorbell_memory_cannot_be_shrunk_under_the_processes_mapping_it() -> None:
    memory = torchwm.process.doorbells.DoorbellMemory(2)
    try:
        with pytest.raises(PermissionError):
            os.ftruncate(memory.fd, 0)  # a shrunk memfd: SIGBUS at the next look at a doorbell
    finally:
        memory.close()


def test_ctrl_c_while_a_framed_reply_is_awaited_leaves_it_for_the_next_wait(monkeypatch):
    envs = TorchVectorizedEnv(lambda: gym.make("CartPole-v1"), 2, 1)
    try:
        envs.reset(seed=0)
        # Ctrl-C while the parent polls worker 0's pipe for the reply its doorbell announced.
        channel = envs._pool.channels[0]
        channel.readable_poll = CtrlCOnce(channel.readable_poll, "poll")
        envs.call_async("spec")
        with pytest.raises(KeyboardInterrupt):
            envs.call_wait(timeout=30)
        # Nothing of the reply was read: waiting again gets every worker's.
        assert [spec.id for spec in envs.call_wait(timeout=30)] == ["CartPole-v1"] * 2
        assert envs.step(np.zeros(2, np.int64))[0].shape == (2, 4)
    finally:
        envs.close()


def test_ctrl_c_half_way_through_a_reply_frame_shuts_the_workers_down(monkeypatch):
    envs = TorchVectorizedEnv(lambda: gym.make("CartPole-v1"), 2, 1)
    try:
        envs.reset(seed=0)
        processes = list(envs._pool.processes)
        channel_module = torchwm.process.channel  # the pool's channels read their frames with it
        monkeypatch.setattr(channel_module, "read_frame", CtrlCOnce(channel_module, "read_frame").read_frame)
        envs.call_async("spec")
        with pytest.raises(KeyboardInterrupt):
            envs.call_wait(timeout=30)
        # The rest of that frame would be read as the next: the workers are gone instead.
        assert envs._pool.closed and not any(process.is_alive() for process in processes)
        with pytest.raises(torchwm.errors.ClosedEnvironmentError):
            envs.step(np.zeros(2, np.int64))
    finally:
        envs.close()


@pytest.mark.timeout(60)
def test_ctrl_c_during_close_leaves_no_worker_behind(tmp_path):
    began = str(tmp_path / "began")
    envs = TorchVectorizedEnv(lambda: SleepyStepEnv(began), num_workers=1, envs_per_worker=1)
    processes = list(envs._pool.processes)
    envs.reset()
    envs.step_async(np.zeros(1, np.int64))
    # The worker inside its step (one that has not taken it yet would read CLOSE first and exit at
    # once): close() then waits for it.
    deadline = time.monotonic() + 30
    while not os.path.exists(began) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert os.path.exists(began), "the worker never started its step"
    previous = signal.getsignal(signal.SIGALRM)

    def ctrl_c(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGALRM, ctrl_c)
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.3)
        with pytest.raises(KeyboardInterrupt), pytest.warns(UserWarning, match="pending call to `step`"):
            envs.close()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    # The finalizer that close() ran does not run again: the interrupted close reaped the workers itself.
    assert not any(process.is_alive() for process in processes)


@pytest.mark.parametrize("path", ["shared", "pickled"])
def test_ctrl_c_as_the_step_goes_out_keeps_it_pending(monkeypatch, path):
    """Python handles a Ctrl-C between calls: here, as the call that rang the workers returns."""
    envs = TorchVectorizedEnv(lambda: gym.make("CartPole-v1"), 2, 1)
    try:
        envs.reset(seed=0)
        name = "step_shared" if path == "shared" else "send"
        pool_class = torchwm.process.pool.WorkerPool
        monkeypatch.setattr(pool_class, name, getattr(CtrlCOnce(pool_class, name, after=True), name))
        actions = np.zeros(2, np.int64) if path == "shared" else [0, 0]  # a list goes pickled
        with pytest.raises(KeyboardInterrupt):
            envs.step_async(actions)
        observations, rewards, *_ = envs.step_wait(timeout=30)  # the step went out: waiting gets it
        assert observations.shape == (2, 4) and rewards.tolist() == [1.0, 1.0]
        assert envs.step(np.zeros(2, np.int64))[0].shape == (2, 4)
    finally:
        envs.close()


def test_ctrl_c_as_the_doorbells_ring_keeps_the_step_pending():
    envs = TorchVectorizedEnv(lambda: gym.make("CartPole-v1"), 2, 1)
    try:
        envs.reset(seed=0)
        envs._pool.bells = CtrlCOnce(envs._pool.bells, "ring", after=True)  # rung, then Ctrl-C
        with pytest.raises(KeyboardInterrupt):
            envs.step_async(np.zeros(2, np.int64))
        observations, rewards, *_ = envs.step_wait(timeout=30)
        assert observations.shape == (2, 4) and rewards.tolist() == [1.0, 1.0]
        assert envs.step(np.zeros(2, np.int64))[0].shape == (2, 4)
    finally:
        envs.close()


@pytest.mark.parametrize(("num_workers", "kept"), [(1, True), (2, False)], ids=["last_frame", "first_of_two"])
def test_ctrl_c_as_a_frame_of_a_step_is_written(monkeypatch, num_workers, kept):
    """As the doorbells' ring for a step in shared memory: a Ctrl-C raised as the last frame of a pickled
    step is written finds the step out (kept pending); one as an earlier frame is written leaves the
    other workers without theirs (shut down)."""
    envs = TorchVectorizedEnv(lambda: gym.make("CartPole-v1"), num_workers, 1)
    try:
        envs.reset(seed=0)
        processes = list(envs._pool.processes)
        channel_module = torchwm.process.channel  # the pool's channels write their frames with it
        monkeypatch.setattr(
            channel_module, "write_frame", CtrlCOnce(channel_module, "write_frame", after=True).write_frame
        )
        with pytest.raises(KeyboardInterrupt):
            envs.step_async([0] * num_workers)  # a list goes pickled
        if kept:
            observations, rewards, *_ = envs.step_wait(timeout=30)
            assert observations.shape == (num_workers, 4) and rewards.tolist() == [1.0] * num_workers
            assert envs.step([0] * num_workers)[0].shape == (num_workers, 4)
        else:
            assert envs.closed and not any(process.is_alive() for process in processes)
            with pytest.raises(torchwm.errors.ClosedEnvironmentError):
                envs.step_wait(timeout=30)
    finally:
        envs.close()


def _wchan(tid: int) -> str:
    """Where in the kernel thread ``tid`` of this process waits (``pipe_write``: blocked writing to a pipe)."""
    with open(f"/proc/self/task/{tid}/wchan") as wchan:
        return wchan.read()


@pytest.mark.timeout(30)
def test_a_ctrl_c_that_came_during_a_frame_write_finds_its_count_stored():
    """Python raises a Ctrl-C that came during a write as the call returns: ``write_frame(written=)`` has
    stored the write's count by then, so that ``send`` can tell its last frame went out."""
    read_end, write_end = os.pipe()
    os.set_blocking(write_end, False)
    with contextlib.suppress(BlockingIOError):
        while True:  # a full pipe: the frame's write waits for room
            os.write(write_end, bytes(4096))
    os.set_blocking(write_end, True)
    main, seen = threading.get_native_id(), []

    def ctrl_c_then_room() -> None:
        deadline = time.monotonic() + 10
        while "pipe_write" not in _wchan(main) and time.monotonic() < deadline:
            time.sleep(0.01)
        if "pipe_write" in _wchan(main):  # the main thread is in its write
            seen.append(True)
            signal.pthread_kill(threading.get_ident(), signal.SIGINT)  # to this thread: the write goes on
        os.read(read_end, 1 << 20)  # room: the write ends

    def ctrl_c(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    data, written, interrupted = torchwm.process.protocol.frame(Message.STEP, [0, 1]), [], False
    previous = signal.signal(signal.SIGINT, ctrl_c)
    helper = threading.Thread(target=ctrl_c_then_room)
    helper.start()
    try:
        write_frame(write_end, data, lambda: True, written)
    except KeyboardInterrupt:
        interrupted = True
    finally:
        signal.signal(signal.SIGINT, previous)
        helper.join()
        os.close(read_end)
        os.close(write_end)
    if not seen:
        pytest.skip("/proc does not tell where the main thread waits (wchan)")
    assert interrupted and written == [len(data)]


@pytest.fixture
def two_batches():
    """Pool mode, two workers of one env, batches of one, reset: the env of the batch waiting for its
    actions (``first``) and the other, whose reset reply is not taken yet; closed afterwards."""
    envs = TorchVectorizedEnv(lambda: gym.make("CartPole-v1"), 2, 1, batch_size=1)
    try:
        _, info = envs.reset(seed=0)
        yield envs, int(info["env_id"][0])
    finally:
        envs.close()


@pytest.mark.parametrize("wait", ["get_attr", "call_wait"])
def test_ctrl_c_as_the_replies_of_the_steps_in_flight_are_set_aside_loses_none(two_batches, monkeypatch, wait):
    """A call in pool mode sets the replies not taken aside (``stash``) while it runs. A Ctrl-C raised as
    that returns: the call is dropped (get_attr) or still pending (call_wait), the replies are kept."""
    envs, first = two_batches
    pool_class = torchwm.process.pool.WorkerPool
    monkeypatch.setattr(pool_class, "stash", CtrlCOnce(pool_class, "stash", after=True).stash)
    if wait == "get_attr":
        with pytest.raises(KeyboardInterrupt):
            envs.get_attr("np_random_seed")
    else:
        envs.call_async("np_random_seed")
        with pytest.raises(KeyboardInterrupt):
            envs.call_wait(timeout=30)
        assert envs.call_wait(timeout=30) == (0, 1)  # the call goes out when waited for again
    envs.send(np.zeros(1, np.int64))
    *_, info = envs.recv()
    assert info["env_id"].tolist() == [1 - first]  # the other env's reset, in before the step sent


def test_ctrl_c_as_a_reset_drops_the_steps_in_flight_leaves_the_reset_under_way(two_batches, monkeypatch):
    envs, _ = two_batches
    envs.send(np.zeros(1, np.int64))  # a step in flight: the reset drops it
    pool_class = torchwm.process.pool.WorkerPool
    monkeypatch.setattr(pool_class, "drop_all", CtrlCOnce(pool_class, "drop_all", after=True).drop_all)
    with pytest.raises(KeyboardInterrupt):
        envs.reset(seed=1)
    # As a reset interrupted later: pending, dropped by the next reset; no step to receive.
    with pytest.raises(torchwm.errors.AlreadyPendingCallError):
        envs.send(np.zeros(1, np.int64))
    with pytest.raises(torchwm.errors.NoAsyncCallError):
        envs.recv()
    observations, info = envs.reset(seed=1)
    assert observations.shape == (1, 4) and info["env_id"].tolist() in ([0], [1])
    envs.send(np.zeros(1, np.int64))
    assert envs.recv()[4]["env_id"].tolist() in ([0], [1])


def test_ctrl_c_once_the_replies_of_a_call_are_taken_leaves_nothing_pending(two_batches, monkeypatch):
    """The replies are lost (as gymnasium's), the call is over, and the replies set aside for it are back."""
    envs, first = two_batches
    pool_class = torchwm.process.pool.WorkerPool
    monkeypatch.setattr(pool_class, "gather", CtrlCOnce(pool_class, "gather", after=True).gather)
    envs.call_async("np_random_seed")
    with pytest.raises(KeyboardInterrupt):
        envs.call_wait(timeout=30)
    with pytest.raises(torchwm.errors.NoAsyncCallError):
        envs.call_wait(timeout=30)
    envs.send(np.zeros(1, np.int64))
    *_, info = envs.recv()
    assert info["env_id"].tolist() == [1 - first]
    assert envs.get_attr("np_random_seed") == (0, 1)

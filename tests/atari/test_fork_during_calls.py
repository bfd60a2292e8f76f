"""fork() while another thread is inside a call of an AtariVectorEnv: in the child, the inherited env's
calls fail with the documented "created before fork()" error and close() returns (the lock it would
wait on belongs to a thread the child does not have), and a new env works. Never a hang."""

from __future__ import annotations

import os
import threading
import time

import gymnasium as gym
import numpy as np
import pytest

import torchwm

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")

CHILD_DEADLINE_S = 30.0


def _child(env: torchwm.AtariVectorEnv) -> int:
    """Runs in the child; the exit code says what went wrong (0: all as documented)."""
    try:
        env.step(np.zeros(env.num_envs, dtype=np.int64))
        return 2  # the inherited env must refuse to step
    except torchwm.EnvStateError as error:
        # Closed in the parent before the fork (the "close" case), or the fork error.
        closed_before = isinstance(error, gym.error.ClosedEnvironmentError)
        if not closed_before and "fork" not in str(error):
            return 3
    except Exception:
        return 4
    env.close()
    fresh = torchwm.AtariVectorEnv("pong", 2)
    fresh.reset(seed=0)
    fresh.step(np.zeros(2, dtype=np.int64))
    fresh.close()
    return 0


def _wait(pid: int) -> int:
    deadline = time.monotonic() + CHILD_DEADLINE_S
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        time.sleep(0.01)
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    pytest.fail("the forked child hung")


def _busy(env: torchwm.AtariVectorEnv, call: str, stop: threading.Event) -> None:
    actions = np.zeros(env.num_envs, dtype=np.int64)
    while not stop.is_set():
        try:
            if call == "step":
                env.step(actions)
            elif call == "send_recv":
                env.send(actions)
                env.recv()
            elif call == "reset":
                env.reset(seed=1)
            elif call == "close":
                env.close()
                return
        except torchwm.TorchwmError:
            return


@pytest.mark.parametrize("call", ["step", "send_recv", "reset", "close"])
def test_fork_while_another_thread_is_in_a_call(call: str) -> None:
    for attempt in range(8):
        env = torchwm.AtariVectorEnv("breakout", 4, max_num_frames_per_episode=200)
        env.reset(seed=attempt)
        stop = threading.Event()
        worker = threading.Thread(target=_busy, args=(env, call, stop))
        worker.start()
        time.sleep(0.002 * (attempt + 1))
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                code = _child(env)
            finally:
                os._exit(code)
        try:
            assert _wait(pid) == 0, f"attempt {attempt}"
        finally:
            stop.set()
            worker.join()
            env.close()

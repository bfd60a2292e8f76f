"""The worker process: runs ``envs_per_worker`` envs in a loop, one message per step for all of them.

Messages are raw bytes on the pipe. A step is the one-byte doorbell ``b"s"`` when the actions are in
the shared action buffer; every other command is pickled. Observations, rewards and flags go
straight into shared memory (views made once); a step's reply is ``b"k"`` unless an env returned an
info. Every exception is caught and sent back with its traceback: an exception in ``reset``/``step``
ends the worker (``"error"``), one in ``call``/``get_attr``/``set_attr`` is the caller's and the
worker goes on (``"raise"``). An idle worker exits when its parent process is gone.
"""

from __future__ import annotations

import os
import pickle
import select
import time
import traceback
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space, concatenate, iterate, read_from_shared_memory

from torchwm.vector.old_api import adapt, five_tuple, reset_env, reset_keywords
from torchwm.vector.shared_views import slice_views

# How long an idle worker polls for the next command (yielding its core) before it sleeps.
SPIN_SECONDS = 0.0003
# How often a sleeping worker checks that its parent process is still there.
PARENT_CHECK_SECONDS = 0.5

STEP = b"s"  # doorbell: the actions are in the shared action buffer
STEP_DONE = b"k"  # a step's reply when no env returned an info (everything else is in shared memory)


def _make_envs(factories: list[Any]) -> list[Any]:
    import cloudpickle

    envs = []
    for factory in factories:
        if isinstance(factory, bytes):
            factory = cloudpickle.loads(factory)
        envs.append(adapt(factory()))
    return envs


def _parent_gone(first_ppid: int, parent_pid: int) -> bool:
    """True once the process that created the env has died (SIGKILL included): this worker was
    re-parented, or the creator's pid no longer exists (forkserver workers are not its children)."""
    if os.getppid() != first_ppid:
        return True
    try:
        os.kill(parent_pid, 0)
    except ProcessLookupError:
        return True
    except OSError:
        pass
    return False


def send_message(fd: int, data: bytes) -> None:
    """``Connection.send_bytes`` without its per-call checks (same framing: a 4-byte big-endian length)."""
    message = len(data).to_bytes(4, "big") + data
    while message:
        message = message[os.write(fd, message) :]


def recv_message(fd: int) -> bytes:
    """``Connection.recv_bytes`` for messages framed as :func:`send_message`'s; ``EOFError`` at EOF.
    A one-byte message (the doorbell, a step's reply) is one ``read``."""
    chunk = os.read(fd, 5)
    while len(chunk) < 4:
        more = os.read(fd, 4 - len(chunk))
        if not more:
            raise EOFError
        chunk += more
    size = int.from_bytes(chunk[:4], "big", signed=True)
    if size < 0:
        raise OSError("message too long for this protocol")
    body = [chunk[4:]]
    remaining = size - len(body[0])
    while remaining > 0:
        more = os.read(fd, remaining)
        if not more:
            raise EOFError
        body.append(more)
        remaining -= len(more)
    return b"".join(body)


def _wait_for_message(fd: int, poll: Any, first_ppid: int, parent_pid: int) -> bytes | None:
    """The next message, or None when the parent is gone. Cheap envs answer faster than a sleeping
    process wakes up: poll (yielding the core to the parent) for a moment before sleeping.

    ``poll`` is a ``select.poll`` object on the pipe: ``Connection.poll`` builds a selector per call."""
    if not poll(0):
        deadline = time.perf_counter() + SPIN_SECONDS
        while not poll(0):
            if time.perf_counter() >= deadline:
                while not poll(PARENT_CHECK_SECONDS * 1000):
                    if _parent_gone(first_ppid, parent_pid):
                        return None
                break
            os.sched_yield()
    return recv_message(fd)


def _remote_error(env_index: int, error: BaseException) -> tuple:
    """What the parent needs to raise ``error`` again: the pickled exception when it pickles."""
    try:
        pickled = pickle.dumps(error)
        pickle.loads(pickled)
    except Exception:
        pickled = None
    return (env_index, type(error).__name__, str(error), traceback.format_exc(), pickled)


def worker_main(
    first_env: int,
    factories: list[Any],
    pipe: Any,
    parent_pipe: Any,
    shared_memory: Any,
    step_buffers: Any,
    action_buffer: Any,
    observation_space: Any,
    action_space: Any,
    total_envs: int,
    autoreset_mode: AutoresetMode,
    parent_pid: int,
) -> None:
    """Entry point of one worker process (``first_env`` is its first env's global index).

    ``step_buffers`` are shared (rewards, terminations, truncations) arrays for all envs and
    ``action_buffer`` (or None) the shared batch of actions; this worker reads and writes its rows."""
    first_ppid = os.getppid()
    if parent_pipe is not None:
        parent_pipe.close()
    envs: list[Any] = []
    current = first_env
    try:
        envs = _make_envs(factories)
        pipe.send_bytes(pickle.dumps(("ready", [(env.observation_space, env.action_space) for env in envs])))
        count = len(envs)
        keywords = [reset_keywords(env) for env in envs]
        views = None
        if shared_memory is not None:
            all_views = read_from_shared_memory(observation_space, shared_memory, n=total_envs)
            views = slice_views(all_views, first_env, first_env + count)
        rows = slice(first_env, first_env + count)
        rewards = np.frombuffer(step_buffers[0], dtype=np.float64)[rows]
        terminations = np.frombuffer(step_buffers[1], dtype=np.bool_)[rows]
        truncations = np.frombuffer(step_buffers[2], dtype=np.bool_)[rows]
        worker_action_space = batch_space(action_space, count)
        shared_actions = None
        if action_buffer is not None:
            batched = batch_space(action_space, total_envs)
            shared_actions = np.frombuffer(action_buffer, dtype=batched.dtype).reshape(batched.shape)[rows]
        autoreset = [False] * count
        plain_actions = isinstance(worker_action_space, (spaces.Box, spaces.MultiDiscrete, spaces.MultiBinary))
        observations: list[Any] = [None] * count
        next_step = autoreset_mode == AutoresetMode.NEXT_STEP
        poller = select.poll()
        fd = pipe.fileno()
        poller.register(fd, select.POLLIN | select.POLLERR | select.POLLHUP)
        poll = poller.poll
        while True:
            message = _wait_for_message(fd, poll, first_ppid, parent_pid)
            if message is None:
                break
            if message == STEP:
                command, data = "step", shared_actions.copy()  # the env may keep its action: a private copy
            else:
                command, data = pickle.loads(message)
            if command == "step":
                if isinstance(data, tuple) and len(data) == 3 and isinstance(data[2], bytes):
                    dtype, shape, raw = data
                    data = np.frombuffer(raw, dtype=np.dtype(dtype)).reshape(shape)
                # Plain batches iterate as their rows (what gymnasium's iterate does for them).
                actions = data if plain_actions and isinstance(data, np.ndarray) else iterate(worker_action_space, data)
                infos = None
                # Python lists in the loop, one write per shared array after it: a numpy item costs more.
                step_rewards = [0.0] * count
                step_terminations = [False] * count
                step_truncations = [False] * count
                for i, (env, action) in enumerate(zip(envs, actions)):
                    current = first_env + i
                    if next_step and autoreset[i]:
                        observations[i], info = reset_env(env, keywords[i], None, None, observation_space)
                    else:
                        result = env.step(action)
                        if len(result) != 5:
                            result = five_tuple(result)
                        observations[i], step_rewards[i], terminated, truncated, info = result
                        if terminated or truncated:
                            step_terminations[i] = terminated
                            step_truncations[i] = truncated
                            if not next_step:
                                infos = infos or [[] for _ in envs]
                                infos[i].append({"final_obs": observations[i], "final_info": info})
                                observations[i], info = reset_env(env, keywords[i], None, None, observation_space)
                    if info:
                        infos = infos or [[] for _ in envs]
                        infos[i].append(info)
                rewards[:] = step_rewards
                terminations[:] = step_terminations
                truncations[:] = step_truncations
                autoreset = [t or u for t, u in zip(step_terminations, step_truncations)]
                payload = _publish(observation_space, observations, views)
                if payload is None and infos is None:
                    send_message(fd, STEP_DONE)
                else:
                    send_message(fd, pickle.dumps(("ok", (payload, infos))))
            elif command == "reset":
                seeds, options, mask = data
                infos = []
                for i, env in enumerate(envs):
                    current = first_env + i
                    if mask is not None and not mask[i]:
                        infos.append(None)
                        continue
                    observations[i], info = reset_env(env, keywords[i], seeds[i], options, observation_space)
                    autoreset[i] = False
                    terminations[i] = truncations[i] = False
                    infos.append([info] if info else [])
                send_message(fd, pickle.dumps(("ok", (_publish(observation_space, observations, views), infos))))
            elif command in ("call", "get_attr", "set_attr"):
                # The caller's mistake (a missing attribute, a method that raises): report it, carry on.
                results = []
                try:
                    for i, env in enumerate(envs):
                        current = first_env + i
                        if command == "call":
                            name, args, kwargs = data
                            attr = env.get_wrapper_attr(name)
                            results.append(attr(*args, **kwargs) if callable(attr) else attr)
                        elif command == "get_attr":
                            results.append(env.get_wrapper_attr(data))
                        else:
                            name, values = data
                            env.set_wrapper_attr(name, values[i])
                    reply = pickle.dumps(("ok", results))
                except Exception as error:
                    reply = pickle.dumps(("raise", _remote_error(current, error)))
                send_message(fd, reply)
            elif command == "close":
                break
            else:
                raise RuntimeError(f"unknown command {command!r}")
    except (KeyboardInterrupt, EOFError, BrokenPipeError):
        pass
    except BaseException as error:  # report everything: the parent must never wait on a dead worker
        try:
            pipe.send_bytes(pickle.dumps(("error", _remote_error(current, error))))
        except Exception:
            pass
    finally:
        for env in envs:
            try:
                env.close()
            except Exception:
                pass
        try:
            pipe.close()
        except Exception:
            pass


def _publish(space: Any, observations: list[Any], views: Any) -> Any:
    """Writes observations into this worker's shared-memory rows, or returns them to be pickled."""
    if views is None:
        return observations
    concatenate(space, observations, views)
    return None

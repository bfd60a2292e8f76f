"""The worker process: runs ``envs_per_worker`` envs in a loop, one message per step for all of them.

Observations go straight into shared memory (views made once); only actions, rewards, flags and
non-empty infos cross the pipe. Every exception is caught and sent back with its traceback.
"""

from __future__ import annotations

import os
import time
import traceback
from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space, concatenate, iterate, read_from_shared_memory

from torchwm.vector.old_api import adapt
from torchwm.vector.shared_views import slice_views


# How long an idle worker polls for the next command before it sleeps.
SPIN_SECONDS = 0.0003


def _make_envs(factories: list[Any]) -> list[Any]:
    import cloudpickle

    envs = []
    for factory in factories:
        if isinstance(factory, bytes):
            factory = cloudpickle.loads(factory)
        envs.append(adapt(factory()))
    return envs


def worker_main(
    first_env: int,
    factories: list[Any],
    pipe: Any,
    parent_pipe: Any,
    shared_memory: Any,
    step_buffers: Any,
    observation_space: Any,
    action_space: Any,
    total_envs: int,
    autoreset_mode: AutoresetMode,
) -> None:
    """Entry point of one worker process (``first_env`` is its first env's global index).

    ``step_buffers`` are shared (rewards, terminations, truncations) arrays for all envs; this
    worker writes its rows. A step's reply carries only the infos, or None when all are empty."""
    if parent_pipe is not None:
        parent_pipe.close()
    envs: list[Any] = []
    current = first_env
    try:
        envs = _make_envs(factories)
        pipe.send(("ready", [(env.observation_space, env.action_space) for env in envs]))
        views = None
        if shared_memory is not None:
            all_views = read_from_shared_memory(observation_space, shared_memory, n=total_envs)
            views = slice_views(all_views, first_env, first_env + len(envs))
        count = len(envs)
        rows = slice(first_env, first_env + count)
        rewards = np.frombuffer(step_buffers[0], dtype=np.float64)[rows]
        terminations = np.frombuffer(step_buffers[1], dtype=np.bool_)[rows]
        truncations = np.frombuffer(step_buffers[2], dtype=np.bool_)[rows]
        worker_action_space = batch_space(action_space, count)
        autoreset = np.zeros(count, dtype=bool)
        observations: list[Any] = [None] * count
        while True:
            # Cheap envs answer faster than a sleeping process wakes up: poll (yielding the core to
            # the parent) for a moment before sleeping on the pipe.
            deadline = time.perf_counter() + SPIN_SECONDS
            while not pipe.poll(0) and time.perf_counter() < deadline:
                os.sched_yield()
            command, data = pipe.recv()
            if command == "reset":
                seeds, options, mask = data
                infos = []
                for i, env in enumerate(envs):
                    current = first_env + i
                    if mask is not None and not mask[i]:
                        infos.append(None)
                        continue
                    observations[i], info = env.reset(seed=seeds[i], options=options)
                    autoreset[i] = False
                    infos.append([info] if info else [])
                pipe.send(("ok", (_publish(observation_space, observations, views), infos)))
            elif command == "step":
                if isinstance(data, tuple) and len(data) == 3 and isinstance(data[2], bytes):
                    dtype, shape, raw = data
                    data = np.frombuffer(raw, dtype=np.dtype(dtype)).reshape(shape)
                infos = []
                any_info = False
                for i, (env, action) in enumerate(zip(envs, iterate(worker_action_space, data))):
                    current = first_env + i
                    added: list[dict] = []
                    if autoreset_mode == AutoresetMode.NEXT_STEP and autoreset[i]:
                        observations[i], info = env.reset()
                        rewards[i], terminations[i], truncations[i] = 0.0, False, False
                    else:
                        observations[i], rewards[i], terminations[i], truncations[i], info = env.step(action)
                        if autoreset_mode == AutoresetMode.SAME_STEP and (terminations[i] or truncations[i]):
                            added.append({"final_obs": observations[i], "final_info": info})
                            observations[i], info = env.reset()
                    if info:
                        added.append(info)
                    any_info = any_info or bool(added)
                    infos.append(added)
                autoreset = terminations | truncations
                payload = _publish(observation_space, observations, views)
                pipe.send(("ok", (payload, infos if any_info else None)))
            elif command == "call":
                name, args, kwargs = data
                results = []
                for i, env in enumerate(envs):
                    current = first_env + i
                    attr = env.get_wrapper_attr(name)
                    results.append(attr(*args, **kwargs) if callable(attr) else attr)
                pipe.send(("ok", results))
            elif command == "get_attr":
                results = []
                for i, env in enumerate(envs):
                    current = first_env + i
                    results.append(env.get_wrapper_attr(data))
                pipe.send(("ok", results))
            elif command == "set_attr":
                name, values = data
                for i, (env, value) in enumerate(zip(envs, values)):
                    current = first_env + i
                    env.set_wrapper_attr(name, value)
                pipe.send(("ok", None))
            elif command == "close":
                break
            else:
                raise RuntimeError(f"unknown command {command!r}")
    except (KeyboardInterrupt, EOFError, BrokenPipeError):
        pass
    except BaseException as error:  # report everything: the parent must never wait on a dead worker
        try:
            pipe.send(("error", (current, type(error).__name__, str(error), traceback.format_exc())))
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

"""The worker process: runs ``envs_per_worker`` envs, one message per command for all of them.

Commands arrive on the worker's doorbell (process/doorbells.py): a step through shared memory needs
nothing else, any other command is the next frame on the pipe. Observations, rewards and flags go
straight into shared memory (views made once); a step's reply is the doorbell alone (``STEP_DONE``)
unless an env returned an info or observations travel through the pipe.
Every exception is sent back with its traceback: one in start-up, or a ``BaseException`` that is not
an ``Exception`` (``sys.exit`` in an env), stops the worker (``FAILED``); any other is reported
(``RAISED``, a list of them: an env's exception in ``step``/``reset``/``call``/``set_attr`` does not stop
the command for the worker's other envs, as each env is a worker of its own in gymnasium's
``AsyncVectorEnv``) and the worker waits for the next command: the parent decides whether the vector env
survives it. An idle worker exits when the process that created the env is gone.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space, concatenate, iterate

import torchwm._platform as _platform
from torchwm.process.buffers import SharedBuffers
from torchwm.process.channel import Channel
from torchwm.process.doorbells import DoorbellMemory, Patience
from torchwm.process.old_api import adapt, five_tuple, reset_env, reset_keywords
from torchwm.process.protocol import STEP_DONE_FRAME, Message, decode, frame
from torchwm.process.remote_errors import RemoteError, capture
from torchwm.process.sb3_calls import sb3_call

# How often a sleeping worker checks that its parent process is still there.
PARENT_CHECK_SECONDS = 0.5
_U32 = 0xFFFFFFFF


class EnvOptions(tuple):
    """A reset's options, one dict (or None) per env: SB3's ``set_options`` with a list (``to_sb3()``), as
    its ``SubprocVecEnv`` gives each env its own. Any other reset passes one dict to every env."""


@dataclass(frozen=True)
class WorkerConfig:
    """Everything a worker needs (pickled to it under the spawn/forkserver start methods)."""

    index: int  # this worker's index (its doorbell)
    first_env: int  # global index of this worker's first env
    factories: list[Any]  # env factories, or cloudpickled ones (bytes)
    buffers: SharedBuffers
    doorbells: DoorbellMemory
    patience: Patience  # how this worker waits for its next command
    autoreset_mode: AutoresetMode
    parent_pid: int
    permits: Any = None  # max_concurrency's semaphore: held while stepping or resetting envs
    agents: Any = None  # PettingZoo ParallelEnvs: env 0's AgentLayout (process/agents.py); None otherwise


class Worker:
    """One worker's envs and its command loop: one method per command."""

    def __init__(self, config: WorkerConfig, channel: Channel) -> None:
        self.config = config
        self.channel = channel
        self._parent_gone = _platform.parent_gone(config.parent_pid)
        self.bells = config.doorbells.bells
        self.envs: list[Any] = []
        self.served = 0  # commands received so far (the doorbell's count, modulo 2**32): the one served last
        self.current = config.first_env  # the env being called (named in error reports)
        self.handlers: dict[Message, Callable[[Any], bytes]] = {
            Message.STEP: self.step,
            Message.RESET: self.reset,
            Message.CALL: self.call,
            Message.SET_ATTR: self.set_attr,
            Message.SB3_CALL: self.sb3_call,
        }
        self.limited = (self._step, self.step, self.reset)  # the commands max_concurrency limits

    def run(self) -> None:
        try:
            self._start()
            self.channel.write(frame(Message.READY, self._env_spaces()), self._parent_alive)
            self._serve()
        except (KeyboardInterrupt, EOFError, BrokenPipeError):
            pass
        except BaseException as error:  # report everything: the parent must never wait on a dead worker
            with contextlib.suppress(Exception):
                self._reply(frame(Message.FAILED, capture(self.current, error)))
        finally:
            for env in self.envs:
                with contextlib.suppress(Exception):
                    env.close()

    def _start(self) -> None:
        """Makes the envs and the views of this worker's rows; everything that can fail before READY."""
        import cloudpickle

        config, buffers = self.config, self.config.buffers
        for i, factory in enumerate(config.factories):
            self.current = config.first_env + i
            make = cloudpickle.loads(factory) if isinstance(factory, bytes) else factory
            self.envs.append(adapt(make()))
        count = len(self.envs)
        self.keywords = [reset_keywords(env) for env in self.envs]
        self.views = buffers.views(config.first_env, config.first_env + count)
        self.observation_space = buffers.observation_space
        self.action_space = batch_space(buffers.action_space, count)
        self.plain_actions = isinstance(self.action_space, (spaces.Box, spaces.MultiDiscrete, spaces.MultiBinary))
        self.autoreset = [False] * count
        self.next_step = config.autoreset_mode == AutoresetMode.NEXT_STEP
        self.observations: list[Any] = [None] * count
        self.box_rows = BoxRows.of(self.views.observations)

    def _env_spaces(self) -> list[tuple[spaces.Space, spaces.Space]]:
        """Each env's (observation, action) spaces, for the parent's check."""
        return [(env.observation_space, env.action_space) for env in self.envs]

    def _serve(self) -> None:
        while True:
            kind = self._next_command(self.served)
            if kind is None:
                return
            self.served = (self.served + 1) & _U32
            if kind == Message.STEP_SHARED:
                assert self.views.actions is not None
                handler: Callable[[Any], bytes] = self._step
                # Visible: the parent wrote them before its ring, which wait_command acquired.
                payload = self.views.actions.copy()  # the env may keep its action: a private copy
            else:
                kind, payload = decode(self.channel.read(self._parent_alive))
                if kind == Message.CLOSE:
                    return
                handler = self.handlers[kind]
            self._reply(self._handle(handler, payload, handler in self.limited))

    def _reply(self, reply: bytes) -> None:
        """Rings the parent's doorbell, then writes the reply's frame unless the step's results are all
        in shared memory. The bell first: a frame larger than the pipe's buffer is read while written."""
        if reply is STEP_DONE_FRAME:
            # The results written into shared memory before this call are published by its Release; the
            # parent reads them after its wait's Acquire (process/doorbells.py).
            self.bells.complete(self.config.index, Message.STEP_DONE, self.served)
            return
        self.bells.complete(self.config.index, Message.FRAME, self.served)
        self.channel.write(reply, self._parent_alive)

    def _handle(self, handler: Callable[[Any], bytes], payload: Any, limited: bool) -> bytes:
        """The reply to one command; ``limited`` ones run holding a ``max_concurrency`` permit."""
        permits = self.config.permits if limited else None
        if permits is not None:
            permits.acquire()
        try:
            return handler(payload)
        except Exception as error:
            return frame(Message.RAISED, [capture(self.current, error)])
        finally:
            if permits is not None:
                permits.release()

    def _next_command(self, seen: int) -> int | None:
        """The kind of the command after the ``seen``-th, or None when the parent is gone."""
        index, patience = self.config.index, self.config.patience
        while True:
            kind = self.bells.wait_command(index, seen, patience.spin_s, patience.yield_s, PARENT_CHECK_SECONDS)
            if kind is not None:
                return kind
            if self._parent_gone():
                return None

    def _parent_alive(self) -> bool:
        """False once the process that created the env has died (``_platform.parent_gone``)."""
        return not self._parent_gone()

    # ------------------------------------------------------------------------------------ commands

    def step(self, payload: Any) -> bytes:
        """Actions in the message: raw bytes of an array, rows of a dict/tuple batch, or one per env."""
        if isinstance(payload, tuple) and len(payload) == 3 and isinstance(payload[2], bytes):
            dtype, shape, raw = payload
            payload = np.frombuffer(raw, dtype=np.dtype(dtype)).reshape(shape)
        return self._step(payload)

    def _step(self, batch: Any) -> bytes:
        # Plain batches iterate as their rows (what gymnasium's iterate does for them).
        actions: Any = batch
        if not (isinstance(batch, list) or (self.plain_actions and isinstance(batch, np.ndarray))):
            actions = iterate(self.action_space, batch)
        envs, observations, autoreset = self.envs, self.observations, self.autoreset
        count = len(envs)
        infos: list[list[dict]] | None = None
        info: Any
        # Python lists in the loop, one write per shared array after it: a numpy item costs more.
        rewards, terminations, truncations = [0.0] * count, [False] * count, [False] * count
        raised: list[RemoteError] | None = None
        i = 0
        try:
            for i, action in enumerate(actions):  # the common case inline: this loop is the hot path
                try:
                    if autoreset[i] and self.next_step:
                        info = self._reset_ended(i)
                    else:
                        result = envs[i].step(action)
                        if len(result) != 5:
                            result = five_tuple(result)
                        observations[i], rewards[i], terminated, truncated, info = result
                        if terminated or truncated:
                            terminations[i], truncations[i] = terminated, truncated
                            info = self._episode_ended(i, info)
                except Exception as error:  # the envs after it step all the same, as gymnasium's workers
                    raised = raised or []
                    raised.append(capture(self.config.first_env + i, error))
                    continue
                if info:
                    infos = infos or [[] for _ in range(count)]
                    infos[i].extend(info if isinstance(info, list) else [info])
        except BaseException:
            self.current = self.config.first_env + i
            raise
        if raised is not None:
            self.autoreset = [t or u for t, u in zip(terminations, truncations)]
            return frame(Message.RAISED, raised)
        views = self.views
        views.rewards[:] = rewards
        views.terminations[:] = terminations
        views.truncations[:] = truncations
        self.autoreset = [t or u for t, u in zip(terminations, truncations)]
        payload = self._publish()
        if payload is None and infos is None:
            return STEP_DONE_FRAME
        return frame(Message.OK, (payload, infos))

    def _reset_ended(self, i: int) -> dict:
        """NEXT_STEP: the step after env ``i``'s episode ended resets it; returns the reset's info."""
        self.observations[i], info = reset_env(self.envs[i], self.keywords[i], None, None, self.observation_space)
        return info

    def _episode_ended(self, i: int, info: dict) -> dict | list[dict]:
        """SAME_STEP: resets env ``i`` at once, its final observation and info as gymnasium's
        ``final_obs``/``final_info``; returns the infos to batch. Other modes: ``info`` as it is."""
        if self.config.autoreset_mode != AutoresetMode.SAME_STEP:
            return info
        # In the order of AsyncVectorEnv's info (its SyncVectorEnv puts final_obs first).
        final = {"final_info": info, "final_obs": self.observations[i]}
        self.observations[i], info = reset_env(self.envs[i], self.keywords[i], None, None, self.observation_space)
        return [final, info] if info else [final]

    def reset(self, payload: Any) -> bytes:
        seeds, options, mask = payload
        infos: list[list[dict] | None] = []
        views = self.views
        raised: list[RemoteError] = []
        for i, env in enumerate(self.envs):
            self.current = self.config.first_env + i
            if mask is not None and not mask[i]:
                infos.append(None)
                continue
            env_options = options[i] if isinstance(options, EnvOptions) else options
            try:
                self.observations[i], info = reset_env(
                    env, self.keywords[i], seeds[i], env_options, self.observation_space
                )
            except Exception as error:  # the envs after it reset all the same, as gymnasium's workers
                raised.append(capture(self.current, error))
                infos.append(None)
                continue
            self.autoreset[i] = False
            views.terminations[i] = views.truncations[i] = False
            views.rewards[i] = 0.0  # pool mode returns a reset's rows from recv, as steps of reward 0
            infos.append([info] if info else [])
        if raised:
            return frame(Message.RAISED, raised)
        return frame(Message.OK, (self._publish(), infos))

    def call(self, payload: Any) -> bytes:
        name, args, kwargs = payload

        def call_one(env: Any, i: int) -> Any:
            attr = env.get_wrapper_attr(name)
            return attr(*args, **kwargs) if callable(attr) else attr

        return self._each_env(call_one)

    def set_attr(self, payload: Any) -> bytes:
        name, values = payload
        return self._each_env(lambda env, i: env.set_wrapper_attr(name, values[i]))

    def sb3_call(self, payload: Any) -> bytes:
        """SB3's per-env call on the listed envs (local indices, in the caller's order, repeats included)."""
        call, name, args, kwargs, local_indices = payload
        results = []
        for i in local_indices:
            self.current = self.config.first_env + i
            results.append(self.sb3_call_on(self.envs[i], call, name, args, kwargs))
        return frame(Message.OK, results)

    @staticmethod
    def sb3_call_on(env: Any, call: str, name: Any, args: tuple, kwargs: dict[str, Any]) -> Any:
        """One env's SB3 call (``torchwm.process.sb3_calls``); a worker of other envs answers its own way."""
        return sb3_call(env, call, name, args, kwargs)

    def _each_env(self, function: Callable[[Any, int], Any]) -> bytes:
        """``function(env, i)`` for each env, every env even after one raised (as gymnasium's workers,
        one an env, each run the call): the exceptions are reported together (``RAISED``), in env order."""
        results = []
        raised: list[RemoteError] = []
        for i, env in enumerate(self.envs):
            self.current = self.config.first_env + i
            try:
                results.append(function(env, i))
            except Exception as error:
                raised.append(capture(self.current, error))
        if raised:
            return frame(Message.RAISED, raised)
        return frame(Message.OK, results)

    def _publish(self) -> Any:
        """Writes observations into this worker's shared-memory rows, or returns them to be pickled."""
        if self.views.observations is None:
            return self.observations
        if self.box_rows is None or not self.box_rows.write(self.observations):
            concatenate(self.observation_space, self.observations, self.views.observations)
        return None


class BoxRows:
    """A worker's observation rows of a Box space, written in one ``np.concatenate`` when every
    observation is an array of the rows' exact shape and dtype: what gymnasium's ``concatenate``
    (``np.stack(..., out=rows)``) writes then, without its dispatch and per-array checks, which cost
    more than the copy (measured: 12 us for 4 CartPole observations against 1 us). Anything else
    takes gymnasium's path, with its conversions and its errors."""

    def __init__(self, rows: np.ndarray) -> None:
        self.shape, self.dtype = rows.shape[1:], rows.dtype
        self.flat = rows.reshape(-1, *self.shape[1:])  # rows end to end: a view (rows are C-contiguous)

    @classmethod
    def of(cls, rows: Any) -> BoxRows | None:
        """For an array of rows of at least one dimension each (a Box's), else None."""
        if isinstance(rows, np.ndarray) and rows.ndim >= 2 and rows.flags.c_contiguous:
            return cls(rows)
        return None

    def write(self, observations: list[Any]) -> bool:
        """Writes ``observations``; False (nothing written) unless each is an array of the rows' shape and dtype."""
        shape, dtype = self.shape, self.dtype
        for observation in observations:
            if type(observation) is not np.ndarray or observation.shape != shape or observation.dtype != dtype:
                return False
        np.concatenate(observations, out=self.flat)
        return True

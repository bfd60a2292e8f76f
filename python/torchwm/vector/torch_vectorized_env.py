"""``TorchVectorizedEnv``: ``num_workers`` processes, each running ``envs_per_worker`` envs.

One pipe message per worker per step (not per env), observations in shared memory, autoreset and
info batching exactly as gymnasium's ``SyncVectorEnv``; a sub-env's exception comes back with its
traceback and env index, a dead worker is noticed at once (its process sentinel), and nothing hangs.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import pickle
import select
import time
import weakref
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space, concatenate, create_empty_array, create_shared_memory, read_from_shared_memory

from torchwm.vector.errors import SubEnvError, WorkerCrashedError
from torchwm.vector.old_api import adapt
from torchwm.vector.shared_views import slice_views
from torchwm.vector.worker import STEP, STEP_DONE, recv_message, send_message, worker_main

# How long a worker may take to build its envs before construction fails.
STARTUP_TIMEOUT_S = 120.0
# How long close() waits for a worker to exit before terminating it.
CLOSE_TIMEOUT_S = 5.0
# While waiting for replies, how often the liveness of the workers is checked (besides their pidfds).
LIVENESS_CHECK_S = 0.2


def _join(process: Any, timeout: float | None) -> bool:
    """Waits for ``process`` to exit; True when it has. Asks the OS (``waitpid``) rather than waiting
    on the process sentinel, which a child the env forked may hold open long after the worker died."""
    deadline = None if timeout is None else _now() + timeout
    pause = 0.0005
    while process.is_alive():
        if deadline is not None and _now() >= deadline:
            return False
        time.sleep(pause)
        pause = min(pause * 2, 0.05)
    return True


def _shutdown(processes: list[Any], pipes: list[Any], death_fds: list[int]) -> None:
    """Stops workers: ask, wait a little, then terminate and reap. Safe to call more than once."""
    for pipe in pipes:
        try:
            pipe.send(("close", None))
        except Exception:
            pass
    for process in processes:
        if not _join(process, CLOSE_TIMEOUT_S):
            process.terminate()
            if not _join(process, CLOSE_TIMEOUT_S):
                process.kill()
                _join(process, None)
    for pipe in pipes:
        try:
            pipe.close()
        except Exception:
            pass
    while death_fds:
        try:
            os.close(death_fds.pop())
        except OSError:
            pass


class TorchVectorizedEnv(VectorEnv):
    """A ``gymnasium.vector.VectorEnv`` over worker processes for any Gym-like env factory.

    Args:
        env_factory: a callable returning an env, or a list of ``num_workers * envs_per_worker`` of them.
        num_workers: worker processes.
        envs_per_worker: envs each worker steps in a loop.
        seed: seeds the first ``reset()`` (env ``i`` gets ``seed + i``) when it is given no seed.
        context: ``"fork"``, ``"spawn"`` or ``"forkserver"``; default fork where available.
        shared_memory: observations through shared memory (default) or pickled through the pipes.
        autoreset_mode: ``AutoresetMode.NEXT_STEP`` (default) or ``SAME_STEP``.
        daemon: worker processes are daemonic (terminated when the parent exits normally). Whatever
            this says, an idle worker exits by itself within a second when the parent is killed.
        copy: ``reset``/``step`` return a copy of the observations (default, as ``SyncVectorEnv``);
            ``False`` returns the batch buffer itself (shared memory), overwritten by the next step.

    Errors: an exception in a sub-env's ``reset``/``step`` raises :class:`SubEnvError` (env index and
    remote traceback) and a worker that dies raises :class:`WorkerCrashedError` within a fraction of
    a second; both shut every worker down. A malformed action raises ``ValueError`` and an exception
    in ``call``/``get_attr``/``set_attr`` is raised again in the caller; after those the env is usable.
    """

    def __init__(
        self,
        env_factory: Callable[[], Any] | Sequence[Callable[[], Any]],
        num_workers: int = 2,
        envs_per_worker: int = 4,
        *,
        seed: int | None = None,
        context: str | None = None,
        shared_memory: bool = True,
        autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
        daemon: bool = True,
        copy: bool = True,
    ) -> None:
        self.closed = True  # until the workers exist, close() has nothing to do
        self._processes: list[Any] = []
        self._pipes: list[Any] = []
        self._death_fds: list[int] = []
        self.copy = bool(copy)
        for name, value in (("num_workers", num_workers), ("envs_per_worker", envs_per_worker)):
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        self.num_workers = int(num_workers)
        self.envs_per_worker = int(envs_per_worker)
        self.total_envs = self.num_workers * self.envs_per_worker
        self.num_envs = self.total_envs
        factories = self._factories(env_factory)
        try:
            mode = AutoresetMode(autoreset_mode)
        except ValueError:
            raise ValueError(f"autoreset_mode must be NEXT_STEP or SAME_STEP, got {autoreset_mode!r}") from None
        if mode not in (AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP):
            raise ValueError(f"autoreset_mode must be NEXT_STEP or SAME_STEP, got {mode}")
        self.autoreset_mode = mode
        methods = mp.get_all_start_methods()
        context_name = context or ("fork" if "fork" in methods else "spawn")
        if context_name not in methods:
            raise ValueError(f"context must be one of {methods}, got {context!r}")
        ctx = mp.get_context(context_name)
        self.context = context_name

        # One env in this process gives the spaces (as gymnasium's AsyncVectorEnv does).
        probe = adapt(factories[0]())
        self.single_observation_space = probe.observation_space
        self.single_action_space = probe.action_space
        self.metadata = {**getattr(probe, "metadata", {}), "autoreset_mode": mode}
        self.render_mode = getattr(probe, "render_mode", None)
        self.spec = getattr(probe, "spec", None)
        probe.close()
        self.observation_space = batch_space(self.single_observation_space, self.total_envs)
        self.action_space = batch_space(self.single_action_space, self.total_envs)

        payloads = factories if context_name == "fork" else [self._pickled(f, context_name) for f in factories]
        self._shared = create_shared_memory(self.single_observation_space, n=self.total_envs, ctx=ctx) if shared_memory else None
        if self._shared is not None:
            self._observations = read_from_shared_memory(self.single_observation_space, self._shared, n=self.total_envs)
        else:
            self._observations = create_empty_array(self.single_observation_space, n=self.total_envs)
        # Rewards, terminations and truncations of every env, written by the workers in place.
        self._step_buffers = (
            ctx.RawArray("d", self.total_envs),
            ctx.RawArray("b", self.total_envs),
            ctx.RawArray("b", self.total_envs),
        )
        # Registered before any worker starts, so a failure half-way through still reaps the started ones.
        self._finalizer = weakref.finalize(self, _shutdown, self._processes, self._pipes, self._death_fds)
        self._rewards = np.frombuffer(self._step_buffers[0], dtype=np.float64)
        self._terminations = np.frombuffer(self._step_buffers[1], dtype=np.bool_)
        self._truncations = np.frombuffer(self._step_buffers[2], dtype=np.bool_)
        # Plain (Box, Discrete, MultiDiscrete, MultiBinary) actions go through shared memory too.
        self._action_buffer = None
        self._actions: np.ndarray | None = None
        if isinstance(self.action_space, (spaces.Box, spaces.MultiDiscrete, spaces.MultiBinary)):
            dtype = np.dtype(self.action_space.dtype)
            if dtype.kind in "biuf":
                size = int(np.prod(self.action_space.shape))
                self._action_buffer = ctx.RawArray("b", max(1, size * dtype.itemsize))
                self._actions = np.frombuffer(self._action_buffer, dtype=dtype, count=size).reshape(self.action_space.shape)
        self._poller = select.poll()
        self._fds: dict[int, tuple[str, int]] = {}
        self._fds_out: list[int] = []  # each worker's pipe descriptor (framed as Connection frames)
        for w in range(self.num_workers):
            parent, child = ctx.Pipe()
            start = w * self.envs_per_worker
            process = ctx.Process(
                target=worker_main,
                name=f"torchwm-worker-{w}",
                args=(
                    start,
                    payloads[start : start + self.envs_per_worker],
                    child,
                    parent if context_name == "fork" else None,
                    self._shared,
                    self._step_buffers,
                    self._action_buffer,
                    self.single_observation_space,
                    self.single_action_space,
                    self.total_envs,
                    mode,
                    os.getpid(),
                ),
                daemon=daemon,
            )
            process.start()
            child.close()
            self._processes.append(process)
            self._pipes.append(parent)
            self._watch(w, process, parent)
        self.closed = False
        self._waiting: str | None = None
        self._replies: list[Any] = [None] * self.num_workers
        self._received = [False] * self.num_workers
        self._raised: BaseException | None = None
        self._has_reset = False
        self._default_seed = seed
        try:
            ready = self._gather("startup", STARTUP_TIMEOUT_S)
        except mp.TimeoutError:
            self.close(terminate=True)
            raise
        for w, worker_spaces in enumerate(ready):
            for i, (obs_space, act_space) in enumerate(worker_spaces):
                if obs_space != self.single_observation_space or act_space != self.single_action_space:
                    index = w * self.envs_per_worker + i
                    self.close(terminate=True)
                    raise ValueError(
                        f"sub-environment {index} has observation space {obs_space} and action space {act_space}, "
                        f"but sub-environment 0 has {self.single_observation_space} and {self.single_action_space}: "
                        "all sub-environments must share their spaces"
                    )

    # ----------------------------------------------------------------------------------------- setup

    def _watch(self, w: int, process: Any, pipe: Any) -> None:
        """Registers worker ``w``'s pipe and a descriptor that becomes readable when it dies: a pidfd
        (Linux 5.3+; it does not depend on who else holds pipes open), else the process sentinel."""
        try:
            death_fd = os.pidfd_open(process.pid)
            self._death_fds.append(death_fd)
        except (AttributeError, OSError):
            death_fd = process.sentinel
        self._fds_out.append(pipe.fileno())
        for fd, kind in ((pipe.fileno(), "pipe"), (death_fd, "death")):
            self._fds[fd] = (kind, w)
            self._poller.register(fd, select.POLLIN | select.POLLERR | select.POLLHUP)

    def _factories(self, env_factory: Any) -> list[Callable[[], Any]]:
        if callable(env_factory):
            return [env_factory] * self.total_envs
        if isinstance(env_factory, (list, tuple)):
            if len(env_factory) != self.total_envs:
                raise ValueError(
                    f"env_factory list has {len(env_factory)} callables, expected total_envs = "
                    f"num_workers * envs_per_worker = {self.total_envs}"
                )
            if not all(callable(f) for f in env_factory):
                raise TypeError("every entry of env_factory must be callable")
            return list(env_factory)
        raise TypeError(f"env_factory must be a callable or a list of callables, got {type(env_factory).__name__}")

    @staticmethod
    def _pickled(factory: Callable[[], Any], context_name: str) -> bytes:
        import cloudpickle

        try:
            return cloudpickle.dumps(factory)
        except Exception as error:
            raise TypeError(
                f"env_factory cannot be pickled for the {context_name!r} start method ({error}). Define the "
                "factory at module scope (or a functools.partial of one) with picklable arguments, or use "
                "context='fork'."
            ) from error

    # ----------------------------------------------------------------------------------------- protocol

    def _send(self, command: str, per_worker: list[Any] | None) -> None:
        """Sends ``command`` to every worker (``per_worker`` None: the step doorbell, actions already
        in the shared action buffer)."""
        self._check_can_send()
        for w, fd in enumerate(self._fds_out):
            message = STEP if per_worker is None else pickle.dumps((command, per_worker[w]), pickle.HIGHEST_PROTOCOL)
            try:
                send_message(fd, message)
            except (BrokenPipeError, OSError):
                self._crashed(w)
        self._waiting = command
        self._received = [False] * self.num_workers

    def _check_can_send(self) -> None:
        """A command can go out: the env is open and no reply is pending."""
        if self.closed:
            raise RuntimeError("the environment is closed")
        if self._waiting is not None:
            raise RuntimeError(f"a {self._waiting} is still pending: call step_wait() first")

    def _gather(self, command: str, timeout: float | None) -> list[Any]:
        """Every worker's reply to ``command``. A sub-env's exception in reset/step raises
        ``SubEnvError`` and a dead worker ``WorkerCrashedError`` (both shut everything down); an
        exception in call/get_attr/set_attr is raised again once every worker has answered, and the
        env stays usable.

        A worker's death is noticed from its process (a pidfd, else its sentinel, and a liveness check
        every ``LIVENESS_CHECK_S``), not from the pipe: a child the env forked may hold the pipe open."""
        self._waiting = command
        deadline = None if timeout is None else _now() + timeout
        received = self._received
        poll = self._poller.poll
        while not all(received):
            # Blocking here measured as fast as spinning (the workers spin, and the parent shares their cores).
            wait_s = LIVENESS_CHECK_S if deadline is None else min(LIVENESS_CHECK_S, max(0.0, deadline - _now()))
            ready = poll(wait_s * 1000.0)
            dead = []
            for fd, _ in ready:
                kind, w = self._fds[fd]
                if kind == "pipe" and not received[w]:
                    self._receive(w)
                elif kind == "death" or not self._processes[w].is_alive():
                    dead.append(w)
            if not ready:
                dead = [w for w in range(self.num_workers) if not received[w] and not self._processes[w].is_alive()]
            for w in dead:
                # A reply sent just before the worker exited is still read first.
                if not received[w] and self._pipes[w].poll(0):
                    self._receive(w)
                self._crashed(w)
            if not ready and deadline is not None and _now() >= deadline and not all(received):
                pending = received.count(False)
                raise mp.TimeoutError(
                    f"{command}: {pending} worker(s) did not answer within {timeout} s; call again to keep waiting"
                )
        replies, self._replies, self._waiting = self._replies, [None] * self.num_workers, None
        raised = self._raised
        self._raised = None
        if raised is not None:
            raise raised
        return replies

    def _receive(self, w: int) -> None:
        """Reads worker ``w``'s reply into ``self._replies``."""
        try:
            message = recv_message(self._fds_out[w])
        except (EOFError, OSError):
            self._crashed(w)
        self._received[w] = True
        if message == STEP_DONE:
            self._replies[w] = None
            return
        status, payload = pickle.loads(message)
        if status in ("ok", "ready"):
            self._replies[w] = payload
        elif status == "raise":  # the caller's error (call/get_attr/set_attr): the worker goes on
            if self._raised is None:
                self._raised = _rebuild(*payload)
        else:
            env_index, exc_type, message_text, remote_tb, _ = payload
            self.close(terminate=True)
            raise SubEnvError(env_index, exc_type, message_text, remote_tb)

    def _crashed(self, worker: int) -> NoReturn:
        process = self._processes[worker]
        _join(process, 1.0)
        first = worker * self.envs_per_worker
        code = process.exitcode
        self.close(terminate=True)
        raise WorkerCrashedError(
            f"worker {worker} (sub-environments {first}..{first + self.envs_per_worker - 1}) died "
            f"with exit code {code}; the other workers were shut down"
        )

    def _read_observations(self, payloads: list[Any]) -> Any:
        if self._shared is None:
            flat = [obs for worker_obs in payloads for obs in worker_obs]
            self._observations = concatenate(self.single_observation_space, flat, self._observations)
        return _copy_tree(self._observations) if self.copy else self._observations

    def _batch_infos(self, per_worker: list[Any]) -> dict[str, Any]:
        infos: dict[str, Any] = {}
        for w, worker_infos in enumerate(per_worker):
            if worker_infos is None:
                continue
            for i, env_infos in enumerate(worker_infos):
                for info in env_infos or ():
                    infos = self._add_info(infos, info, w * self.envs_per_worker + i)
        return infos

    def _split(self, values: Sequence[Any]) -> list[list[Any]]:
        k = self.envs_per_worker
        return [list(values[w * k : (w + 1) * k]) for w in range(self.num_workers)]

    # ----------------------------------------------------------------------------------------- VectorEnv

    def reset(
        self, *, seed: int | Sequence[int | None] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        """As ``SyncVectorEnv.reset``: ``options["reset_mask"]`` (a bool array of ``total_envs``) resets
        only the selected envs (the others keep their observation and episode) and is not passed on
        to the sub-envs; the rest of ``options`` is."""
        if seed is None and self._default_seed is not None:
            seed, self._default_seed = self._default_seed, None
        if seed is None:
            seeds: list[int | None] = [None] * self.total_envs
        elif isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
            seeds = [int(seed) + i for i in range(self.total_envs)]
        elif isinstance(seed, (list, tuple, np.ndarray)) and len(seed) == self.total_envs:
            seeds = [None if s is None else int(s) for s in seed]
        else:
            raise ValueError(f"seed must be None, an int, or a sequence of total_envs={self.total_envs} seeds")
        mask = None
        if options is not None and "reset_mask" in options:
            mask = options["reset_mask"]
            options = {key: value for key, value in options.items() if key != "reset_mask"}
            if not isinstance(mask, np.ndarray):
                raise TypeError(f"options['reset_mask'] must be a numpy array, got {type(mask)}")
            if mask.shape != (self.total_envs,):
                raise ValueError(f"options['reset_mask'] must have shape ({self.total_envs},), got {mask.shape}")
            if mask.dtype != np.bool_:
                raise TypeError(f"options['reset_mask'] must have dtype=np.bool_, got {mask.dtype}")
            if not mask.any():
                raise ValueError("options['reset_mask'] must select at least one sub-environment")
            if not self._has_reset and not mask.all():
                raise ValueError("the first reset() must reset every sub-environment (no reset_mask, or an all-True one)")
        masks = self._split(mask) if mask is not None else [None] * self.num_workers
        self._send("reset", [(s, options, m) for s, m in zip(self._split(seeds), masks)])
        replies = self._gather("reset", None)
        self._has_reset = True
        observations = self._read_observations([obs for obs, _ in replies])
        return observations, self._batch_infos([infos for _, infos in replies])

    def step_async(self, actions: Any) -> None:
        """Sends ``actions`` (leading dimension ``total_envs``) to the workers and returns at once."""
        buffer = self._actions
        if buffer is not None and type(actions) is np.ndarray and actions.dtype == buffer.dtype and actions.shape == buffer.shape:
            # Fast path: one copy into shared memory and a one-byte doorbell per worker. Checked
            # first: a pending step's workers may still be reading the buffer.
            self._check_can_send()
            buffer[...] = actions
            self._send("step", None)
            return
        actions = _as_batch(actions)
        _check_actions(actions, self.single_action_space, self.total_envs, "actions")
        k = self.envs_per_worker
        slices = [slice_views(actions, w * k, (w + 1) * k) for w in range(self.num_workers)]
        if isinstance(actions, np.ndarray) and actions.dtype != object:
            # Plain arrays travel as raw bytes: pickling a small ndarray costs more than the step of a cheap env.
            slices = [(part.dtype.str, part.shape, part.tobytes()) for part in slices]
        self._send("step", slices)

    def step_wait(self, timeout: float | None = None) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Waits for the step sent by ``step_async``; ``mp.TimeoutError`` after ``timeout`` s (call again to wait more)."""
        if self._waiting != "step":
            raise RuntimeError("step_wait() needs a pending step_async()")
        replies = self._gather("step", timeout)
        if self._shared is not None and not any(replies):
            observations, infos = self._read_observations(replies), {}
        else:
            replies = [r or (None, None) for r in replies]
            observations = self._read_observations([r[0] for r in replies])
            infos = self._batch_infos([r[1] for r in replies])
        return observations, self._rewards.copy(), self._terminations.copy(), self._truncations.copy(), infos

    def step(self, actions: Any) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        self.step_async(actions)
        return self.step_wait()

    def call(self, name: str, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
        """Calls ``name(*args, **kwargs)`` on every sub-env (or reads it, if not callable). An
        exception (a missing attribute, a method that raises) is raised here; the env stays usable."""
        self._send("call", [(name, args, kwargs)] * self.num_workers)
        return tuple(value for reply in self._gather("call", None) for value in reply)

    def get_attr(self, name: str) -> tuple[Any, ...]:
        """``name`` of every sub-env; a missing attribute raises ``AttributeError`` (the env stays usable)."""
        self._send("get_attr", [name] * self.num_workers)
        return tuple(value for reply in self._gather("get_attr", None) for value in reply)

    def set_attr(self, name: str, values: Any) -> None:
        """Sets ``name`` on every sub-env: one value for all, or a list/tuple of ``total_envs`` values."""
        if not isinstance(values, (list, tuple)):
            values = [values] * self.total_envs
        if len(values) != self.total_envs:
            raise ValueError(f"set_attr needs one value or total_envs={self.total_envs} values, got {len(values)}")
        self._send("set_attr", [(name, v) for v in self._split(values)])
        self._gather("set_attr", None)

    def close_extras(self, timeout: float | None = None, terminate: bool = False, **kwargs: Any) -> None:
        if terminate:
            for process in self._processes:
                if process.is_alive():
                    process.terminate()
        self._finalizer()

    def close(self, **kwargs: Any) -> None:
        if not self.closed:
            self.closed = True
            self.close_extras(**kwargs)

    def __enter__(self) -> TorchVectorizedEnv:
        return self

    def __exit__(self, *exc: Any) -> bool:
        self.close(terminate=exc[0] is not None)
        return False

    # ----------------------------------------------------------------------------------------- TorchWM

    def reset_batch(self, seed: int | None = None, options: dict[str, Any] | None = None) -> dict[str, Any]:
        """``reset`` as a dict of torch tensors: ``obs`` and ``info``."""
        torch = _torch()
        observations, infos = self.reset(seed=seed, options=options)
        return {"obs": _to_torch(torch, observations), "info": infos}

    def step_batch(self, actions: Any) -> dict[str, Any]:
        """``step`` taking a (CPU or CUDA) tensor or array of actions; returns torch tensors
        ``obs``, ``reward``, ``done`` (terminated or truncated), and ``info``."""
        torch = _torch()
        if isinstance(actions, torch.Tensor):
            actions = actions.detach().cpu().numpy()
        observations, rewards, terminations, truncations, infos = self.step(actions)
        return {
            "obs": _to_torch(torch, observations),
            "reward": torch.as_tensor(rewards),
            "done": torch.as_tensor(terminations | truncations),
            "info": infos,
        }


def _check_actions(actions: Any, space: spaces.Space, total_envs: int, where: str) -> None:
    """``actions`` must have the structure of ``space`` (a dict with its keys for a Dict space, a
    tuple of its length for a Tuple space) and every array ``total_envs`` rows; else ``ValueError``."""
    if isinstance(space, spaces.Dict):
        if not isinstance(actions, dict):
            raise ValueError(
                f"{where} must be a dict with keys {sorted(space.spaces)} (the action space is a Dict), "
                f"got {type(actions).__name__}"
            )
        missing = [key for key in space.spaces if key not in actions]
        if missing:
            raise ValueError(f"{where} lacks keys {missing}; the Dict action space has keys {sorted(space.spaces)}")
        for key, subspace in space.spaces.items():
            _check_actions(_as_batch(actions[key]), subspace, total_envs, f"{where}[{key!r}]")
    elif isinstance(space, spaces.Tuple):
        if not isinstance(actions, tuple) or len(actions) != len(space.spaces):
            got = f"a tuple of {len(actions)}" if isinstance(actions, tuple) else type(actions).__name__
            raise ValueError(
                f"{where} must be a tuple of {len(space.spaces)} batches (the action space is a Tuple), got {got}"
            )
        for i, (value, subspace) in enumerate(zip(actions, space.spaces)):
            _check_actions(_as_batch(value), subspace, total_envs, f"{where}[{i}]")
    else:
        if isinstance(actions, (dict, tuple)):
            raise ValueError(f"{where} must be an array with a leading dimension of total_envs={total_envs}, got a {type(actions).__name__}")
        shape = np.shape(actions)
        if shape == () or shape[0] != total_envs:
            raise ValueError(f"{where} must have a leading dimension of total_envs={total_envs}, got shape {shape}")


def _as_batch(value: Any) -> Any:
    """A nested dict/tuple of batches as it is, anything else as an array."""
    return value if isinstance(value, (dict, tuple)) else np.asarray(value)


class _RemoteTraceback(Exception):
    """The traceback of an exception raised in a worker (shown as the cause of the re-raised one)."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text

    def __str__(self) -> str:
        return self.text


def _rebuild(env_index: int, exc_type: str, message: str, remote_tb: str, pickled: bytes | None) -> BaseException:
    """The exception a worker reported for a call/get_attr/set_attr, with the remote traceback as cause."""
    error: BaseException | None = None
    if pickled is not None:
        try:
            error = pickle.loads(pickled)
        except Exception:
            error = None
    if not isinstance(error, BaseException):
        error = RuntimeError(f"sub-environment {env_index} raised {exc_type}: {message}")
    error.__cause__ = _RemoteTraceback(f"\nsub-environment {env_index}, remote traceback:\n{remote_tb}")
    return error


def _copy_tree(value: Any) -> Any:
    """A copy of a (nested dict/tuple of) array(s): what ``deepcopy`` gives, without its bookkeeping."""
    if isinstance(value, np.ndarray):
        return value.copy()
    if isinstance(value, dict):
        return {key: _copy_tree(item) for key, item in value.items()}
    if isinstance(value, tuple):
        return tuple(_copy_tree(item) for item in value)
    from copy import deepcopy

    return deepcopy(value)


def _now() -> float:
    return time.monotonic()


def _torch() -> Any:
    try:
        import torch
    except ImportError as error:
        raise ImportError("reset_batch/step_batch need torch: pip install 'torchwm[torch]'") from error
    return torch


def _to_torch(torch: Any, value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _to_torch(torch, v) for k, v in value.items()}
    if isinstance(value, tuple):
        return tuple(_to_torch(torch, v) for v in value)
    return torch.as_tensor(value)

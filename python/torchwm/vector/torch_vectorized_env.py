"""``TorchVectorizedEnv``: ``num_workers`` processes, each running ``envs_per_worker`` envs.

One pipe message per worker per step (not per env), observations in shared memory, autoreset and
info batching exactly as gymnasium's ``SyncVectorEnv``; a sub-env's exception comes back with its
traceback and env index, a dead worker is noticed at once (its process sentinel), and nothing hangs.
"""

from __future__ import annotations

import multiprocessing as mp
import weakref
from collections.abc import Callable, Sequence
from copy import deepcopy
from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space, concatenate, create_empty_array, create_shared_memory
from gymnasium.vector.utils import read_from_shared_memory

from torchwm.vector.errors import SubEnvError, WorkerCrashedError
from torchwm.vector.old_api import adapt
from torchwm.vector.shared_views import slice_views
from torchwm.vector.worker import worker_main

# How long a worker may take to build its envs before construction fails.
STARTUP_TIMEOUT_S = 120.0
# How long close() waits for a worker to exit before terminating it.
CLOSE_TIMEOUT_S = 5.0


def _shutdown(processes: list[Any], pipes: list[Any]) -> None:
    """Stops workers: ask, wait a little, then terminate and reap. Safe to call more than once."""
    for pipe in pipes:
        try:
            pipe.send(("close", None))
        except Exception:
            pass
    for process in processes:
        process.join(CLOSE_TIMEOUT_S)
        if process.is_alive():
            process.terminate()
            process.join(CLOSE_TIMEOUT_S)
        if process.is_alive():
            process.kill()
            process.join()
    for pipe in pipes:
        try:
            pipe.close()
        except Exception:
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
        daemon: worker processes are daemonic (killed with the parent).
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
    ) -> None:
        self.closed = True  # until the workers exist, close() has nothing to do
        self._processes: list[Any] = []
        self._pipes: list[Any] = []
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
        self._finalizer = weakref.finalize(self, _shutdown, self._processes, self._pipes)
        self._rewards = np.frombuffer(self._step_buffers[0], dtype=np.float64)
        self._terminations = np.frombuffer(self._step_buffers[1], dtype=np.bool_)
        self._truncations = np.frombuffer(self._step_buffers[2], dtype=np.bool_)
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
                    self.single_observation_space,
                    self.single_action_space,
                    self.total_envs,
                    mode,
                ),
                daemon=daemon,
            )
            process.start()
            child.close()
            self._processes.append(process)
            self._pipes.append(parent)
        self.closed = False
        self._waiting: str | None = None
        self._replies: list[Any] = [None] * self.num_workers
        self._default_seed = seed
        spaces = self._gather("startup", STARTUP_TIMEOUT_S)
        for w, worker_spaces in enumerate(spaces):
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

    def _send(self, command: str, per_worker: list[Any]) -> None:
        if self.closed:
            raise RuntimeError("the environment is closed")
        if self._waiting is not None:
            raise RuntimeError(f"a {self._waiting} is still pending: call step_wait() first")
        for pipe, data in zip(self._pipes, per_worker):
            try:
                pipe.send((command, data))
            except (BrokenPipeError, OSError):
                self._crashed()
        self._waiting = command
        self._replies = [None] * self.num_workers

    def _gather(self, command: str, timeout: float | None) -> list[Any]:
        """Every worker's reply to ``command``; raises (and shuts down) on an error or a dead worker."""
        self._waiting = command
        deadline = None if timeout is None else _now() + timeout
        for w in range(self.num_workers):
            if self._replies[w] is not None:
                continue
            pipe = self._pipes[w]
            # A dead worker closes its end of the pipe, so recv() ends with EOFError instead of blocking.
            if deadline is not None and not pipe.poll(max(0.0, deadline - _now())):
                pending = sum(r is None for r in self._replies)
                raise mp.TimeoutError(
                    f"{command}: {pending} worker(s) did not answer within {timeout} s; call again to keep waiting"
                )
            try:
                status, payload = pipe.recv()
            except (EOFError, OSError):
                self._crashed(w)
            if status == "error":
                env_index, exc_type, message, remote_tb = payload
                self.close(terminate=True)
                raise SubEnvError(env_index, exc_type, message, remote_tb)
            self._replies[w] = payload
        replies, self._replies, self._waiting = self._replies, [None] * self.num_workers, None
        return replies

    def _crashed(self, worker: int | None = None) -> None:
        if worker is None:
            worker = next((w for w, p in enumerate(self._processes) if not p.is_alive()), 0)
        process = self._processes[worker]
        process.join(1.0)
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
        return deepcopy(self._observations)

    def _batch_infos(self, per_worker: list[list[Any]]) -> dict[str, Any]:
        infos: dict[str, Any] = {}
        for w, worker_infos in enumerate(per_worker):
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
            mask = np.asarray(options["reset_mask"])
            if mask.dtype != np.bool_ or mask.shape != (self.total_envs,):
                raise ValueError(f"options['reset_mask'] must be a bool array of shape ({self.total_envs},)")
            if not mask.any():
                raise ValueError("options['reset_mask'] must select at least one sub-environment")
        masks = self._split(mask) if mask is not None else [None] * self.num_workers
        self._send("reset", [(s, options, m) for s, m in zip(self._split(seeds), masks)])
        replies = self._gather("reset", None)
        observations = self._read_observations([obs for obs, _ in replies])
        return observations, self._batch_infos([infos for _, infos in replies])

    def step_async(self, actions: Any) -> None:
        """Sends ``actions`` (leading dimension ``total_envs``) to the workers and returns at once."""
        if not isinstance(actions, (dict, tuple)):
            actions = np.asarray(actions)
        _check_leading_dimension(actions, self.total_envs)
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
        observations = self._read_observations([r[0] for r in replies])
        infos = self._batch_infos([r[1] or [] for r in replies])
        return observations, self._rewards.copy(), self._terminations.copy(), self._truncations.copy(), infos

    def step(self, actions: Any) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        self.step_async(actions)
        return self.step_wait()

    def call(self, name: str, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
        """Calls ``name(*args, **kwargs)`` on every sub-env (or reads it, if not callable)."""
        self._send("call", [(name, args, kwargs)] * self.num_workers)
        return tuple(value for reply in self._gather("call", None) for value in reply)

    def get_attr(self, name: str) -> tuple[Any, ...]:
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


def _check_leading_dimension(actions: Any, total_envs: int) -> None:
    """Every array in (nested dict/tuple) ``actions`` must have ``total_envs`` rows."""
    if isinstance(actions, dict):
        for value in actions.values():
            _check_leading_dimension(value, total_envs)
    elif isinstance(actions, tuple):
        for value in actions:
            _check_leading_dimension(value, total_envs)
    else:
        shape = np.shape(actions)
        if shape == () or shape[0] != total_envs:
            raise ValueError(f"actions must have a leading dimension of total_envs={total_envs}, got shape {shape}")


def _now() -> float:
    import time

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

"""``TorchVectorizedEnv``: ``num_workers`` processes, each running ``envs_per_worker`` envs.

A drop-in for gymnasium 1.4's ``AsyncVectorEnv`` (same keywords, results, exception classes, messages
and logged warnings), faster: actions, observations, rewards and flags in shared memory, and a step
announced both ways by doorbells in it (process/doorbells.py), not by pipe messages; a pool mode
(process/pool_mode.py). Every action gymnasium would deliver is delivered. A sub-env's
exception comes back as its own class with its traceback and env index (one on an action outside the
action space leaves the env usable once reset), a dead or exited worker is noticed at once, malformed
input is refused in the parent (the env stays usable), and nothing hangs.

Built by env_construction.py (env 0's spaces, the buffers, the workers and their handshake); a call
is sent and awaited by pending_calls.py, the calls to the sub-envs are in sub_env_calls.py.

Two imports reach above process/ (the package floors: docs/design.md). ``TrainerIntegrationMixin``, from
integrations/: every vector env (this one, ``AtariVectorEnv``, ``RayVectorEnv``) offers the trainers the same
``reset_batch``/``step_batch`` and ``to_sb3()`` by mixing it in, and integrations/ imports nothing of this
module (``to_sb3`` imports its adapter when called), so there is no cycle. And ``torchwm.ray``, in
``__new__`` only: ``backend="ray"`` makes this constructor return a ``RayVectorEnv``, imported then so that
Ray stays optional and untouched until asked for.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal

import numpy as np
from gymnasium import logger, spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.async_vector_env import AsyncState
from gymnasium.vector.utils import concatenate

import torchwm.errors as errors
from torchwm._vector_args import (
    FirstResetSeed,
    env_factories,
    parse_autoreset_mode,
    parse_batch_size,
    parse_gymnasium_reset_mask,
    parse_seeds,
    parse_timeout,
    split_options,
    worker_counts,
)
from torchwm._worker_blocks import blocks, is_array_space
from torchwm.errors import InvalidArgumentError
from torchwm.integrations.trainer import TrainerIntegrationMixin
from torchwm.process import actions as action_batches
from torchwm.process import startup
from torchwm.process.agents import add_row_ids, env_mask, envs_done
from torchwm.process.env_construction import EnvConstructionMixin
from torchwm.process.pending_calls import PendingCallsMixin
from torchwm.process.pool import WorkerPool
from torchwm.process.pool_mode import PoolModeMixin
from torchwm.process.protocol import Message
from torchwm.process.sub_env_calls import SubEnvCallsMixin
from torchwm.process.worker import EnvOptions

AUTORESET_MODES = (AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP, AutoresetMode.DISABLED)


class TorchVectorizedEnv(
    PendingCallsMixin, EnvConstructionMixin, PoolModeMixin, SubEnvCallsMixin, TrainerIntegrationMixin, VectorEnv
):
    """A ``gymnasium.vector.VectorEnv`` over worker processes for any Gym-like env factory.

    Args:
        env_factory: a callable returning an env, or a list of ``num_workers * envs_per_worker`` of them.
            A PettingZoo ``ParallelEnv`` makes each env one row per possible agent (docs/multi_agent.md):
            ``num_envs`` counts rows, ``info["agent_mask"]``/``["env_id"]``/``["agent_id"]`` name them.
        num_workers: worker processes.
        envs_per_worker: envs each worker steps in a loop.
        seed: seeds the first ``reset()`` (env ``i`` gets ``seed + i``) when it is given no seed.
        context: ``"fork"``, ``"spawn"`` or ``"forkserver"``; default fork where available.
        shared_memory: observations through shared memory (default) or pickled through the pipes.
        autoreset_mode: ``AutoresetMode.NEXT_STEP`` (default), ``SAME_STEP`` or ``DISABLED``.
        daemon: worker processes are daemonic (terminated when the parent exits normally). Whatever
            this says, an idle worker exits by itself within a second when the parent is killed.
        copy: ``reset``/``step`` return a copy of the observations (default, as ``AsyncVectorEnv``);
            ``False`` returns the batch buffer itself, overwritten by the next step (in pool mode, a
            batch's rows themselves where they are one block of it, overwritten by the next ``send``).
        observation_mode: ``"same"`` (every env has env 0's observation space), ``"different"`` (same
            shape and dtype, other bounds) or a ``(batched, single)`` pair of spaces, as gymnasium.
        check_actions: ``False`` (default) delivers every action as gymnasium does; a sub-env that raises
            on an action outside the action space leaves the vector env usable (reset it). ``True``: actions
            outside the space raise ``InvalidArgumentError`` (a ``ValueError``) before anything is sent.
        max_concurrency: at most this many sub-envs in ``reset``/``step`` at once (gymnasium 1.4's keyword;
            None: no limit beyond ``num_workers``).
        batch_size: pool mode when below ``num_envs`` (a multiple of ``envs_per_worker``): ``send``/
            ``recv`` (and ``step``) return the first ``batch_size`` envs to finish, whole workers,
            named by ``info["env_id"]``; the spaces are batched over ``batch_size``. None: every env.
        backend: ``"process"`` (worker processes on this machine) or ``"ray"``: Ray actors, locally or
            on a cluster (:class:`torchwm.ray.RayVectorEnv`, needs ``torchwm[ray]``).

    Errors (the table in docs/process_vectorizer.md): a sub-env's exception comes back as its own class
    with its env index and remote traceback, a dead worker as ``WorkerCrashedError``.
    """

    def __new__(cls, *args: Any, backend: str = "process", **kwargs: Any) -> Any:
        # backend="ray": the same vector env over Ray actors (torchwm[ray]); __init__ is then not run here.
        if backend == "ray":
            from torchwm.ray import RayVectorEnv

            return RayVectorEnv(*args, **kwargs)
        if backend != "process":
            raise InvalidArgumentError(f"backend must be 'process' or 'ray', got {backend!r}")
        return super().__new__(cls)

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
        observation_mode: str | tuple[spaces.Space, spaces.Space] = "same",
        check_actions: bool = False,
        max_concurrency: int | None = None,
        batch_size: int | None = None,
        backend: str = "process",
    ) -> None:
        # Until the workers exist, close() has nothing to do. The pool records the async call pending.
        self._pool: WorkerPool | None = None
        self._has_reset = False
        self._reset_needed: str | None = None  # why step() must wait for a reset (None: it need not)
        self._sent_actions: Any = None  # the last batch of actions sent (to judge a sub-env's error)
        self.max_concurrency = startup.max_concurrency(max_concurrency)
        self.copy = bool(copy)
        self.shared_memory = bool(shared_memory)
        self.observation_mode = observation_mode
        self.num_workers, self.envs_per_worker = worker_counts(num_workers, envs_per_worker)
        # Rows: one per env, or one per possible agent of a PettingZoo ParallelEnv (set by _probe).
        self.total_envs = self.num_envs = self._env_count = self.num_workers * self.envs_per_worker
        self._all_workers = list(range(self.num_workers))
        # Checked now, used by the first reset() that is given no seed.
        self._first_seed = FirstResetSeed(seed, self._env_count)
        factories = env_factories(env_factory, self._env_count)
        self.autoreset_mode = parse_autoreset_mode(autoreset_mode, AUTORESET_MODES)
        ctx = startup.context(context)
        startup.refuse_while_bootstrapping()
        self.context = ctx.get_start_method()
        probe = self._probe(factories[0], observation_mode)
        try:
            self.batch_size = parse_batch_size(batch_size, self.num_workers, self._rows_per_worker)
            if self.pool_mode and self.autoreset_mode == AutoresetMode.DISABLED:
                raise InvalidArgumentError(
                    "autoreset_mode=DISABLED needs reset(options={'reset_mask': ...}), which pool mode "
                    "(batch_size < num_envs) does not have: use NEXT_STEP or SAME_STEP"
                )
        except BaseException:
            probe.close()
            raise
        # AutoresetMode.DISABLED: the envs whose episode ended and that were not reset since.
        self._finished = np.zeros(self.total_envs, bool) if self.autoreset_mode == AutoresetMode.DISABLED else None
        self._reset_mask: np.ndarray | None = None
        self._set_spaces(probe, factories, observation_mode)
        self._action_check = action_batches.space_check(self.single_action_space) if check_actions else None
        self._array_actions = is_array_space(self.single_action_space)
        self._allocate_buffers(ctx)
        self._spawn(ctx, factories, daemon)
        self._handshake()

    # ------------------------------------------------------------------------------------ replies

    @property
    def worker_pids(self) -> list[int]:
        """The process id of each worker (to watch, pin or profile them)."""
        return [process.pid for process in self._open_pool().processes]

    @property
    def closed(self) -> bool:
        return self._pool is None or self._pool.closed

    @closed.setter
    def closed(self, value: bool) -> None:
        if value:
            self.close()

    def _read_observations(self, payloads: list[Any]) -> Any:
        if self._views.observations is None:
            flat = [obs for worker_obs in payloads for obs in worker_obs]
            self._observations = concatenate(self.single_observation_space, flat, self._observations)
        return startup.copy_tree(self._observations) if self.copy else self._observations

    def _batch_infos(self, per_worker: list[Any]) -> dict[str, Any]:
        infos: dict[str, Any] = {}
        for w, worker_infos in enumerate(per_worker):
            for i, env_infos in enumerate(worker_infos or ()):
                for info in env_infos or ():
                    infos = self._add_info(infos, info, w * self._rows_per_worker + i)
        if self._agents is not None:
            assert self._views.agent_mask is not None
            add_row_ids(infos, np.arange(self.total_envs), self._agents, self._views.agent_mask.copy())
        return infos

    # ------------------------------------------------------------------------------------ VectorEnv

    def reset(
        self, *, seed: int | Sequence[int | None] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        """As ``AsyncVectorEnv.reset``: ``options["reset_mask"]`` (a bool array of ``total_envs``) resets
        only the selected envs (the others keep their observation and episode) and is not passed on
        to the sub-envs; the rest of ``options`` is. In pool mode every env is reset and the first
        ``batch_size`` are returned (``info["env_id"]``); the others come with the next ``recv`` calls."""
        if self.pool_mode:
            return self._pool_reset(seed, options)
        self.reset_async(seed=seed, options=options)
        return self.reset_wait()

    def reset_async(
        self, seed: int | Sequence[int | None] | None = None, options: dict[str, Any] | None = None
    ) -> None:
        pool = self._live_pool("reset_async")
        if self.pool_mode:
            raise errors.EnvStateError("reset_async/reset_wait are not available in pool mode: call reset()")
        seeds = parse_seeds(self._first_seed(seed), self._env_count)
        k, n = self.envs_per_worker, self.num_workers
        if isinstance(options, EnvOptions):  # to_sb3()'s set_options with one dict per env
            mask = per_env = None
            worker_options: list[Any] = [EnvOptions(part) for part in blocks(list(options), k, n)]
        else:
            mask_option, rest = split_options(options)
            mask = parse_gymnasium_reset_mask(mask_option, self.total_envs)
            per_env = mask if mask is None or self._agents is None else env_mask(mask, self.agents_per_env)
            worker_options = [rest if options is not None else None] * n
        if mask is not None and not self._has_reset and not mask.all():
            raise errors.EnvStateError(
                "the first reset() must reset every sub-environment (no reset_mask, or an all-True one)"
            )
        masks: list[Any] = blocks(list(per_env), k, n) if per_env is not None else [None] * n
        payloads = [(s, o, m) for s, o, m in zip(blocks(seeds, k, n), worker_options, masks)]
        self._send(pool, Message.RESET, payloads, "reset options", "reset")
        self._first_seed.forget()
        self._reset_mask = mask

    def _sb3_env_options(self, options: list[dict[str, Any]]) -> EnvOptions:
        """SB3's ``set_options`` list (one dict per row) as one reset option per env, for ``reset(options=)``:
        an empty dict is no options, as ``SubprocVecEnv`` resets such an env; an env's agent rows must agree."""
        count = self.agents_per_env
        per_env = options[::count]
        for e, first in enumerate(per_env):
            if any(row != first for row in options[e * count : (e + 1) * count]):
                raise InvalidArgumentError(
                    f"set_options() gave the rows of sub-environment {e} (its agents) different options: an env "
                    "is reset with one options dict"
                )
        return EnvOptions(dict(option) if option else None for option in per_env)

    def reset_wait(self, timeout: float | None = None) -> tuple[Any, dict[str, Any]]:
        """The replies of ``reset_async``; ``multiprocessing.TimeoutError`` after ``timeout`` s (wait again)."""
        replies = self._wait("reset", "reset", timeout)
        self._has_reset, self._reset_needed = True, None
        if self._finished is not None:
            self._finished[slice(None) if self._reset_mask is None else self._reset_mask] = False
        observations = self._read_observations([obs for obs, _ in replies])
        return observations, self._batch_infos([infos for _, infos in replies])

    def step_async(self, actions: Any) -> None:
        """Checks ``actions`` (leading dimension ``total_envs``), sends them and returns at once. In
        pool mode: ``send``."""
        if self.pool_mode:
            self.send(actions)
            return
        pool = self._live_pool("step_async")
        if self._reset_needed is not None:
            raise errors.ResetNeeded(self._reset_needed)
        if self._finished is not None and self._finished.any():
            raise errors.EnvStateError(
                f"sub-environments {np.flatnonzero(self._finished).tolist()} ended their episode and, with "
                "autoreset_mode=DISABLED, must be reset (reset(options={'reset_mask': mask})) before the next step"
            )
        buffer = self._views.actions
        check = self._action_check
        if (
            buffer is not None
            and type(actions) is np.ndarray
            and actions.dtype == buffer.dtype
            and actions.shape == buffer.shape
        ):
            # Fast path: one copy into shared memory (no pending step reads it: checked above) and a
            # one-byte doorbell per worker.
            if check is not None and check(actions) is not None:
                action_batches.check_in_space(check, actions)  # raises, naming what is wrong
            buffer[...] = actions
            self._sent_actions = buffer  # read only by the wait of the step sent now
            pool.step_shared(self._all_workers, pending=AsyncState.WAITING_STEP)
            return
        if self._array_actions:  # other spaces are batched as Tuples: their actions go as given (a list of str...)
            actions = action_batches.as_batch(actions)
        action_batches.check_structure(actions, self.single_action_space, self.total_envs)
        if check is not None:
            action_batches.check_in_space(check, actions)
        parts = action_batches.split(
            actions, self.single_action_space, self.action_space, self._rows_per_worker, self.num_workers
        )
        frames = self._frames(Message.STEP, parts, "actions")
        self._sent_actions = actions  # read only by the wait of the step sent now
        self._send_frames(pool, frames, "step")

    def step_wait(self, timeout: float | None = None) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """The replies of ``step_async``; ``multiprocessing.TimeoutError`` after ``timeout`` s (wait again).
        In pool mode: ``recv``."""
        if self.pool_mode:
            return self.recv(timeout)
        replies = self._wait("step", "step", timeout)
        if self._views.observations is not None and not any(replies):
            # No info from any env: only agent rows add theirs (agent_mask, env_id, agent_id).
            observations, infos = (
                self._read_observations(replies),
                {} if self._agents is None else self._batch_infos([]),
            )
        else:
            replies = [reply or (None, None) for reply in replies]
            observations = self._read_observations([reply[0] for reply in replies])
            infos = self._batch_infos([reply[1] for reply in replies])
        views = self._views
        terminations, truncations = views.terminations.copy(), views.truncations.copy()
        if self._finished is not None:
            done = terminations | truncations
            if self._agents is not None:
                done = envs_done(done, infos["agent_mask"], self.agents_per_env)
            self._finished |= done
        return observations, views.rewards.copy(), terminations, truncations, infos

    def step(self, actions: Any) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        self.step_async(actions)
        return self.step_wait()

    def close_extras(self, timeout: float | None = None, terminate: bool = False, **kwargs: Any) -> None:
        """As ``AsyncVectorEnv``'s: ``terminate`` terminates the workers at once; ``timeout`` gives the
        workers still busy with a call (in pool mode: a step in flight) that many seconds to finish it,
        then terminates every worker. Without either, a busy worker gets ``CLOSE_TIMEOUT_S`` (5 s) to
        finish and exit before it is terminated (gymnasium waits for it without limit). As gymnasium's,
        the timeout is read only when a worker is busy: with none, any value closes the env."""
        if self._pool is not None:
            busy = True in self._pool.busy
            self._pool.shutdown(terminate=terminate, timeout=parse_timeout(timeout) if busy else None)

    def close(self, **kwargs: Any) -> None:
        if self._pool is not None and not self._pool.closed:
            pending = self._pool.pending
            if pending is not AsyncState.DEFAULT:  # gymnasium's warning; the workers finish the call, then exit
                logger.warn(f"Calling `close` while waiting for a pending call to `{pending.value}` to complete.")
            self.close_extras(**kwargs)

    def __enter__(self) -> TorchVectorizedEnv:
        return self

    def __exit__(self, *exc: object) -> Literal[False]:
        self.close(terminate=exc[0] is not None)
        return False

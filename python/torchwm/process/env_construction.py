"""How ``TorchVectorizedEnv`` is built: env 0 made in this process for its spaces (a PettingZoo
``ParallelEnv`` making each env one row per possible agent), the shared-memory buffers, the worker
processes and their handshake (every worker's READY, its envs' spaces checked as gymnasium checks them).

A mixin of ``TorchVectorizedEnv`` alone: ``__init__`` there parses the keywords and calls these steps
in order; it holds the counts (``num_workers``, ``envs_per_worker``...) they read.
"""

from __future__ import annotations

import multiprocessing as mp
import os
from collections.abc import Callable
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector.utils import batch_space, create_empty_array

from torchwm.errors import InvalidArgumentError
from torchwm.process import startup
from torchwm.process.agents import AgentLayout, is_parallel_env, refuse_aec_env
from torchwm.process.buffers import allocate
from torchwm.process.doorbells import DoorbellMemory, patience_for
from torchwm.process.old_api import adapt
from torchwm.process.pool import WorkerPool
from torchwm.process.worker import WorkerConfig

__all__ = ["STARTUP_TIMEOUT_S", "EnvConstructionMixin"]

STARTUP_TIMEOUT_S = 120.0  # how long the workers may take to build their envs before construction fails


class EnvConstructionMixin:
    """``_probe``, ``_set_spaces``, ``_allocate_buffers``, ``_spawn``, ``_handshake``."""

    num_workers: int
    envs_per_worker: int
    total_envs: int
    num_envs: int
    _env_count: int
    batch_size: int
    autoreset_mode: Any
    observation_mode: Any
    shared_memory: bool
    context: str
    max_concurrency: int | None
    _pool: WorkerPool | None
    pool_mode: bool  # PoolModeMixin's property
    close: Any

    def _probe(self, factory: Callable[[], Any], observation_mode: Any) -> Any:
        """Env 0, made in this process (as gymnasium's ``AsyncVectorEnv``): a PettingZoo ParallelEnv makes
        each env one row per possible agent (``possible_agents``, ``agents_per_env``)."""
        env = factory()
        self._agents: AgentLayout | None = None
        try:
            refuse_aec_env(env)
            if is_parallel_env(env):
                self._agents = AgentLayout.of(env, 0)
                if observation_mode == "different":
                    raise InvalidArgumentError(
                        "observation_mode='different' is not supported for PettingZoo ParallelEnvs: every "
                        "agent of every env shares one observation space"
                    )
        except BaseException:
            if hasattr(env, "close"):
                env.close()
            raise
        self.possible_agents = None if self._agents is None else self._agents.agents
        self.agents_per_env = 1 if self._agents is None else self._agents.count
        self._rows_per_worker = self.envs_per_worker * self.agents_per_env
        self.total_envs = self.num_envs = self._env_count * self.agents_per_env
        # Worker w's rows are row w of this table: pool mode looks a batch's rows up here.
        self._worker_rows = np.arange(self.total_envs, dtype=np.intp).reshape(self.num_workers, self._rows_per_worker)
        return env if self._agents is not None else adapt(env)

    def _set_spaces(self, probe: Any, factories: list[Callable[[], Any]], observation_mode: Any) -> None:
        """Spaces and metadata from env 0 (``probe``, closed here)."""
        try:
            self.metadata = {**getattr(probe, "metadata", {}), "autoreset_mode": self.autoreset_mode}
            self.render_mode = getattr(probe, "render_mode", None)
            self.spec = getattr(probe, "spec", None)
            agents = self._agents
            self.single_action_space = probe.action_space if agents is None else agents.action_space
            self.action_space = batch_space(self.single_action_space, self.batch_size)
            self.observation_space, self.single_observation_space = startup.observation_spaces(
                probe.observation_space if agents is None else agents.observation_space,
                factories,
                observation_mode,
                self.total_envs,
            )
            if self.pool_mode:  # a batch is some of the envs, whichever finish first
                self.observation_space = batch_space(self.single_observation_space, self.batch_size)
        finally:
            probe.close()

    def _allocate_buffers(self, ctx: Any) -> None:
        self._buffers = allocate(
            ctx,
            self.single_observation_space,
            self.single_action_space,
            self.total_envs,
            self.shared_memory,
            agent_rows=self._agents is not None,
        )
        self._views = self._buffers.views()
        if self._views.observations is not None:
            self._observations = self._views.observations
        else:
            self._observations = create_empty_array(self.single_observation_space, n=self.total_envs, fn=np.zeros)

    def _spawn(self, ctx: Any, factories: list[Callable[[], Any]], daemon: bool) -> None:
        payloads: list[Any] = (
            factories if self.context == "fork" else [startup.pickled(f, self.context) for f in factories]
        )
        k = self.envs_per_worker
        # A worker steps its envs one at a time: a limit below num_workers needs permits between them.
        limited = self.max_concurrency is not None and self.max_concurrency < self.num_workers
        # Kept while the env lives: spawned workers rebuild it by its name, which collecting it unlinks.
        self._permits = ctx.BoundedSemaphore(self.max_concurrency) if limited else None
        doorbells = DoorbellMemory(self.num_workers)
        parent_patience, worker_patience = patience_for(self.num_workers)
        configs = [
            WorkerConfig(
                w,
                w * k,
                payloads[w * k : (w + 1) * k],
                self._buffers,
                doorbells,
                worker_patience,
                self.autoreset_mode,
                os.getpid(),
                self._permits,
                self._agents,
            )
            for w in range(self.num_workers)
        ]
        self._pool = WorkerPool(ctx, configs, daemon, k, doorbells, parent_patience)

    def _handshake(self) -> None:
        """Waits for every worker's READY and checks its envs' spaces as gymnasium does."""
        assert self._pool is not None
        try:
            ready = self._pool.gather("start-up", STARTUP_TIMEOUT_S)
        except mp.TimeoutError:
            self.close(terminate=True)
            raise
        env_spaces = [pair for worker_spaces in ready for pair in worker_spaces]
        try:
            self._check_spaces(env_spaces)
        except RuntimeError:
            self.close(terminate=True)
            raise

    def _check_spaces(self, env_spaces: list[tuple[spaces.Space, spaces.Space]]) -> None:
        startup.check_env_spaces(
            env_spaces, self.single_observation_space, self.single_action_space, self.observation_mode
        )

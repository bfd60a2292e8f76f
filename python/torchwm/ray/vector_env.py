"""``RayVectorEnv``: ``num_workers`` Ray actors, anywhere on a Ray cluster, each stepping ``envs_per_worker`` envs.

The same contract as the local process backend (``TorchVectorizedEnv``) and gymnasium's ``AsyncVectorEnv``:
one Ray task per worker per call (not per env), observations back as numpy arrays from Ray's object
store, autoreset / ``reset_mask`` / info batching exactly as one ``SyncVectorEnv`` over all the envs.
A worker that dies (actor killed, node lost) raises :class:`~torchwm.errors.WorkerCrashedError` naming it.
The call pending and its replies are ray/_pending_tasks.py's.
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import weakref
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.async_vector_env import AsyncState
from gymnasium.vector.utils import batch_space, create_empty_array

from torchwm._vector_args import (
    FirstResetSeed,
    env_factories,
    parse_autoreset_mode,
    parse_reset_mask,
    parse_seeds,
    split_options,
    worker_counts,
)
from torchwm._worker_blocks import blocks
from torchwm.errors import (
    InvalidArgumentError,
)
from torchwm.integrations.trainer import TrainerIntegrationMixin
from torchwm.process.actions import as_batch, check_in_space, space_check
from torchwm.process.sb3_calls import in_caller_order, per_worker_indices
from torchwm.ray._batching import join_infos, join_observations, split_actions
from torchwm.ray._cluster import ActorPlacement, connect
from torchwm.ray._errors import refuse_process_only
from torchwm.ray._pending_tasks import PendingTasksMixin
from torchwm.ray._worker import EnvBlockWorker

# How long the workers may take to start and build their envs (a new node may first install a runtime env).
STARTUP_TIMEOUT_S = 300.0
_MODES = (AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP, AutoresetMode.DISABLED)


def _kill(ray: Any, actors: list[Any]) -> None:
    """Kills the worker actors (idempotent; quiet when Ray has already shut down at exit)."""
    while actors:
        actor = actors.pop()
        # Quiet: at interpreter exit Ray may already be shut down, and the actor is then gone anyway.
        with contextlib.suppress(Exception):
            ray.kill(actor, no_restart=True)


class RayVectorEnv(PendingTasksMixin, TrainerIntegrationMixin, VectorEnv):
    """A ``gymnasium.vector.VectorEnv`` whose workers are Ray actors.

    Args:
        env_factory: a callable returning a gymnasium env (or a list of ``num_workers * envs_per_worker``
            of them), or a callable returning a ``VectorEnv`` of ``envs_per_worker`` envs such as
            ``torchwm.AtariVectorEnv``, called once per worker: that worker steps it as one block.
        num_workers: Ray actors.
        envs_per_worker: envs each actor steps.
        seed: seeds the first ``reset()`` (env ``i`` gets ``seed + i``) when it is given no seed.
        autoreset_mode: ``NEXT_STEP`` (default), ``SAME_STEP`` or ``DISABLED``, as gymnasium defines them.
        num_cpus: CPUs Ray reserves per actor (fractional allowed).
        scheduling_strategy: ``"SPREAD"`` (default: actors across the cluster's nodes), ``"DEFAULT"``,
            or any Ray scheduling strategy object (placement group, node affinity).
        actor_options: further options for each actor (``resources``, ``runtime_env``, ``memory``...).
        address: the cluster to join when Ray is not initialised yet (``"auto"``, ``"ray://host:10001"``...);
            ``None`` joins ``RAY_ADDRESS`` if set, else starts a local Ray.
        ray_init_kwargs: further ``ray.init`` arguments when this call initialises Ray.
        startup_timeout: seconds the actors may take to start and build their envs.

    ``TorchVectorizedEnv``'s keywords mean the same here: ``check_actions=True`` checks actions against
    the action space before anything is sent (default: delivered as given). Observations always come
    back as new arrays from Ray's object store, so ``copy`` and ``shared_memory`` change nothing, and
    actors end with the driver whatever ``daemon`` says. ``context`` (how local processes start) and
    ``max_concurrency`` below ``num_workers`` (each actor steps its envs one after another, so at most
    ``num_workers`` step at once: use that many workers) and an ``observation_mode`` other than
    ``"same"`` are refused, saying so.
    """

    def __init__(
        self,
        env_factory: Callable[[], Any] | Sequence[Callable[[], Any]],
        num_workers: int = 2,
        envs_per_worker: int = 4,
        *,
        seed: int | None = None,
        autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
        num_cpus: float = 1.0,
        scheduling_strategy: Any = "SPREAD",
        actor_options: dict[str, Any] | None = None,
        address: str | None = None,
        ray_init_kwargs: dict[str, Any] | None = None,
        startup_timeout: float = STARTUP_TIMEOUT_S,
        context: str | None = None,
        shared_memory: bool = True,
        daemon: bool = True,
        copy: bool = True,
        observation_mode: Any = "same",
        check_actions: bool = False,
        max_concurrency: int | None = None,
        batch_size: int | None = None,
        backend: str = "ray",
    ) -> None:
        self.closed = True  # until the actors exist, close() has nothing to do
        refuse_process_only(
            context, observation_mode, max_concurrency, num_workers, backend, batch_size, envs_per_worker
        )
        self.copy, self.shared_memory, self.daemon = bool(copy), bool(shared_memory), bool(daemon)
        self.observation_mode, self.max_concurrency = observation_mode, max_concurrency
        self.num_workers, self.envs_per_worker = worker_counts(num_workers, envs_per_worker)
        self.num_envs = self.num_workers * self.envs_per_worker
        self.batch_size = self.num_envs  # every env at each call (pool mode is the process backend's)
        self.autoreset_mode = parse_autoreset_mode(autoreset_mode, _MODES)
        factories = env_factories(env_factory, self.num_workers * self.envs_per_worker)
        placement = ActorPlacement(num_cpus, scheduling_strategy, dict(actor_options or {}))
        self._ray = connect(address, ray_init_kwargs)
        self._start_actors(factories, placement)
        # gymnasium's async protocol state; `_command` names any call in flight (startup, get_attr...).
        self._state = AsyncState.DEFAULT
        self._command: str | None = None
        self._pending: list[Any] = []
        self._replies: dict[int, Any] = {}
        self._adopt(self._describe_workers(startup_timeout))
        self._first_seed = FirstResetSeed(seed, self.num_envs)
        self._worker_obs = [
            create_empty_array(self.single_observation_space, self.envs_per_worker) for _ in range(self.num_workers)
        ]
        self._action_check = space_check(self.single_action_space) if check_actions else None

    def _start_actors(self, factories: list[Callable[[], Any]], placement: ActorPlacement) -> None:
        """Starts one actor per worker with its block of env factories; from then on ``close()`` (or the
        garbage collector) kills them."""
        self._actors: list[Any] = []
        self._finalizer = weakref.finalize(self, _kill, self._ray, self._actors)
        remote_worker = self._ray.remote(EnvBlockWorker)
        k = self.envs_per_worker
        for w in range(self.num_workers):
            actor = remote_worker.options(**placement.options(w)).remote(
                factories[w * k : (w + 1) * k], self.autoreset_mode, w * k
            )
            self._actors.append(actor)
        self.closed = False

    def _describe_workers(self, timeout: float) -> list[dict[str, Any]]:
        """Each worker's spaces, metadata and node, once its envs are built; past ``timeout`` s the actors
        are killed and ``mp.TimeoutError`` is raised."""
        try:
            return self._run("startup", [actor.describe.remote() for actor in self._actors], timeout)
        except mp.TimeoutError:
            self.close()
            raise

    def _adopt(self, described: list[dict[str, Any]]) -> None:
        """Takes the spaces and metadata of worker 0; every worker must have the same spaces."""
        first = described[0]
        for w, info in enumerate(described):
            if info["observation_space"] != first["observation_space"] or info["action_space"] != first["action_space"]:
                self.close()
                raise RuntimeError(
                    f"worker {w}'s envs have observation space {info['observation_space']} and action space "
                    f"{info['action_space']}, worker 0's {first['observation_space']} and {first['action_space']}: "
                    "all sub-environments must share their spaces"
                )
        self.single_observation_space = first["observation_space"]
        self.single_action_space = first["action_space"]
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.metadata = {**first["metadata"], "autoreset_mode": self.autoreset_mode}
        self.render_mode = first["render_mode"]
        self.spec = first["spec"]
        self.worker_nodes = tuple(info["node_id"] for info in described)

    # ----------------------------------------------------------------------------------------- VectorEnv

    def reset_async(
        self, seed: int | Sequence[int | None] | None = None, options: dict[str, Any] | None = None
    ) -> None:
        """Sends ``reset`` to the workers; ``options["reset_mask"]`` resets only the selected envs."""
        self._check_can_send("reset_async")
        mask, rest = split_options(options)
        mask = parse_reset_mask(mask, self.num_envs)
        if mask is not None and not mask.any():
            raise InvalidArgumentError("`reset_mask` must select at least one sub-environment")
        seeds = parse_seeds(self._first_seed(seed), self.num_envs)
        k = self.envs_per_worker
        self._reset_workers = [w for w in range(self.num_workers) if mask is None or mask[w * k : (w + 1) * k].any()]
        refs = [
            self._actors[w].reset.remote(
                seeds[w * k : (w + 1) * k], rest, None if mask is None else mask[w * k : (w + 1) * k]
            )
            for w in self._reset_workers
        ]
        self._submit("reset", refs)
        self._first_seed.forget()

    def reset_wait(self, timeout: float | None = None) -> tuple[Any, dict[str, Any]]:
        self._check_waiting("reset", "reset_wait")
        replies = self._gather(timeout)
        infos: list[dict[str, Any] | None] = [None] * self.num_workers
        for w, (observations, worker_infos) in zip(self._reset_workers, replies):
            self._worker_obs[w], infos[w] = observations, worker_infos
        return join_observations(self.single_observation_space, self._worker_obs, self.envs_per_worker), join_infos(
            infos, self.envs_per_worker
        )

    def reset(
        self, *, seed: int | Sequence[int | None] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        self.reset_async(seed=seed, options=options)
        return self.reset_wait()

    def step_async(self, actions: Any) -> None:
        """Sends each worker its slice of ``actions`` (leading dimension ``num_envs``) and returns at once."""
        self._check_can_send("step_async")
        if self._action_check is not None:
            check_in_space(self._action_check, as_batch(actions))
        parts = split_actions(self.single_action_space, actions, self.num_workers, self.envs_per_worker)
        self._submit("step", [actor.step.remote(part) for actor, part in zip(self._actors, parts)])

    def step_wait(self, timeout: float | None = None) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """The step sent by ``step_async``, once every worker is in; ``mp.TimeoutError`` after ``timeout`` s
        (the step stays pending: call again to keep waiting)."""
        self._check_waiting("step", "step_wait")
        replies = self._gather(timeout)
        self._worker_obs = [reply[0] for reply in replies]
        observations = join_observations(self.single_observation_space, self._worker_obs, self.envs_per_worker)
        rewards, terminations, truncations = (np.concatenate([reply[i] for reply in replies]) for i in (1, 2, 3))
        infos = join_infos([reply[4] for reply in replies], self.envs_per_worker)
        return observations, rewards, terminations.astype(np.bool_), truncations.astype(np.bool_), infos

    def step(self, actions: Any) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        self.step_async(actions)
        return self.step_wait()

    def sb3_call(self, call: str, name: Any, indices: Sequence[int], *args: Any, **kwargs: Any) -> list[Any]:
        """One of Stable-Baselines3's per-env calls on the envs ``indices``, in that order, run in the
        actors as ``TorchVectorizedEnv.sb3_call`` runs them in its workers (what ``to_sb3()`` uses)."""
        self._check_can_send(call)
        chosen, local = per_worker_indices(indices, self.envs_per_worker, self.num_workers)
        refs = [actor.sb3_call.remote(call, name, args, kwargs, part) for actor, part in zip(self._actors, local)]
        return in_caller_order(self._run(call, refs, None), chosen, self.envs_per_worker)

    def call_async(self, name: str, *args: Any, **kwargs: Any) -> None:
        self._check_can_send("call_async")
        self._submit("call", [actor.call.remote(name, args, kwargs) for actor in self._actors])

    def call_wait(self, timeout: float | None = None) -> tuple[Any, ...]:
        self._check_waiting("call", "call_wait")
        return tuple(value for reply in self._gather(timeout) for value in reply)

    def call(self, name: str, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
        """``name(*args, **kwargs)`` on every sub-env (its value if not callable); an exception in a
        sub-env is raised here as its own class, and the env stays usable."""
        self.call_async(name, *args, **kwargs)
        return self.call_wait()

    def get_attr(self, name: str) -> tuple[Any, ...]:
        self._check_can_send("call_async")  # gymnasium: get_attr goes through call_async
        replies = self._run("get_attr", [actor.get_attr.remote(name) for actor in self._actors], None)
        return tuple(value for reply in replies for value in reply)

    def set_attr(self, name: str, values: Any) -> None:
        """Sets ``name`` on every sub-env: one value for all, or a list/tuple of ``num_envs`` values."""
        self._check_can_send("set_attr")
        if not isinstance(values, (list, tuple)):
            values = [values] * self.num_envs
        if len(values) != self.num_envs:
            raise InvalidArgumentError(
                f"set_attr needs one value or num_envs={self.num_envs} values, got {len(values)}"
            )
        parts = blocks(values, self.envs_per_worker, self.num_workers)
        refs = [actor.set_attr.remote(name, part) for actor, part in zip(self._actors, parts)]
        self._run("set_attr", refs, None)

    def render(self) -> tuple[Any, ...] | None:
        self._check_can_send("call_async")  # gymnasium: render goes through call_async
        frames = self._run("render", [actor.render.remote() for actor in self._actors], None)
        return None if all(f is None for f in frames) else tuple(frame for worker in frames for frame in worker or ())

    @property
    def np_random_seed(self) -> tuple[Any, ...]:  # type: ignore[override]  # a tuple, as Sync/AsyncVectorEnv
        self._check_can_send("call_async")  # gymnasium: through get_attr, so call_async
        replies = self._run("np_random_seed", [actor.np_random_seed.remote() for actor in self._actors], None)
        return tuple(seed for reply in replies for seed in reply)

    def close_extras(self, **kwargs: Any) -> None:
        self._command, self._pending, self._replies, self._state = None, [], {}, AsyncState.DEFAULT
        self._finalizer()

    def close(self, **kwargs: Any) -> None:
        """Kills every worker actor (their envs go with them); safe to call more than once."""
        if not self.closed:
            self.closed = True
            self.close_extras(**kwargs)

    def __enter__(self) -> RayVectorEnv:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

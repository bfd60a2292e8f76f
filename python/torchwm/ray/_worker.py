"""The Ray actor behind :class:`~torchwm.ray.RayVectorEnv`: one worker's block of envs.

A worker holds one gymnasium ``VectorEnv`` of ``envs_per_worker`` envs: a ``SyncVectorEnv`` over the
factories it was given, or the ``VectorEnv`` a factory returned itself (``torchwm.AtariVectorEnv``: the
node steps its emulators with the Rust pool). Autoreset, ``reset_mask`` and info batching inside a
worker are therefore gymnasium's own; the parent only places the workers' batches side by side.

Every method answers with plain values (numpy arrays, dicts): one Ray task per worker per call.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode, SyncVectorEnv, VectorEnv

from torchwm.errors import InvalidArgumentError
from torchwm.process.agents import is_parallel_env
from torchwm.process.sb3_calls import sb3_call


def build_block(factories: Sequence[Callable[[], Any]], autoreset_mode: AutoresetMode) -> VectorEnv:
    """The worker's ``VectorEnv``: what the first factory returns when it is one (it must then hold
    ``len(factories)`` envs and use ``autoreset_mode``), else a ``SyncVectorEnv`` over all factories."""
    first = factories[0]()
    if is_parallel_env(first):
        raise InvalidArgumentError(
            "the env factory returned a PettingZoo ParallelEnv: multi-agent envs are not supported by the Ray "
            "backend yet; use TorchVectorizedEnv(..., backend='process'), which takes them (agents as rows)"
        )
    if isinstance(first, VectorEnv):
        if first.num_envs != len(factories):
            first.close()
            raise ValueError(
                f"the env factory returned a VectorEnv of {first.num_envs} envs, but each worker holds "
                f"envs_per_worker={len(factories)}: build it with num_envs=envs_per_worker"
            )
        block_mode = first.metadata.get("autoreset_mode", AutoresetMode.NEXT_STEP)
        if AutoresetMode(block_mode) != autoreset_mode:
            first.close()
            raise ValueError(
                f"the env factory returned a VectorEnv with autoreset mode {block_mode}, but the "
                f"RayVectorEnv was asked for {autoreset_mode}: build it with the same mode"
            )
        return first
    envs = [first] + [factory() for factory in factories[1:]]
    for env in envs[1:]:
        # Checked here, as AsyncVectorEnv does (RuntimeError; SyncVectorEnv would assert).
        if env.observation_space != first.observation_space or env.action_space != first.action_space:
            for made in envs:
                made.close()
            raise RuntimeError(
                f"a sub-environment has observation space {env.observation_space} and action space "
                f"{env.action_space}, the first one {first.observation_space} and {first.action_space}: "
                "all sub-environments must share their spaces"
            )
    return SyncVectorEnv([partial(_made, env) for env in envs], autoreset_mode=autoreset_mode)


def _made(env: Any) -> Any:
    """A factory for an env already made (SyncVectorEnv takes factories)."""
    return env


class EnvBlockWorker:
    """Runs one block of envs; wrapped with ``ray.remote`` by the parent (so importing this needs no Ray)."""

    def __init__(
        self, factories: Sequence[Callable[[], Any]], autoreset_mode: AutoresetMode, first_env: int = 0
    ) -> None:
        self.first_env = first_env
        # An exception here would kill the actor (an ActorDiedError, as for a crash): it is kept and
        # raised by describe(), so the caller gets the factory's exception as its own class.
        self.startup_error: BaseException | None = None
        # Any: a SyncVectorEnv or a VectorEnv with call/get_attr/set_attr (gymnasium's base class has none).
        self.block: Any = None
        try:
            self.block = build_block(factories, AutoresetMode(autoreset_mode))
        except Exception as error:
            self.startup_error = error

    def describe(self) -> dict[str, Any]:
        """What the parent needs to batch this worker: its spaces, metadata, and where it runs."""
        if self.startup_error is not None:
            raise self.startup_error
        block = self.block
        return {
            "observation_space": block.single_observation_space,
            "action_space": block.single_action_space,
            "metadata": dict(getattr(block, "metadata", {})),
            "render_mode": getattr(block, "render_mode", None),
            "spec": _single_spec(block),
            "node_id": _node_id(),
            "pid": os.getpid(),
        }

    def reset(self, seeds: list[int | None], options: dict[str, Any], mask: np.ndarray | None) -> tuple[Any, dict]:
        seed: Any = None if all(s is None for s in seeds) else list(seeds)
        if seed is not None and not isinstance(self.block, SyncVectorEnv) and None not in seed:
            seed = np.asarray(seed, dtype=np.int64)  # what every VectorEnv takes (ale_py's: not a list)
        options = dict(options)
        if mask is not None:
            options["reset_mask"] = mask
        observations, infos = self.block.reset(seed=seed, options=options or None)
        return observations, self._global_env_ids(infos)

    def step(self, actions: Any) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict]:
        *results, infos = self.block.step(actions)
        return (*results, self._global_env_ids(infos))

    def _global_env_ids(self, infos: dict[str, Any]) -> dict[str, Any]:
        """A block's ``info["env_id"]`` (AtariVectorEnv's, ale_py's) numbers its envs from 0: renumbered
        to their indices in the whole RayVectorEnv. A SyncVectorEnv's infos are the envs' own: kept."""
        if "env_id" in infos and not isinstance(self.block, SyncVectorEnv):
            infos = {**infos, "env_id": np.asarray(infos["env_id"]) + self.first_env}
        return infos

    def call(self, name: str, args: tuple, kwargs: dict) -> tuple[Any, ...]:
        return tuple(self.block.call(name, *args, **kwargs))

    def get_attr(self, name: str) -> tuple[Any, ...]:
        return tuple(self.block.get_attr(name))

    def set_attr(self, name: str, values: list[Any]) -> None:
        self.block.set_attr(name, values)

    def render(self) -> tuple[Any, ...] | None:
        return self.block.render()

    def sb3_call(self, call: str, name: Any, args: tuple, kwargs: dict, local: list[int]) -> list[Any]:
        """One of SB3's per-env calls on this block's envs ``local`` (in order), as SubprocVecEnv runs it."""
        envs = getattr(self.block, "envs", None)
        if envs is None:
            raise TypeError(
                f"{type(self.block).__name__} has no per-env objects for Stable-Baselines3's {call}: "
                "only blocks of gymnasium envs (a SyncVectorEnv) have"
            )
        return [sb3_call(envs[i], call, name, args, kwargs) for i in local]

    def np_random_seed(self) -> tuple[Any, ...]:
        return tuple(self.block.np_random_seed)

    def close(self) -> None:
        if self.startup_error is None:
            self.block.close()


def _single_spec(block: VectorEnv) -> Any:
    envs = getattr(block, "envs", None)
    return getattr(envs[0], "spec", None) if envs else getattr(block, "spec", None)


def _node_id() -> str | None:
    try:
        import ray

        return ray.get_runtime_context().get_node_id()
    except Exception:
        return None

"""Joining a Ray cluster and placing the worker actors: every Ray setting of ``RayVectorEnv`` is checked here."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from torchwm.errors import InvalidArgumentError

# Ray's own names for its two built-in placement strategies (any Ray strategy object is accepted too).
_STRATEGY_NAMES = ("SPREAD", "DEFAULT")


def import_ray() -> Any:
    try:
        import ray
    except ImportError as error:
        raise ImportError("the Ray backend needs Ray: pip install 'torchwm[ray]'") from error
    return ray


@dataclass(frozen=True)
class ActorPlacement:
    """How each worker actor is placed.

    Attributes:
        num_cpus: CPUs Ray reserves per worker actor (may be fractional, e.g. 0.5).
        scheduling_strategy: ``"SPREAD"`` (default: across nodes), ``"DEFAULT"`` (Ray packs by load), or
            any Ray scheduling strategy object (``PlacementGroupSchedulingStrategy``, ``NodeAffinitySchedulingStrategy``).
        actor_options: further ``ray.remote`` options for each actor (``resources``, ``runtime_env``, ``memory``...).
    """

    num_cpus: float = 1.0
    scheduling_strategy: Any = "SPREAD"
    actor_options: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if isinstance(self.num_cpus, bool) or not isinstance(self.num_cpus, (int, float)) or self.num_cpus < 0:
            raise InvalidArgumentError(f"num_cpus must be a number >= 0, got {self.num_cpus!r}")
        if isinstance(self.scheduling_strategy, str) and self.scheduling_strategy not in _STRATEGY_NAMES:
            raise InvalidArgumentError(
                f"scheduling_strategy must be one of {_STRATEGY_NAMES} or a Ray scheduling strategy object, "
                f"got {self.scheduling_strategy!r}"
            )
        if not isinstance(self.actor_options, dict):
            raise InvalidArgumentError(f"actor_options must be a dict, got {type(self.actor_options).__name__}")
        clashes = {"num_cpus", "scheduling_strategy", "max_restarts", "name"} & set(self.actor_options)
        if clashes:
            raise InvalidArgumentError(
                f"actor_options must not set {sorted(clashes)}: they are RayVectorEnv's own settings"
            )

    def options(self, worker: int) -> dict[str, Any]:
        """``ray.remote(...).options(...)`` for worker ``worker``: no restarts (a dead worker is an error)."""
        return {
            **self.actor_options,
            "num_cpus": self.num_cpus,
            "scheduling_strategy": self.scheduling_strategy,
            "max_restarts": 0,
            "max_task_retries": 0,
        }


def connect(address: str | None, init_kwargs: dict[str, Any] | None) -> Any:
    """Ray, initialised: the running connection if there is one, else ``ray.init(address=address)``
    (``None``: the cluster in ``RAY_ADDRESS`` if set, else a new local one)."""
    ray = import_ray()
    if ray.is_initialized():
        if init_kwargs:
            raise InvalidArgumentError("ray_init_kwargs given, but Ray is already initialised in this process")
        return ray
    ray.init(address=address, **(init_kwargs or {}))
    return ray

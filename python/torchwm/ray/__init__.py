"""torchwm on a Ray cluster: :class:`RayVectorEnv` (workers are Ray actors) and RLlib support.

Needs Ray (``pip install 'torchwm[ray]'``); importing :mod:`torchwm` itself never imports Ray.
"""

from torchwm.ray._cluster import ActorPlacement
from torchwm.ray.vector_env import RayVectorEnv

__all__ = ["ActorPlacement", "RayVectorEnv"]

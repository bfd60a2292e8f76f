"""torchwm: fast, safe vectorized reinforcement-learning environments with a Rust core.

- :class:`AtariVectorEnv` / :func:`make_atari_vector_env`: Atari (ALE 0.12.1) stepped by Rust threads,
  a drop-in for ``ale_py.vector_env.AtariVectorEnv`` (also as :data:`VectorAtariEnv`, the ALE vector
  guide's name); gymnasium ids ``TorchWM/<Game>-v5``.
- :class:`TorchVectorizedEnv`: worker processes for any Gym-like env factory; :func:`autotune` measures
  which workers x envs per worker (x pool batch) steps the caller's env fastest on this machine.
- ``RayVectorEnv`` (:mod:`torchwm.ray`, needs ``torchwm[ray]``): the same, with Ray actors on a cluster.
- :func:`make_env`: envs whose observation is their real rendered frame at a chosen size.
- :mod:`torchwm.errors`: the one exception tree, rooted in :class:`TorchwmError`.
"""

from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as _version
from typing import Any

from torchwm.atari import AtariEnvState, AtariVectorEnv, VectorAtariEnv, make_atari_vector_env
from torchwm.atari.registration import register_atari_envs
from torchwm.envs import make_env
from torchwm.errors import (
    AleError,
    AlreadyPendingCallError,
    ClosedEnvironmentError,
    EnvStateError,
    InvalidArgumentError,
    InvalidArgumentTypeError,
    NoAsyncCallError,
    ResetNeeded,
    SubEnvError,
    TorchwmError,
    WorkerCrashedError,
    WorkerError,
)
from torchwm.process import TorchVectorizedEnv
from torchwm.process.autotune import TuneResult, autotune
from torchwm.recording import Recorder, record

try:
    __version__ = _version("torchwm")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0+unknown"

register_atari_envs()


def __getattr__(name: str) -> Any:
    # Ray is optional (pip install 'torchwm[ray]'): torchwm.RayVectorEnv imports it on first use only.
    if name == "RayVectorEnv":
        from torchwm.ray import RayVectorEnv

        return RayVectorEnv
    raise AttributeError(f"module 'torchwm' has no attribute {name!r}")


__all__ = [
    "AleError",
    "AlreadyPendingCallError",
    "AtariEnvState",
    "AtariVectorEnv",
    "ClosedEnvironmentError",
    "EnvStateError",
    "InvalidArgumentError",
    "InvalidArgumentTypeError",
    "NoAsyncCallError",
    "Recorder",
    "ResetNeeded",
    "SubEnvError",
    "TorchVectorizedEnv",
    "TorchwmError",
    "TuneResult",
    "VectorAtariEnv",
    "WorkerCrashedError",
    "WorkerError",
    "__version__",
    "autotune",
    "make_atari_vector_env",
    "make_env",
    "record",
]

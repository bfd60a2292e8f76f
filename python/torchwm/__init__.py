"""torchwm: fast, safe vectorized reinforcement-learning environments with a Rust core.

- :class:`AtariVectorEnv` / :func:`make_atari_vector_env`: Atari (ALE 0.12.1) stepped by Rust threads,
  a drop-in for ``ale_py.vector_env.AtariVectorEnv`` (also as :data:`VectorAtariEnv`, the ALE vector
  guide's name); gymnasium ids ``TorchWM/<Game>-v5``.
- :class:`TorchVectorizedEnv`: worker processes for any Gym-like env factory.
- :func:`make_env`: envs whose observation is their real rendered frame at a chosen size.
- :mod:`torchwm.errors`: the one exception tree, rooted in :class:`TorchwmError`.
"""

from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as _version

from torchwm.atari import AtariVectorEnv, VectorAtariEnv, make_atari_vector_env
from torchwm.envs import make_env
from torchwm.errors import (
    AleError,
    AlreadyPendingCallError,
    ClosedEnvironmentError,
    EnvStateError,
    InvalidArgumentError,
    NoAsyncCallError,
    TorchwmError,
    WorkerError,
)
from torchwm.registration import register_atari_envs

# The process vectorizer's own classes until it raises those of torchwm.errors (then the same objects).
from torchwm.vector import SubEnvError, TorchVectorizedEnv, WorkerCrashedError

try:
    __version__ = _version("torchwm")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0+unknown"

register_atari_envs()

__all__ = [
    "AleError",
    "AlreadyPendingCallError",
    "AtariVectorEnv",
    "ClosedEnvironmentError",
    "EnvStateError",
    "InvalidArgumentError",
    "NoAsyncCallError",
    "SubEnvError",
    "TorchVectorizedEnv",
    "TorchwmError",
    "VectorAtariEnv",
    "WorkerCrashedError",
    "WorkerError",
    "__version__",
    "make_atari_vector_env",
    "make_env",
]

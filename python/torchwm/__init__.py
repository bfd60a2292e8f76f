"""torchwm: fast, safe vectorized reinforcement-learning environments with a Rust core.

- :class:`AtariVectorEnv` / :func:`make_atari_vector_env`: Atari (ALE 0.12.1) stepped by Rust threads,
  a drop-in for ``ale_py.vector_env.AtariVectorEnv``; gymnasium ids ``TorchWM/<Game>-v5``.
- :class:`TorchVectorizedEnv`: worker processes for any Gym-like env factory.
- :func:`make_env`: envs whose observation is their real rendered frame at a chosen size.
"""

from importlib.metadata import PackageNotFoundError, version as _version

from torchwm._core import AleError, EnvStateError, TorchwmError, WorkerError
from torchwm.atari import AtariVectorEnv, make_atari_vector_env
from torchwm.envs import make_env
from torchwm.vector import SubEnvError, TorchVectorizedEnv, WorkerCrashedError
from torchwm.registration import register_atari_envs
from torchwm.record import Recorder, record

try:
    __version__ = _version("torchwm")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0+unknown"

register_atari_envs()

__all__ = [
    "AleError",
    "AtariVectorEnv",
    "EnvStateError",
    "Recorder",
    "SubEnvError",
    "TorchVectorizedEnv",
    "TorchwmError",
    "WorkerCrashedError",
    "WorkerError",
    "__version__",
    "make_atari_vector_env",
    "make_env",
    "record",
]

"""``TorchVectorizedEnv``: a process vectorizer for any Gym-like env factory (a drop-in for gymnasium's
``AsyncVectorEnv``). Not to be confused with the Rust crate's ``vector`` module, the thread pool
behind ``AtariVectorEnv``."""

from torchwm.errors import SubEnvError, WorkerCrashedError
from torchwm.process.torch_vectorized_env import TorchVectorizedEnv

__all__ = ["SubEnvError", "TorchVectorizedEnv", "WorkerCrashedError"]

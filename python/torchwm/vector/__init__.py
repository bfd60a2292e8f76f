"""``TorchVectorizedEnv``: a process vectorizer for any Gym-like env factory."""

from torchwm.vector.errors import SubEnvError, WorkerCrashedError
from torchwm.vector.torch_vectorized_env import TorchVectorizedEnv

__all__ = ["SubEnvError", "TorchVectorizedEnv", "WorkerCrashedError"]

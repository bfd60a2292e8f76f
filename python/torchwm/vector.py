"""Former name of :mod:`torchwm.process`, kept so that ``import torchwm.vector`` goes on working."""

from torchwm.process import SubEnvError, TorchVectorizedEnv, WorkerCrashedError

__all__ = ["SubEnvError", "TorchVectorizedEnv", "WorkerCrashedError"]

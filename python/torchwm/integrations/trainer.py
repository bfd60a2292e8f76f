"""What both vectorizers offer the trainers people use: torch batches and Stable-Baselines3's ``VecEnv``."""

from __future__ import annotations

from typing import Any

from torchwm.integrations.torch_batches import TorchBatchMixin

__all__ = ["TrainerIntegrationMixin"]


class TrainerIntegrationMixin(TorchBatchMixin):
    """``reset_batch``/``step_batch`` (torch tensors on ``device=``) and ``to_sb3()``; before ``VectorEnv``."""

    def to_sb3(self) -> Any:
        """This env as Stable-Baselines3's ``VecEnv``: ``obs, rewards, dones, infos = vec_env.step(actions)``."""
        from torchwm.integrations.sb3 import SB3VecEnv

        return SB3VecEnv(self)

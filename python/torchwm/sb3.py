"""The public name of :mod:`torchwm.integrations.sb3`: ``from torchwm.sb3 import SB3VecEnv`` goes on working."""

from torchwm.integrations.sb3 import SB3VecEnv

__all__ = ["SB3VecEnv"]

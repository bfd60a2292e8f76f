"""Atari: ``AtariVectorEnv`` (ALE stepped by torchwm's Rust core), its ROM lookup, gymnasium
registration, render-mode checks and JAX (``xla()``) functions."""

from gymnasium.vector import AutoresetMode

from torchwm.atari.env_state import AtariEnvState
from torchwm.atari.vector_env import AtariSettings, AtariVectorEnv, VectorAtariEnv, make_atari_vector_env

__all__ = [
    "AtariEnvState",
    "AtariSettings",
    "AtariVectorEnv",
    "AutoresetMode",
    "VectorAtariEnv",
    "make_atari_vector_env",
]

"""What RLlib needs to train on torchwm's Atari envs (``TorchWM/<Game>-v5``, ``AtariVectorEnv``).

torchwm (like ale_py's vector env) returns uint8 frame stacks, channels first: ``(stack, H, W)`` or
``(stack, H, W, 3)``; RLlib's default CNN encoder takes float images, channels last. The env stays as it
is (a drop-in for ale_py's); an env-to-module connector turns each frame stack into float32
``(H, W, stack)`` (``stack * 3`` channels for RGB) in ``[-1, 1]``, the range of RLlib's own Atari
preprocessing (``NormalizedImageEnv``).

Use::

    config = (
        PPOConfig()
        .environment("TorchWM/Breakout-v5")
        .env_runners(
            gym_env_vectorize_mode="vector_entry_point",  # RLlib builds torchwm's AtariVectorEnv
            env_to_module_connector=atari_env_to_module,
        )
        .rl_module(model_config=atari_model_config())
    )
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from ray.rllib.connectors.env_to_module.observation_preprocessor import SingleAgentObservationPreprocessor
from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig

# The Nature DQN convolutions (Mnih et al. 2015) and head, for 84x84 frames: [filters, kernel, stride].
NATURE_CNN_FILTERS = [[32, 8, 4], [64, 4, 2], [64, 3, 1]]
NATURE_CNN_HEAD = [512]


def _channels_last_shape(shape: tuple[int, ...]) -> tuple[int, int, int]:
    if len(shape) == 3:  # (stack, H, W): grayscale
        stack, height, width = shape
        return height, width, stack
    if len(shape) == 4 and shape[-1] == 3:  # (stack, H, W, 3): RGB
        stack, height, width, _ = shape
        return height, width, stack * 3
    raise ValueError(
        f"AtariFramesToModule expects uint8 frame stacks (stack, H, W) or (stack, H, W, 3), got shape {shape}"
    )


class AtariFramesToModule(SingleAgentObservationPreprocessor):
    """Env-to-module connector: uint8 channels-first frame stacks -> float32 channels-last in [-1, 1]."""

    def recompute_output_observation_space(
        self, input_observation_space: gym.Space, input_action_space: gym.Space
    ) -> gym.Space:
        space = input_observation_space
        if not isinstance(space, gym.spaces.Box) or space.dtype != np.uint8:
            raise ValueError(f"AtariFramesToModule expects a uint8 Box observation space, got {space}")
        return gym.spaces.Box(-1.0, 1.0, _channels_last_shape(space.shape), np.float32)

    def preprocess(self, observation: np.ndarray, episode: Any) -> np.ndarray:
        frames = np.moveaxis(np.asarray(observation), 0, 2)  # (H, W, stack[, 3])
        frames = frames.reshape(self.observation_space.shape)
        return frames.astype(np.float32) / 128.0 - 1.0


def atari_env_to_module(env: Any = None, spaces: Any = None, device: Any = None) -> AtariFramesToModule:
    """For ``config.env_runners(env_to_module_connector=atari_env_to_module)`` (RLlib calls it with
    the env runner's env, spaces and device)."""
    return AtariFramesToModule()


def atari_model_config(**overrides: Any) -> DefaultModelConfig:
    """RLlib's default model for 84x84 Atari frames: the Nature CNN, a 512-unit head shared by policy and value."""
    settings: dict[str, Any] = {
        "conv_filters": NATURE_CNN_FILTERS,
        "conv_activation": "relu",
        "head_fcnet_hiddens": NATURE_CNN_HEAD,
        "vf_share_layers": True,
    }
    settings.update(overrides)
    return DefaultModelConfig(**settings)

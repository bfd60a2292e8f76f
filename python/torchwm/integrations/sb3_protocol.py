"""The base of :class:`torchwm.sb3.SB3VecEnv` when Stable-Baselines3 is not installed.

It carries the concrete part of SB3's ``VecEnv`` (stable-baselines3 2.x) that the adapter relies on,
with the same names and behaviour, so the 4-tuple API works without SB3 (and torch). With SB3
installed the adapter derives from SB3's own ``VecEnv`` instead and this class is unused.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Sequence
from copy import deepcopy
from typing import Any

import numpy as np
from gymnasium import spaces

__all__ = ["VecEnvProtocol", "tile_images"]


def tile_images(images: Sequence[np.ndarray]) -> np.ndarray:
    """N HxWxC images tiled into one near-square image (as SB3's ``tile_images``)."""
    batch = np.asarray(images)
    count, height, width, channels = batch.shape
    rows = int(np.ceil(np.sqrt(count)))
    cols = int(np.ceil(count / rows))
    padded = np.concatenate([batch, np.zeros((rows * cols - count, height, width, channels), batch.dtype)])
    grid = padded.reshape(rows, cols, height, width, channels).transpose(0, 2, 1, 3, 4)
    return grid.reshape(rows * height, cols * width, channels)


class VecEnvProtocol:
    """SB3's ``VecEnv`` protocol without SB3: spaces, ``reset_infos``, seeds/options for the next reset."""

    def __init__(self, num_envs: int, observation_space: spaces.Space, action_space: spaces.Space) -> None:
        self.num_envs = num_envs
        self.observation_space = observation_space
        self.action_space = action_space
        self.reset_infos: list[dict[str, Any]] = [{} for _ in range(num_envs)]
        self._seeds: list[int | None] = [None] * num_envs
        self._options: list[dict[str, Any]] = [{} for _ in range(num_envs)]
        self.render_mode = self.get_attr("render_mode")[0]
        modes = ["human", "rgb_array"] if self.render_mode == "rgb_array" else [self.render_mode]
        self.metadata = {"render_modes": [] if self.render_mode is None else modes}

    def _reset_seeds(self) -> None:
        self._seeds = [None] * self.num_envs

    def _reset_options(self) -> None:
        self._options = [{} for _ in range(self.num_envs)]

    def step(self, actions: np.ndarray) -> tuple[Any, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        self.step_async(actions)  # type: ignore[attr-defined]
        return self.step_wait()  # type: ignore[attr-defined]

    def has_attr(self, attr_name: str) -> bool:
        try:
            self.get_attr(attr_name)
        except AttributeError:
            return False
        return True

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        raise NotImplementedError  # the adapter defines it

    def seed(self, seed: int | None = None) -> Sequence[int | None]:
        """Seeds for the next ``reset()``: env ``i`` gets ``seed + i`` (a random ``seed`` when None)."""
        if seed is None:
            seed = int(np.random.randint(0, np.iinfo(np.uint32).max, dtype=np.uint32))
        self._seeds = [seed + idx for idx in range(self.num_envs)]
        return self._seeds

    def set_options(self, options: list[dict[str, Any]] | dict[str, Any] | None = None) -> None:
        """Options for the next ``reset()``: one dict for every env, or a list of one per env."""
        options = {} if options is None else options
        self._options = deepcopy([options] * self.num_envs if isinstance(options, dict) else list(options))

    def render(self, mode: str | None = None) -> np.ndarray | None:
        """The envs' ``rgb_array`` frames tiled into one image (``human`` display needs SB3's OpenCV path)."""
        mode = mode or self.render_mode
        if mode != "rgb_array" or self.render_mode != "rgb_array":
            warnings.warn(
                f"render(mode={mode!r}) without stable-baselines3 supports only 'rgb_array' envs", stacklevel=2
            )
            return None
        return tile_images(self.get_images())  # type: ignore[attr-defined]

    @property
    def unwrapped(self) -> VecEnvProtocol:
        return self

    def getattr_depth_check(self, name: str, already_found: bool) -> str | None:
        if hasattr(self, name) and already_found:
            return f"{type(self).__module__}.{type(self).__name__}"
        return None

    def _get_indices(self, indices: Any) -> Iterable[int]:
        if indices is None:
            return range(self.num_envs)
        return [indices] if isinstance(indices, int) else indices

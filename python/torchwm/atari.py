"""``AtariVectorEnv``: many Atari games stepped in parallel by torchwm's Rust core.

A drop-in for ``ale_py.vector_env.AtariVectorEnv`` (ale-py 0.12.1): the same keywords, defaults,
spaces, dtypes, info keys and results for the same seeds; bad input raises ``ValueError``/``TypeError``
instead of asserting or hanging, and the env stays usable after a rejected call.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np
from gymnasium.spaces import Box, Discrete
from gymnasium.vector import AutoresetMode, VectorEnv
from ale_py.env import AtariEnv
from gymnasium.vector.utils import batch_space

from torchwm import _core
from torchwm._rom import rom_path
from torchwm.record import check_can_render, check_render_mode

__all__ = ["AtariVectorEnv", "make_atari_vector_env"]

def _continuous_action_grid() -> np.ndarray:
    """ALE action ids for (horizontal, vertical, fire), indexed ``[h + 1, v + 1, fire]``, from ale_py's own map."""
    grid = np.zeros((3, 3, 2), dtype=np.int64)
    for h in (-1, 0, 1):
        for v in (-1, 0, 1):
            for fire in (0, 1):
                grid[h + 1, v + 1, fire] = AtariEnv.map_action_idx(h, v, bool(fire)).value
    return grid


_CONTINUOUS_ACTION_GRID = _continuous_action_grid()


def _check_int(name: str, value: Any, minimum: int, maximum: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name} must be an integer, got {value!r} ({type(value).__name__})")
    value = int(value)
    if value < minimum or (maximum is not None and value > maximum):
        bound = f"in [{minimum}, {maximum}]" if maximum is not None else f">= {minimum}"
        raise ValueError(f"{name} must be {bound}, got {value}")
    return value


def _check_bool(name: str, value: Any) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be a bool, got {value!r} ({type(value).__name__})")
    return bool(value)


def _check_float(name: str, value: Any, low: float, high: float) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not low <= float(value) <= high:
        raise ValueError(f"{name} must be a number in [{low}, {high}], got {value!r}")
    return float(value)


class AtariVectorEnv(VectorEnv):
    """Vectorized Atari with the standard preprocessing, stepped by Rust worker threads.

    Observations are uint8 ``(batch, stack_num, img_height, img_width)`` (grayscale) or
    ``(batch, stack_num, img_height, img_width, 3)`` (RGB); rewards int32; terminations and
    truncations bool; ``info`` holds int32 arrays ``env_id``, ``lives``, ``frame_number`` and
    ``episode_frame_number``. With ``batch_size < num_envs``, ``send``/``recv`` return the first
    ``batch_size`` envs to finish, named by ``info["env_id"]``.
    """

    def __init__(
        self,
        game: str,
        num_envs: int = 1,
        *,
        frameskip: int = 4,
        grayscale: bool = True,
        stack_num: int = 4,
        img_height: int = 84,
        img_width: int = 84,
        maxpool: bool = True,
        reward_clipping: bool = True,
        noop_max: int = 30,
        use_fire_reset: bool = True,
        episodic_life: bool = False,
        life_loss_info: bool = False,
        max_num_frames_per_episode: int = 108000,
        repeat_action_probability: float = 0.0,
        full_action_space: bool = False,
        continuous: bool = False,
        continuous_action_threshold: float = 0.5,
        batch_size: int = 0,
        autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
        num_threads: int = 0,
        thread_affinity_offset: int = -1,
        render_mode: str | None = None,
    ) -> None:
        self._core: _core.AtariVectorCore | None = None
        render_mode = check_render_mode(render_mode)
        path = rom_path(game)
        num_envs = _check_int("num_envs", num_envs, 1)
        if type(frameskip) is not int:
            raise ValueError(f"frameskip must be a positive int, got {frameskip!r} ({type(frameskip).__name__})")
        frameskip = _check_int("frameskip", frameskip, 1)
        try:
            mode = AutoresetMode(autoreset_mode)
        except ValueError:
            raise ValueError(
                f"autoreset_mode must be AutoresetMode.NEXT_STEP or SAME_STEP, got {autoreset_mode!r}"
            ) from None
        if mode not in (AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP):
            raise ValueError(f"autoreset_mode must be AutoresetMode.NEXT_STEP or SAME_STEP, got {mode}")
        self.game = game
        self.continuous = _check_bool("continuous", continuous)
        self.continuous_action_threshold = _check_float(
            "continuous_action_threshold", continuous_action_threshold, -np.inf, np.inf
        )
        self.grayscale = _check_bool("grayscale", grayscale)
        stack_num = _check_int("stack_num", stack_num, 1)
        img_height = _check_int("img_height", img_height, 1, 4096)
        img_width = _check_int("img_width", img_width, 1, 4096)
        self._core = _core.AtariVectorCore(
            str(path),
            num_envs,
            frame_skip=frameskip,
            stack_num=stack_num,
            img_height=img_height,
            img_width=img_width,
            grayscale=self.grayscale,
            maxpool=_check_bool("maxpool", maxpool),
            noop_max=_check_int("noop_max", noop_max, 0, 2**31 - 1),
            use_fire_reset=_check_bool("use_fire_reset", use_fire_reset),
            episodic_life=_check_bool("episodic_life", episodic_life),
            life_loss_info=_check_bool("life_loss_info", life_loss_info),
            reward_clipping=_check_bool("reward_clipping", reward_clipping),
            max_num_frames_per_episode=_check_int("max_num_frames_per_episode", max_num_frames_per_episode, 1, 2**31 - 1),
            repeat_action_probability=_check_float("repeat_action_probability", repeat_action_probability, 0.0, 1.0),
            full_action_space=_check_bool("full_action_space", full_action_space) or self.continuous,
            batch_size=_check_int("batch_size", batch_size, 0, num_envs),
            num_threads=_check_int("num_threads", num_threads, 0),
            thread_affinity_offset=_check_int("thread_affinity_offset", thread_affinity_offset, -1),
            same_step_autoreset=mode == AutoresetMode.SAME_STEP,
        )
        self.num_envs = num_envs
        self.batch_size = self._core.batch_size
        self.num_threads = self._core.num_threads
        self.autoreset_mode = mode
        self.metadata = {**VectorEnv.metadata, "autoreset_mode": mode, "render_modes": ["rgb_array"]}
        self.render_mode = render_mode
        self._action_set = np.asarray(self._core.action_set, dtype=np.int64)
        self._default_seed: int | None = None

        obs_shape: tuple[int, ...] = (stack_num, img_height, img_width)
        if not self.grayscale:
            obs_shape += (3,)
        self.single_observation_space = Box(low=0, high=255, shape=obs_shape, dtype=np.uint8)
        if self.continuous:
            self.single_action_space = Box(
                low=np.array([0.0, -np.pi, 0.0], dtype=np.float32),
                high=np.array([1.0, np.pi, 1.0], dtype=np.float32),
                shape=(3,),
                dtype=np.float32,
            )
        else:
            self.single_action_space = Discrete(len(self._action_set))
        self.observation_space = batch_space(self.single_observation_space, self.batch_size)
        self.action_space = batch_space(self.single_action_space, self.batch_size)

    @property
    def action_set(self) -> np.ndarray:
        """ALE action ids that the discrete actions index."""
        return self._action_set.copy()

    def reset(
        self,
        *,
        seed: int | np.ndarray | None = None,
        options: dict[str, Any] | None = None,
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Resets all sub-environments, or those in ``options["reset_mask"]`` (sync mode only).

        ``seed``: an int seeds the reset envs with consecutive values from it; an array gives one seed
        per reset env; None keeps each env's random state going.
        """
        core = self._live_core()
        if options is None or options.get("reset_mask") is None:
            reset_indices = np.arange(self.num_envs)
        else:
            mask = options["reset_mask"]
            if not isinstance(mask, np.ndarray) or mask.dtype != np.bool_:
                raise TypeError(
                    f"reset_mask must be a boolean numpy array, got {type(mask).__name__}"
                    f" with dtype {getattr(mask, 'dtype', None)}"
                )
            if mask.shape != (self.num_envs,):
                raise ValueError(f"reset_mask must have shape {(self.num_envs,)}, got {mask.shape}")
            (reset_indices,) = np.nonzero(mask)
        if seed is None and self._default_seed is not None:
            seed, self._default_seed = self._default_seed, None
        count = len(reset_indices)
        if seed is None:
            seeds = np.full(count, -1, dtype=np.int64)
        elif isinstance(seed, numbers.Integral) and not isinstance(seed, bool):
            if not (0 <= int(seed) and int(seed) + count <= 2**31):
                raise ValueError(f"seed must be in [0, 2**31 - num_envs], got {seed}")
            seeds = np.arange(int(seed), int(seed) + count, dtype=np.int64)
        elif isinstance(seed, np.ndarray):
            if seed.shape != (count,) or seed.dtype.kind not in "iu":
                raise ValueError(
                    f"seed array must hold one integer per env being reset, shape {(count,)}; "
                    f"got shape {seed.shape} dtype {seed.dtype}"
                )
            seeds = seed.astype(np.int64)
        else:
            raise TypeError(f"seed must be None, an int or an integer numpy array, got {type(seed).__name__}")
        obs, info = core.reset([int(i) for i in reset_indices], [int(s) for s in seeds])
        return obs, info

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Steps the envs of the last batch with ``actions`` (one per env, in batch order)."""
        self.send(actions)
        return self.recv()

    def send(self, actions: Any) -> None:
        """Queues ``actions`` for the envs of the last batch; returns at once while they step."""
        core = self._live_core()
        action_ids, strengths = self._convert_actions(actions)
        core.send(action_ids, strengths)

    def recv(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Waits for the next batch: the first ``batch_size`` envs to finish (see ``info["env_id"]``)."""
        return self._live_core().recv()

    def render(self) -> tuple[np.ndarray, ...]:
        """Each env's current screen, RGB uint8 ``(210, 160, 3)``, in env order (needs ``render_mode="rgb_array"``)."""
        check_can_render(self.render_mode)
        return tuple(self._live_core().render())

    def close_extras(self, **kwargs: Any) -> None:
        if self._core is not None:
            self._core.close()

    def _live_core(self) -> _core.AtariVectorCore:
        if self._core is None or self._core.closed:
            raise _core.EnvStateError("the environment is closed")
        return self._core

    def _convert_actions(self, actions: Any) -> tuple[np.ndarray, np.ndarray]:
        batch = self.batch_size
        if self.continuous:
            values = np.asarray(actions)
            if values.shape != (batch, 3) or values.dtype.kind not in "fiu":
                raise ValueError(
                    f"continuous actions must be a float array of shape ({batch}, 3) (radius, theta, fire); "
                    f"got shape {values.shape} dtype {values.dtype}"
                )
            values = values.astype(np.float32)
            if not np.all(np.isfinite(values)):
                raise ValueError("continuous actions must be finite (no NaN or inf)")
            radius, theta, fire = values[:, 0], values[:, 1], values[:, 2]
            x, y = radius * np.cos(theta), radius * np.sin(theta)
            threshold = self.continuous_action_threshold
            horizontal = (x > threshold).astype(np.int64) - (x < -threshold).astype(np.int64) + 1
            vertical = (y > threshold).astype(np.int64) - (y < -threshold).astype(np.int64) + 1
            fire_bit = (fire > threshold).astype(np.int64)
            ale_ids = _CONTINUOUS_ACTION_GRID[horizontal, vertical, fire_bit]
            # Continuous mode uses the full action set, whose index i is ALE action id i.
            return np.ascontiguousarray(ale_ids, dtype=np.int64), np.ascontiguousarray(radius, dtype=np.float32)
        values = np.asarray(actions)
        if values.shape != (batch,):
            raise ValueError(f"actions must have shape ({batch},) (one per env in the batch), got {values.shape}")
        if values.dtype.kind not in "iu":
            raise ValueError(
                f"actions must be integers in [0, {len(self._action_set)}), got dtype {values.dtype}"
            )
        ids = values.astype(np.int64, copy=False)
        if batch and (ids.min() < 0 or ids.max() >= len(self._action_set)):
            raise ValueError(f"actions must be in [0, {len(self._action_set)}), got {values.tolist()}")
        return np.ascontiguousarray(ids), np.ones(batch, dtype=np.float32)


def make_atari_vector_env(
    game: str,
    num_envs: int,
    obs_type: str = "rgb",
    frameskip: int = 4,
    repeat_action_probability: float = 0.25,
    full_action_space: bool = False,
    seed: int | None = None,
    **kwargs: Any,
) -> AtariVectorEnv:
    """Builds an :class:`AtariVectorEnv` as the TorchWM docs describe.

    ``obs_type`` is ``"rgb"`` or ``"grayscale"``; ``seed`` seeds the first ``reset()`` (env ``i`` gets
    ``seed + i``). Other keywords go to :class:`AtariVectorEnv`.
    """
    if obs_type not in ("rgb", "grayscale"):
        raise ValueError(f"obs_type must be 'rgb' or 'grayscale', got {obs_type!r}")
    if "grayscale" in kwargs:
        raise TypeError("pass obs_type='grayscale' or 'rgb' instead of grayscale=")
    env = AtariVectorEnv(
        game,
        num_envs,
        grayscale=obs_type == "grayscale",
        frameskip=frameskip,
        repeat_action_probability=repeat_action_probability,
        full_action_space=full_action_space,
        **kwargs,
    )
    if seed is not None:
        if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
            env.close()
            raise ValueError(f"seed must be a non-negative int or None, got {seed!r}")
        env._default_seed = int(seed)
    return env

"""``AtariVectorEnv``: many Atari games stepped in parallel by torchwm's Rust core.

A drop-in for ``ale_py.vector_env.AtariVectorEnv`` (ale-py 0.12.1): the same keywords, defaults,
spaces, dtypes, info keys and results for the same seeds; bad input raises ``ValueError``/``TypeError``
(the classes of :mod:`torchwm.errors`) instead of asserting or hanging, and the env stays usable after
a rejected call.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal, TypedDict

import numpy as np
from ale_py.env import AtariEnv
from gymnasium.spaces import Box, Discrete
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

import torchwm._core as _core
from torchwm._vector_args import FirstResetSeed, parse_reset_mask, parse_seeds, split_options
from torchwm.atari.env_state import AtariEnvState, parse_env_ids, state_bytes
from torchwm.atari.game_pool import GamePool
from torchwm.atari.rendering import check_can_render, check_render_mode
from torchwm.errors import ClosedEnvironmentError, InvalidArgumentError
from torchwm.integrations.trainer import TrainerIntegrationMixin

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = ["AtariSettings", "AtariVectorEnv", "VectorAtariEnv", "make_atari_vector_env"]


def _continuous_action_grid() -> np.ndarray:
    """ALE action ids for (horizontal, vertical, fire), indexed ``[h + 1, v + 1, fire]``, from ale_py's own map."""
    grid = np.zeros((3, 3, 2), dtype=np.int64)
    for h in (-1, 0, 1):
        for v in (-1, 0, 1):
            for fire in (0, 1):
                grid[h + 1, v + 1, fire] = AtariEnv.map_action_idx(h, v, bool(fire)).value
    return grid


_CONTINUOUS_ACTION_GRID = _continuous_action_grid()


class AtariSettings(TypedDict, total=False):
    """The keywords of :class:`AtariVectorEnv` for type checkers (names, aliases and defaults:
    ``torchwm._core.ATARI_SETTINGS``, defined and checked once in the Rust core)."""

    batch_size: int
    num_threads: int
    thread_affinity_offset: int
    max_num_frames_per_episode: int
    max_episode_steps: int
    repeat_action_probability: float | Sequence[float]
    full_action_space: bool
    continuous: bool
    continuous_action_threshold: float
    autoreset_mode: AutoresetMode | str
    img_height: int
    img_width: int
    grayscale: bool
    obs_type: str
    stack_num: int
    frameskip: int
    frame_skip: int
    maxpool: bool
    noop_max: int
    episodic_life: bool
    life_loss_info: bool
    reward_clipping: bool
    use_fire_reset: bool
    fire_reset: bool
    mode: int | Sequence[int | None] | None
    difficulty: int | Sequence[int | None] | None
    ram_in_info: bool
    episode_statistics: bool
    reset_ahead: bool | Literal["auto"]


#: Seeds are a C ``int`` in ALE.
_SEED_LIMIT = 2**31


class AtariVectorEnv(TrainerIntegrationMixin, VectorEnv):
    """Vectorized Atari with the standard preprocessing, stepped by Rust worker threads.

    Keywords (ale_py 0.12.1's, with the same defaults; aliases from the ALE vector guide:
    ``frame_skip``, ``fire_reset``, ``max_episode_steps``): see ``torchwm._core.ATARI_SETTINGS`` or
    ``help(AtariVectorEnv)``. ``seed`` seeds the first ``reset()`` (env ``i`` gets ``seed + i``).

    Observations are uint8 ``(batch, stack_num, img_height, img_width)`` (grayscale) or
    ``(batch, stack_num, img_height, img_width, 3)`` (RGB); rewards int32; terminations and
    truncations bool; ``info`` holds int32 arrays ``env_id``, ``lives``, ``frame_number`` and
    ``episode_frame_number``. ``episode_statistics=True`` (torchwm's own) adds ``raw_reward`` (int32,
    unclipped) to each step's ``info``, and when an episode ends ``info["episode"]`` (``"r"`` raw return
    float64, ``"l"`` steps and ``"frames"`` emulator frames, int64; 0 in the other rows) with the mask
    ``info["_episode"]``. With ``batch_size < num_envs``, ``send``/``recv`` return the first
    ``batch_size`` envs to finish, named by ``info["env_id"]``.

    Threads: one thread at a time may call ``reset``/``step``/``send``/``recv`` (another thread doing
    so meanwhile gets :class:`~torchwm.errors.EnvStateError`); ``close()`` is safe from any thread and
    ends a ``recv``/``step`` waiting in another with :class:`~torchwm.errors.ClosedEnvironmentError`.
    Ctrl-C interrupts a waiting ``step``/``recv``/``reset``; the step's batch is kept and the next
    ``step``/``send`` (or ``recv``) collects it, so the env stays usable.
    """

    def __init__(
        self,
        game: str | Sequence[str],
        num_envs: int = 1,
        *,
        seed: Any = None,
        render_mode: str | None = None,
        **settings: Unpack[AtariSettings],
    ) -> None:
        self._core: _core.AtariVectorCore | None = None
        render_mode = check_render_mode(render_mode)
        pool = GamePool.of(game)
        self._core = _core.AtariVectorCore(pool.rom_paths(), num_envs, **pool.settings(dict(settings)))
        try:
            self._first_seed = FirstResetSeed(seed, self._core.num_envs, limit=_SEED_LIMIT)
        except Exception:
            self._core.close()
            raise
        checked = self._core.settings
        self.game = game
        self.num_envs = self._core.num_envs
        #: The games the envs play (one, or several in a mixed pool), and each env's as an index into them.
        self.games = pool.games
        self.env_games = pool.env_games(self.num_envs)
        self.env_games.flags.writeable = False
        # Only a mixed pool adds info["game"]: one game's info has exactly ale_py's keys.
        self._info_game = self.env_games if pool.is_mixed else None
        self.batch_size = self._core.batch_size
        self.num_threads = self._core.num_threads
        self.continuous = bool(checked["continuous"])
        self.continuous_action_threshold = float(checked["continuous_action_threshold"])
        self.grayscale = bool(checked["grayscale"])
        self.obs_type = str(checked["obs_type"])
        self.autoreset_mode = AutoresetMode(checked["autoreset_mode"])
        self.metadata = {**VectorEnv.metadata, "autoreset_mode": self.autoreset_mode, "render_modes": ["rgb_array"]}
        self.render_mode = render_mode
        self._action_set = np.asarray(self._core.action_set, dtype=np.int64)
        self._unit_strengths = np.ones(self.batch_size, dtype=np.float32)
        self._unit_strengths.flags.writeable = False
        self.single_observation_space = Box(low=0, high=255, shape=self._core.observation_shape, dtype=np.uint8)
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

    @property
    def minimal_action_masks(self) -> np.ndarray:
        """bool ``(num_envs, len(action_set))``: which actions each env's game has in its minimal set
        (all of them, unless the actions are the full set; in a mixed pool, a mask per game)."""
        minimal = self._live_core().minimal_action_sets
        return np.array([np.isin(self._action_set, env_set) for env_set in minimal], dtype=bool)

    def reset(
        self,
        *,
        seed: int | list[int] | np.ndarray | None = None,
        options: dict[str, Any] | None = None,
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Resets all sub-environments, or those in ``options["reset_mask"]`` (sync mode only).

        ``seed``: an int seeds the reset envs with consecutive values from it; an array or a list gives
        one seed per reset env; None keeps each env's random state going.
        """
        core = self._live_core()
        mask, _ = split_options(options)
        mask = parse_reset_mask(mask, self.num_envs)
        count = self.num_envs if mask is None else int(np.count_nonzero(mask))
        # The constructor's seed is for a reset of every env.
        seeds = parse_seeds(self._first_seed(seed) if mask is None else seed, count, limit=_SEED_LIMIT)
        obs, info = core.reset(None if mask is None else np.ascontiguousarray(mask), seeds)
        self._first_seed.forget()
        return obs, self._with_game(info)

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Steps the envs of the last batch with ``actions`` (one per env, in batch order)."""
        core = self._live_core()
        *result, info = core.step(*self._convert_actions(actions))
        return (*result, self._with_game(info))  # type: ignore[return-value]

    def send(self, actions: Any) -> None:
        """Queues ``actions`` for the envs of the last batch; returns at once while they step."""
        core = self._live_core()
        core.send(*self._convert_actions(actions))

    def recv(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Waits for the next batch: the first ``batch_size`` envs to finish (see ``info["env_id"]``)."""
        *result, info = self._live_core().recv()
        return (*result, self._with_game(info))  # type: ignore[return-value]

    def clone_states(self, env_ids: Sequence[int] | np.ndarray | None = None) -> list[AtariEnvState]:
        """One :class:`AtariEnvState` per env of ``env_ids`` (all when None), taken between steps
        (sync mode). Restoring one and stepping the same actions gives bit-identical results to the env
        it was taken from.
        """
        core = self._live_core()
        ids = parse_env_ids(env_ids, self.num_envs, "clone_states")
        return [AtariEnvState(self.games[self.env_games[i]], data) for i, data in zip(ids, core.clone_states(ids))]

    def restore_states(
        self, states: Sequence[AtariEnvState], env_ids: Sequence[int] | np.ndarray | None = None
    ) -> None:
        """Puts ``states[i]`` into env ``env_ids[i]`` (all envs, in order, when None), between steps.
        A state of another game, other settings or another torchwm version, or damaged, raises
        :class:`~torchwm.errors.InvalidArgumentError` and no env is changed.
        """
        core = self._live_core()
        data = state_bytes(states)
        core.restore_states(parse_env_ids(env_ids, self.num_envs, "restore_states"), data)

    def render(self) -> tuple[np.ndarray, ...]:
        """Each env's current screen, RGB uint8 ``(210, 160, 3)``, in env order (needs ``render_mode="rgb_array"``)."""
        check_can_render(self.render_mode)
        return tuple(self._live_core().render())

    def xla(self) -> tuple[Any, Any, Any]:
        """``(handle, reset, step)``: reset and step as JAX functions usable under ``jax.jit`` and
        ``lax.scan``, as ale_py's ``AtariVectorEnv.xla()`` (needs ``torchwm[xla]``).

        ``handle, (obs, info) = reset(handle, seed=None, reset_mask=None)`` and
        ``handle, (obs, rewards, terminations, truncations, info) = step(handle, actions)`` give the
        same results as ``reset``/``step``; pass each call the handle the last one returned.
        """
        from torchwm.atari.xla import make_xla_functions

        return make_xla_functions(self)

    def close_extras(self, **kwargs: Any) -> None:
        if self._core is not None:
            self._core.close()

    def _with_game(self, info: dict[str, Any]) -> dict[str, Any]:
        """A mixed pool's ``info["game"]``: each row's game, an index into :attr:`games`."""
        if self._info_game is not None:
            info["game"] = self._info_game[info["env_id"]]
        return info

    def _live_core(self) -> _core.AtariVectorCore:
        if self._core is None:
            raise ClosedEnvironmentError("the environment is closed")
        return self._core

    def _convert_actions(self, actions: Any) -> tuple[np.ndarray, np.ndarray]:
        batch = self.batch_size
        if self.continuous:
            values = np.asarray(actions)
            if values.shape != (batch, 3) or values.dtype.kind not in "fiu":
                raise InvalidArgumentError(
                    f"continuous actions must be a float array of shape ({batch}, 3) (radius, theta, fire); "
                    f"got shape {values.shape} dtype {values.dtype}"
                )
            values = values.astype(np.float32)
            if not np.all(np.isfinite(values)):
                raise InvalidArgumentError("continuous actions must be finite (no NaN or inf)")
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
            raise InvalidArgumentError(
                f"actions must have shape ({batch},) (one per env in the batch), got {values.shape}"
            )
        if values.dtype.kind not in "iu":
            raise InvalidArgumentError(
                f"actions must be integers in [0, {len(self._action_set)}), got dtype {values.dtype}"
            )
        # The range is checked by the core; uint64 values beyond int64 wrap to negatives it refuses.
        return np.ascontiguousarray(values, dtype=np.int64), self._unit_strengths


def _signature() -> inspect.Signature:
    """``AtariVectorEnv``'s signature as ``help()`` shows it, from the core's table of keywords."""
    kind = inspect.Parameter.KEYWORD_ONLY
    params = [
        inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD),
        inspect.Parameter("game", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation="str"),
        inspect.Parameter("num_envs", inspect.Parameter.POSITIONAL_OR_KEYWORD, default=1, annotation="int"),
    ]
    for name, _aliases, default, _doc in _core.ATARI_SETTINGS:
        if name != "num_envs":
            value = AutoresetMode(default) if name == "autoreset_mode" else default
            params.append(inspect.Parameter(name, kind, default=value))
    params.append(inspect.Parameter("seed", kind, default=None))
    return inspect.Signature(params)


AtariVectorEnv.__init__.__signature__ = _signature()  # type: ignore[attr-defined]

#: The name the ALE vector guide uses.
VectorAtariEnv = AtariVectorEnv


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

    ``obs_type`` is ``"rgb"``, ``"grayscale"`` or ``"ram"`` (uint8 ``(batch, stack_num, 128)``); ``seed``
    seeds the first ``reset()`` (env ``i`` gets ``seed + i``). Other keywords go to
    :class:`AtariVectorEnv`.
    """
    if "grayscale" in kwargs:
        raise TypeError("pass obs_type='grayscale' or 'rgb' instead of grayscale=")
    return AtariVectorEnv(
        game,
        num_envs,
        seed=seed,
        obs_type=obs_type,
        frameskip=frameskip,
        repeat_action_probability=repeat_action_probability,
        full_action_space=full_action_space,
        **kwargs,
    )

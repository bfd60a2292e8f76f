"""Stable-Baselines3's ``VecEnv`` over any gymnasium vector env: ``SB3VecEnv(envs)``.

Works with :class:`torchwm.AtariVectorEnv`, :class:`torchwm.TorchVectorizedEnv` and gymnasium's own
vector envs, with SB3's algorithms and ``VecEnv`` wrappers (``VecMonitor``, ``VecFrameStack``,
``VecNormalize``, ``VecTransposeImage``); it is also the 4-tuple API
``obs, rewards, dones, infos = vec_env.step(actions)``. With stable-baselines3 installed the class
derives from SB3's ``VecEnv``; without it, from a plain class with the same protocol.

Results are what SB3's ``DummyVecEnv``/``SubprocVecEnv`` return for the same envs: ``dones`` is
``terminated | truncated``; a done env's returned observation is the first of its new episode, its
info carries ``terminal_observation`` (the last one) and ``TimeLimit.truncated`` (truncated and not
terminated) and ``reset_infos[i]`` the new episode's reset info. How a done env is reset depends on
the vector env's ``autoreset_mode``:

- ``SAME_STEP``: the vector env already reset it; ``final_obs``/``final_info`` give the terminal
  observation and info. No extra call (the fastest for short episodes, e.g. CartPole).
- ``NEXT_STEP`` (gymnasium's and torchwm's default) or ``DISABLED``: right after the step, one
  ``reset(options={"reset_mask": dones})`` resets exactly the done envs, so the caller never sees
  the autoreset step. Costs one extra round trip on steps where some env finished.

``AtariVectorEnv`` under ``SAME_STEP`` returns no ``final_info``: a done env's info is then the one the
vector env returned for it (its new episode's). Prefer its default ``NEXT_STEP``: exact and cheap
(Atari episodes are long).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import concatenate, create_empty_array

from torchwm.errors import AlreadyPendingCallError, InvalidArgumentError, NoAsyncCallError
from torchwm.integrations.batch_rows import FINAL_KEYS, copy_batch, info_row, obs_row
from torchwm.integrations.sub_envs import sub_env_access
from torchwm.process.agents import envs_done

if TYPE_CHECKING:
    from torchwm.integrations.sb3_protocol import VecEnvProtocol as _Base
else:
    try:
        from stable_baselines3.common.vec_env.base_vec_env import VecEnv as _Base
    except ImportError:  # SB3 is optional: the same protocol without it
        from torchwm.integrations.sb3_protocol import VecEnvProtocol as _Base

__all__ = ["SB3VecEnv"]

StepReturn = tuple[Any, np.ndarray, np.ndarray, list[dict[str, Any]]]


def _checked_vector_env(venv: Any) -> Any:
    for name in ("num_envs", "single_observation_space", "single_action_space", "reset", "step"):
        if not hasattr(venv, name):
            raise InvalidArgumentError(f"SB3VecEnv needs a gymnasium vector env (lacking {name!r}), got {venv!r}")
    batch_size = getattr(venv, "batch_size", venv.num_envs)
    if batch_size != venv.num_envs:
        raise InvalidArgumentError(
            f"SB3VecEnv steps every env at once: it needs batch_size == num_envs ({venv.num_envs}), got "
            f"batch_size={batch_size} (use send/recv directly for asynchronous batches)"
        )
    return venv


def _autoreset_mode(venv: Any) -> AutoresetMode:
    mode = getattr(venv, "metadata", {}).get("autoreset_mode", getattr(venv, "autoreset_mode", None))
    return AutoresetMode(mode) if mode is not None else AutoresetMode.NEXT_STEP


def _seed_argument(seeds: list[int | None]) -> int | list[int | None] | None:
    """SB3's per-env seeds as one ``reset(seed=)``: None, a first seed (consecutive ones), or a list."""
    if all(seed is None for seed in seeds):
        return None
    first = seeds[0]
    if first is not None and seeds == list(range(first, first + len(seeds))):
        return first
    return list(seeds)


def _vector_actions(space: Any, actions: Any, num_envs: int) -> Any:
    """SB3's actions (``actions[i]`` is env ``i``'s, as ``SubprocVecEnv`` and ``DummyVecEnv`` read them)
    as a gymnasium batch. For Dict and Tuple spaces a list of per-env actions (``[action_space.sample()
    for _ in range(n)]``) is batched; a dict of batches, or a tuple of one batch per subspace that is
    not also one action per env, is already a batch and goes as it is."""
    if not isinstance(space, (spaces.Dict, spaces.Tuple)) or isinstance(actions, dict):
        return actions
    per_env = isinstance(actions, (list, tuple, np.ndarray)) and len(actions) == num_envs
    if not per_env:
        return actions
    batch: Any = create_empty_array(space, num_envs)
    return concatenate(space, [actions[i] for i in range(num_envs)], batch)


def _options_argument(options: list[dict[str, Any]], venv: Any) -> Any:
    """SB3's per-env options as the one ``reset(options=)`` dict a vector env takes; different ones only
    where the vector env resets each env with its own (``TorchVectorizedEnv``, as ``SubprocVecEnv``)."""
    if all(option == options[0] for option in options):
        return dict(options[0]) if options[0] else None
    per_env = getattr(venv, "_sb3_env_options", None)
    if per_env is None:
        raise InvalidArgumentError(
            "a vector env resets every env with the same options: set_options() needs one dict for all envs, "
            f"got different ones: {options}"
        )
    return per_env(options)


def _ended_rows(dones: np.ndarray, infos: dict) -> np.ndarray:
    """The rows whose env ended: the done ones, or for agents as rows (``info["agent_mask"]``, a
    ParallelEnv's agents in ``TorchVectorizedEnv``) the rows of envs none of whose agents remains."""
    agent_mask, env_ids = infos.get("agent_mask"), infos.get("env_id")
    if agent_mask is None or env_ids is None:
        return dones.copy()
    agents_per_env = int(np.count_nonzero(env_ids == env_ids[0]))
    return envs_done(dones, np.asarray(agent_mask, bool), agents_per_env)


class SB3VecEnv(_Base):
    """SB3's ``VecEnv`` (and the 4-tuple ``step``) over the gymnasium vector env ``venv``.

    ``venv`` must step every env each call (``batch_size == num_envs``). Observation and action spaces
    are ``venv``'s single-env spaces. ``AtariVectorEnv``'s channels-first uint8 observations
    ``(stack, 84, 84)`` are images to SB3's ``CnnPolicy`` as they are (no transpose).
    """

    def __init__(self, venv: Any) -> None:
        self.venv = _checked_vector_env(venv)
        self._sub_envs = sub_env_access(getattr(venv, "unwrapped", venv))
        self._same_step = _autoreset_mode(venv) == AutoresetMode.SAME_STEP
        self._copy_obs = getattr(venv, "copy", True) is False  # a reused batch buffer would alias SB3's obs
        self._async = self._async_calls(venv)
        self._actions: Any = None
        self._waiting = False
        super().__init__(venv.num_envs, venv.single_observation_space, venv.single_action_space)

    @staticmethod
    def _async_calls(venv: Any) -> tuple[Any, Any] | None:
        for send, wait in (("step_async", "step_wait"), ("send", "recv")):
            if callable(getattr(venv, send, None)) and callable(getattr(venv, wait, None)):
                return getattr(venv, send), getattr(venv, wait)
        return None

    # ------------------------------------------------------------------------------------ stepping

    def reset(self) -> Any:
        """Resets every env with the seeds/options set by ``seed()``/``set_options()`` (used once). Different
        options per env reach each env as ``SubprocVecEnv`` sends them where the vector env can (a
        ``TorchVectorizedEnv``); others take one dict for all."""
        self._drain_pending_step()
        seed, options = _seed_argument(self._seeds), _options_argument(self._options, self.venv)
        obs, infos = self.venv.reset(seed=seed, options=options)
        self.reset_infos = [info_row(infos, i, FINAL_KEYS) for i in range(self.num_envs)]
        self._reset_seeds()
        self._reset_options()
        return self._own(obs)

    def step_async(self, actions: np.ndarray) -> None:
        if self._waiting:
            raise AlreadyPendingCallError("step_async() while a step is pending: call step_wait() first", "step_async")
        actions = _vector_actions(self.action_space, actions, self.num_envs)
        if self._async is not None:
            self._async[0](actions)
        else:
            self._actions = actions
        self._waiting = True

    def step_wait(self) -> StepReturn:
        if not self._waiting:
            raise NoAsyncCallError("step_wait() without a pending step_async()", "step_wait")
        self._waiting = False
        if self._async is not None:
            result = self._async[1]()
        else:
            actions, self._actions = self._actions, None
            result = self.venv.step(actions)
        return self._sb3_step(*result)

    def _drain_pending_step(self) -> None:
        """SB3's ``reset`` cancels a pending step: wait for it and drop its results."""
        if self._waiting:
            self._waiting = False
            if self._async is not None:
                self._async[1]()
            self._actions = None

    def _sb3_step(self, obs: Any, rewards: Any, terminations: Any, truncations: Any, infos: dict) -> StepReturn:
        terminations, truncations = np.asarray(terminations, bool), np.asarray(truncations, bool)
        dones = terminations | truncations
        done_envs = np.flatnonzero(dones).tolist()
        agent_mask = infos.get("agent_mask")  # agents as rows: whether each returned observation is an agent's
        if self._same_step:
            env_infos, terminal_obs, reset_infos = self._same_step_rows(obs, infos, done_envs)
        else:
            env_infos = [info_row(infos, i, FINAL_KEYS) for i in range(self.num_envs)]
            terminal_obs = {i: obs_row(obs, i) for i in done_envs}
            reset_infos = {}
            ended = _ended_rows(dones, infos)
            if ended.any():
                obs, reset_infos, agent_mask = self._reset_done(ended)
        for i, info in enumerate(env_infos):
            info["TimeLimit.truncated"] = bool(truncations[i] and not terminations[i])
            if agent_mask is not None:
                info["agent_mask"] = bool(agent_mask[i])
        for i in done_envs:
            env_infos[i]["terminal_observation"] = terminal_obs[i]
            if i in reset_infos:  # an agent that left an env still running has no new episode yet
                self.reset_infos[i] = reset_infos[i]
        return self._own(obs), np.asarray(rewards, dtype=np.float32), dones, env_infos

    def _same_step_rows(self, obs: Any, infos: dict, done_envs: list[int]) -> tuple[list[dict], dict, dict]:
        """SAME_STEP: the info at the top is the new episode's; ``final_obs``/``final_info`` the old one's.
        A done row that was not reset (an agent that left an env still running: ``_final_obs`` False)
        keeps its observation and info."""
        if done_envs and "final_obs" not in infos and "agent_mask" not in infos:
            raise InvalidArgumentError(f"{type(self.venv).__name__} in SAME_STEP mode returned no info['final_obs']")
        rows = [info_row(infos, i, FINAL_KEYS) for i in range(self.num_envs)]
        final_info, final_mask = infos.get("final_info"), infos.get("_final_info")
        reset = infos.get("_final_obs", np.zeros(self.num_envs, bool)) if "agent_mask" in infos else None
        reset_rows = [i for i in done_envs if reset is None or reset[i]]
        env_infos = list(rows)
        for i in reset_rows:
            if final_info is not None and (final_mask is None or final_mask[i]):
                env_infos[i] = info_row(final_info, i)
            else:
                env_infos[i] = dict(rows[i])
        terminal_obs = {i: obs_row(obs, i) for i in done_envs}
        terminal_obs.update({i: obs_row(infos["final_obs"], i) for i in reset_rows})
        return env_infos, terminal_obs, {i: rows[i] for i in reset_rows}

    def _reset_done(self, ended: np.ndarray) -> tuple[Any, dict[int, dict], Any]:
        """NEXT_STEP/DISABLED: resets just the ended envs' rows now; the batch's observations, their reset
        infos and the batch's ``agent_mask`` (None unless agents are rows)."""
        obs, infos = self.venv.reset(options={"reset_mask": ended})
        rows = {i: info_row(infos, i, FINAL_KEYS) for i in np.flatnonzero(ended).tolist()}
        return obs, rows, infos.get("agent_mask")

    def _own(self, obs: Any) -> Any:
        return copy_batch(obs) if self._copy_obs else obs

    # ------------------------------------------------------------------------------------ sub-envs

    def _indices(self, indices: Any) -> list[int]:
        """SB3's ``indices`` (None, an int, an iterable of ints) as the env positions they name, read as
        ``SubprocVecEnv``/``DummyVecEnv`` read them: by indexing a Python tuple/list, so negative ones
        count from the end and a bad one raises Python's own ``IndexError``/``TypeError`` (the same
        message), before any env is called."""
        positions = self._sub_envs.indexed_as(range(self.num_envs))
        return [positions[i] for i in self._get_indices(indices)]

    def has_attr(self, attr_name: str) -> bool:
        return self._sub_envs.has_attr(attr_name)

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        return self._sub_envs.get_attr(attr_name, self._indices(indices))

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        self._sub_envs.set_attr(attr_name, value, self._indices(indices))

    def env_method(self, method_name: str, *method_args: Any, indices: Any = None, **method_kwargs: Any) -> list[Any]:
        return self._sub_envs.env_method(method_name, method_args, method_kwargs, self._indices(indices))

    def env_is_wrapped(self, wrapper_class: type, indices: Any = None) -> list[bool]:
        return self._sub_envs.is_wrapped(wrapper_class, self._indices(indices))

    def get_images(self) -> Sequence[np.ndarray | None]:
        if self.render_mode != "rgb_array":
            import warnings

            warnings.warn(
                f"The render mode is {self.render_mode}, but this method assumes it is `rgb_array` to obtain images.",
                stacklevel=2,
            )
            return [None] * self.num_envs
        return self._sub_envs.images()

    def close(self) -> None:
        """Closes the vector env; a pending step is waited for first (its error, if any, is raised)."""
        try:
            self._drain_pending_step()
        finally:
            self.venv.close()

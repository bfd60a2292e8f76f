"""``AtariVectorEnv.xla()``: reset and step as JAX functions, usable under ``jax.jit`` and
``lax.scan``, with ale_py 0.12.1's signatures.

ale_py registers XLA FFI custom calls written against XLA's C++ headers; torchwm's build has no XLA
headers to compile against, so its functions enter the env through ``jax.experimental.io_callback``
(ordered: calls run in program order, as the env's state requires). They call the env's own
``reset``/``step``, so their results are bit-identical to them, and every argument is checked there.
The handle is threaded through like ale_py's: each call takes the last handle and returns the next,
which keeps calls in sequence even outside an ordered effect.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from gymnasium.error import DependencyNotInstalled
from gymnasium.vector import AutoresetMode

from torchwm.errors import InvalidArgumentError

INFO_KEYS = ("env_id", "lives", "frame_number", "episode_frame_number")
HANDLE_BYTES = 8


def _jax() -> Any:
    try:
        import jax
    except ImportError as error:
        raise DependencyNotInstalled(
            'torchwm is missing jax, necessary for using the vector XLA support, use `pip install "torchwm[xla]"`'
        ) from error
    return jax


def info_arrays(info: dict[str, Any]) -> tuple[np.ndarray, ...]:
    return tuple(np.asarray(info[key], dtype=np.int32) for key in INFO_KEYS)


def make_xla_functions(env: Any) -> tuple[Any, Callable[..., Any], Callable[..., Any]]:
    """``(handle, reset, step)`` for the ``AtariVectorEnv`` ``env`` (see ``AtariVectorEnv.xla``); typed
    ``Any`` so that this module does not import the one that imports it."""
    jax = _jax()
    import jax.numpy as jnp
    from jax.experimental import io_callback

    if env.autoreset_mode != AutoresetMode.NEXT_STEP:
        raise InvalidArgumentError(f"xla() needs autoreset_mode=NEXT_STEP, got {env.autoreset_mode}")
    batch = env.batch_size
    scalar = jax.ShapeDtypeStruct((batch,), jnp.int32)
    handle_shape = jax.ShapeDtypeStruct((HANDLE_BYTES,), jnp.uint8)
    obs_shape = jax.ShapeDtypeStruct(env.observation_space.shape, jnp.uint8)

    def host_reset(handle: np.ndarray, mask: np.ndarray, seed: np.ndarray, seed_kind: np.ndarray) -> tuple:
        options = None if not mask.size else {"reset_mask": np.asarray(mask, dtype=bool)}
        seeds: Any = None
        if int(seed_kind) == 1:
            seeds = int(seed.reshape(-1)[0])
        elif int(seed_kind) == 2:
            seeds = np.asarray(seed)
        obs, info = env.reset(seed=seeds, options=options)
        return (np.asarray(handle, dtype=np.uint8), np.asarray(obs, dtype=np.uint8), *info_arrays(info))

    def host_step(handle: np.ndarray, actions: np.ndarray) -> tuple:
        obs, rewards, terminations, truncations, info = env.step(np.asarray(actions))
        return (
            np.asarray(handle, dtype=np.uint8),
            np.asarray(obs, dtype=np.uint8),
            np.asarray(rewards, dtype=np.int32),
            np.asarray(terminations, dtype=bool),
            np.asarray(truncations, dtype=bool),
            *info_arrays(info),
        )

    def xla_reset(handle: Any, seed: Any = None, reset_mask: Any = None) -> tuple[Any, tuple[Any, dict[str, Any]]]:
        mask = jnp.zeros((0,), jnp.bool_) if reset_mask is None else jnp.asarray(reset_mask)
        if seed is None:
            seed_kind, seed_values = 0, jnp.zeros((0,), jnp.int64)
        elif isinstance(seed, int):
            seed_kind, seed_values = 1, jnp.asarray([seed])
        else:
            seed_kind, seed_values = 2, jnp.asarray(seed)
        shapes = (handle_shape, obs_shape, scalar, scalar, scalar, scalar)
        new_handle, obs, *info = io_callback(
            host_reset, shapes, handle, mask, seed_values, jnp.asarray(seed_kind), ordered=True
        )
        return new_handle, (obs, dict(zip(INFO_KEYS, info)))

    def xla_step(handle: Any, actions: Any) -> tuple[Any, tuple[Any, ...]]:
        flags = jax.ShapeDtypeStruct((batch,), jnp.bool_)
        shapes = (handle_shape, obs_shape, scalar, flags, flags, scalar, scalar, scalar, scalar)
        new_handle, obs, rewards, terminations, truncations, *info = io_callback(
            host_step, shapes, handle, jnp.asarray(actions), ordered=True
        )
        return new_handle, (obs, rewards, terminations, truncations, dict(zip(INFO_KEYS, info)))

    handle = jnp.frombuffer(id(env).to_bytes(HANDLE_BYTES, "little"), dtype=jnp.uint8)
    return handle, xla_reset, xla_step

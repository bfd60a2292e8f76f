"""Gymnasium ids ``TorchWM/<Game>-v5``: the same games and registered kwargs as ale_py's ``ALE/<Game>-v5``.

``gym.make_vec("TorchWM/Breakout-v5", num_envs=8)`` builds a torchwm :class:`~torchwm.AtariVectorEnv`
(its ``vector_entry_point``); ``gym.make("TorchWM/Breakout-v5")`` builds ale_py's single ``AtariEnv``.
"""

from __future__ import annotations

import ale_py
import gymnasium

NAMESPACE = "TorchWM"
VECTOR_ENTRY_POINT = "torchwm.atari:AtariVectorEnv"


def register_atari_envs() -> list[str]:
    """Registers a ``TorchWM/`` twin of every ``ALE/<Game>-v5`` id; returns the ids registered."""
    gymnasium.register_envs(ale_py)
    registered = []
    for spec in list(gymnasium.registry.values()):
        if spec.namespace != "ALE" or spec.version != 5:
            continue
        new_id = f"{NAMESPACE}/{spec.name}-v5"
        if new_id not in gymnasium.registry:
            gymnasium.register(
                id=new_id,
                entry_point=spec.entry_point,
                vector_entry_point=VECTOR_ENTRY_POINT,
                kwargs=dict(spec.kwargs),
                max_episode_steps=spec.max_episode_steps,
                nondeterministic=spec.nondeterministic,
            )
        registered.append(new_id)
    return registered

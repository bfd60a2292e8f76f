"""The render modes an ``AtariVectorEnv`` takes, and the check that ``render()`` may run."""

from __future__ import annotations

from typing import Any

from torchwm.errors import InvalidArgumentError

__all__ = ["RENDER_MODES", "check_can_render", "check_render_mode"]

RENDER_MODES = (None, "rgb_array")


def check_render_mode(render_mode: Any) -> str | None:
    """``render_mode`` as ``AtariVectorEnv`` accepts it: None or ``"rgb_array"`` (gymnasium's names)."""
    if render_mode not in RENDER_MODES:
        raise InvalidArgumentError(
            f"render_mode must be None or 'rgb_array' (the only render modes supported), got {render_mode!r}"
        )
    return render_mode


def check_can_render(render_mode: str | None) -> None:
    """``render()`` needs ``render_mode="rgb_array"`` at construction, as gymnasium's envs do."""
    if render_mode != "rgb_array":
        raise InvalidArgumentError(
            f"render() needs the environment created with render_mode='rgb_array', got render_mode={render_mode!r}"
        )

"""Recording what vectorized envs show: each step's frames tiled into one grid image, written as an
animated GIF (``.gif``) or numbered PNG stills (``.png``) by torchwm's Rust core on a background thread.

- :class:`Recorder`: fed the frames of each step (``envs.render()``), writes one grid image per step.
- :func:`record`: resets a vector env, plays ``steps`` steps (random actions by default) and records them.
- ``torchwm record --game pong --num-envs 16 --steps 500 --out pong.gif``: the same from the command line.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, final

import numpy as np

import torchwm._core as _core
from torchwm.atari.rendering import check_can_render
from torchwm.errors import EnvStateError, InvalidArgumentError

__all__ = ["Recorder", "record"]


@final
class Recorder:
    """Writes one grid image per step: frame ``i`` of each batch in row ``i // cols``, column ``i % cols``.

    ``path`` ending in ``.gif`` gives one animated GIF; ``.png`` gives PNG stills ``<stem>_<index:05>.png``
    beside it. ``cols`` defaults to the smallest square grid; ``scale`` (nearest neighbour, so colours stay
    exact) defaults to ``1/k`` with the smallest whole ``k`` that keeps the grid at most 480 pixels wide
    (16 Atari envs: a 4x4 grid of 80x105 tiles); ``padding`` black pixels separate tiles; ``fps`` is the GIF's
    speed. The output is created with the first batch, whose shape fixes the sizes. Encoding runs on a
    background thread; :meth:`close` (or leaving a ``with`` block) waits for it and returns a summary.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        cols: int | None = None,
        scale: float | None = None,
        padding: int = 2,
        fps: float = 15.0,
    ) -> None:
        self.path = Path(path)
        self._options: dict[str, Any] = {"cols": cols, "scale": scale, "padding": padding, "fps": fps}
        self._core: _core.GridRecorder | None = None
        self._summary: dict[str, Any] | None = None

    def add_frames(self, frames: Sequence[np.ndarray] | np.ndarray) -> None:
        """Queues one step's frames: ``envs.render()``'s tuple, or an array ``(n, height, width, 3)`` uint8."""
        if self._summary is not None:
            raise EnvStateError("the recorder is closed")
        batch = _as_frame_batch(frames)
        if self._core is None:
            count, height, width, _ = batch.shape
            self._core = _core.GridRecorder(str(self.path), count, height, width, **self._options)
        self._core.push(batch)

    def capture(self, envs: Any) -> None:
        """Queues the current frames of ``envs`` (a vector env created with ``render_mode="rgb_array"``)."""
        self.add_frames(envs.render())

    def close(self) -> dict[str, Any]:
        """Writes what is queued and closes the output -> ``{"path", "format", "images", "width", "height"}``."""
        if self._summary is None:
            if self._core is None:
                self._summary = {"path": str(self.path), "format": None, "images": 0, "width": 0, "height": 0}
            else:
                summary = self._core.close()
                self._summary = {**summary, "path": str(summary["path"])}
        return dict(self._summary)

    def __enter__(self) -> Recorder:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def _as_frame_batch(frames: Sequence[np.ndarray] | np.ndarray) -> np.ndarray:
    if frames is None:
        raise InvalidArgumentError(
            "no frames: the environment rendered nothing (create it with render_mode='rgb_array')"
        )
    try:
        batch = frames if isinstance(frames, np.ndarray) else np.stack([np.asarray(f) for f in frames])
    except ValueError as error:
        raise InvalidArgumentError(f"frames must all have the same shape (height, width, 3): {error}") from None
    if batch.dtype != np.uint8 or batch.ndim != 4 or batch.shape[-1] != 3 or 0 in batch.shape:
        raise InvalidArgumentError(
            f"frames must be uint8 RGB images (n, height, width, 3), got shape {batch.shape} dtype {batch.dtype}"
        )
    return np.ascontiguousarray(batch)


def record(
    envs: Any,
    path: str | Path,
    steps: int = 200,
    policy: Callable[[Any], Any] | None = None,
    *,
    seed: int | None = None,
    progress: bool = False,
    **recorder_options: Any,
) -> dict[str, Any]:
    """Resets ``envs``, steps it ``steps`` times and records every step: ``steps + 1`` grid images (the
    first is the reset). ``policy(observations) -> actions``; random actions (seeded by ``seed``) when None.
    ``envs`` is any vector env created with ``render_mode="rgb_array"``; it stays open. Keywords go to
    :class:`Recorder`. Returns the recorder's summary."""
    if isinstance(steps, bool) or not isinstance(steps, (int, np.integer)) or steps < 0:
        raise InvalidArgumentError(f"steps must be an int >= 0, got {steps!r}")
    check_can_render(getattr(envs, "render_mode", None))
    observations, _ = envs.reset(seed=seed)
    if policy is None:
        envs.action_space.seed(seed)
    from tqdm import tqdm

    with (
        Recorder(path, **recorder_options) as recorder,
        tqdm(
            total=int(steps),
            desc=f"recording {Path(path).name}",
            unit="step",
            disable=not progress,
        ) as bar,
    ):
        recorder.capture(envs)
        for _ in range(int(steps)):
            actions = envs.action_space.sample() if policy is None else policy(observations)
            observations, *_ = envs.step(actions)
            recorder.capture(envs)
            bar.update(1)
    return recorder.close()

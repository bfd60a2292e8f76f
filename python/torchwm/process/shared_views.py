"""Row slices of batched (nested Dict/Tuple) arrays: shared-memory observation views, action batches."""

from __future__ import annotations

from typing import Any

import numpy as np


def slice_views(views: Any, start: int, stop: int) -> Any:
    """The rows ``start:stop`` of every array in a (nested) dict/tuple of batched views, as views."""
    if isinstance(views, dict):
        return {key: slice_views(value, start, stop) for key, value in views.items()}
    if isinstance(views, tuple):
        return tuple(slice_views(value, start, stop) for value in views)
    if isinstance(views, np.ndarray):
        return views[start:stop]
    raise TypeError(f"cannot slice a batch of type {type(views).__name__}")

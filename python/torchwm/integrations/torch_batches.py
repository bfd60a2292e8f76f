"""A vector env's numpy results as torch tensors on a device: ``reset_batch()``/``step_batch()``.

torch is optional (``torchwm[torch]``): it is imported when a batch is first made. On the CPU the
tensors share memory with the env's arrays (``torch.from_numpy``, no copy). On CUDA every array of
a batch (observations, rewards, flags, info arrays) is packed into one pinned host buffer, kept for
the next batch, and goes to the device in ONE non-blocking copy on the current stream; the tensors
are views into that device block (each array starts 16-byte aligned). The buffer is refilled only
once its previous copy finished (a CUDA event), so no copy reads a buffer being refilled. Work
queued later on the same stream sees the data; another stream must wait on it first.

Rewards become float32, ``terminated``/``truncated``/``done`` bool. Numeric and bool info arrays
(``_key`` masks included) become tensors, nested dicts are converted key by key, and object arrays
(gymnasium's ``final_obs`` of a SAME_STEP env) stay numpy arrays.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["TorchBatchMixin", "TorchBatcher", "import_torch"]

ALIGNMENT = 16  # bytes: every array of a packed batch starts here, so any dtype can view its bytes


def import_torch() -> Any:
    try:
        import torch
    except ImportError as error:
        raise ImportError("reset_batch/step_batch need torch: pip install 'torchwm[torch]'") from error
    return torch


class _Leaf:
    """Where the ``index``-th array of a batch goes back in its tree."""

    def __init__(self, index: int) -> None:
        self.index = index


def _split_tree(value: Any, arrays: list[np.ndarray]) -> Any:
    """The tree with every numeric/bool array replaced by a :class:`_Leaf`; the arrays appended."""
    if isinstance(value, dict):
        return {key: _split_tree(item, arrays) for key, item in value.items()}
    if isinstance(value, tuple):
        return tuple(_split_tree(item, arrays) for item in value)
    if isinstance(value, np.ndarray) and value.dtype.kind in "biuf":
        arrays.append(np.ascontiguousarray(value))
        return _Leaf(len(arrays) - 1)
    return value


def _join_tree(skeleton: Any, tensors: list[Any]) -> Any:
    if isinstance(skeleton, dict):
        return {key: _join_tree(item, tensors) for key, item in skeleton.items()}
    if isinstance(skeleton, tuple):
        return tuple(_join_tree(item, tensors) for item in skeleton)
    return tensors[skeleton.index] if isinstance(skeleton, _Leaf) else skeleton


class _PinnedBlock:
    """A growing pinned host buffer and the event of the last copy out of it."""

    def __init__(self, torch: Any) -> None:
        self.torch = torch
        self.host = torch.empty(0, dtype=torch.uint8, pin_memory=True)
        self.copied = torch.cuda.Event()
        self.used = False

    def to_device(self, arrays: list[np.ndarray], device: Any) -> list[Any]:
        """The arrays on ``device``, through this buffer and one non-blocking copy."""
        torch = self.torch
        offsets, total = [], 0
        for array in arrays:
            offsets.append(total)
            total += -(-array.nbytes // ALIGNMENT) * ALIGNMENT
        if self.used:
            self.copied.synchronize()  # the previous batch's copy out of the buffer has finished
        if self.host.numel() < total:
            self.host = torch.empty(total + total // 2, dtype=torch.uint8, pin_memory=True)
        view = self.host.numpy()
        for array, offset in zip(arrays, offsets):
            view[offset : offset + array.nbytes] = array.reshape(-1).view(np.uint8)
        block = self.host[:total].to(device, non_blocking=True)
        self.copied.record(torch.cuda.current_stream(device))
        self.used = True
        return [
            block[offset : offset + array.nbytes].view(_torch_dtype(torch, array.dtype)).view(array.shape)
            for array, offset in zip(arrays, offsets)
        ]


def _torch_dtype(torch: Any, dtype: np.dtype) -> Any:
    return torch.from_numpy(np.empty(0, dtype)).dtype


class TorchBatcher:
    """Converts batches to tensors on ``device`` (a ``torch.device`` or its name; default CPU)."""

    def __init__(self, device: Any = None) -> None:
        self.torch = import_torch()
        self.device = self.torch.device("cpu" if device is None else device)
        self._block = _PinnedBlock(self.torch) if self.device.type == "cuda" else None

    def tree(self, value: Any) -> Any:
        """A (nested dict/tuple of) array(s) as tensors; object arrays and other values as they are."""
        arrays: list[np.ndarray] = []
        skeleton = _split_tree(value, arrays)
        if self._block is not None:
            tensors = self._block.to_device(arrays, self.device)
        else:
            tensors = [self.torch.from_numpy(a if a.flags.writeable else a.copy()) for a in arrays]
        return _join_tree(skeleton, tensors)

    def reset_batch(self, obs: Any, info: dict[str, Any]) -> dict[str, Any]:
        """``reset``'s results as ``{"obs", "info"}``."""
        return self.tree({"obs": obs, "info": info})

    def step_batch(
        self, obs: Any, rewards: Any, terminations: Any, truncations: Any, info: dict[str, Any]
    ) -> dict[str, Any]:
        """``step``'s results as ``{"obs", "reward", "terminated", "truncated", "done", "info"}``."""
        terminations = np.asarray(terminations, dtype=np.bool_)
        truncations = np.asarray(truncations, dtype=np.bool_)
        batch = {
            "obs": obs,
            "reward": np.asarray(rewards, dtype=np.float32),
            "terminated": terminations,
            "truncated": truncations,
            "done": terminations | truncations,
            "info": info,
        }
        return self.tree(batch)

    def actions(self, actions: Any) -> Any:
        """A (CPU or CUDA) tensor of actions as the numpy array ``step`` takes; anything else as is."""
        if isinstance(actions, self.torch.Tensor):
            return actions.detach().cpu().numpy()
        return actions


class TorchBatchMixin:
    """``reset_batch``/``step_batch`` for a gymnasium vector env (put it before ``VectorEnv`` in the bases)."""

    def _batcher(self, device: Any) -> TorchBatcher:
        batchers: dict[str, TorchBatcher] = self.__dict__.setdefault("_torch_batchers", {})
        name = str(device) if device is not None else "cpu"
        if name not in batchers:
            batchers[name] = TorchBatcher(device)
        return batchers[name]

    def reset_batch(self, seed: Any = None, options: dict[str, Any] | None = None, *, device: Any = None) -> dict:
        """``reset`` as tensors on ``device``: ``obs`` and ``info``."""
        obs, info = self.reset(seed=seed, options=options)  # type: ignore[attr-defined]
        return self._batcher(device).reset_batch(obs, info)

    def step_batch(self, actions: Any, *, device: Any = None) -> dict:
        """``step`` taking a (CPU or CUDA) tensor or array of actions; tensors on ``device``:
        ``obs``, ``reward`` (float32), ``terminated``, ``truncated``, ``done`` (bool) and ``info``."""
        batcher = self._batcher(device)
        return batcher.step_batch(*self.step(batcher.actions(actions)))  # type: ignore[attr-defined]

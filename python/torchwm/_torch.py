"""A vector env's numpy results as torch tensors on a device: ``reset_batch()``/``step_batch()``.

torch is optional (``torchwm[torch]``): it is imported when a batch is first made. On the CPU the
tensors share memory with the env's arrays (``torch.from_numpy``, no copy). On CUDA each array is
copied once into a pinned host buffer kept for the next step, then to the device with a
non-blocking copy on the current stream; a buffer is reused only once its previous copy finished
(a CUDA event), so no copy ever reads a buffer being refilled. Work queued later on the same stream
sees the data; another stream must wait on it first.

Rewards become float32, ``terminated``/``truncated``/``done`` bool. Numeric and bool info arrays
(``_key`` masks included) become tensors, nested dicts are converted key by key, and object arrays
(gymnasium's ``final_obs`` of a SAME_STEP env) stay numpy arrays.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["TorchBatchMixin", "TorchBatcher", "import_torch"]


def import_torch() -> Any:
    try:
        import torch
    except ImportError as error:
        raise ImportError("reset_batch/step_batch need torch: pip install 'torchwm[torch]'") from error
    return torch


class _Staging:
    """A pinned host buffer for one array of the batch, and the event of the last copy out of it."""

    def __init__(self, torch: Any, array: np.ndarray) -> None:
        self.host = torch.empty(array.shape, dtype=torch.from_numpy(np.empty(0, array.dtype)).dtype, pin_memory=True)
        self.view = self.host.numpy()
        self.copied = torch.cuda.Event()  # recorded after each copy out of ``host``
        self.used = False

    def fits(self, array: np.ndarray) -> bool:
        return self.view.shape == array.shape and self.view.dtype == array.dtype


class TorchBatcher:
    """Converts batches to tensors on ``device`` (a ``torch.device`` or its name; default CPU)."""

    def __init__(self, device: Any = None) -> None:
        self.torch = import_torch()
        self.device = self.torch.device("cpu" if device is None else device)
        self._pinned = self.device.type == "cuda"
        self._staging: dict[str, _Staging] = {}

    def tensor(self, key: str, array: np.ndarray) -> Any:
        """``array`` on the device; ``key`` names its pinned buffer (one per array of a batch)."""
        array = np.ascontiguousarray(array)
        if not self._pinned:
            return self.torch.from_numpy(array if array.flags.writeable else array.copy())
        staging = self._staging.get(key)
        if staging is None or not staging.fits(array):
            staging = self._staging[key] = _Staging(self.torch, array)
        elif staging.used:
            staging.copied.synchronize()  # the previous step's copy out of this buffer has finished
        staging.view[...] = array
        out = staging.host.to(self.device, non_blocking=True)
        staging.copied.record(self.torch.cuda.current_stream(self.device))
        staging.used = True
        return out

    def tree(self, key: str, value: Any) -> Any:
        """A (nested dict/tuple of) array(s) as tensors; object arrays and other values as they are."""
        if isinstance(value, dict):
            return {name: self.tree(f"{key}/{name}", item) for name, item in value.items()}
        if isinstance(value, tuple):
            return tuple(self.tree(f"{key}/{i}", item) for i, item in enumerate(value))
        if isinstance(value, np.ndarray) and value.dtype.kind in "biuf":
            return self.tensor(key, value)
        return value

    def reset_batch(self, obs: Any, info: dict[str, Any]) -> dict[str, Any]:
        """``reset``'s results as ``{"obs", "info"}``."""
        return {"obs": self.tree("obs", obs), "info": self.tree("info", info)}

    def step_batch(
        self, obs: Any, rewards: Any, terminations: Any, truncations: Any, info: dict[str, Any]
    ) -> dict[str, Any]:
        """``step``'s results as ``{"obs", "reward", "terminated", "truncated", "done", "info"}``."""
        terminations = np.asarray(terminations, dtype=np.bool_)
        truncations = np.asarray(truncations, dtype=np.bool_)
        return {
            "obs": self.tree("obs", obs),
            "reward": self.tensor("reward", np.asarray(rewards, dtype=np.float32)),
            "terminated": self.tensor("terminated", terminations),
            "truncated": self.tensor("truncated", truncations),
            "done": self.tensor("done", terminations | truncations),
            "info": self.tree("info", info),
        }

    def actions(self, actions: Any) -> Any:
        """A (CPU or CUDA) tensor of actions as the numpy array ``step`` takes; anything else as is."""
        if isinstance(actions, self.torch.Tensor):
            return actions.detach().cpu().numpy()
        return actions


class TorchBatchMixin:
    """``reset_batch``/``step_batch`` for a gymnasium vector env (put it before ``VectorEnv`` in the bases)."""

    _torch_batchers: dict[str, TorchBatcher]

    def _batcher(self, device: Any) -> TorchBatcher:
        batchers = self.__dict__.setdefault("_torch_batchers", {})
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

"""What the benchmarks' caller does between steps, standing for the agent: nothing, a sleep (a GPU
forward pass leaves the CPU to the envs), or a real forward pass of a small network on the batch's
observations, on the CPU (numpy) or on a CUDA GPU (torch, observations copied over): ``make_policy``,
the Atari suite's. The process suite's and ``autotune``'s stand-in takes no observations, only time:
``caller_work``, a sleep or a busy loop of a fixed length per batch.

The network is fixed per observation shape: 2x2 average pooling, a 256-unit ReLU layer, 18 logits,
so its cost per step depends only on the batch, as a learner's does. Its result is discarded: the
benchmarks step random actions, so every backend sees the same actions whatever the policy.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import partial

import numpy as np

Policy = Callable[[np.ndarray], None]

KINDS = ("none", "sleep", "cpu", "gpu")
CALLER_KINDS = ("sleep", "burn")
HIDDEN = 256
LOGITS = 18


def _pooled(obs: np.ndarray) -> np.ndarray:
    """(batch, ..., H, W) observations, 2x2 average-pooled and flattened, as float32."""
    batch, height, width = obs.shape[0], obs.shape[-2] // 2 * 2, obs.shape[-1] // 2 * 2
    x = obs[..., :height, :width].astype(np.float32)
    x = x.reshape(*obs.shape[:-2], height // 2, 2, width // 2, 2).mean(axis=(-3, -1))
    return x.reshape(batch, -1)


class CpuMlp:
    """The forward pass in numpy; weights are drawn on first use, for the shape the env returns."""

    def __init__(self, seed: int = 0) -> None:
        self._rng = np.random.default_rng(seed)
        self._weights: tuple[np.ndarray, np.ndarray] | None = None

    def __call__(self, obs: np.ndarray) -> None:
        x = _pooled(obs)
        if self._weights is None or self._weights[0].shape[0] != x.shape[1]:
            scale = 1.0 / np.sqrt(x.shape[1])
            self._weights = (
                self._rng.standard_normal((x.shape[1], HIDDEN), dtype=np.float32) * scale,
                self._rng.standard_normal((HIDDEN, LOGITS), dtype=np.float32) / np.sqrt(HIDDEN),
            )
        hidden = np.maximum(x @ self._weights[0], 0.0)
        (hidden @ self._weights[1]).argmax(axis=1)


def _gpu_mlp() -> Policy:
    try:
        import torch
    except ImportError as error:
        raise RuntimeError("--policy gpu needs torch (pip install 'torchwm[torch]')") from error
    if not torch.cuda.is_available():
        raise RuntimeError("--policy gpu needs a CUDA device, and torch sees none")
    device = torch.device("cuda")
    layers: dict[int, torch.nn.Module] = {}

    def policy(obs: np.ndarray) -> None:
        x = torch.from_numpy(obs).to(device, non_blocking=True).float()
        x = torch.nn.functional.avg_pool2d(x.reshape(-1, 1, *obs.shape[-2:]), 2).reshape(obs.shape[0], -1)
        if x.shape[1] not in layers:
            layers[x.shape[1]] = torch.nn.Sequential(
                torch.nn.Linear(x.shape[1], HIDDEN), torch.nn.ReLU(), torch.nn.Linear(HIDDEN, LOGITS)
            ).to(device)
        with torch.no_grad():
            layers[x.shape[1]](x).argmax(dim=1).cpu()

    return policy


def make_policy(kind: str, sleep_ms: float = 1.0) -> Policy | None:
    """The policy of ``kind`` (one of ``KINDS``); ``sleep_ms`` is the sleep's length."""
    if kind == "none":
        return None
    if kind == "sleep":
        seconds = sleep_ms / 1000.0
        return lambda obs: time.sleep(seconds)
    if kind == "cpu":
        return CpuMlp()
    if kind == "gpu":
        return _gpu_mlp()
    raise ValueError(f"policy must be one of {KINDS}, got {kind!r}")


def describe(kind: str, sleep_ms: float) -> str:
    """A short label for tables and plots: ``sleep 1 ms``, ``cpu MLP``."""
    return {"none": "no policy", "sleep": f"sleep {sleep_ms:g} ms", "cpu": "CPU MLP", "gpu": "GPU MLP"}[kind]


def caller_work(kind: str, ms: float) -> Callable[[], None] | None:
    """The caller's time per batch, standing for its policy: a sleep (a GPU forward pass leaves the
    CPU to the envs) or a busy loop burning ``ms`` of this thread's CPU time (a CPU forward pass
    competes with them)."""
    if kind not in CALLER_KINDS:
        raise ValueError(f"caller work must be one of {CALLER_KINDS}, got {kind!r}")
    if ms <= 0:
        return None
    seconds = ms / 1000.0
    if kind == "sleep":
        return partial(time.sleep, seconds)

    def burn() -> None:  # CPU time, as a forward pass needs: descheduled, it takes longer
        end = time.thread_time() + seconds
        while time.thread_time() < end:
            pass

    return burn

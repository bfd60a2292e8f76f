"""How long turning one Atari step's results into torch tensors takes: torchwm's batcher
(pinned host buffers + non-blocking copies) against ``torch.as_tensor(x).to(device)``.

    python examples/torch_batch_bench.py --device cuda --num-envs 8 64 256

The batch is what ``AtariVectorEnv.step`` returns (uint8 obs ``(N, 4, 84, 84)``, rewards, two flag
arrays, four int32 info arrays). Each timing is the median over ``--repeats`` batches, and includes
waiting for the device (``torch.cuda.synchronize``) after each batch; "pipelined" only waits at the
end, as a training loop that consumes the tensors on the same stream does.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import torch

from torchwm.integrations.torch_batches import TorchBatcher


def atari_step(num_envs: int, rng: np.random.Generator) -> tuple:
    info = {
        key: rng.integers(0, 1000, num_envs, dtype=np.int32)
        for key in ("env_id", "lives", "frame_number", "episode_frame_number")
    }
    flags = rng.random(num_envs) < 0.01
    return (
        rng.integers(0, 256, (num_envs, 4, 84, 84), dtype=np.uint8),
        rng.integers(-1, 2, num_envs).astype(np.int32),
        flags,
        ~flags,
        info,
    )


def as_tensor_to(device: torch.device, obs, rewards, terminations, truncations, info) -> dict:
    return {
        "obs": torch.as_tensor(obs).to(device),
        "reward": torch.as_tensor(rewards.astype(np.float32)).to(device),
        "done": torch.as_tensor(terminations | truncations).to(device),
        "info": {key: torch.as_tensor(value).to(device) for key, value in info.items()},
    }


def median_seconds(convert, batches: list[tuple], device: torch.device, sync_each: bool) -> float:
    def sync() -> None:
        if device.type == "cuda":
            torch.cuda.synchronize(device)

    for batch in batches[:5]:  # warm-up: allocations, pinned buffers
        convert(*batch)
    sync()
    if not sync_each:
        start = time.perf_counter()
        for batch in batches:
            convert(*batch)
        sync()
        return (time.perf_counter() - start) / len(batches)
    times = []
    for batch in batches:
        start = time.perf_counter()
        convert(*batch)
        sync()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--num-envs", type=int, nargs="+", default=[8, 64, 256])
    parser.add_argument("--repeats", type=int, default=200)
    args = parser.parse_args()
    device = torch.device(args.device)
    rng = np.random.default_rng(0)
    print(f"device={device} torch={torch.__version__}")
    print("num_envs  obs_MB  as_tensor.to_us  batcher_us  as_tensor.to_pipelined_us  batcher_pipelined_us")
    for num_envs in args.num_envs:
        batches = [atari_step(num_envs, rng) for _ in range(8)] * (args.repeats // 8)
        batcher = TorchBatcher(device)

        def plain(*b):
            return as_tensor_to(device, *b)

        row = [
            median_seconds(f, batches, device, sync) * 1e6
            for sync in (True, False)
            for f in (plain, batcher.step_batch)
        ]
        print(
            f"{num_envs:8d}  {batches[0][0].nbytes / 1e6:6.2f}  {row[0]:15.1f}  {row[1]:10.1f}  {row[2]:25.1f}  {row[3]:20.1f}"
        )


if __name__ == "__main__":
    main()

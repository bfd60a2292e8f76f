"""The many-core side-by-side run (16 cores, a GPU): what docs/performance.md's 16-core tables come from.

Writes JSON lines to ``--out``: Atari env-only throughput for torchwm, ale_py and EnvPool at 16/64/256
envs, sync and async (half batches), interleaved rounds; the sync reset stall at 64 envs with a 1 ms
sleeping policy; sync 64 envs with each ``--policy`` kind (``gpu`` where torch sees a CUDA device).
The process-vectorizer tables come from ``torchwm bench --suite process`` (run it beside this, on all
cores and under ``taskset -c 0,1``).

    python scripts/many_cores.py --out many_cores.jsonl [--seconds 1.0] [--rounds 2]
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import asdict
from typing import Any

from torchwm.benchmarks.atari import measure as atari_bench
from torchwm.benchmarks.atari import stalls as batch_stalls

BACKENDS = ("torchwm", "ale_py", "envpool")


def emit(out: Any, kind: str, row: dict[str, Any]) -> None:
    line = json.dumps({"kind": kind, **row})
    print(line, flush=True)
    out.write(line + "\n")
    out.flush()


def throughput(out: Any, seconds: float, rounds: int, backends: list[str]) -> None:
    """Env-only steps/s, every backend once per round at each point (interleaved)."""
    for num_envs in (16, 64, 256):
        for batch in (num_envs, num_envs // 2):
            for round_index in range(rounds):
                for backend in backends:
                    result = atari_bench.measure_backend(
                        backend, "breakout", num_envs, seconds, batch_size=0 if batch == num_envs else batch
                    )
                    emit(out, "throughput", {**result.to_dict(), "round": round_index})


def stalls(out: Any, seconds: float, backends: list[str]) -> None:
    """Sync 64 envs with a 1 ms sleeping policy: a batch carrying a reset against a plain one (torchwm
    with its default ``reset_ahead="auto"`` and with resets in the batch, ``reset_ahead=False``)."""
    if "torchwm" in backends:
        backends = [*backends, "torchwm_no_reset_ahead"]
    for backend in backends:
        result = batch_stalls.measure("breakout", 64, 64, seconds, 0, backend, "sleep", 1.0)
        emit(out, "stall", asdict(result) | {"stall_ratio": result.stall_ratio})


def policies(out: Any, seconds: float, backends: list[str], kinds: list[str]) -> None:
    """Sync 64 envs with the caller's work between steps: none, a 1 ms sleep, a CPU MLP, a GPU one."""
    for kind in kinds:
        for backend in backends:
            result = atari_bench.measure_backend(backend, "breakout", 64, seconds, policy=kind, policy_ms=1.0)
            emit(out, "policy", result.to_dict())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--seconds", type=float, default=1.0)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--backends", nargs="+", default=list(BACKENDS))
    parser.add_argument("--policies", nargs="+", default=["none", "sleep", "cpu", "gpu"])
    args = parser.parse_args()
    start = time.perf_counter()
    with open(args.out, "w") as out:
        throughput(out, args.seconds, args.rounds, args.backends)
        stalls(out, 4 * args.seconds, args.backends)
        policies(out, 2 * args.seconds, args.backends, args.policies)
    print(f"done in {time.perf_counter() - start:.0f} s", flush=True)


if __name__ == "__main__":
    main()

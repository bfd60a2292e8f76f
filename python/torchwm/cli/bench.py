"""``torchwm bench``: throughput side by side (Atari, process vectorizer), or ``--soak`` for leaks."""

from __future__ import annotations

import argparse
import json
import platform
from pathlib import Path
from typing import Any

__all__ = ["bench", "soak"]


def soak(args: argparse.Namespace) -> int:
    """Long run and create/close loops watching memory, threads, fds, processes, /dev/shm; JSON report."""
    from torchwm.benchmarks.soak import leak_summary, run_soak

    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    num_envs = args.num_envs[0] if len(args.num_envs) == 1 else 8
    game = args.game[0]
    report = run_soak(
        game,
        num_envs,
        args.soak_million_frames,
        args.soak_cycles,
        args.soak_process_cycles,
        args.soak_process_steps,
    )
    frames = report["atari_frames"]
    print(
        f"AtariVectorEnv {game} x{num_envs}: {frames['million_frames']}M frames in {frames['seconds']} s, "
        f"RSS {frames['rss_mib_start_end'][0]} -> {frames['rss_mib_start_end'][1]} MiB "
        f"({frames['rss_growth_percent']:+.3f}%, slope {frames['rss_slope_mib_per_million_frames']:+.4f} MiB per M frames)"
    )
    process = report["process_steps"]
    print(
        f"TorchVectorizedEnv CartPole {process['num_workers']}x{process['envs_per_worker']}: "
        f"{process['env_steps']:,} env steps, RSS {process['rss_growth_percent']:+.3f}%"
    )
    for line in leak_summary(report):
        print(line)
    json_path = out_dir / "soak.json"
    json_path.write_text(json.dumps({"machine": _machine(), "soak": report}, indent=2))
    print(f"results: {json_path}")
    return 0


def _machine() -> dict[str, Any]:
    from torchwm.benchmarks.atari_bench import cpu_count

    return {"python": platform.python_version(), "platform": platform.platform(), "cores": cpu_count()}


def bench(args: argparse.Namespace) -> int:
    """Atari (and process-vectorizer) throughput side by side; table, JSON and PNG plot."""
    if args.soak:
        return soak(args)
    from tqdm import tqdm

    from torchwm.benchmarks import atari_bench, atari_report

    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    report: dict[str, Any] = {
        "machine": _machine(),
        "settings": {
            "games": args.game,
            "scaling": args.scaling,
            "policy": args.policy,
            "seconds_per_point": args.seconds,
            "repeats": args.repeats,
            "process_rounds": args.process_rounds,
            "frameskip": 4,
            "obs": "84x84 gray, stack 4",
            "policy_ms": args.policy_ms,
        },
    }
    if args.suite in ("atari", "all"):
        backends = args.backends or atari_bench.available_backends()
        unknown = set(backends) - set(atari_bench.BACKENDS)
        if unknown:
            raise SystemExit(f"unknown backends {sorted(unknown)}; choose from {sorted(atari_bench.BACKENDS)}")
        with tqdm(desc="atari", unit="run") as progress:
            report["atari"] = atari_report.run(args, backends, progress, out_dir)
    if args.suite in ("process", "all"):
        from torchwm.benchmarks.process_bench import run_process_benchmarks

        process_rows = run_process_benchmarks(seconds=args.seconds, rounds=args.process_rounds)
        report["process"] = process_rows
        print()
        print(atari_report.format_table(process_rows, ["case", "backend", "num_envs", "steps_per_s", "torchwm_x"]))
    json_path = out_dir / "bench.json"
    json_path.write_text(json.dumps(report, indent=2, default=str))
    print(f"results: {json_path}")
    return 0

"""``torchwm bench``: throughput side by side (Atari, process vectorizer), or ``--soak`` for leaks."""

from __future__ import annotations

import argparse
import json
import platform
from pathlib import Path
from typing import Any

__all__ = ["add_parser", "bench", "soak"]


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


def _stalls(args: argparse.Namespace, backends: list[str]) -> list[dict[str, Any]]:
    """``--stalls``: how much longer a batch that carries a reset takes, per backend, sync and async."""
    from torchwm.benchmarks import atari_report
    from torchwm.benchmarks.batch_stalls import stall_rows

    rows = stall_rows(
        args.game, args.num_envs, backends, args.policy, args.policy_ms, args.seconds, max(1, args.repeats)
    )
    print()
    columns = ["game", "backend", "num_envs", "batch_size", "policy", "steps_per_s", "share_with_reset"]
    print(atari_report.format_table(rows, [*columns, "ms_with_reset", "ms_without_reset", "stall_ratio"]))
    return rows


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
        if args.stalls:
            report["stalls"] = _stalls(args, backends)
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


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Adds ``bench`` to the ``torchwm`` command's subcommands."""
    p = subparsers.add_parser("bench", help="throughput of torchwm against ale_py, EnvPool and gymnasium, side by side")
    p.add_argument(
        "--suite",
        choices=["atari", "process", "all"],
        default="atari",
        help="atari: AtariVectorEnv against its peers; process: TorchVectorizedEnv against gymnasium's (default: atari)",
    )
    p.add_argument(
        "--game", nargs="+", default=None, help="one or more games (default: breakout; --scaling: breakout pong)"
    )
    p.add_argument(
        "--num-envs", type=int, nargs="+", default=None, help="env counts (default: 2 4 8 16; --scaling: 16 to 256)"
    )
    p.add_argument(
        "--policy",
        choices=["none", "sleep", "cpu", "gpu"],
        default="none",
        help="the caller's work between steps, for every backend: a --policy-ms sleep, or a small MLP's forward"
        " pass on the observations on the CPU (numpy) or a CUDA GPU (torch)",
    )
    p.add_argument(
        "--scaling",
        action="store_true",
        help="sweep num_envs x sync/async (half batches) x policy (none, sleep, cpu) x backends, threads = cores;"
        " writes atari_scaling.png",
    )
    p.add_argument(
        "--stalls",
        action="store_true",
        help="atari suite: also measure, per --game, --num-envs and backend, sync and async (half batches), with"
        " --policy, how much longer a batch that carries a reset takes than one without (the reset stall)",
    )
    p.add_argument("--backends", nargs="+", default=None, help="default: every backend installed here")
    p.add_argument("--seconds", type=float, default=2.0, help="measuring time per point and repeat")
    p.add_argument("--repeats", type=int, default=3, help="atari suite: interleaved repeats; the median is reported")
    p.add_argument(
        "--process-rounds",
        type=int,
        default=5,
        help="process suite: interleaved rounds per case (split --seconds); the median is reported",
    )
    p.add_argument(
        "--policy-ms", type=float, default=1.0, help="simulated policy cost per batch for the async test (0: skip)"
    )
    p.add_argument("--out", default="bench-results", help="directory for bench.json and the plot")
    p.add_argument("--quick", action="store_true", help="a short smoke run: 8 envs, 1 s per point")
    p.add_argument(
        "--soak",
        action="store_true",
        help="instead of throughput: a long run and create/close loops reporting RSS, threads, fds, processes,"
        " /dev/shm (soak.json); --game, --out, and --num-envs when given one value (default 8)",
    )
    p.add_argument("--soak-million-frames", type=float, default=10.0, help="--soak: emulator frames to run, millions")
    p.add_argument("--soak-cycles", type=int, default=300, help="--soak: AtariVectorEnv create/close cycles")
    p.add_argument("--soak-process-cycles", type=int, default=50, help="--soak: TorchVectorizedEnv create/close cycles")
    p.add_argument("--soak-process-steps", type=int, default=50_000, help="--soak: TorchVectorizedEnv steps")
    p.set_defaults(func=bench)
    return p

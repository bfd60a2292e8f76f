"""``torchwm bench``: throughput side by side (Atari, process vectorizer), or ``--soak`` for leaks."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from torchwm.benchmarks.core.machine import machine

__all__ = ["add_parser", "bench", "soak"]


def soak(args: argparse.Namespace) -> int:
    """Long run and create/close loops watching memory, threads, fds, processes, /dev/shm; JSON report."""
    from torchwm.benchmarks.soak.run import leak_summary, run_soak

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
    json_path.write_text(json.dumps({"machine": machine(), "soak": report}, indent=2))
    print(f"results: {json_path}")
    return 0


def process_suite(args: argparse.Namespace, out_dir: Path, policy_ms: float) -> dict[str, Any]:
    """TorchVectorizedEnv against PufferLib and gymnasium's: the sweep's table, summary and plot."""
    from tqdm import tqdm

    from torchwm.benchmarks.process import bench as process_bench
    from torchwm.benchmarks.process import report as process_report
    from torchwm.benchmarks.process import shapes, steppers

    backends = [b for b in args.backends or steppers.DEFAULT_BACKENDS if b in steppers.BACKENDS]
    if not backends:
        raise SystemExit(f"--suite process: no backend of {args.backends} is one of {list(steppers.BACKENDS)}")
    workers_envs: list[tuple[int, int]] | None
    if args.quick:  # one round: no spread, no adaptive rounds
        workers_envs = shapes.parse_workers_envs(args.workers_envs or "1x4,2x2")
        seconds, rounds, max_rounds = 0.4, 1, 1
    else:
        workers_envs = shapes.parse_workers_envs(args.workers_envs) if args.workers_envs else None
        seconds, rounds, max_rounds = args.seconds, args.process_rounds, args.max_process_rounds
    with tqdm(desc="process", unit="run") as progress:
        process = process_bench.run_process_benchmarks(
            seconds,
            rounds,
            max_rounds=max_rounds,
            ratio_spread=args.ratio_spread,
            cases=args.cases,
            workers_envs=workers_envs,
            backends=backends,
            modes=tuple(args.modes),
            policy_ms=policy_ms,
            policy=args.process_policy,
            progress=progress,
            multi_agent_grid=not args.quick,
        )
    print()
    print(process_report.table(process))
    print()
    print("\n".join(process_report.summary_lines(process)))
    png = process_report.plot(process, out_dir / "process_bench.png")
    if png is not None:
        print(f"plot: {png}")
    if "torchwm" in backends and sys.platform.startswith("linux"):
        from torchwm.benchmarks.process import transport_cost

        # The portable transport (macOS's) beside Linux's, in child processes on each column.
        pairs, batches = (1, 1000) if args.quick else (5, 5000)
        process["transport_cost"] = transport_cost.compare_transports("2x16", "noop", batches, pairs)
        print(transport_cost.line(process["transport_cost"]))
    return process


def tune(args: argparse.Namespace) -> int:
    """``--tune``: autotune for a factory given as module:function; prints the table, writes tune.json."""
    from torchwm.process.autotune import autotune, load_factory

    factory = load_factory(args.factory)
    given = getattr(args, "num_envs_given", args.num_envs)
    num_envs = given[0] if given else None
    result = autotune(
        factory,
        num_envs=num_envs,
        policy_ms=0.0 if args.policy_ms is None else args.policy_ms,
        policy=args.process_policy,
        max_workers=args.max_workers,
        batch_sizes=args.batch_sizes,
        seconds=0.3 if args.quick else max(0.2, args.seconds / max(1, args.process_rounds)),
        rounds=1 if args.quick else args.process_rounds,
        progress=True,
    )
    print(result)
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    json_path = out_dir / "tune.json"
    summary = {"factory": args.factory, "keywords": result.keywords, "num_envs": result.num_envs}
    summary |= {"policy_ms": result.policy_ms, "policy": result.policy, "cores": result.cores}
    json_path.write_text(json.dumps({"machine": machine(), **summary, "table": result.table}, indent=2))
    print(f"results: {json_path}")
    return 0


def _stalls(args: argparse.Namespace, backends: list[str]) -> list[dict[str, Any]]:
    """``--stalls``: how much longer a batch that carries a reset takes, per backend, sync and async."""
    from torchwm.benchmarks.atari.stalls import stall_rows
    from torchwm.benchmarks.core.table import format_table

    rows = stall_rows(
        args.game, args.num_envs, backends, args.policy, args.policy_ms, args.seconds, max(1, args.repeats)
    )
    print()
    columns = ["game", "backend", "num_envs", "batch_size", "policy", "steps_per_s", "share_with_reset"]
    print(format_table(rows, [*columns, "ms_with_reset", "ms_without_reset", "stall_ratio"]))
    return rows


def bench(args: argparse.Namespace) -> int:
    """Atari (and process-vectorizer) throughput side by side; table, JSON and PNG plot."""
    if args.soak:
        return soak(args)
    if args.tune:
        if args.suite != "process":
            raise SystemExit("--tune tunes TorchVectorizedEnv: use it with --suite process")
        return tune(args)
    from tqdm import tqdm

    from torchwm.benchmarks.atari import report as atari_report
    from torchwm.benchmarks.atari.backends import BACKENDS as ATARI_BACKENDS
    from torchwm.benchmarks.atari.backends import available_backends
    from torchwm.benchmarks.process.steppers import BACKENDS as PROCESS_BACKENDS

    # --policy-ms: the process suite's caller time (default none); the Atari suite's async test (default 1 ms).
    process_policy_ms = args.policy_ms or 0.0
    if args.policy_ms is None:
        args.policy_ms = 1.0 if args.suite in ("atari", "all") else 0.0
    known = set(ATARI_BACKENDS) | set(PROCESS_BACKENDS)
    unknown = set(args.backends or []) - known
    if unknown:
        raise SystemExit(f"unknown backends {sorted(unknown)}; choose from {sorted(known)}")

    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    report: dict[str, Any] = {
        "machine": machine(),
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
        backends = [b for b in args.backends or available_backends() if b in ATARI_BACKENDS]
        with tqdm(desc="atari", unit="run") as progress:
            report["atari"] = atari_report.run(args, backends, progress, out_dir)
        if args.stalls:
            report["stalls"] = _stalls(args, backends)
    if args.suite in ("process", "all"):
        report["process"] = process_suite(args, out_dir, process_policy_ms)
    json_path = out_dir / "bench.json"
    json_path.write_text(json.dumps(report, indent=2, default=str))
    print(f"results: {json_path}")
    return 0


def _add_process_options(p: argparse.ArgumentParser) -> None:
    """The process suite's and --tune's options."""
    p.add_argument(
        "--workers-envs",
        default=None,
        help="process suite: WORKERSxENVS shapes, e.g. 1x32,2x16,4x8 (default: 1, 2, 4... workers up to the cores"
        " sharing 32 envs; --quick: 1x4,2x2)",
    )
    p.add_argument(
        "--cases",
        nargs="+",
        choices=["cartpole", "cartpole_numpy", "busy_1ms", "simple_spread", "pistonball"],
        default=None,
        help="process suite: envs to step (default: cartpole cartpole_numpy, CartPole with ~0.2 ms of numpy per step; "
        "and the PettingZoo cases simple_spread (mpe2) and pistonball (pymunk), agents as rows, against SuperSuit)",
    )
    p.add_argument(
        "--modes",
        nargs="+",
        choices=["sync", "pool"],
        default=["sync", "pool"],
        help="process suite: sync (every env per batch) and/or pool (half the envs per batch, the first ready)",
    )
    p.add_argument(
        "--tune",
        action="store_true",
        help="with --suite process: torchwm.autotune for --factory (--num-envs, --policy-ms, --process-policy,"
        " --max-workers, --batch-sizes): the table measured and the TorchVectorizedEnv keywords to pass (tune.json)",
    )
    p.add_argument(
        "--factory",
        default="torchwm.benchmarks.process.envs:cartpole",
        help="--tune: the env factory as module:function (the current directory is importable; default: CartPole)",
    )
    p.add_argument("--max-workers", type=int, default=None, help="--tune: most worker processes tried (default: cores)")
    p.add_argument(
        "--batch-sizes",
        type=int,
        nargs="+",
        default=None,
        help="--tune: envs per batch to try (default: all envs, and half of them where pool mode exists)",
    )


def _add_soak_options(p: argparse.ArgumentParser) -> None:
    """--soak and its sizes."""
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


def _add_workload_options(p: argparse.ArgumentParser) -> None:
    """What is measured: the suite, games, env counts, the caller's policy, the sweeps and the backends."""
    p.add_argument(
        "--suite",
        choices=["atari", "process", "all"],
        default="atari",
        help="atari: AtariVectorEnv against its peers; process: TorchVectorizedEnv against PufferLib (where installed)"
        " and gymnasium's (default: atari)",
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
    p.add_argument(
        "--backends",
        nargs="+",
        default=None,
        help="default: every backend installed here (process suite: torchwm pufferlib gym_sync gym_async; also"
        " pufferlib_async, PufferLib's first-ready pool: zero_copy=False, sync_traj=False)",
    )


def _add_timing_options(p: argparse.ArgumentParser) -> None:
    """How long each point is measured, how often, and the caller's simulated policy time per batch."""
    p.add_argument("--seconds", type=float, default=2.0, help="measuring time per point and repeat")
    p.add_argument("--repeats", type=int, default=3, help="atari suite: interleaved repeats; the median is reported")
    p.add_argument(
        "--process-rounds",
        type=int,
        default=3,
        help="process suite and --tune: interleaved rounds (each config gets --seconds / rounds per round); the median"
        " is reported. Process suite: the least; more are added, see --max-process-rounds",
    )
    p.add_argument(
        "--max-process-rounds",
        type=int,
        default=None,
        help="process suite: after --process-rounds, rounds of each backend's best point are added until the ratio of"
        " torchwm's best to each other backend's spreads by less than --ratio-spread, up to this many rounds in all"
        " (default 15; the output says when the cap was hit)",
    )
    p.add_argument(
        "--ratio-spread",
        type=float,
        default=0.10,
        help="process suite: the spread a ratio must get below (the width of its median's 90%% interval over the"
        " rounds, relative to the median; default 0.10)",
    )
    p.add_argument(
        "--policy-ms",
        type=float,
        default=None,
        help="the caller's simulated policy time per batch, ms: atari suite, for the async test (default 1; 0: skip);"
        " process suite and --tune, before every batch's step (default 0)",
    )
    p.add_argument(
        "--process-policy",
        choices=["sleep", "burn"],
        default="sleep",
        help="process suite and --tune: --policy-ms is slept (a GPU forward pass) or burned in a busy loop (a CPU one)",
    )


def _add_output_options(p: argparse.ArgumentParser) -> None:
    """Where the results go, and --quick."""
    p.add_argument("--out", default="bench-results", help="directory for bench.json and the plot")
    p.add_argument(
        "--quick",
        action="store_true",
        help="a short smoke run: atari 8 envs, 1 s per point; process suite 1x4 and 2x2, one round of 0.4 s (no spread)",
    )


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Adds ``bench`` to the ``torchwm`` command's subcommands."""
    p = subparsers.add_parser("bench", help="throughput of torchwm against ale_py, EnvPool and gymnasium, side by side")
    # The order of these calls is the order of the options in --help.
    _add_workload_options(p)
    _add_timing_options(p)
    _add_process_options(p)
    _add_output_options(p)
    _add_soak_options(p)
    p.set_defaults(func=bench)
    return p

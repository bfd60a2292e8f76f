"""The ``torchwm`` command: ``rollout`` (a quick random Atari rollout), ``bench`` (throughput side by side,
or ``--soak``) and ``record`` (a GIF of many envs). One module per subcommand; this one parses."""

from __future__ import annotations

import argparse
import sys

from torchwm.cli.bench import bench
from torchwm.cli.record import add_parser as add_record_parser
from torchwm.cli.rollout import rollout

__all__ = ["build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="torchwm", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("rollout", help="random-action Atari rollout; prints frames/s")
    p.add_argument("--game", default="breakout", help="ROM id, e.g. breakout, pong (default: breakout)")
    p.add_argument("--num-envs", type=int, default=8, help="environments stepped together (default: 8)")
    p.add_argument("--steps", type=int, default=500, help="batched steps to run (default: 500)")
    p.add_argument("--seed", type=int, default=0, help="seed of the first reset (default: 0)")
    p.set_defaults(func=rollout)

    p = sub.add_parser("bench", help="throughput of torchwm against ale_py, EnvPool and gymnasium, side by side")
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

    add_record_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "bench":
        from torchwm.benchmarks.atari_report import SCALING_ENVS, SCALING_GAMES

        scaling = args.scaling
        args.game = args.game or (SCALING_GAMES if scaling else ["breakout"])
        args.num_envs = args.num_envs or (SCALING_ENVS if scaling else [2, 4, 8, 16])
    if getattr(args, "quick", False):
        args.num_envs = [8]
        args.seconds = 1.0
        args.repeats = 1
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())

"""The ``torchwm`` command: ``rollout`` (a quick random Atari rollout), ``bench`` (throughput side by side,
or ``--soak``) and ``record`` (a GIF of many envs). One module per subcommand; this one parses."""

from __future__ import annotations

import argparse
import sys

from torchwm.cli.bench import add_parser as add_bench_parser
from torchwm.cli.record import add_parser as add_record_parser
from torchwm.cli.rollout import add_parser as add_rollout_parser

__all__ = ["build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="torchwm", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    add_rollout_parser(sub)
    add_bench_parser(sub)
    add_record_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "bench":
        args.num_envs_given = args.num_envs  # --tune's, before the Atari suite's defaults below
        from torchwm.benchmarks.atari.report import SCALING_ENVS, SCALING_GAMES

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

"""``torchwm record``: plays a game in a vector env and writes every step's frames as one grid image."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from torchwm.recording import record

__all__ = ["add_parser", "main", "run"]


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Adds ``record`` to the ``torchwm`` command's subcommands."""
    parser = subparsers.add_parser(
        "record",
        help="record many Atari envs playing (random actions) as a GIF or PNG grid",
        description=__doc__,
    )
    parser.add_argument("--game", default="pong", help="ROM id, e.g. pong, breakout (default: pong)")
    parser.add_argument(
        "--num-envs",
        type=int,
        default=16,
        help="envs side by side in the grid (default: 16)",
    )
    parser.add_argument("--steps", type=int, default=500, help="env steps to record (default: 500)")
    parser.add_argument("--out", default=None, help="output .gif or .png (default: <game>.gif)")
    parser.add_argument(
        "--seed",
        type=int,
        default=0,
        help="seed of the envs and the random actions (default: 0)",
    )
    parser.add_argument("--frameskip", type=int, default=4, help="emulator frames per step (default: 4)")
    parser.add_argument("--cols", type=int, default=None, help="grid columns (default: a square grid)")
    parser.add_argument(
        "--scale",
        type=float,
        default=None,
        help="frame size factor (default: grid <= 480 px wide)",
    )
    parser.add_argument("--fps", type=float, default=15.0, help="GIF frames per second (default: 15)")
    parser.set_defaults(func=run)
    return parser


def run(args: argparse.Namespace) -> int:
    """The ``record`` subcommand: random play of ``--num-envs`` envs of ``--game``, written to ``--out``."""
    from torchwm.atari import AtariVectorEnv

    out = args.out or f"{args.game}.gif"
    envs = AtariVectorEnv(args.game, args.num_envs, frameskip=args.frameskip, render_mode="rgb_array")
    try:
        summary = record(
            envs,
            out,
            args.steps,
            seed=args.seed,
            progress=True,
            cols=args.cols,
            scale=args.scale,
            fps=args.fps,
        )
    finally:
        envs.close()
    size = Path(out).stat().st_size if summary["format"] == "gif" else None
    print(
        f"wrote {summary['images']} {summary['width']}x{summary['height']} images to {summary['path']}"
        + (f" ({size / 1e6:.2f} MB)" if size is not None else "")
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    """``python -m torchwm.cli.record ...``: the ``record`` subcommand on its own."""
    parser = argparse.ArgumentParser(prog="torchwm")
    add_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["record", *(sys.argv[1:] if argv is None else argv)])
    return int(args.func(args))


if __name__ == "__main__":
    raise SystemExit(main())

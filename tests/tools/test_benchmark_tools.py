"""The A/B and batch-stall tools run end to end (their numbers are for docs/performance.md, not asserted)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import numpy as np
import pytest

import torchwm
from torchwm.benchmarks.atari import stalls as batch_stalls
from torchwm.benchmarks.core.policies import CpuMlp, make_policy

PACKAGE_ROOT = str(Path(torchwm.__file__).resolve().parent.parent)
# The A/B tool is a developer's script (scripts/build_ab.py), not part of the package.
_spec = importlib.util.spec_from_file_location(
    "build_ab", Path(__file__).resolve().parents[2] / "scripts" / "build_ab.py"
)
assert _spec is not None and _spec.loader is not None
build_ab = importlib.util.module_from_spec(_spec)
sys.modules["build_ab"] = build_ab  # its dataclasses look their module up there
_spec.loader.exec_module(build_ab)


def test_build_ab_compares_a_build_with_itself():
    case = build_ab.Case(num_envs=2, num_threads=1, batch_size=0)
    rows = build_ab.run(PACKAGE_ROOT, PACKAGE_ROOT, [case], "pong", seconds=0.2, rounds=1)
    assert [row["case"] for row in rows] == [case.label]
    assert rows[0]["a_steps_per_s"] > 0 and rows[0]["b_steps_per_s"] > 0
    assert rows[0]["ratio"] > 0
    assert f"| {case.label} |" in build_ab.markdown(rows)


def test_batch_stalls_splits_batches_by_reset():
    result = batch_stalls.measure("pong", num_envs=2, batch_size=2, seconds=0.3)
    assert result.batches > 0 and result.steps_per_s > 0
    assert 0.0 <= result.share_with_reset <= 1.0
    assert (result.ms_with_reset is None) == (result.share_with_reset == 0.0)
    assert result.ms_without_reset is not None


def test_batch_stalls_with_every_policy_and_ale_py_side_by_side():
    """Short episodes, so that batches with resets occur; each policy kind that runs here."""
    for policy in ("none", "sleep", "cpu"):
        for backend in ("torchwm", "ale_py"):
            result = batch_stalls.measure("pong", 4, 4, 0.3, backend=backend, policy=policy, policy_ms=0.5)
            assert result.backend == backend and result.batches > 0, (backend, policy)
    row = batch_stalls._median([result, result])
    assert row["rounds"] == 2 and row["steps_per_s"] == result.steps_per_s


def test_cpu_policy_runs_its_network_on_observations_of_any_shape():
    policy = CpuMlp()
    for shape in [(3, 4, 84, 84), (2, 210, 160, 3)]:
        policy(np.zeros(shape, dtype=np.uint8))
    assert make_policy("none") is None
    with pytest.raises(ValueError, match="policy must be one of"):
        make_policy("tpu")


def test_bench_scaling_writes_json_plot_and_efficiency(tmp_path, capsys):
    from torchwm import cli

    argv = ["bench", "--scaling", "--num-envs", "2", "--game", "pong", "--seconds", "0.1", "--repeats", "1"]
    assert cli.main([*argv, "--backends", "torchwm", "ale_py", "--out", str(tmp_path)]) == 0
    report = json.loads((tmp_path / "bench.json").read_text())
    rows = report["atari"]["results"]
    # 2 modes x 3 policies x 2 backends, each with its speed-up against torchwm at the same point.
    assert len(rows) == 12
    assert {(r["mode"], r["policy"]) for r in rows} == {
        (mode, policy) for mode in ("sync", "async1") for policy in ("no policy", "sleep 1 ms", "CPU MLP")
    }
    assert all(r["torchwm_x"] for r in rows if r["backend"] == "ale_py")
    assert "frames/s =" in capsys.readouterr().out
    assert (tmp_path / "atari_scaling.png").stat().st_size > 0


def test_every_cli_option_has_help_and_the_top_help_names_every_subcommand(capsys):
    import argparse

    from torchwm.cli import build_parser

    parser = build_parser()
    missing, subcommands = [], []

    def walk(parser: argparse.ArgumentParser, path: str) -> None:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    subcommands.append(name)
                    walk(sub, f"{path} {name}")
            elif not isinstance(action, argparse._HelpAction) and not action.help:
                missing.append(f"{path} {'/'.join(action.option_strings) or action.dest}")

    walk(parser, "torchwm")
    assert not missing, f"options without help text: {missing}"
    with pytest.raises(SystemExit):
        parser.parse_args(["--help"])
    top_help = capsys.readouterr().out
    assert subcommands and all(name in top_help for name in subcommands)

"""The A/B and batch-stall tools run end to end (their numbers are for docs/performance.md, not asserted)."""

from __future__ import annotations

from pathlib import Path

import torchwm
from torchwm.benchmarks import batch_stalls, build_ab

PACKAGE_ROOT = str(Path(torchwm.__file__).resolve().parent.parent)


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

"""The process bench's arithmetic, on made-up numbers: spreads over rounds, the rule that adds rounds
until the ratios settle, and what a batch costs in wall and CPU time."""

from __future__ import annotations

import os
import time
from math import comb

import pytest

from torchwm.benchmarks.core import cpu_time
from torchwm.benchmarks.core.batch_cost import BatchCost, net_of_envs
from torchwm.benchmarks.core.cpu_time import CpuSnapshot
from torchwm.benchmarks.core.round_spread import median_interval, paired_ratios, ratio_spread, settled
from torchwm.benchmarks.core.rounds import measure_adaptively
from torchwm.benchmarks.process import bench as process_bench
from torchwm.benchmarks.process import overhead as process_overhead
from torchwm.benchmarks.process import report as process_report
from torchwm.benchmarks.process.rounds import Config, Measured
from torchwm.benchmarks.process.rows import table_rows
from torchwm.benchmarks.process.sampling import Sample
from torchwm.benchmarks.process.shapes import Shape
from torchwm.benchmarks.process.summary import summarize, unsettled


def _coverage(n: int, k: int) -> float:
    """P(the k-th smallest and k-th largest of n values bracket the median)."""
    return 1 - 2 * sum(comb(n, i) for i in range(k)) / 2**n


def test_median_interval_is_min_max_for_few_rounds_then_narrows_at_90_percent_coverage():
    assert median_interval([3.0, 1.0, 2.0]) == (1.0, 3.0)
    assert median_interval([5.0, 1.0, 4.0, 2.0, 3.0]) == (1.0, 5.0)
    values = [float(v) for v in range(1, 11)]  # n = 10: the 2nd and 9th
    assert median_interval(values) == (2.0, 9.0)
    assert median_interval([float(v) for v in range(1, 21)]) == (6.0, 15.0)
    for n in range(5, 40):  # the rank chosen keeps >= 90% and the next would not
        low, _ = median_interval([float(v) for v in range(1, n + 1)])
        k = int(low)
        assert _coverage(n, k) >= 0.9 and _coverage(n, k + 1) < 0.9, n
    with pytest.raises(ValueError):
        median_interval([])


def test_ratio_spread_pairs_rounds_and_says_when_it_is_settled():
    assert paired_ratios([2.0, None, 3.0, 4.0], [1.0, 1.0, None, 0.0]) == [2.0]
    assert ratio_spread([]) is None
    one = ratio_spread([1.5])
    assert one is not None and one.spread is None and not settled(one, 0.1)
    wide = ratio_spread([1.0, 1.2, 1.1])
    assert wide is not None and wide.median == 1.1 and wide.spread == pytest.approx(0.2 / 1.1)
    assert (wide.min, wide.max, wide.rounds) == (1.0, 1.2, 3) and not settled(wide, 0.1)
    tight = ratio_spread([1.0, 1.04, 1.02])
    assert tight is not None and settled(tight, 0.1) and not settled(tight, 0.03)
    # An outlier round widens min..max for good, but no longer the median's interval once there are enough.
    rounds = [1.0, 1.01, 1.02, 1.03, 1.04, 1.05, 1.06, 1.07, 1.08, 1.5]
    spread = ratio_spread(rounds)
    assert spread is not None and spread.max == 1.5 and spread.high == 1.08 and settled(spread, 0.1)


def test_adaptive_rounds_stop_when_nothing_is_pending_or_at_the_cap():
    results = [Measured(Config("c", "torchwm", Shape(1, 2, 2)))]
    measured: list[tuple[int, int]] = []

    def measure(chosen, index):
        measured.append((index, len(chosen)))

    def pending_until(rounds_needed):
        return lambda done, count: [] if count >= rounds_needed else done[:1]

    assert measure_adaptively(results, measure, 3, 10, pending_until(5)) == 5
    assert measured == [(0, 1), (1, 1), (2, 1), (3, 1), (4, 1)]
    measured.clear()
    assert measure_adaptively(results, measure, 3, 4, pending_until(99)) == 4  # the cap
    assert measure_adaptively(results, measure, 3, 10, pending_until(0)) == 3  # at least the least
    assert measure_adaptively(results, measure, 0, 1, pending_until(99)) == 1  # at least one round


def _sample(rate, wall=10.0, parent=4.0, workers=6.0):
    return Sample(rate, BatchCost(wall, parent, workers))


def _measured(backend, shape, rates, cpu=None):
    """A config's samples at the given rounds: ``rates`` maps round -> rate."""
    cpu = cpu or {}
    return Measured(Config("cartpole", backend, shape), {i: _sample(r, **cpu) for i, r in rates.items()})


def test_rows_carry_the_spread_the_rounds_and_the_median_cost_per_batch():
    ours = _measured("torchwm", Shape(2, 2, 4), {0: 100.0, 1: 120.0, 2: 110.0})
    ours.samples[2] = _sample(110.0, wall=30.0, parent=2.0, workers=9.0)
    sync = _measured("gym_sync", Shape(1, 4, 4), {0: 50.0, 2: 55.0}, {"workers": None})
    rows = table_rows([ours, sync], 4)
    assert rows[0]["rounds"] == [100, 120, 110, None]
    assert (rows[0]["steps_per_s"], rows[0]["min_steps_per_s"], rows[0]["max_steps_per_s"]) == (110, 100, 120)
    assert (rows[0]["wall_us"], rows[0]["parent_cpu_us"], rows[0]["workers_cpu_us"]) == (10.0, 4.0, 6.0)
    assert rows[1]["rounds"] == [50, None, 55, None] and rows[1]["workers_cpu_us"] is None
    ratio = summarize(rows)["cartpole"]["torchwm_best_ratio"]["gym_sync"]
    assert ratio["rounds"] == 2 and ratio["median"] == pytest.approx(2.0)  # rounds 0 and 2 pair


def test_unsettled_ratios_name_the_points_that_need_more_rounds():
    ours = _measured("torchwm", Shape(2, 2, 4), {0: 100.0, 1: 100.0, 2: 100.0})
    slower = _measured("torchwm", Shape(1, 4, 4), {0: 50.0, 1: 50.0, 2: 50.0})
    steady = _measured("gym_sync", Shape(1, 4, 4), {0: 50.0, 1: 51.0, 2: 50.5})
    noisy = _measured("gym_async", Shape(4, 1, 4), {0: 20.0, 1: 40.0, 2: 30.0})
    results = [ours, slower, steady, noisy]
    summary = summarize(table_rows(results, 3))
    assert unsettled(summary, 0.1) == [("cartpole", "gym_async")]
    assert unsettled(summary, 0.001) == [("cartpole", "gym_sync"), ("cartpole", "gym_async")]
    chosen = process_bench.contenders(results, summary, unsettled(summary, 0.1))
    assert chosen == [ours, noisy]  # torchwm's best and the unsettled peer's best, not the rest
    single = summarize(table_rows([_measured("torchwm", Shape(2, 2, 4), {0: 9.0}), noisy], 3))
    assert unsettled(single, 0.5) == [("cartpole", "gym_async")]  # one shared round: not measured


def test_report_says_whether_the_rounds_settled_or_hit_the_cap():
    rounds = {"run": 15, "least": 3, "most": 15, "ratio_spread": 0.1, "cap_hit": True}
    lines = process_report.rounds_lines({"rounds": {**rounds, "unsettled": ["cartpole: torchwm / gym_async"]}})
    assert "CAP HIT" in lines[0] and lines[1].strip() == "cartpole: torchwm / gym_async"
    settled_lines = process_report.rounds_lines({"rounds": {**rounds, "run": 6, "cap_hit": False, "unsettled": []}})
    assert "CAP HIT" not in settled_lines[0] and "less than 10%" in settled_lines[0]
    quick = process_report.rounds_lines({"rounds": {**rounds, "run": 1, "most": 1, "least": 1, "unsettled": ["x"]}})
    assert quick == ["rounds: 1 (at least 1, at most 1): spreads not measured"]


def test_batch_cost_per_batch_arithmetic():
    before = CpuSnapshot(wall_s=10.0, parent_cpu_s=2.0, workers_cpu_s=5.0)
    after = CpuSnapshot(wall_s=10.5, parent_cpu_s=2.3, workers_cpu_s=5.4)
    cost = BatchCost.between(before, after, 1000, caller_cpu_s=0.1)
    assert cost.wall_us == pytest.approx(500.0)
    assert cost.parent_cpu_us == pytest.approx(200.0)  # the caller's policy CPU left out
    assert cost.workers_cpu_us == pytest.approx(400.0)
    no_workers = BatchCost.between(before, CpuSnapshot(10.5, 2.3, None), 1000)
    assert no_workers.workers_cpu_us is None and no_workers.parent_cpu_us == pytest.approx(300.0)
    with pytest.raises(ValueError, match="positive"):
        BatchCost.between(before, after, 0)
    assert net_of_envs(71.0, 16, 0.25) == pytest.approx(67.0)


def test_overhead_row_checks_parent_and_each_worker_beyond_its_envs():
    costs = [BatchCost(100.0, 46.0, 140.0), BatchCost(120.0, 50.0, 150.0), BatchCost(90.0, 40.0, 130.0)]
    row = process_overhead.overhead_row(costs, 2, 16, [0.25, 0.25, 0.25])
    assert (row["wall_us"], row["parent_cpu_us"], row["worker_cpu_us"]) == (100.0, 46.0, 70.0)
    assert row["worker_cpu_us_range"] == [65.0, 75.0] and row["env_cpu_us_per_worker"] == 4.0
    assert row["worker_overhead_cpu_us"] == 66.0 and row["parent_target_met"] and row["worker_target_met"]
    heavy_parent = process_overhead.overhead_row([BatchCost(300.0, 150.0, 20.0)], 2, 16, [0.25])
    assert not heavy_parent["parent_target_met"] and heavy_parent["worker_target_met"]
    text = process_overhead.verdict({**heavy_parent, "env": "noop"})
    assert "parent 150 us (NOT met)" in text and "(met)" in text
    polling = process_overhead.overhead_row([BatchCost(300.0, 50.0, 2 * (4.0 + 101.0))], 2, 16, [0.25])
    assert polling["worker_overhead_cpu_us"] == 101.0 and not polling["worker_target_met"]
    # Each span against the env's cost measured next to it: 70 - 16 x 1 and 60 - 16 x 0.5, median 53.
    paired = process_overhead.overhead_row([BatchCost(1, 1, 140.0), BatchCost(1, 1, 120.0)], 2, 16, [1.0, 0.5])
    assert paired["worker_overhead_cpu_us"] == 53.0
    # Pool mode: the workers' CPU over the workers a batch steps, here one of two (140 - 16 x 0.25).
    pool = process_overhead.overhead_row([BatchCost(1, 1, 140.0)], 2, 16, [0.25], pool=1)
    assert pool["shape"] == "2x16 pool1" and pool["worker_overhead_cpu_us"] == 136.0


def test_cpu_readings_come_from_one_function():
    assert cpu_time.cpu_source() in ("/proc", "psutil", None)
    if cpu_time.cpu_source() is None:
        pytest.skip("no /proc and no psutil here")
    start = time.process_time()
    end = time.process_time() + 0.05
    while time.process_time() < end:  # burn some CPU so that the reading moves past a clock tick
        pass
    mine = cpu_time.pid_cpu_seconds(os.getpid())
    assert mine is not None and mine >= start - 0.02
    assert CpuSnapshot.take([]).workers_cpu_s is None
    assert CpuSnapshot.take([os.getpid()], clocks_first=True).workers_cpu_s is not None


def test_transport_cost_compares_each_pair_and_keeps_the_ratios_range():
    from torchwm.benchmarks.process import transport_cost

    def row(wall, parent, worker):
        return {"wall_us": wall, "parent_cpu_us": parent, "worker_cpu_us": worker}

    pairs = [
        (row(100, 50, 60), row(200, 50, 90)),
        (row(120, 40, 60), row(180, 60, 60)),
        (row(90, 50, 50), row(270, 45, 75)),
    ]
    summary = transport_cost.compare(pairs)
    assert summary["wall_us"] == {"linux": 100, "portable": 200, "portable_over_linux": 2.0, "ratio_range": [1.5, 3.0]}
    assert summary["parent_cpu_us"]["portable_over_linux"] == 1.0
    assert summary["parent_cpu_us"]["ratio_range"] == [0.9, 1.5]
    assert summary["worker_cpu_us"]["ratio_range"] == [1.0, 1.5]
    text = transport_cost.line({"env": "noop", "shape": "2x16", **summary})
    assert "wall_us 100 -> 200 (2.00x, 1.50..3.00)" in text

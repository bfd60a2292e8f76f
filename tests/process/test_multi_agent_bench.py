"""The multi-agent bench (torchwm.benchmarks.multi_agent): the grid every backend runs, each judged at
its best configuration, the ratio's spread over rounds, the env's bounds and the final."""

from __future__ import annotations

import pytest

from torchwm import _platform
from torchwm.benchmarks.multi_agent import cases, env_alone, final, grid, report, steppers


def test_every_backend_runs_the_same_grid(monkeypatch):
    monkeypatch.setattr(_platform, "usable_cores", lambda: 2)
    assert cases.configs("pistonball") == [(1, 1), (1, 2), (2, 1), (2, 2), (4, 1), (4, 2)]
    assert cases.configs("simple_spread") == [(1, 4), (1, 16), (2, 4), (2, 16), (4, 4), (4, 16)]


def _runs(rates_by_config):
    return {config: [(rate, 1.0) for rate in rates] for config, rates in rates_by_config.items()}


def test_each_backend_at_its_best_configuration_with_the_ratio_per_round(monkeypatch):
    monkeypatch.setattr(_platform, "usable_cores", lambda: 2)
    runs = {
        "torchwm": _runs({"2x1": [100.0, 120.0, 110.0], "2x2": [130.0, 150.0, 140.0]}),
        "supersuit": _runs({"1x1": [100.0, 50.0, 100.0], "2x2": [90.0, 95.0, 110.0]}),
        "pufferlib": {},
        env_alone.ALONE: _runs({"2x2": [150.0, 160.0, 170.0]}),
    }
    row = grid._case_row("pistonball", runs, {"pufferlib": "not here"}, [2.0, 1.0, 3.0], None)
    assert row["backends"]["torchwm"]["workers_envs"] == "2x2"
    assert row["backends"]["supersuit"]["workers_envs"] == "1x1"
    assert row["backends"]["pufferlib"] == {"skipped": "not here"}
    assert row["ratio_vs_best_other"] == pytest.approx(1.4)
    assert row["ratio_rounds"] == pytest.approx([1.3, 3.0, 1.4])
    assert row["target_met"]
    assert row["env_ms_per_row"] == 2.0
    assert row["ceiling_rows_per_s"] == pytest.approx(1000.0)  # 2 cores / 2 ms
    assert row["ceiling_vs_best_other"] == pytest.approx(10.0)
    assert row["cpu_bound_vs_best_other"] == pytest.approx(0.5)  # its 1 ms of CPU per row / the env's 2
    assert row["alone_vs_best_other"] == pytest.approx(1.6)  # the envs alone, 160 rows/s, over its 100
    lines = report.summary_lines({"target": grid.TARGET, "rows": [row]})
    assert "1.40x (rounds 1.30..3.00), target 1.3x met" in lines[-1]


def test_pool_mode_for_the_backends_that_have_one_half_the_workers_and_one_worker_per_batch():
    assert grid._backend_modes(1, grid=True) == [(b, 0) for b in steppers.MA_BACKENDS]
    assert grid._backend_modes(2, grid=True)[3:] == [("torchwm", 1), ("pufferlib", 1)]
    assert grid._backend_modes(2, grid=False) == grid._backend_modes(1, True)
    assert grid._backend_modes(3, grid=True)[3:] == [("torchwm", 1), ("pufferlib", 1)]  # no half of 3
    assert grid._backend_modes(4, grid=True)[3:] == [
        ("torchwm", 2),
        ("pufferlib", 2),
        ("torchwm", 1),
        ("pufferlib", 1),
    ]
    assert [cases.config_name(4, 2, p) for p in (0, 2, 1)] == ["4x2", "4x2 pool", "4x2 pool1"]
    assert cases.config_name(2, 2, 1) == "2x2 pool"  # one worker is half of two
    for workers, pool in ((4, 0), (4, 2), (4, 1), (2, 1), (6, 3), (6, 1)):
        assert final.parse_config(cases.config_name(workers, 2, pool)) == (workers, 2, pool)
    with pytest.raises(ValueError, match="pool mode"):
        steppers.Stepper("supersuit", cases.simple_spread, 2, 2, pool=1)
    with pytest.raises(ValueError, match="pool mode"):
        steppers.Stepper("torchwm", cases.simple_spread, 4, 2, pool=3)


def test_the_grid_names_each_pool_batch(monkeypatch):
    monkeypatch.setattr(_platform, "usable_cores", lambda: 2)
    row = grid._case_row("pistonball", {}, {}, [], None)
    assert row["configs"][4:] == ["2x2", "2x2 pool", "4x1", "4x1 pool", "4x1 pool1", "4x2", "4x2 pool", "4x2 pool1"]


def test_torchwm_best_in_pool_mode_is_reported_with_its_best_in_sync_mode(monkeypatch):
    monkeypatch.setattr(_platform, "usable_cores", lambda: 2)
    runs = {
        "torchwm": _runs({"2x2": [110.0, 120.0, 130.0], "2x2 pool": [150.0, 160.0, 140.0]}),
        "supersuit": _runs({"2x2": [100.0, 100.0, 100.0]}),
        "pufferlib": {},
        env_alone.ALONE: _runs({"2x2": [170.0, 170.0, 170.0]}),
    }
    row = grid._case_row("pistonball", runs, {"pufferlib": "not here"}, [2.0], None)
    assert "2x2 pool" in row["configs"] and "1x1 pool" not in row["configs"]
    assert row["backends"]["torchwm"]["workers_envs"] == "2x2 pool"
    assert row["ratio_vs_best_other"] == pytest.approx(1.5)
    assert row["torchwm_sync"]["workers_envs"] == "2x2"
    assert row["sync_ratio_vs_best_other"] == pytest.approx(1.2)
    lines = report.summary_lines({"target": grid.TARGET, "rows": [row]})
    assert any(line.strip().startswith("torchwm in sync mode:") and "1.20x the best other" in line for line in lines)


def test_a_missing_case_is_skipped_with_the_reason():
    row = grid._case_row("pistonball", {}, {}, [], "not installed here: pymunk")
    assert report.summary_lines({"target": grid.TARGET, "rows": [row]}) == [
        "multi-agent pistonball: skipped (not installed here: pymunk)"
    ]


def test_torchwm_and_supersuit_step_the_case_and_the_env_alone_is_timed():
    pytest.importorskip("mpe2")
    pytest.importorskip("supersuit")
    assert env_alone.env_ms_per_row(cases.simple_spread, 0.05) > 0
    assert env_alone.alone_rate(cases.simple_spread, 2, 2, 0.1) > 0
    for backend, pool in (("torchwm", 0), ("supersuit", 0), ("torchwm", 1)):
        rate, cpu_ms = steppers.measure(backend, "simple_spread", 2, 2, 0.1, pool)
        assert rate > 0
        assert cpu_ms is None or cpu_ms > 0


def test_the_final_measures_the_two_best_in_adjacent_pairs_of_alternating_order():
    best = {
        "torchwm": {"workers_envs": "2x2 pool", "median": 150.0},
        "supersuit": {"workers_envs": "2x2", "median": 100.0},
        "pufferlib": {"workers_envs": "4x2 pool", "median": 90.0},
    }
    calls = []
    rates = iter([130.0, 100.0, 100.0, 140.0, 150.0, 100.0, 100.0, 120.0])

    def measure(backend, workers, envs, pool):
        calls.append((backend, workers, envs, pool))
        return next(rates)

    result = final.run_final(best, measure, target=1.3, spread_target=0.1, least=4, most=4)
    assert calls[:4] == [
        ("torchwm", 2, 2, True),
        ("supersuit", 2, 2, False),
        ("supersuit", 2, 2, False),
        ("torchwm", 2, 2, True),
    ]
    assert result["pairs"] == [[130.0, 100.0], [140.0, 100.0], [150.0, 100.0], [120.0, 100.0]]
    assert result["ratio"] == pytest.approx(1.35)
    assert (result["low"], result["high"]) == (pytest.approx(1.2), pytest.approx(1.5))
    assert result["target_met"] and result["other"] == "supersuit" and result["other_workers_envs"] == "2x2"
    line = final.final_line(result, 1.3)
    assert "4 adjacent pairs: torchwm 2x2 pool / supersuit 2x2 1.35x (interval 1.20..1.50" in line
    assert line.endswith("target 1.3x met")


def test_the_final_adds_pairs_until_the_ratio_settles_and_stops_at_most():
    best = {"torchwm": {"workers_envs": "2x2", "median": 2.0}, "supersuit": {"workers_envs": "1x1", "median": 1.0}}
    steady = final.run_final(best, lambda b, w, e, p: 2.0 if b == "torchwm" else 1.0, 1.3, 0.1, least=3, most=10)
    assert len(steady["pairs"]) == 3 and steady["spread"] == 0.0
    noisy = iter([1.0, 2.0] * 50)
    wild = final.run_final(best, lambda b, w, e, p: next(noisy), 1.3, 0.1, least=3, most=7)
    assert len(wild["pairs"]) == 7  # never settles (ratios 0.5 and 2): stops at most
    assert final.run_final({"torchwm": {"skipped": "x"}, "supersuit": best["supersuit"]}, None, 1.3, 0.1) is None
    with pytest.raises(ValueError, match="WORKERSxENVS"):
        final.parse_config("2x2 async")
    with pytest.raises(ValueError, match="WORKERSxENVS"):
        final.parse_config("2x2 poolx")


def test_the_final_judges_the_target_in_the_summary(monkeypatch):
    monkeypatch.setattr(_platform, "usable_cores", lambda: 2)
    runs = {
        "torchwm": _runs({"2x2 pool": [150.0, 160.0, 140.0]}),
        "supersuit": _runs({"2x2": [100.0, 100.0, 100.0]}),
        "pufferlib": {},
        env_alone.ALONE: _runs({"2x2": [170.0, 170.0, 170.0]}),
    }
    row = grid._case_row("pistonball", runs, {"pufferlib": "not here"}, [2.0], None)
    assert row["target_met"]  # 1.5x over the grid's rounds
    monkeypatch.setattr(steppers, "measure", lambda b, case, w, e, s, pool: (120.0 if b == "torchwm" else 100.0, None))
    grid._add_final(row, "pistonball", 0.1, 0.1)
    assert row["final"]["ratio"] == pytest.approx(1.2) and len(row["final"]["pairs"]) == 8
    assert not row["target_met"]
    lines = report.summary_lines({"target": grid.TARGET, "rows": [row]})
    assert "target" not in lines[-2]  # the grid's line no longer judges
    assert "torchwm 2x2 pool / supersuit 2x2 1.20x" in lines[-1] and lines[-1].endswith("target 1.3x not met")

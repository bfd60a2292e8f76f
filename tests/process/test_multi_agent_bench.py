"""The multi-agent bench (torchwm.benchmarks.process_multi_agent): the grid every backend runs, each
judged at its best configuration, the ratio's spread over rounds and the env's bounds."""

from __future__ import annotations

import pytest

from torchwm.benchmarks import process_multi_agent as bench


def test_every_backend_runs_the_same_grid(monkeypatch):
    monkeypatch.setattr(bench, "cores", lambda: 2)
    assert bench.configs("pistonball") == [(1, 1), (1, 2), (2, 1), (2, 2), (4, 1), (4, 2)]
    assert bench.configs("simple_spread") == [(1, 4), (1, 16), (2, 4), (2, 16), (4, 4), (4, 16)]


def _runs(rates_by_config):
    return {config: [(rate, 1.0) for rate in rates] for config, rates in rates_by_config.items()}


def test_each_backend_at_its_best_configuration_with_the_ratio_per_round(monkeypatch):
    monkeypatch.setattr(bench, "cores", lambda: 2)
    runs = {
        "torchwm": _runs({"2x1": [100.0, 120.0, 110.0], "2x2": [130.0, 150.0, 140.0]}),
        "supersuit": _runs({"1x1": [100.0, 50.0, 100.0], "2x2": [90.0, 95.0, 110.0]}),
        "pufferlib": {},
        bench.ALONE: _runs({"2x2": [150.0, 160.0, 170.0]}),
    }
    row = bench._case_row("pistonball", runs, {"pufferlib": "not here"}, [2.0, 1.0, 3.0], None)
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
    lines = bench.summary_lines({"target": bench.TARGET, "rows": [row]})
    assert "1.40x (rounds 1.30..3.00), target 1.3x met" in lines[-1]


def test_pool_mode_for_the_backends_that_have_one_with_an_even_number_of_workers():
    assert bench._backend_modes(1, grid=True) == [(b, False) for b in bench.MA_BACKENDS]
    assert bench._backend_modes(2, grid=True)[-2:] == [("torchwm", True), ("pufferlib", True)]
    assert bench._backend_modes(3, grid=True) == bench._backend_modes(2, grid=False) == bench._backend_modes(1, True)
    assert bench.config_name(4, 2, pool=True) == "4x2 pool"
    with pytest.raises(ValueError, match="pool mode"):
        bench._Stepper("supersuit", bench.simple_spread, 2, 2, pool=True)


def test_torchwm_best_in_pool_mode_is_reported_with_its_best_in_sync_mode(monkeypatch):
    monkeypatch.setattr(bench, "cores", lambda: 2)
    runs = {
        "torchwm": _runs({"2x2": [110.0, 120.0, 130.0], "2x2 pool": [150.0, 160.0, 140.0]}),
        "supersuit": _runs({"2x2": [100.0, 100.0, 100.0]}),
        "pufferlib": {},
        bench.ALONE: _runs({"2x2": [170.0, 170.0, 170.0]}),
    }
    row = bench._case_row("pistonball", runs, {"pufferlib": "not here"}, [2.0], None)
    assert "2x2 pool" in row["configs"] and "1x1 pool" not in row["configs"]
    assert row["backends"]["torchwm"]["workers_envs"] == "2x2 pool"
    assert row["ratio_vs_best_other"] == pytest.approx(1.5)
    assert row["torchwm_sync"]["workers_envs"] == "2x2"
    assert row["sync_ratio_vs_best_other"] == pytest.approx(1.2)
    lines = bench.summary_lines({"target": bench.TARGET, "rows": [row]})
    assert any(line.strip().startswith("torchwm in sync mode:") and "1.20x the best other" in line for line in lines)


def test_a_missing_case_is_skipped_with_the_reason():
    row = bench._case_row("pistonball", {}, {}, [], "not installed here: pymunk")
    assert bench.summary_lines({"target": bench.TARGET, "rows": [row]}) == [
        "multi-agent pistonball: skipped (not installed here: pymunk)"
    ]


def test_torchwm_and_supersuit_step_the_case_and_the_env_alone_is_timed():
    pytest.importorskip("mpe2")
    pytest.importorskip("supersuit")
    assert bench.env_ms_per_row(bench.simple_spread, 0.05) > 0
    assert bench.alone_rate(bench.simple_spread, 2, 2, 0.1) > 0
    for backend, pool in (("torchwm", False), ("supersuit", False), ("torchwm", True)):
        rate, cpu_ms = bench._measure(backend, "simple_spread", 2, 2, 0.1, pool)
        assert rate > 0
        assert cpu_ms is None or cpu_ms > 0


def test_the_cost_breakdown_measures_the_env_inside_the_workers():
    pytest.importorskip("mpe2")
    from torchwm.benchmarks import multi_agent_costs

    spread = multi_agent_costs.step_spread("simple_spread", steps=50, workers=2)
    assert spread["mean_ms"] > 0 and spread["std_ms"] >= 0
    assert spread["barrier"] >= 1.0  # the slower of two steps is never faster than one on average
    for pool in (False, True):
        measured = multi_agent_costs.time_in_env("simple_spread", 2, 2, pool, seconds=0.3)
        assert measured["rows_per_s"] > 0
        assert 0.0 < measured["share_in_env_step"] <= 1.0

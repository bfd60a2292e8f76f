"""The diagnostics kept out of the wheel (``benches/python/``, run from a checkout) still run: each script
as a user runs it, with tiny sizes, and the pieces the docs quote (their numbers are not asserted).
``ray_bench`` runs with the Ray tests (tests/ray_backend/test_ray_bench.py), in Ray's own venv."""

from __future__ import annotations

import dataclasses
import os

import pytest

from bench_scripts import load_script, run_script


def test_reset_cost_times_resets_of_both_backends():
    reset_cost = load_script("reset_cost")
    for backend in ("torchwm", "ale_py"):
        micros, frames = reset_cost.measure(backend, "pong", resets=3)
        assert micros > 0 and frames >= 0, backend
    out = run_script("reset_cost", "--games", "pong", "--resets", "2", "--rounds", "1")
    assert "| pong | torchwm |" in out and "| pong | ale_py |" in out


def test_mixed_pool_compares_a_pool_with_its_games_alone():
    out = run_script(
        "mixed_pool", "--games", "pong", "breakout", "--num-envs", "2", "--seconds", "0.2", "--rounds", "1"
    )
    for row in ("| pong alone |", "| breakout alone |", "| pool of pong, breakout |", "pool / harmonic mean"):
        assert row in out, row


def test_learner_interplay_times_rollouts_and_updates_next_to_each_backend():
    pytest.importorskip("torch")
    times = load_script("learner_interplay").run(["torchwm", "ale_py"], rounds=2, num_envs=2, steps=2)
    assert all(len(t["rollout"]) == 2 and min(t["update"]) > 0 for t in times.values())
    out = run_script("learner_interplay", "--rounds", "1", "--backends", "torchwm")
    assert "torchwm  rollout  median" in out and "torchwm  update   median" in out


def test_the_cost_breakdown_measures_the_env_inside_the_workers():
    pytest.importorskip("mpe2")
    multi_agent_costs = load_script("multi_agent_costs")

    spread = multi_agent_costs.step_spread("simple_spread", steps=50, workers=2)
    assert spread["mean_ms"] > 0 and spread["std_ms"] >= 0
    assert spread["barrier"] >= 1.0  # the slower of two steps is never faster than one on average
    for pool, copy in ((0, True), (1, True), (1, False)):
        measured = multi_agent_costs.time_in_env("simple_spread", 2, 2, pool, seconds=0.3, copy=copy)
        assert measured.rows_per_s > 0
        assert 0.0 < measured.share_in_env_step <= 1.0
        assert measured.caller_cpu_ms_per_row > 0 and measured.env_step_cpu_ms_per_row > 0
        # /proc counts in clock ticks: over 0.3 s the workers' CPU time is coarse, the env's (a thread
        # clock) is not, so the two are only compared in the line below, never to each other here.
        assert measured.workers_cpu_ms_per_row is not None and measured.workers_cpu_ms_per_row > 0
        assert measured.cores_busy is not None and 0.0 < measured.cores_busy <= os.cpu_count() + 0.5
        line = measured.line("2x2")
        assert line.startswith("torchwm 2x2: ") and "of which the env's step" in line and "cores busy" in line
    unreadable = dataclasses.replace(measured, workers_cpu_ms_per_row=None, cores_busy=None)
    assert "not readable here" in unreadable.line("2x2")
    out = run_script("multi_agent_costs", "--case", "simple_spread", "--workers-envs", "2x1", "--seconds", "0.2")
    assert out.startswith("simple_spread: one env's step") and "torchwm 2x1 pool:" in out

"""The process-vectorizer bench and torchwm.autotune run end to end on tiny settings (their numbers are
for docs/performance.md; no speed is asserted), PufferLib where it is installed (a bench-only venv)."""

from __future__ import annotations

import json
import time

import numpy as np
import pytest

import torchwm
from torchwm.benchmarks.core import policies
from torchwm.benchmarks.core.unavailable import Unavailable, pufferlib_missing
from torchwm.benchmarks.process import bench as process_bench
from torchwm.benchmarks.process import envs as process_envs
from torchwm.benchmarks.process import report as process_report
from torchwm.benchmarks.process import sampling, shapes, steppers
from torchwm.benchmarks.process.shapes import Shape
from torchwm.benchmarks.process.summary import summarize
from torchwm.benchmarks.process.targets import target_checks
from torchwm.errors import InvalidArgumentError
from torchwm.process.autotune import candidate_shapes, load_factory

PUFFERLIB_MISSING = pufferlib_missing()


def test_workers_envs_parse_and_default_to_the_core_count():
    assert shapes.parse_workers_envs("1x32, 2x16,4x8") == [(1, 32), (2, 16), (4, 8)]
    for bad in ("2by16", "0x4", "2x", "x3"):
        with pytest.raises(ValueError, match="WORKERSxENVS"):
            shapes.parse_workers_envs(bad)
    assert process_bench.default_workers_envs(2) == [(1, 32), (2, 16), (4, 8)]
    sixteen = process_bench.default_workers_envs(16)
    assert sixteen[-1] == (16, 2) and all(w * e == 32 for w, e in sixteen)
    assert process_bench.default_workers_envs(12)[-1] == (8, 4)  # 12 does not divide 32
    assert all(w * e == 64 for w, e in process_bench.default_workers_envs(32))


def test_shapes_pool_batches_are_whole_workers():
    assert [s.batch_size for s in shapes.sync_and_pool(4, 8)] == [32, 16]
    assert [s.batch_size for s in shapes.sync_and_pool(1, 32)] == [32]  # half a worker: no pool
    assert [s.batch_size for s in shapes.sync_and_pool(3, 2)] == [6]
    assert Shape(4, 8, 16).pool and Shape(4, 8, 16).mode == "pool" and not Shape(4, 8, 32).pool
    assert not Shape(4, 8, 12).valid() and not Shape(2, 2, 0).valid() and Shape(2, 2, 2).valid()
    with pytest.raises(ValueError, match="whole workers"):
        steppers.open_stepper("torchwm", process_envs.cartpole, Shape(2, 4, 6))


def test_sweep_measures_gymnasium_once_per_case_and_pool_only_for_the_process_vectorizers():
    configs = process_bench.sweep(["cartpole"], [(1, 4), (2, 2)], list(steppers.BACKENDS), ("sync", "pool"))
    labels = [(c.backend, c.label, c.shape.mode) for c in configs]
    assert labels.count(("gym_sync", "in-process x4", "sync")) == 1
    assert labels.count(("gym_async", "4x1", "sync")) == 1
    assert ("torchwm", "2x2", "pool") in labels and ("pufferlib", "2x2", "pool") in labels
    assert not any(mode == "pool" for backend, _, mode in labels if backend.startswith("gym_"))
    assert ("pufferlib_async", "2x2", "pool") in labels and ("pufferlib_async", "1x4", "sync") not in labels
    only_sync = process_bench.sweep(["cartpole"], [(2, 2)], ["torchwm"], ("sync",))
    assert [c.shape for c in only_sync] == [Shape(2, 2, 4)]


def test_caller_work_sleeps_or_burns_the_cpu():
    assert policies.caller_work("sleep", 0) is None
    burn = policies.caller_work("burn", 5)
    assert burn is not None
    cpu = time.thread_time()
    burn()
    assert time.thread_time() - cpu >= 0.005  # a busy loop: the time is CPU time
    sleep = policies.caller_work("sleep", 5)
    assert sleep is not None
    cpu, wall = time.thread_time(), time.perf_counter()
    sleep()
    assert time.perf_counter() - wall >= 0.005 and time.thread_time() - cpu < 0.004
    with pytest.raises(ValueError, match="caller work"):
        policies.caller_work("spin", 1)


def test_heavier_env_steps_under_spawn_and_costs_more_than_cartpole():
    """Module-level classes: a spawned worker unpickles the factory by reference."""
    with torchwm.TorchVectorizedEnv(process_envs.numpy_cartpole, 1, 2, context="spawn") as envs:
        obs, _ = envs.reset(seed=0)
        obs, rewards, *_ = envs.step(np.zeros(2, np.int64))
        assert obs.shape == (2, 4) and rewards.tolist() == [1.0, 1.0]
    assert process_envs.step_cost_ms(process_envs.numpy_cartpole, 50) > process_envs.step_cost_ms(
        process_envs.cartpole, 50
    )


def test_process_suite_rows_summary_targets_and_plot(tmp_path):
    report = process_bench.run_process_benchmarks(
        0.2, 2, max_rounds=3, cases=["cartpole"], workers_envs=[(1, 2), (2, 1)], policy_ms=0.2, policy="burn"
    )
    rows = {(r["backend"], r["workers_envs"], r["mode"]): r for r in report["rows"]}
    done = report["rounds"]["run"]
    assert 2 <= done <= 3 and report["rounds"]["cap_hit"] == bool(report["rounds"]["unsettled"])
    for key in [("torchwm", "1x2", "sync"), ("torchwm", "2x1", "sync"), ("gym_sync", "in-process x2", "sync")]:
        row = rows[key]
        assert row["steps_per_s"] > 0 and len(row["rounds"]) == done and None not in row["rounds"][:2], key
        assert row["min_steps_per_s"] <= row["steps_per_s"] <= row["max_steps_per_s"], key
        assert row["wall_us"] > 0 and row["parent_cpu_us"] >= 0, key
    assert rows[("torchwm", "2x1", "sync")]["workers_cpu_us"] >= 0
    assert rows[("gym_sync", "in-process x2", "sync")]["workers_cpu_us"] is None  # no workers
    assert rows[("gym_async", "2x1", "sync")]["steps_per_s"] > 0
    pool = rows[("torchwm", "2x1", "pool")]
    assert pool["batch_size"] == 1
    assert pool["steps_per_s"] > 0 and "skipped" not in pool
    puffer = rows[("pufferlib", "1x2", "sync")]
    if PUFFERLIB_MISSING:
        assert "pufferlib not importable" in puffer["skipped"] and puffer["steps_per_s"] is None
        assert "vs_pufferlib" not in rows[("torchwm", "1x2", "sync")]
    else:
        assert puffer["steps_per_s"] > 0 and rows[("torchwm", "1x2", "sync")]["vs_pufferlib"] > 0
    summary = report["summary"]["cartpole"]
    best = summary["best"]["torchwm"]
    assert best["steps_per_s"] == max(r["steps_per_s"] or 0 for k, r in rows.items() if k[0] == "torchwm")
    versus_sync = summary["torchwm_best_ratio"]["gym_sync"]  # per round, paired: its median is the ratio
    assert summary["torchwm_best_x"]["gym_sync"] == round(versus_sync["median"], 2)
    assert (
        versus_sync["min"] <= versus_sync["low"] <= versus_sync["median"] <= versus_sync["high"] <= versus_sync["max"]
    )
    targets = {t["target"]: t for t in report["targets"]}
    assert targets["cartpole: torchwm best / gym_sync"]["met"] == (
        targets["cartpole: torchwm best / gym_sync"]["ratio"] >= 1.3
    )
    assert report["env_ms_per_step"]["cartpole"] > 0
    assert report["settings"]["policy"] == "burn" and report["settings"]["workers_envs"] == ["1x2", "2x1"]
    text = process_report.table(report)
    assert "in-process x2" in text and "torchwm" in text and "parent_cpu_us" in text
    summary_text = "\n".join(process_report.summary_lines(report))
    assert "targets:" in summary_text and "rounds: " in summary_text and "per batch: wall" in summary_text
    assert process_report.plot(report, tmp_path / "p.png").stat().st_size > 0


def test_targets_compare_each_peer_at_the_right_point():
    def row(case, backend, mode, shape, rate, vs=None):
        r = {
            "case": case,
            "backend": backend,
            "mode": mode,
            "workers_envs": shape,
            "batch_size": 0,
            "steps_per_s": rate,
        }
        return r if vs is None else {**r, "vs_pufferlib": vs}

    rows = [
        row("cartpole", "torchwm", "sync", "1x32", 50, vs=0.9),
        row("cartpole", "torchwm", "sync", "2x16", 140, vs=2.0),
        row("cartpole", "pufferlib", "sync", "1x32", 100),
        row("cartpole", "pufferlib", "sync", "2x16", 70),
        row("cartpole", "gym_sync", "sync", "in-process x32", 120),
        {**row("cartpole_numpy", "torchwm", "pool", "2x16", 60, vs=1.1), "vs_pufferlib_async": 0.9},
        row("cartpole_numpy", "pufferlib", "pool", "2x16", 54),
        row("cartpole_numpy", "gym_sync", "sync", "in-process x32", 40),
    ]
    checks = {c["target"]: c for c in target_checks(rows, summarize(rows))}
    assert checks["cartpole: torchwm best / pufferlib best"] == {
        "target": "cartpole: torchwm best / pufferlib best",
        "ratio": 1.4,
        "goal": 1.3,
        "met": True,
    }
    assert not checks["cartpole: torchwm best / gym_sync"]["met"]  # 140 / 120 < 1.3
    assert not checks["cartpole 1x32: torchwm / pufferlib"]["met"]
    heavy = checks["cartpole_numpy: torchwm best / best of pufferlib and gym_sync"]
    assert heavy["ratio"] == round(60 / 54, 2) and not heavy["met"]
    pool = checks["cartpole_numpy 2x16 pool 0: torchwm / pufferlib"]
    assert pool["ratio"] == 0.9 and not pool["met"]  # against PufferLib's faster pool


def test_torchwm_pool_mode_steps_half_batches():
    stepper = steppers.open_stepper("torchwm", process_envs.cartpole, Shape(2, 2, 2))
    try:
        assert stepper.reset(0).shape[0] == 2
        for _ in range(20):
            assert stepper.step(np.zeros(2, np.int64)).shape == (2, 4)
    finally:
        stepper.close()


def test_pufferlib_backend_runs_where_installed_and_says_why_not_elsewhere():
    if PUFFERLIB_MISSING:
        with pytest.raises(Unavailable, match=r"bench_env\.sh"):
            steppers.open_stepper("pufferlib", process_envs.cartpole, Shape(1, 2, 2))
        return
    for shape in (Shape(1, 2, 2), Shape(2, 1, 1), Shape(2, 2, 2)):  # sync, pool of one worker, pool
        rate = sampling.measure("pufferlib", process_envs.cartpole, shape, 0.2)
        assert rate > 0, shape
    assert sampling.measure("pufferlib_async", process_envs.cartpole, Shape(4, 1, 2), 0.2) > 0
    with pytest.raises(Unavailable, match="pool mode only"):
        steppers.open_stepper("pufferlib_async", process_envs.cartpole, Shape(2, 1, 2))


def test_autotune_returns_the_fastest_keywords_and_the_table():
    result = torchwm.autotune(process_envs.cartpole, num_envs=4, max_workers=2, seconds=0.15, rounds=2, policy_ms=0.1)
    assert isinstance(result, torchwm.TuneResult)
    shapes = {(r["num_workers"], r["envs_per_worker"], r["batch_size"]) for r in result.table}
    assert {(1, 4, 4), (2, 2, 4)} <= shapes
    assert (2, 2, 2) in shapes and not result.skipped
    rates = [r["steps_per_s"] for r in result.table]
    assert rates == sorted(rates, reverse=True) and result.table[0]["relative"] == 1.0
    assert all(len(r["rounds"]) == 2 for r in result.table)
    best = result.table[0]
    assert result.keywords["num_workers"] == best["num_workers"]
    assert result.keywords["envs_per_worker"] == best["envs_per_worker"]
    assert ("batch_size" in result.keywords) == (best["batch_size"] < 4)
    with torchwm.TorchVectorizedEnv(process_envs.cartpole, **result.keywords) as envs:
        assert envs.reset(seed=0)[0].shape[0] == result.keywords.get("batch_size", 4)
    assert "best: TorchVectorizedEnv(env_factory, num_workers=" in str(result)


def test_autotune_candidates_and_bad_arguments():
    shapes, skipped = candidate_shapes(32, 4, None)
    assert [s.workers_envs for s in shapes] == ["1x32", "2x16", "2x16", "4x8", "4x8"]
    assert [s.batch_size for s in shapes] == [32, 32, 16, 32, 16] and not skipped
    shapes, skipped = candidate_shapes(12, 3, [12, 6, 5])
    assert [(s.workers_envs, s.batch_size) for s in shapes] == [("1x12", 12), ("2x6", 12), ("2x6", 6), ("3x4", 12)]
    assert skipped == [
        f"{shape} batch {size}: not whole workers"
        for shape, size in [("1x12", 6), ("1x12", 5), ("2x6", 5), ("3x4", 6), ("3x4", 5)]
    ]
    with pytest.raises(InvalidArgumentError, match="no candidate"):
        torchwm.autotune(process_envs.cartpole, num_envs=4, max_workers=2, batch_sizes=[3])
    with pytest.raises(InvalidArgumentError, match="positive"):
        torchwm.autotune(process_envs.cartpole, num_envs=0)


def test_load_factory_takes_module_colon_function():
    assert load_factory("torchwm.benchmarks.process.envs:numpy_cartpole") is process_envs.numpy_cartpole
    assert load_factory("torchwm.benchmarks.process.envs:NumpyCartPole") is process_envs.NumpyCartPole
    for bad, message in [("no_colon", "module:function"), ("torchwm:nothing_here", "no attribute")]:
        with pytest.raises(InvalidArgumentError, match=message):
            load_factory(bad)
    with pytest.raises(InvalidArgumentError, match="not callable"):
        load_factory("torchwm.benchmarks.process.envs:NUMPY_WORK")


def test_bench_cli_process_quick_and_tune(tmp_path, capsys):
    from torchwm import cli

    out = tmp_path / "bench"
    argv = ["bench", "--suite", "process", "--quick", "--cases", "cartpole", "--out", str(out)]
    assert cli.main([*argv, "--workers-envs", "2x1", "--backends", "torchwm", "gym_sync"]) == 0
    report = json.loads((out / "bench.json").read_text())["process"]
    assert {r["backend"] for r in report["rows"]} == {"torchwm", "gym_sync"}
    assert report["settings"]["policy_ms"] == 0.0 and (out / "process_bench.png").stat().st_size > 0
    assert "targets:" in capsys.readouterr().out
    factory = "torchwm.benchmarks.process.envs:cartpole"
    argv = ["bench", "--suite", "process", "--tune", "--quick", "--factory", factory, "--num-envs", "2"]
    assert cli.main([*argv, "--max-workers", "2", "--policy-ms", "0.1", "--out", str(out)]) == 0
    tune = json.loads((out / "tune.json").read_text())
    assert tune["factory"] == factory and tune["num_envs"] == 2 and tune["policy_ms"] == 0.1
    assert tune["keywords"]["num_workers"] * tune["keywords"]["envs_per_worker"] == 2
    assert "best: TorchVectorizedEnv(env_factory" in capsys.readouterr().out
    with pytest.raises(SystemExit, match="--suite process"):
        cli.main(["bench", "--tune", "--out", str(out)])
    with pytest.raises(SystemExit, match="unknown backends"):
        cli.main(["bench", "--suite", "process", "--backends", "nope", "--out", str(out)])


def test_process_overhead_reports_per_batch_costs(capsys):
    """The per-batch breakdown tool runs and reports wall and CPU time for each shape asked."""
    import json

    from torchwm.benchmarks.process import overhead as process_overhead

    process_overhead.main(["--workers-envs", "1x2,2x1", "--batches", "50", "--repeats", "2", "--env", "cartpole"])
    lines = capsys.readouterr().out.splitlines()
    rows = [json.loads(line) for line in lines if line.startswith("{")]
    assert [row["shape"] for row in rows] == ["1x2", "2x1"] and all(row["env"] == "cartpole" for row in rows)
    assert all(row["wall_us"] > 0 and row["parent_cpu_us"] >= 0 and row["worker_cpu_us"] >= 0 for row in rows)
    assert all(row["env_cpu_us_per_worker"] > 0 and isinstance(row["parent_target_met"], bool) for row in rows)
    assert sum("vectorizer overhead per batch, CPU time" in line for line in lines) == 2
    process_overhead.main(["--workers-envs", "2x2", "--batches", "50", "--repeats", "1", "--pool", "1"])
    (pool,) = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.startswith("{")]
    assert pool["shape"] == "2x2 pool1" and pool["env"] == "noop" and pool["parent_cpu_us"] >= 0
    with pytest.raises(ValueError, match="pool is 2"):
        process_overhead.measure(2, 2, 50, pool=2)

"""benches/python/ray_bench.py (run from a checkout) compares the Ray backend with the local one: run as a
user runs it, joining a real two-node cluster, tiny sizes (its numbers are for docs/ray.md, not asserted)."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("ray")

from ray_cluster import local_cluster

from bench_scripts import run_script


def test_ray_bench_compares_ray_with_the_local_backend():
    # As a script its env factories live in __main__, which Ray pickles by value: the workers cannot
    # import benches/python.
    with local_cluster([{"num_cpus": 1}]) as cluster:
        out = run_script("ray_bench", "--seconds", "0.5", "--rounds", "1", "--address", cluster.address)
    rows = [json.loads(line) for line in out.splitlines()]
    assert [(row["case"], row["backend"]) for row in rows] == [
        (case, backend) for case in ("cartpole", "busy_1ms", "atari_pong_block") for backend in ("local", "ray")
    ]
    assert all(row["steps_per_s"] > 0 and row["ray_x"] > 0 for row in rows)

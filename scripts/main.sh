#!/usr/bin/env bash
# Installs torchwm into .venv (building the Rust core and ALE from source) and runs the main job:
# a short random Atari rollout that prints frames/s, then a quick side-by-side throughput benchmark
# against ale_py (and EnvPool when installed).
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet ".[bench]"
.venv/bin/torchwm rollout --game breakout --num-envs 8 --steps 500
.venv/bin/torchwm bench --quick --out bench-results/main

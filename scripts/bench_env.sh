#!/usr/bin/env bash
# Builds a bench-only virtualenv with PufferLib beside torchwm, for `torchwm bench --suite process`.
#
# pufferlib-core pins an old torch, so it is installed without its dependencies, and only what its
# vectorizer (pufferlib.vector, pufferlib.emulation) imports at run time is added. It is never part of
# the test extras. Usage:
#   bash scripts/bench_env.sh [VENV]         # default: .venv-bench; torchwm from this tree (maturin develop)
#   TORCHWM_WHEEL=dist/torchwm-*.whl bash scripts/bench_env.sh   # torchwm from a built wheel instead
# then: VENV/bin/torchwm bench --suite process
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
venv="${1:-$root/.venv-bench}"
uv="${UV:-$(command -v uv || echo "$root/.venv-tools/bin/uv")}"
python="${PYTHON:-$(bash scripts/find_python.sh 3.11)}"

# --seed: pip, which maturin develop installs with, and torchwm's build runs to fetch ALE's source.
"$uv" venv --quiet --clear --seed --python "$python" "$venv"
if [[ -n "${TORCHWM_WHEEL:-}" ]]; then
    "$uv" pip install --quiet --python "$venv/bin/python" "${TORCHWM_WHEEL}[bench]"
else
    # torchwm's runtime dependencies and the bench extra, then torchwm itself built from this tree.
    "$uv" pip install --quiet --python "$venv/bin/python" -r pyproject.toml --extra bench "maturin>=1.7,<2"
    PATH="$venv/bin:$PATH" VIRTUAL_ENV="$venv" "$venv/bin/maturin" develop --release --quiet
fi
# PufferLib's vectorizer, without the dependencies it pins (torch==2.9.0, pyro-ppl, rich, ...); what
# `import pufferlib.vector` needs at run time: numpy, gymnasium (above), psutil, and torch (its package
# __init__ imports pufferlib.models and pufferlib.pytorch), any torch >= 2.0.
"$uv" pip install --quiet --python "$venv/bin/python" --no-deps "pufferlib-core==3.0.*"
"$uv" pip install --quiet --python "$venv/bin/python" "psutil>=5.9" "torch>=2.0"
"$venv/bin/python" -c "import pufferlib, pufferlib.vector, pufferlib.emulation; print('pufferlib', 'ok')"

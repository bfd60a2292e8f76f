#!/usr/bin/env bash
# Runs every check, the fast style gates first: rustfmt, ruff (lint + format), clippy, cargo doc, the docs
# site (mkdocs --strict); then installs
# torchwm with its test extras into a fresh virtualenv (building the Rust core and ALE from source)
# and runs mypy, cargo test, a smoke run of the bench command, the stub check, a wheel built with
# `maturin build --release` installed into a second fresh virtualenv, and pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
venv="${TORCHWM_TEST_VENV:-$root/.venv-test}"
wheel_venv="$root/.venv-wheel"

echo "== cargo fmt --check"
cargo fmt --check

python3 -m venv --clear "$venv"
"$venv/bin/python" -m pip install --quiet --upgrade pip
# ruff alone first (the version the test extra names), so style fails in seconds, not after the build.
"$venv/bin/python" -m pip install --quiet "$(grep -o '"ruff[^"]*"' pyproject.toml | tr -d '"')"
echo "== ruff check"
"$venv/bin/ruff" check .
echo "== ruff format --check"
"$venv/bin/ruff" format --check .

echo "== cargo clippy (all targets and features, warnings are errors)"
PYO3_PYTHON="$venv/bin/python" cargo clippy --all-targets --all-features -- -D warnings
echo "== cargo doc (broken or private intra-doc links are errors)"
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --quiet
echo "== docs site: mkdocs build --strict (user guide + API reference from the docstrings)"
DOCS_VENV="$root/.venv-docs" bash scripts/docs.sh "$root/site"

echo "== pip install .[test] (builds the extension)"
"$venv/bin/python" -m pip install --quiet ".[test]"

echo "== mypy python/torchwm"
"$venv/bin/python" -m mypy python/torchwm

# The Rust tests and benches find ROMs here (no Python is linked into them).
TORCHWM_ROM_DIR="$("$venv/bin/python" -c 'import ale_py.roms, pathlib; print(pathlib.Path(ale_py.roms.__file__).parent)')"
export TORCHWM_ROM_DIR

echo "== cargo test (no Python)"
cargo test --release --quiet

echo "== torchwm bench smoke run"
"$venv/bin/torchwm" bench --quick --backends torchwm ale_py --policy-ms 1 --out "$root/bench-results/ci"
echo "== torchwm bench --soak smoke run"
"$venv/bin/torchwm" bench --soak --soak-million-frames 0.05 --soak-cycles 5 --soak-process-cycles 3 \
    --soak-process-steps 500 --out "$root/bench-results/ci"

echo "== stubtest torchwm._core"
"$venv/bin/python" -m mypy.stubtest torchwm._core --ignore-missing-stub

echo "== wheel: maturin build --release, installed into a fresh virtualenv"
"$venv/bin/python" -m pip install --quiet "maturin>=1.7,<2"
rm -rf "$root/dist"
"$venv/bin/maturin" build --release --quiet --out "$root/dist"
python3 -m venv --clear "$wheel_venv"
"$wheel_venv/bin/python" -m pip install --quiet "$root"/dist/torchwm-*.whl
(cd / && "$wheel_venv/bin/python" -c "import torchwm, numpy as np; e = torchwm.AtariVectorEnv('pong', 2); e.reset(seed=0); e.step(np.zeros(2, dtype=np.int64)); e.close(); print('wheel OK', torchwm.__version__)")
# The wheel carries the gymnasium hook: a fresh interpreter resolves TorchWM/<Game>-v5 without importing torchwm.
(cd / && "$wheel_venv/bin/python" -c "import gymnasium as gym; e = gym.make('TorchWM/Pong-v5'); e.close(); print('gymnasium hook OK')")

# Every test runs under pytest-timeout (pyproject.toml). No `|| true`: pytest's exit code 5 ("no
# tests collected") fails the run like any other failure.
echo "== pytest"
"$venv/bin/python" -m pytest -q

# Ray and RLlib pin their own gymnasium, so their tests run in a virtualenv of their own, from the wheel.
echo "== Ray backend and RLlib (torchwm[ray] from the wheel, in its own virtualenv)"
ray_venv="$root/.venv-ray"
python3 -m venv --clear "$ray_venv"
wheel=$(ls "$root"/dist/torchwm-*.whl)
# stable-baselines3: to_sb3() on the Ray backend is tested side by side with SB3's SubprocVecEnv.
"$ray_venv/bin/python" -m pip install --quiet "$wheel[ray]" "pytest>=7" "pytest-timeout>=2.1" "stable-baselines3>=2.3"
(cd "$root/tests" && "$ray_venv/bin/python" -m pytest -q -c "$root/pyproject.toml" --rootdir "$root" \
    ray_backend/test_ray_vector_env.py ray_backend/test_ray_rllib.py)

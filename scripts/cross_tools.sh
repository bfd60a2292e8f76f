#!/usr/bin/env bash
# Installs, when missing, what building and checking the wheels of other platforms needs on this
# x86-64 Debian machine: for `aarch64`, GCC's cross compiler (with its static libstdc++), qemu-user and
# mmdebstrap from Debian's packages, and Rust's aarch64-unknown-linux-gnu standard library (rustup); for
# `macos`, LLVM's Mach-O readers (llvm-objdump, llvm-nm: Debian's llvm) and Rust's aarch64-apple-darwin
# standard library (zig, from the ziglang package, compiles and links); for `windows`, MinGW-w64's GCC
# (POSIX threads, with its static libstdc++), wine to run the result, and Rust's x86_64-pc-windows-gnu
# standard library.
# Usage: bash scripts/cross_tools.sh aarch64|macos|windows
set -euo pipefail
case "${1:-}" in
aarch64)
    commands=(aarch64-linux-gnu-g++ qemu-aarch64 mmdebstrap)
    packages=(g++-aarch64-linux-gnu qemu-user mmdebstrap)
    rust_target=aarch64-unknown-linux-gnu
    ;;
macos)
    commands=(llvm-objdump)
    packages=(llvm)
    rust_target=aarch64-apple-darwin
    ;;
windows)
    commands=(x86_64-w64-mingw32-g++-posix /usr/lib/wine/wine64)
    packages=(g++-mingw-w64-x86-64-posix wine64)
    rust_target=x86_64-pc-windows-gnu
    ;;
*)
    echo "usage: $0 aarch64|macos|windows" >&2
    exit 2
    ;;
esac

missing=()
for i in "${!commands[@]}"; do
    command -v "${commands[$i]}" >/dev/null || missing+=("${packages[$i]}")
done
if ((${#missing[@]})); then
    echo "installing Debian's ${missing[*]}"
    # No recommends: qemu-user's would register qemu with the kernel's binfmt_misc, machine-wide.
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
if ! rustup target list --installed | grep -qx "$rust_target"; then
    rustup target add "$rust_target"
fi

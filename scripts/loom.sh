#!/usr/bin/env bash
# Model-checks the lock-free protocols with loom (docs/memory_model.md): the doorbells' ring/wait/done
# words and waiting flags (tests/loom_doorbell.rs), and the vector env's batch wake-up
# (tests/loom_batch_waiter.rs). `--cfg loom` swaps their atomics for loom's (src/sync.rs); the build
# goes to its own target directory so that it does not invalidate the normal one.
set -euo pipefail
cd "$(dirname "$0")/.."
export RUSTFLAGS="${RUSTFLAGS:-} --cfg loom"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target}/loom"
# Bounds the preemptions loom explores per execution (unbounded, the models take far longer): every
# weakening listed in docs/memory_model.md still fails within this bound.
export LOOM_MAX_PREEMPTIONS="${LOOM_MAX_PREEMPTIONS:-3}"
# The ci profile: optimized (loom explores many interleavings) without LTO's link time.
cargo test --profile ci --test loom_doorbell --test loom_batch_waiter -- "$@"

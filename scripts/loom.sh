#!/usr/bin/env bash
# Model-checks the lock-free protocols with loom (docs/memory_model.md): the doorbells' ring/wait/done
# words and waiting flags (tests/loom_doorbell.rs), and the vector env's batch wake-up
# (tests/loom_batch_waiter.rs). `--cfg loom` swaps their atomics for loom's (src/sync.rs). They build as
# the crate in loom/ (the modules compiled in by path: no torchwm library, no ALE build), in a target
# directory of their own.
set -euo pipefail
cd "$(dirname "$0")/.."
export RUSTFLAGS="${RUSTFLAGS:-} --cfg loom"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$(pwd)/target}/loom"
# Bounds the preemptions loom explores per execution (unbounded, the models take far longer): every
# weakening listed in docs/memory_model.md still fails within this bound.
export LOOM_MAX_PREEMPTIONS="${LOOM_MAX_PREEMPTIONS:-3}"
# Optimized (loom explores many interleavings), without LTO (loom/Cargo.toml's release profile).
cargo test --release --manifest-path loom/Cargo.toml --test loom_doorbell --test loom_batch_waiter -- "$@"

//! The atomics of the lock-free protocols ([`crate::doorbell`]'s words, the vector env's batch
//! waiter): the standard library's, or loom's when the model checks (`tests/loom_*.rs`, run by
//! `scripts/loom.sh` with `--cfg loom`) compile these modules into themselves. Only a test crate has
//! loom (a dev-dependency), hence `test` beside `loom`: the library that a loom run also builds keeps
//! the standard atomics. See docs/memory_model.md.
#[cfg(all(loom, test))]
pub(crate) use loom::sync::atomic::{fence, AtomicU32, AtomicUsize, Ordering};
#[cfg(not(all(loom, test)))]
pub(crate) use std::sync::atomic::{fence, AtomicU32, AtomicUsize, Ordering};

//! When a pool thread wakes the caller that sleeps until its batch's completions are queued: once per
//! batch, by the thread whose completion made it complete. The model check `tests/loom_batch_waiter.rs`
//! compiles this over loom's atomics.
//!
//! Memory ordering (docs/memory_model.md): each side stores, then loads what the other stores (the
//! caller: the count it needs, then the queue's length; a pool thread: its completion, then the count
//! needed). Only `SeqCst` fences order a store before a later load: without them both could read the
//! other's old value, and the caller would sleep through its batch (until its park times out). The
//! completions themselves are published by the queue (a crossbeam channel), not by this.
use crate::sync::{
    fence, AtomicUsize,
    Ordering::{Relaxed, SeqCst},
};

/// How many completions the caller sleeps until (`usize::MAX` when it is not sleeping).
#[derive(Debug)]
pub(crate) struct BatchWaiter {
    needed: AtomicUsize,
}

impl Default for BatchWaiter {
    fn default() -> Self {
        Self { needed: AtomicUsize::new(usize::MAX) }
    }
}

impl BatchWaiter {
    /// Caller, about to sleep until `count` completions are queued: says so; true when `queued()` (the
    /// queue's length) shows them in already: then no wake may come, and it must not sleep.
    pub fn announce(&self, count: usize, queued: impl FnOnce() -> usize) -> bool {
        // Relaxed: ordered before the length's load by the fence, which pairs with `should_wake`'s.
        self.needed.store(count, Relaxed);
        fence(SeqCst);
        queued() >= count
    }

    /// Caller: awake again; no pool thread need wake it.
    pub fn withdraw(&self) {
        // Relaxed: a pool thread that still sees the count makes an unpark nobody needs.
        self.needed.store(usize::MAX, Relaxed);
    }

    /// Pool thread, its completion just queued: whether to wake the caller, which sleeps until no more
    /// completions than `queued()` (the queue's length) are in.
    pub fn should_wake(&self, queued: impl FnOnce() -> usize) -> bool {
        // SeqCst fence, paired with `announce`'s: either the loads below see the caller's count, or
        // the caller's length, read after its fence, counts this thread's completion.
        fence(SeqCst);
        queued() >= self.needed.load(Relaxed)
    }
}

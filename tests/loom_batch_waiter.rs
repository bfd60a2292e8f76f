//! Model checks (loom) of when a pool thread wakes the caller sleeping until its batch is complete
//! (src/vector/batch_waiter.rs, compiled here over loom's atomics). Run by scripts/loom.sh.
//!
//! The completion queue (a crossbeam channel, not modelled) stands here as a count of the completions
//! queued, Relaxed: weaker than the channel's own ordering, so what holds here holds there. The
//! caller parks with no timeout: a lost wake-up leaves it parked for ever, which loom reports as a
//! deadlock (the real park times out after 20 ms, and would only stall the batch).
#![cfg(loom)]

#[allow(dead_code, unused_imports)]
#[path = "../src/sync.rs"]
mod sync;

#[allow(dead_code)]
#[path = "../src/vector/batch_waiter.rs"]
mod batch_waiter;

use batch_waiter::BatchWaiter;
use loom::sync::Arc;
use loom::thread;
use sync::{AtomicUsize, Ordering::Relaxed};

/// The caller and the pool threads' shared state: the waiter and the queue's length.
#[derive(Default)]
struct Batch {
    waiter: BatchWaiter,
    queued: AtomicUsize,
}

/// `threads` pool threads each queue a completion; the caller sleeps until all `threads` are in. The
/// caller is a thread of its own that joins no other (loom's join does not allow an unpark while it
/// blocks, and a pool thread may unpark a caller that no longer sleeps).
fn caller_sleeps_until_the_batch_is_complete(threads: usize) {
    loom::model(move || {
        let caller = thread::spawn(move || {
            let batch = Arc::new(Batch::default());
            for _ in 0..threads {
                let (batch, caller) = (Arc::clone(&batch), thread::current());
                thread::spawn(move || {
                    batch.queued.fetch_add(1, Relaxed);
                    if batch.waiter.should_wake(|| batch.queued.load(Relaxed)) {
                        caller.unpark();
                    }
                });
            }
            let queued = || batch.queued.load(Relaxed);
            while queued() < threads {
                if batch.waiter.announce(threads, queued) {
                    break;
                }
                thread::park();
            }
            batch.waiter.withdraw();
        });
        caller.join().unwrap();
    });
}

#[test]
fn the_caller_is_woken_by_its_only_completion() {
    caller_sleeps_until_the_batch_is_complete(1);
}

#[test]
fn the_caller_is_woken_by_the_last_of_two_completions() {
    caller_sleeps_until_the_batch_is_complete(2);
}

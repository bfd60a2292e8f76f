//! The doorbells' protocol over their words, with the futex behind [`Futex`]: what the model checks
//! (`tests/loom_doorbell.rs`) compile on their own, over loom's atomics and a modelled futex.
//!
//! Memory ordering (docs/memory_model.md): a side publishes what it wrote before it rings (the
//! parent's actions in shared memory, the worker's results) through a `Release` on the sequence word
//! that the other side reads with `Acquire`. The "waiting" flag against the wake is a store-then-load
//! on each side (flag then word, word then flag), which only `SeqCst` fences order: without them
//! both sides could read the other's old value, and a waiter would sleep through its wake.
use std::time::Duration;

use crate::sync::{
    fence, AtomicU32,
    Ordering::{Acquire, Relaxed, Release, SeqCst},
};

/// Words per 64-byte line: no two writers share a cache line.
pub(crate) const LINE_WORDS: usize = 16;
const COMPLETIONS: usize = 0;
const PARENT_WAITING: usize = 1;
const COMMAND_SEQ: usize = 0;
const COMMAND_KIND: usize = 1;
const WORKER_WAITING: usize = 2;
const DONE_SEQ: usize = 3;
const DONE_KIND: usize = 4;

/// Sleeping on a word and waking its sleepers (a futex; modelled in the loom checks).
pub(crate) trait Futex {
    /// Sleeps while `word` holds `expected`, at most `timeout`; true when woken (or the word had
    /// changed), false after the timeout or a signal (the caller then runs its checks).
    fn wait(&self, word: &AtomicU32, expected: u32, timeout: Duration) -> bool;
    fn wake_all(&self, word: &AtomicU32);
}

/// The doorbell words of `workers` workers, and the futex their waiters sleep on.
pub(crate) struct BellWords<'a, F> {
    words: &'a [AtomicU32],
    workers: usize,
    futex: F,
}

impl<'a, F: Futex> BellWords<'a, F> {
    /// Words needed for `workers` workers; None when it overflows.
    pub fn words_needed(workers: usize) -> Option<usize> {
        workers.checked_add(1)?.checked_mul(LINE_WORDS)
    }

    /// None when `words` is too short for `workers`.
    pub fn new(words: &'a [AtomicU32], workers: usize, futex: F) -> Option<Self> {
        let needed = Self::words_needed(workers)?;
        (needed <= words.len()).then_some(Self { words, workers, futex })
    }

    fn worker(&self, w: usize, field: usize) -> &'a AtomicU32 {
        assert!(w < self.workers, "worker {w} out of range ({} workers)", self.workers);
        &self.words[(w + 1) * LINE_WORDS + field]
    }

    /// Parent: gives worker `w` a command of `kind`; the worker must have finished its last one.
    pub fn ring(&self, w: usize, kind: u32) {
        // Relaxed: published by the sequence's Release below.
        self.worker(w, COMMAND_KIND).store(kind, Relaxed);
        let seq = self.worker(w, COMMAND_SEQ);
        // Release: publishes the kind and all the parent wrote before (actions in shared memory) to
        // the worker's Acquire in `command_after`.
        seq.fetch_add(1, Release);
        self.wake_if_waiting(seq, self.worker(w, WORKER_WAITING));
    }

    /// Worker: the command it `served` (the `served`-th, modulo 2^32) is done, its result of `kind`
    /// is out. Naming the command, not reading the latest: were the parent to ring a worker still
    /// busy, that newer command would not pass for done.
    pub fn complete(&self, w: usize, kind: u32, served: u32) {
        // Relaxed: published by DONE_SEQ's Release.
        self.worker(w, DONE_KIND).store(kind, Relaxed);
        // Release: publishes the kind and the worker's results (in shared memory) to the parent's
        // Acquire in `is_done`.
        self.worker(w, DONE_SEQ).store(served, Release);
        let completions = &self.words[COMPLETIONS];
        // Release, as DONE_SEQ's: a parent whose `sleep_round` reads this count must see this worker
        // done (else, the futex finding the count it read, it would sleep through this wake).
        completions.fetch_add(1, Release);
        self.wake_if_waiting(completions, &self.words[PARENT_WAITING]);
    }

    /// The waker's half of the flag protocol ([`sleep_round`] is the waiter's): `word` was just
    /// changed; wakes its sleeper if one has raised `waiting`.
    fn wake_if_waiting(&self, word: &AtomicU32, waiting: &AtomicU32) {
        // SeqCst fence, paired with the waiter's: either this load sees its flag, or the waiter's
        // loads after its fence see this side's writes (and it does not sleep).
        fence(SeqCst);
        if waiting.load(Relaxed) != 0 {
            self.futex.wake_all(word);
        }
    }

    /// Whether worker `w` has finished its last command.
    pub fn is_done(&self, w: usize) -> bool {
        // Acquire: pairs with `complete`'s Release (its result is visible once this is true).
        // COMMAND_SEQ is written only by this (the parent's) side: Relaxed.
        self.worker(w, DONE_SEQ).load(Acquire) == self.worker(w, COMMAND_SEQ).load(Relaxed)
    }

    /// The kind of worker `w`'s last result. Relaxed: read after `is_done(w)`, whose Acquire made
    /// the kind stored before it visible.
    pub fn done_kind(&self, w: usize) -> u32 {
        self.worker(w, DONE_KIND).load(Relaxed)
    }

    /// Worker: the kind of the command after the `seen`-th, if it has arrived.
    pub fn command_after(&self, w: usize, seen: u32) -> Option<u32> {
        // Acquire: pairs with `ring`'s Release, so the kind (Relaxed) and the parent's writes before
        // it are visible.
        (self.worker(w, COMMAND_SEQ).load(Acquire) != seen).then(|| self.worker(w, COMMAND_KIND).load(Relaxed))
    }

    /// Worker `w`'s command sequence and waiting flag: what it sleeps on and raises.
    pub fn command_bell(&self, w: usize) -> (&'a AtomicU32, &'a AtomicU32) {
        (self.worker(w, COMMAND_SEQ), self.worker(w, WORKER_WAITING))
    }

    /// The parent's completion count and waiting flag.
    pub fn done_bell(&self) -> (&'a AtomicU32, &'a AtomicU32) {
        (&self.words[COMPLETIONS], &self.words[PARENT_WAITING])
    }

    pub fn futex(&self) -> &F {
        &self.futex
    }
}

/// How one [`sleep_round`] ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Round {
    Ready,
    /// It slept; `woken`: by a wake or a change of the word (else a timeout or a signal).
    Slept {
        woken: bool,
    },
    /// `slice()` gave no time left: it did not sleep.
    OutOfTime,
}

/// The waiter's half of the flag protocol: raises `waiting`, and sleeps on `word` for at most
/// `slice()` unless `ready()`; lowers the flag before it returns.
pub(crate) fn sleep_round(
    futex: &impl Futex,
    ready: impl Fn() -> bool,
    word: &AtomicU32,
    waiting: &AtomicU32,
    slice: impl FnOnce() -> Duration,
) -> Round {
    waiting.store(1, Relaxed);
    // SeqCst fence, paired with the waker's (`wake_if_waiting`): a change made after the loads below
    // is either seen by the futex (`seen` differs) or made by a side that then sees the flag.
    fence(SeqCst);
    // Acquire, paired with the waker's Release on `word`: once `seen` counts a change, `ready()` sees
    // what the waker published before it; were it to miss that, the futex (finding `seen`) would
    // sleep through a wake already made.
    let seen = word.load(Acquire);
    let round = if ready() {
        Round::Ready
    } else {
        match slice() {
            left if left.is_zero() => Round::OutOfTime,
            left => Round::Slept { woken: futex.wait(word, seen, left) },
        }
    };
    // Relaxed: a waker that still sees the flag only makes a wake nobody needs.
    waiting.store(0, Relaxed);
    round
}

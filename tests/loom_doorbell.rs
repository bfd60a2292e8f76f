//! Model checks (loom) of the doorbells' protocol (src/doorbell/protocol.rs, compiled here over loom's
//! atomics): every interleaving and every value the memory model lets a load read, not only what x86
//! shows. Run by scripts/loom.sh (`--cfg loom`).
//!
//! The futex is modelled (a Mutex and Condvar, as the kernel's futex hash bucket serializes a wait's
//! check of the word with wakes), without timeouts: a lost wake-up leaves a waiter asleep for ever,
//! which loom reports as a deadlock (the real waits time out every 50 ms and would only stall). Data
//! published by a doorbell is a `loom::cell::UnsafeCell`: reading it without a happens-before from its
//! write is a failure. Not covered: the spin and yield stages (they only call `ready()`, as the sleep
//! stage does), the poll budget, processes (loom threads stand in for them), the kernel's own futex.
#![cfg(loom)]

#[allow(dead_code, unused_imports)]
#[path = "../src/sync.rs"]
mod sync;

#[allow(dead_code)]
#[path = "../src/doorbell/protocol.rs"]
mod protocol;

use std::collections::HashMap;
use std::time::Duration;

use loom::cell::UnsafeCell;
use loom::sync::{Arc, Condvar, Mutex};
use loom::thread;
use protocol::{sleep_round, BellWords, Futex, Round};
use sync::AtomicU32;

/// A futex: a wait checks the word and goes to sleep with no wake in between; a wake wakes every
/// sleeper of its word (counted per word, by address).
#[derive(Default)]
struct ModelFutex {
    wakes: Mutex<HashMap<usize, u64>>,
    woken: Condvar,
}

fn key(word: &AtomicU32) -> usize {
    word as *const AtomicU32 as usize
}

impl Futex for &ModelFutex {
    fn wait(&self, word: &AtomicU32, expected: u32, _timeout: Duration) -> bool {
        let mut wakes = self.wakes.lock().unwrap();
        // What the kernel reads under its lock: not a program access, so SeqCst stands in for it.
        if word.load(sync::Ordering::SeqCst) != expected {
            return true;
        }
        let before = wakes.get(&key(word)).copied();
        while wakes.get(&key(word)).copied() == before {
            wakes = self.woken.wait(wakes).unwrap();
        }
        true
    }

    fn wake_all(&self, word: &AtomicU32) {
        *self.wakes.lock().unwrap().entry(key(word)).or_default() += 1;
        self.woken.notify_all();
    }
}

/// Shared words and futex for `workers` workers, as the processes map them.
struct Memory {
    words: Vec<AtomicU32>,
    futex: ModelFutex,
    workers: usize,
}

impl Memory {
    fn new(workers: usize) -> Arc<Self> {
        let count = BellWords::<&ModelFutex>::words_needed(workers).unwrap();
        Arc::new(Self { words: (0..count).map(|_| AtomicU32::new(0)).collect(), futex: ModelFutex::default(), workers })
    }

    fn bells(&self) -> BellWords<'_, &ModelFutex> {
        BellWords::new(&self.words, self.workers, &self.futex).unwrap()
    }
}

/// The sleep stage of a wait with no timeout: sleep rounds until `ready()`.
fn sleep_until(futex: &ModelFutex, ready: impl Fn() -> bool, word: &AtomicU32, waiting: &AtomicU32) {
    loop {
        match sleep_round(&futex, &ready, word, waiting, || Duration::from_secs(1)) {
            Round::Ready => return,
            Round::Slept { .. } => {}
            Round::OutOfTime => unreachable!("the slice is never zero"),
        }
    }
}

/// Worker `w` sleeps until the command after the `seen`-th; its kind.
fn wait_command(memory: &Memory, w: usize, seen: u32) -> u32 {
    let bells = memory.bells();
    let (seq, waiting) = bells.command_bell(w);
    sleep_until(&memory.futex, || bells.command_after(w, seen).is_some(), seq, waiting);
    bells.command_after(w, seen).unwrap()
}

/// The parent sleeps until every one of `workers` is done.
fn wait_done(memory: &Memory, workers: &[usize]) {
    let bells = memory.bells();
    let (completions, waiting) = bells.done_bell();
    sleep_until(&memory.futex, || workers.iter().all(|&w| bells.is_done(w)), completions, waiting);
}

/// A value one side writes before it rings, and the other reads once it saw the ring.
#[derive(Clone)]
struct Published(Arc<UnsafeCell<u32>>);

impl Published {
    fn new() -> Self {
        Self(Arc::new(UnsafeCell::new(0)))
    }

    fn write(&self, value: u32) {
        self.0.with_mut(|cell| unsafe { *cell = value });
    }

    fn read(&self) -> u32 {
        self.0.with(|cell| unsafe { *cell })
    }
}

#[test]
fn a_command_and_what_the_parent_wrote_before_it_reach_a_sleeping_worker() {
    loom::model(|| {
        let (memory, actions) = (Memory::new(1), Published::new());
        let worker = {
            let (memory, actions) = (Arc::clone(&memory), actions.clone());
            thread::spawn(move || {
                assert_eq!(wait_command(&memory, 0, 0), 7);
                assert_eq!(actions.read(), 42);
            })
        };
        actions.write(42);
        memory.bells().ring(0, 7);
        worker.join().unwrap();
    });
}

#[test]
fn results_and_what_the_workers_wrote_before_them_reach_a_sleeping_parent() {
    loom::model(|| {
        let memory = Memory::new(2);
        let results = [Published::new(), Published::new()];
        for w in 0..2 {
            memory.bells().ring(w, 1);
        }
        let workers: Vec<_> = (0..2)
            .map(|w| {
                let (memory, result) = (Arc::clone(&memory), results[w].clone());
                thread::spawn(move || {
                    result.write(10 + w as u32);
                    memory.bells().complete(w, 3 + w as u32, 1);
                })
            })
            .collect();
        wait_done(&memory, &[0, 1]);
        for w in 0..2 {
            assert_eq!(memory.bells().done_kind(w), 3 + w as u32);
            assert_eq!(results[w].read(), 10 + w as u32);
        }
        workers.into_iter().for_each(|worker| worker.join().unwrap());
    });
}

#[test]
fn commands_and_results_alternate_through_sleeping_waiters() {
    loom::model(|| {
        let (memory, data) = (Memory::new(1), Published::new());
        let worker = {
            let (memory, data) = (Arc::clone(&memory), data.clone());
            thread::spawn(move || {
                for served in 1..=2 {
                    let kind = wait_command(&memory, 0, served - 1);
                    assert_eq!(data.read(), 100 + served);
                    data.write(200 + served);
                    memory.bells().complete(0, kind + 1, served);
                }
            })
        };
        for round in 1..=2 {
            data.write(100 + round);
            memory.bells().ring(0, round);
            wait_done(&memory, &[0]);
            assert_eq!((memory.bells().done_kind(0), data.read()), (round + 1, 200 + round));
        }
        worker.join().unwrap();
    });
}

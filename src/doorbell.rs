//! Doorbells: how the process vectorizer's parent and its worker processes tell each other that a
//! command or its result is ready, through atomic words in memory they share — no message, no
//! system call while the other side is awake.
//!
//! Each side waits in three stages: it spins (cheapest, when a core is free for it), then yields
//! its core between checks, then sleeps (a futex; on Windows an event per line: [`WakeLines`]); its [`PollBudget`] decides how long the first two
//! last. A side about to sleep raises its "waiting" flag first; the other side makes the wake system
//! call only when it sees that flag.
//!
//! Layout, in 32-bit words, a 64-byte line each so that no two writers share a cache line:
//! line 0 is the parent's (`COMPLETIONS`, `PARENT_WAITING`); line `1 + w` is worker `w`'s
//! (`COMMAND_SEQ`, `COMMAND_KIND`, `WORKER_WAITING`, `DONE_SEQ`, `DONE_KIND`). Worker `w` has
//! finished its last command when `DONE_SEQ == COMMAND_SEQ`. The protocol over these words, and the
//! memory ordering that makes what one side wrote before ringing visible to the other on every CPU,
//! is in `doorbell/protocol.rs` (model-checked with loom: docs/memory_model.md).
use std::hint::spin_loop;
use std::sync::atomic::AtomicU32;
use std::time::{Duration, Instant};

use crate::error::{Error, Result};
use crate::ffi::futex::WaitEnd;
pub use crate::ffi::futex::WakeLines;
// Patience is the budget's, and named here too: it is what a doorbell wait is given.
pub use crate::poll_budget::Patience;
use crate::poll_budget::{PollBudget, PREEMPTED};

pub(crate) mod protocol;

use protocol::{sleep_round, BellWords, Futex, Round, LINE_WORDS};

/// The longest single futex sleep: a wait comes back this often to run the caller's checks.
const SLEEP_SLICE: Duration = Duration::from_millis(50);

/// The system's sleep, shared between processes, over the lines of `words`: the line of a word is
/// found from its address (a futex needs only the address; Windows's event is the line's).
struct SystemFutex<'a> {
    wake: &'a WakeLines,
    /// The address of the first word (an address, not a pointer: nothing is read through it).
    base: usize,
}

impl SystemFutex<'_> {
    fn line(&self, word: &AtomicU32) -> usize {
        // Both addresses are of the one slice `words` (BellWords hands out only its own words).
        (word as *const AtomicU32 as usize - self.base) / (std::mem::size_of::<AtomicU32>() * LINE_WORDS)
    }
}

impl Futex for SystemFutex<'_> {
    fn wait(&self, word: &AtomicU32, expected: u32, timeout: Duration) -> bool {
        self.wake.wait(self.line(word), word, expected, timeout) == WaitEnd::Woken
    }

    fn wake_all(&self, word: &AtomicU32) {
        self.wake.wake_all(self.line(word), word);
    }
}

/// The doorbells of `workers` workers over shared words.
pub struct Doorbells<'a> {
    bells: BellWords<'a, SystemFutex<'a>>,
    budget: Option<&'a PollBudget>,
}

impl<'a> Doorbells<'a> {
    /// Words needed for `workers` workers; None when it overflows.
    pub fn words_needed(workers: usize) -> Option<usize> {
        BellWords::<SystemFutex>::words_needed(workers)
    }

    /// Lines of words (each with its sleeper) of `workers` workers: the parent's and one a worker.
    pub fn lines(workers: usize) -> Option<usize> {
        workers.checked_add(1)
    }

    /// The doorbells of `workers` workers over `words`, their sleepers sleeping on `wake` (which must
    /// cover [`lines`](Self::lines)`(workers)`).
    pub fn new(words: &'a [AtomicU32], wake: &'a WakeLines, workers: usize) -> Result<Self> {
        if !Self::lines(workers).is_some_and(|lines| wake.covers(lines)) {
            return Err(Error::InvalidArgument(format!("the doorbells of {workers} workers need an event each")));
        }
        match BellWords::new(words, workers, SystemFutex { wake, base: words.as_ptr() as usize }) {
            Some(bells) => Ok(Self { bells, budget: None }),
            None => Err(Error::InvalidArgument(format!(
                "a doorbell buffer for {workers} workers needs {:?} words, got {}",
                Self::words_needed(workers),
                words.len()
            ))),
        }
    }

    /// These doorbells, their waits polling as `budget` allows (within the `Patience` given) and
    /// teaching it; without one a wait polls for all of its `Patience`.
    pub fn adapting(self, budget: &'a PollBudget) -> Self {
        Self { budget: Some(budget), ..self }
    }

    /// The patience of a wait asked to be at most `cap`: as the budget allows, if there is one.
    fn patience(&self, cap: Patience) -> WaitPatience<'a> {
        let patience = self.budget.map_or(cap, |budget| budget.patience(cap));
        WaitPatience { patience, budget: self.budget.map(|budget| (budget, cap)) }
    }

    /// Parent: gives worker `w` a command of `kind`; the worker must have finished its last one.
    /// What the parent wrote before (in memory the worker shares) is visible to the worker once it
    /// sees the command.
    pub fn ring(&self, w: usize, kind: u32) {
        self.bells.ring(w, kind);
    }

    /// Worker: the command it `served` (the `served`-th, modulo 2^32) is done, its result of
    /// `kind` is out; what the worker wrote before is visible to the parent once it sees it done.
    pub fn complete(&self, w: usize, kind: u32, served: u32) {
        self.bells.complete(w, kind, served);
    }

    /// Whether worker `w` has finished its last command.
    pub fn is_done(&self, w: usize) -> bool {
        self.bells.is_done(w)
    }

    /// The kind of worker `w`'s last result (once [`is_done`](Self::is_done)).
    pub fn done_kind(&self, w: usize) -> u32 {
        self.bells.done_kind(w)
    }

    /// Worker: waits for the command after the `seen`-th; returns its kind, or None after `timeout`.
    pub fn wait_command(
        &self,
        w: usize,
        seen: u32,
        patience: Patience,
        timeout: Duration,
        checks: impl FnMut() -> Result<()>,
    ) -> Result<Option<u32>> {
        let arrived = || self.bells.command_after(w, seen).is_some();
        let (seq, waiting) = self.bells.command_bell(w);
        if self.wait_until(arrived, seq, waiting, self.patience(patience), timeout, checks)? {
            Ok(self.bells.command_after(w, seen))
        } else {
            Ok(None)
        }
    }

    /// Parent: waits until at least `need` of `workers` are done (or `timeout`); returns the done ones.
    pub fn wait_done(
        &self,
        workers: &[usize],
        need: usize,
        patience: Patience,
        timeout: Duration,
        checks: impl FnMut() -> Result<()>,
    ) -> Result<Vec<usize>> {
        let enough = || workers.iter().filter(|&&w| self.is_done(w)).count() >= need;
        let (completions, parent_waiting) = self.bells.done_bell();
        self.wait_until(enough, completions, parent_waiting, self.patience(patience), timeout, checks)?;
        Ok(workers.iter().copied().filter(|&w| self.is_done(w)).collect())
    }

    /// Spins, yields, then sleeps on `word` (raising `waiting` while it does) until `ready()`; false
    /// after `timeout`. `checks` runs after a signal and between sleeps (Ctrl-C; the caller's liveness
    /// checks are its own, between calls). The budget learns how long the wait took and whether this
    /// thread lost its core while it spun or yielded.
    fn wait_until(
        &self,
        ready: impl Fn() -> bool,
        word: &AtomicU32,
        waiting: &AtomicU32,
        patience: WaitPatience<'_>,
        timeout: Duration,
        checks: impl FnMut() -> Result<()>,
    ) -> Result<bool> {
        let start = Instant::now();
        let mut clock = PollClock::new(start);
        let ready_while_polling = poll(&ready, patience.patience, timeout, &mut clock);
        let result = if ready_while_polling {
            Ok(true)
        } else {
            sleep_until(self.bells.futex(), &ready, word, waiting, start, timeout, checks)
        };
        if let Some((budget, cap)) = patience.budget {
            budget.record(start.elapsed(), cap, clock.preempted);
        }
        result
    }
}

/// A wait's patience and the budget it teaches, with the patience asked for.
struct WaitPatience<'a> {
    patience: Patience,
    budget: Option<(&'a PollBudget, Patience)>,
}

/// The time since a wait began, read once a check, noting gaps that show the waiter was preempted.
struct PollClock {
    start: Instant,
    last: Duration,
    preempted: bool,
}

impl PollClock {
    fn new(start: Instant) -> Self {
        Self { start, last: Duration::ZERO, preempted: false }
    }

    fn elapsed(&mut self) -> Duration {
        let now = self.start.elapsed();
        self.preempted |= now.saturating_sub(self.last) > PREEMPTED;
        self.last = now;
        now
    }
}

/// The spin and yield stages: true once `ready()`, false when they ran out first.
fn poll(ready: &impl Fn() -> bool, patience: Patience, timeout: Duration, clock: &mut PollClock) -> bool {
    let spin_end = patience.spin.min(timeout);
    let yield_end = patience.spin.saturating_add(patience.yield_).min(timeout);
    while clock.elapsed() < spin_end {
        if ready() {
            return true;
        }
        for _ in 0..16 {
            spin_loop();
        }
    }
    while clock.elapsed() < yield_end {
        if ready() {
            return true;
        }
        std::thread::yield_now();
    }
    false
}

/// The sleep stage: on the futex of `word`, in slices, until `ready()` or `timeout` after `start`.
fn sleep_until(
    futex: &impl Futex,
    ready: &impl Fn() -> bool,
    word: &AtomicU32,
    waiting: &AtomicU32,
    start: Instant,
    timeout: Duration,
    mut checks: impl FnMut() -> Result<()>,
) -> Result<bool> {
    loop {
        let slice = || timeout.saturating_sub(start.elapsed()).min(SLEEP_SLICE);
        match sleep_round(futex, ready, word, waiting, slice) {
            Round::Ready => return Ok(true),
            Round::OutOfTime => return Ok(false),
            Round::Slept { woken: true } => {}
            Round::Slept { woken: false } => checks()?,
        }
    }
}

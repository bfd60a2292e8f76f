//! The jobs the pool's threads take, and the completions they report, over lock-free crossbeam
//! channels (the rayon tasks that run them are in [`super::worker_pool`]).
//!
//! The caller does not sleep while its batch is stepped: it takes queued jobs itself, like one more
//! worker (so sync mode needs one thread fewer, and no wake-up of the caller between its jobs). When
//! no job is left it waits for the workers' last completions, and they wake it once per batch, not
//! once per env: each extra wake-up on a small machine preempts a worker mid-emulation.
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender, TryRecvError};
use crossbeam_utils::sync::{Parker, Unparker};

use super::batch_waiter::BatchWaiter;
use super::reset_ahead::EndedRow;
use crate::error::{Error, Result};

/// Reset (if `force_reset`) or step an env with an action (an index into its action set); a step
/// resets instead when the episode is over in next-step autoreset mode. With `reset_ahead_at_end`, a
/// step that ends its episode starts that env's next reset at once (see [`super::reset_ahead`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Job {
    pub env_id: usize,
    pub force_reset: bool,
    pub action_index: usize,
    pub paddle_strength: f32,
    pub reset_ahead_at_end: bool,
}

impl Job {
    pub fn reset(env_id: usize) -> Self {
        Self { env_id, force_reset: true, action_index: 0, paddle_strength: 1.0, reset_ahead_at_end: false }
    }
}

/// A finished job: which env, and its error, or, when its step ended the episode and started the next
/// reset, the row the batch shows for it (the env itself may be resetting by then).
pub(crate) struct Completion {
    pub env_id: usize,
    pub result: Result<Option<Box<EndedRow>>>,
}

/// When to wake the caller (see [`BatchWaiter`] for the memory ordering), and how.
struct Waiter {
    batch: BatchWaiter,
    unparker: Unparker,
}

pub(crate) struct ActionQueue {
    pub jobs: Sender<Job>,
    /// The caller's own worker side of the queue, to run jobs while it waits, as a pool thread does.
    own: WorkerChannels,
    completions: Receiver<Completion>,
    // Only the caller parks (under `&mut` of the env); the Mutex just makes the queue `Sync`.
    parker: Mutex<Parker>,
}

/// The pool threads' side of the queue: take jobs, report completions.
#[derive(Clone)]
pub(crate) struct WorkerChannels {
    jobs: Receiver<Job>,
    completions: Sender<Completion>,
    waiter: Arc<Waiter>,
}

impl WorkerChannels {
    /// The next queued job, if any (never blocks: a pool task that finds none ends).
    pub fn next_job(&self) -> Option<Job> {
        self.jobs.try_recv().ok()
    }

    /// Reports a finished job; wakes the caller only when its batch is complete.
    pub fn complete(&self, completion: Completion) -> bool {
        if self.completions.send(completion).is_err() {
            return false;
        }
        if self.waiter.batch.should_wake(|| self.completions.len()) {
            self.waiter.unparker.unpark();
        }
        true
    }
}

impl ActionQueue {
    /// Waits until `count` completions are ready and returns them in arrival order. With `help`, the
    /// calling thread first runs queued jobs itself with `run`, and spins briefly before sleeping (for
    /// sync mode, where the workers leave a core to the caller); without it, it just sleeps (async
    /// mode, where every core has a worker). Every [`INTERRUPT_CHECK`] it calls `interrupt`; an error
    /// from it ends the wait with no completion taken, so a later wait finds them all.
    pub fn wait_for(
        &self,
        count: usize,
        help: bool,
        run: impl Fn(Job) -> Completion,
        interrupt: Interrupt<'_>,
    ) -> Result<Vec<Completion>> {
        let mut next_check = Instant::now() + INTERRUPT_CHECK;
        while help && self.completions.len() < count {
            let Some(job) = self.own.next_job() else { break };
            if !self.own.complete(run(job)) {
                return Err(Error::WorkerPanic("completion queue closed".into()));
            }
            if Instant::now() >= next_check {
                interrupt()?;
                next_check = Instant::now() + INTERRUPT_CHECK;
            }
        }
        // Workers are finishing the last jobs: spin (yielding the core) for about their length
        // before sleeping, since a wake-up from sleep costs as much again.
        let spin_until = Instant::now() + Duration::from_micros(if help { SPIN_MICROS } else { 0 });
        while self.completions.len() < count && Instant::now() < spin_until {
            std::thread::yield_now();
        }
        self.sleep_until_ready(count, interrupt)?;
        (0..count)
            .map(|_| match self.completions.try_recv() {
                Ok(completion) => Ok(completion),
                Err(TryRecvError::Empty | TryRecvError::Disconnected) => {
                    Err(Error::WorkerPanic("worker threads have stopped".into()))
                }
            })
            .collect()
    }

    /// Takes the jobs no worker has started out of the queue; returns how many there were.
    pub fn discard_queued_jobs(&self) -> usize {
        std::iter::from_fn(|| self.own.next_job()).count()
    }

    /// Sleeps until `count` completions are ready; workers wake it when the batch is complete.
    fn sleep_until_ready(&self, count: usize, interrupt: Interrupt<'_>) -> Result<()> {
        let parker = self.parker.lock().map_err(|_| Error::WorkerPanic("completion queue poisoned".into()))?;
        let mut outcome = Ok(());
        while self.completions.len() < count {
            // Re-checks the queue after announcing the count: a completion queued before would not wake it.
            if self.own.waiter.batch.announce(count, || self.completions.len()) {
                break;
            }
            // The timeout bounds a lost wake-up and how long an interrupt waits to be seen.
            parker.park_timeout(INTERRUPT_CHECK);
            if self.completions.len() < count {
                outcome = interrupt();
                if outcome.is_err() {
                    break;
                }
            }
        }
        self.own.waiter.batch.withdraw();
        outcome
    }
}

/// Called while a wait blocks; an error (`Interrupted`, `Closed`) gives the wait up.
pub type Interrupt<'a> = &'a dyn Fn() -> Result<()>;

/// How often a blocked wait asks its [`Interrupt`] (Ctrl-C is seen within about this long).
const INTERRUPT_CHECK: Duration = Duration::from_millis(20);

/// How long the caller spins for the workers' last completions before it sleeps (about one env step).
const SPIN_MICROS: u64 = 500;

/// Channels for `num_envs` envs: at most one job per env is in flight, so `num_envs` bounds the job
/// queue and `send` never blocks.
pub(crate) fn action_queue(num_envs: usize) -> (ActionQueue, WorkerChannels) {
    let (job_tx, job_rx) = crossbeam_channel::bounded(num_envs);
    let (done_tx, done_rx) = crossbeam_channel::bounded(num_envs);
    let parker = Parker::new();
    let waiter = Arc::new(Waiter { batch: BatchWaiter::default(), unparker: parker.unparker().clone() });
    let workers = WorkerChannels { jobs: job_rx, completions: done_tx, waiter };
    (ActionQueue { jobs: job_tx, own: workers.clone(), completions: done_rx, parker: Mutex::new(parker) }, workers)
}

//! The jobs workers take, and the completions they report, over lock-free crossbeam channels.
//!
//! Completions wake the waiting caller once per batch, not once per env: on a machine with as many
//! cores as workers, each extra wake-up of the caller's thread preempts a worker mid-emulation.
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crossbeam_channel::{Receiver, Sender, TryRecvError};
use crossbeam_utils::sync::{Parker, Unparker};

use crate::error::{Error, Result};

#[derive(Debug, Clone, Copy)]
pub(crate) enum Job {
    /// Reset (if `force_reset`) or step the env; a step resets instead when the episode is over
    /// in next-step autoreset mode.
    Run { env_id: usize, force_reset: bool },
    /// Ends the worker that takes it.
    Stop,
}

/// A finished job: which env, and whether it failed.
pub(crate) struct Completion {
    pub env_id: usize,
    pub result: Result<()>,
}

/// How many completions the caller waits for (`usize::MAX` when it is not waiting), and how to wake it.
struct Waiter {
    needed: AtomicUsize,
    unparker: Unparker,
}

pub(crate) struct ActionQueue {
    pub jobs: Sender<Job>,
    completions: Receiver<Completion>,
    waiter: Arc<Waiter>,
    // Only the caller parks (under `&mut` of the env); the Mutex just makes the queue `Sync`.
    parker: Mutex<Parker>,
}

pub(crate) struct WorkerChannels {
    pub jobs: Receiver<Job>,
    completions: Sender<Completion>,
    waiter: Arc<Waiter>,
}

impl WorkerChannels {
    pub fn clone_for_worker(&self) -> Self {
        Self { jobs: self.jobs.clone(), completions: self.completions.clone(), waiter: Arc::clone(&self.waiter) }
    }

    /// Reports a finished job; wakes the caller only when its batch is complete.
    pub fn complete(&self, completion: Completion) -> bool {
        if self.completions.send(completion).is_err() {
            return false;
        }
        if self.completions.len() >= self.waiter.needed.load(Ordering::SeqCst) {
            self.waiter.unparker.unpark();
        }
        true
    }
}

impl ActionQueue {
    /// Blocks until `count` completions are ready and returns them in arrival order.
    pub fn wait_for(&self, count: usize) -> Result<Vec<Completion>> {
        let parker = self.parker.lock().map_err(|_| Error::WorkerPanic("completion queue poisoned".into()))?;
        while self.completions.len() < count {
            self.waiter.needed.store(count, Ordering::SeqCst);
            // Re-check after publishing `needed`: a completion that landed in between would not wake us.
            if self.completions.len() >= count {
                break;
            }
            // The timeout only bounds a lost wake-up; workers wake us as soon as the batch is complete.
            parker.park_timeout(Duration::from_millis(50));
        }
        self.waiter.needed.store(usize::MAX, Ordering::SeqCst);
        (0..count)
            .map(|_| match self.completions.try_recv() {
                Ok(completion) => Ok(completion),
                Err(TryRecvError::Empty | TryRecvError::Disconnected) => {
                    Err(Error::WorkerPanic("worker threads have stopped".into()))
                }
            })
            .collect()
    }
}

/// Channels for `num_envs` envs: at most one job per env is in flight, so `num_envs` (plus one stop
/// per worker) bounds the job queue and `send` never blocks.
pub(crate) fn action_queue(num_envs: usize, num_workers: usize) -> (ActionQueue, WorkerChannels) {
    let (job_tx, job_rx) = crossbeam_channel::bounded(num_envs + num_workers);
    let (done_tx, done_rx) = crossbeam_channel::bounded(num_envs);
    let parker = Parker::new();
    let waiter = Arc::new(Waiter { needed: AtomicUsize::new(usize::MAX), unparker: parker.unparker().clone() });
    (
        ActionQueue { jobs: job_tx, completions: done_rx, waiter: Arc::clone(&waiter), parker: Mutex::new(parker) },
        WorkerChannels { jobs: job_rx, completions: done_tx, waiter },
    )
}

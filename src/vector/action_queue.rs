//! The jobs workers take, and the completions they report, over lock-free crossbeam channels.
use crossbeam_channel::{Receiver, Sender};

use crate::error::Error;

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
    pub result: Result<(), Error>,
}

pub(crate) struct ActionQueue {
    pub jobs: Sender<Job>,
    pub completions: Receiver<Completion>,
}

pub(crate) struct WorkerChannels {
    pub jobs: Receiver<Job>,
    pub completions: Sender<Completion>,
}

/// Channels for `num_envs` envs: at most one job per env is in flight, so `num_envs` (plus one stop
/// per worker) bounds the job queue and `send` never blocks.
pub(crate) fn action_queue(num_envs: usize, num_workers: usize) -> (ActionQueue, WorkerChannels) {
    let (job_tx, job_rx) = crossbeam_channel::bounded(num_envs + num_workers);
    let (done_tx, done_rx) = crossbeam_channel::bounded(num_envs);
    (ActionQueue { jobs: job_tx, completions: done_rx }, WorkerChannels { jobs: job_rx, completions: done_tx })
}

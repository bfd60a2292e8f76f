//! The threads that step the envs: a rayon pool whose tasks drain the lock-free job queue.
//!
//! Jobs stay in the crossbeam queue of [`super::action_queue`] rather than becoming rayon tasks one
//! by one, because in sync mode the calling (Python) thread takes jobs from that queue too, and a
//! thread outside a rayon pool cannot run the pool's tasks. So `dispatch` spawns at most one task
//! per thread, each taking jobs until the queue is empty; the queue's order (resets first) is the
//! order jobs start in, and whichever thread is free takes the next one, which balances a reset's
//! stall as work stealing would.
//!
//! Rayon does not join its threads when a pool is dropped; the pool is built with a spawn handler
//! that keeps their `JoinHandle`s, so `shut_down` returns only once every thread has ended.
use std::sync::Arc;
use std::thread::JoinHandle;

use rayon::{ThreadBuilder, ThreadPool, ThreadPoolBuilder};

use super::action_queue::{Completion, WorkerChannels};
use super::config::AutoresetMode;
use super::env_slot::{run_job, run_reset_ahead, SharedEnvs};

/// What every task of the pool runs: take queued jobs, run them, report their completions; when no
/// job is left, run the resets queued ahead.
struct JobRunner {
    envs: SharedEnvs,
    channels: WorkerChannels,
    mode: AutoresetMode,
}

impl JobRunner {
    fn run_queued_jobs(&self) {
        loop {
            if let Some(job) = self.channels.next_job() {
                let result = run_job(&self.envs, job, self.mode);
                if !self.channels.complete(Completion { env_id: job.env_id, result }) {
                    return;
                }
            } else if let Some(env_id) = self.channels.next_reset_ahead() {
                run_reset_ahead(&self.envs, env_id);
            } else {
                return;
            }
        }
    }
}

pub(crate) struct WorkerPool {
    /// `None` once shut down or abandoned.
    pool: Option<ThreadPool>,
    threads: Vec<JoinHandle<()>>,
    runner: Arc<JobRunner>,
}

impl WorkerPool {
    /// Starts `num_threads` threads named `torchwm-atari-<i>`; with `affinity_offset`, thread `i` is
    /// pinned to core `(offset + i) % cores`.
    pub fn start(
        envs: &SharedEnvs,
        channels: WorkerChannels,
        num_threads: usize,
        mode: AutoresetMode,
        affinity_offset: Option<usize>,
    ) -> std::io::Result<Self> {
        debug_assert!(num_threads > 0, "VectorConfig::effective_num_threads is at least 1");
        let mut threads = Vec::with_capacity(num_threads);
        let cores = core_affinity::get_core_ids().unwrap_or_default();
        let pool = ThreadPoolBuilder::new()
            .num_threads(num_threads)
            .thread_name(|index| format!("torchwm-atari-{index}"))
            .start_handler(move |index| pin_to_core(&cores, affinity_offset, index))
            // Jobs catch their own panics (`run_job`); one here is a bug in the pool's own code, and
            // rayon's default would abort the process.
            .panic_handler(|_| eprintln!("torchwm: a worker-pool task panicked"))
            .spawn_handler(|thread| spawn_joinable(thread, &mut threads))
            .build();
        let pool = match pool {
            Ok(pool) => pool,
            Err(error) => {
                // Rayon ends the threads it did start; they must be gone before the error is reported.
                threads.into_iter().for_each(|thread| drop(thread.join()));
                return Err(std::io::Error::other(error));
            }
        };
        let runner = Arc::new(JobRunner { envs: Arc::clone(envs), channels, mode });
        Ok(Self { pool: Some(pool), threads, runner })
    }

    /// Has up to `jobs` threads take jobs from the queue (each until it is empty): called after
    /// queueing `jobs` jobs, so every queued job is taken by a task spawned after it was queued.
    pub fn dispatch(&self, jobs: usize) {
        let Some(pool) = &self.pool else { return };
        for _ in 0..jobs.min(pool.current_num_threads()) {
            let runner = Arc::clone(&self.runner);
            pool.spawn(move || runner.run_queued_jobs());
        }
    }

    /// Ends the threads once their tasks are done, and joins them. Idempotent.
    pub fn shut_down(&mut self) {
        // Dropping the pool lets its threads exit once idle; joining waits for that.
        drop(self.pool.take());
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
    }

    /// In a forked child, where the threads do not exist: forgets them without waiting or waking any
    /// (the pool's locks may have been held by a thread at the fork).
    pub fn abandon(&mut self) {
        std::mem::forget(self.pool.take());
        self.threads.clear();
    }
}

impl Drop for WorkerPool {
    fn drop(&mut self) {
        self.shut_down();
    }
}

fn pin_to_core(cores: &[core_affinity::CoreId], affinity_offset: Option<usize>, index: usize) {
    if let Some(offset) = affinity_offset {
        if let Some(&core) = cores.get(offset.wrapping_add(index) % cores.len().max(1)) {
            core_affinity::set_for_current(core);
        }
    }
}

/// Spawns a pool thread as rayon would, keeping its handle to join it at shut-down.
fn spawn_joinable(thread: ThreadBuilder, threads: &mut Vec<JoinHandle<()>>) -> std::io::Result<()> {
    let mut builder = std::thread::Builder::new();
    if let Some(name) = thread.name() {
        builder = builder.name(name.to_owned());
    }
    if let Some(stack_size) = thread.stack_size() {
        builder = builder.stack_size(stack_size);
    }
    let handle = builder.spawn(move || thread.run())?;
    threads.push(handle);
    Ok(())
}

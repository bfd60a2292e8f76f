//! The threads that step the envs: a rayon pool whose tasks drain the lock-free job queue.
//!
//! Jobs stay in the crossbeam queue of [`super::action_queue`] rather than becoming rayon tasks one
//! by one, because in sync mode the calling (Python) thread takes jobs from that queue too, and a
//! thread outside a rayon pool cannot run the pool's tasks. So `dispatch` spawns at most one task
//! per thread, each taking jobs until the queue is empty; the queue's order (resets first) is the
//! order jobs start in, and whichever thread is free takes the next one, which balances a reset's
//! stall as work stealing would.
//!
//! Resets run ahead (see [`super::reset_ahead`]) go to a second pool of as many threads
//! (`torchwm-reset-<i>`), from the job whose step ended the episode (the caller's or a pool thread's): at normal priority with `reset_ahead="auto"`, which runs them only while the
//! caller leaves cores idle ([`super::reset_pacing`]); at the lowest priority (nice 19) with
//! `reset_ahead=True`, so that they take only CPU the steps and the caller's own work leave idle.
//!
//! Rayon does not join its threads when a pool is dropped; the pools are built with a spawn handler
//! that keeps their `JoinHandle`s, so `shut_down` returns only once every thread has ended.
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};
use std::thread::JoinHandle;

use rayon::{ThreadBuilder, ThreadPool, ThreadPoolBuilder};

use super::action_queue::{Completion, Job, WorkerChannels};
use super::config::{AutoresetMode, ResetAheadMode};
use super::env_slot::{run_job, run_reset_ahead, SharedEnvs};
use crate::ffi::lower_current_thread_priority;

/// What every task of the pool runs: take queued jobs, run them, report their completions.
struct JobRunner {
    envs: SharedEnvs,
    channels: WorkerChannels,
    mode: AutoresetMode,
    /// The reset threads, for the resets ahead that jobs queue; not kept alive by this (the pool owns it).
    background: Weak<ThreadPool>,
    /// Set at shut-down: resets ahead still queued are skipped rather than run before the threads end.
    /// Relaxed (both ways): it publishes nothing (a slot's data is behind its Mutex), and a reset that
    /// misses it only runs, as it would have without the flag; the joins order the rest.
    closing: AtomicBool,
}

impl JobRunner {
    fn run_queued_jobs(self: &Arc<Self>) {
        while let Some(job) = self.channels.next_job() {
            if !self.channels.complete(self.run_job(job)) {
                return;
            }
        }
    }

    /// Runs one job; a reset it queued ahead goes to a reset thread at once.
    fn run_job(self: &Arc<Self>, job: Job) -> Completion {
        let completion = run_job(&self.envs, job, self.mode);
        if matches!(completion.result, Ok(Some(_))) {
            if let Some(background) = self.background.upgrade() {
                let runner = Arc::clone(self);
                background.spawn(move || runner.run_reset_ahead(job.env_id));
            }
        }
        completion
    }

    fn run_reset_ahead(&self, env_id: usize) {
        if !self.closing.load(Ordering::Relaxed) {
            run_reset_ahead(&self.envs, env_id);
        }
    }
}

pub(crate) struct WorkerPool {
    /// `None` once shut down or abandoned.
    pool: Option<ThreadPool>,
    /// The threads that run resets ahead; `None` once shut down or abandoned, or without resets ahead.
    background: Option<Arc<ThreadPool>>,
    threads: Vec<JoinHandle<()>>,
    runner: Arc<JobRunner>,
}

impl WorkerPool {
    /// Starts `num_threads` threads named `torchwm-atari-<i>`, and with `reset_ahead` (`Auto` or
    /// `Always`) as many named `torchwm-reset-<i>`, at the lowest priority for `Always`; with
    /// `affinity_offset`, thread `i` of each is pinned to core `(offset + i) % cores`.
    pub fn start(
        envs: &SharedEnvs,
        channels: WorkerChannels,
        num_threads: usize,
        mode: AutoresetMode,
        affinity_offset: Option<usize>,
        reset_ahead: ResetAheadMode,
    ) -> std::io::Result<Self> {
        debug_assert!(num_threads > 0, "VectorConfig::effective_num_threads is at least 1");
        let mut threads = Vec::with_capacity(2 * num_threads);
        let pools = build_pool("torchwm-atari", num_threads, affinity_offset, false, &mut threads).and_then(|pool| {
            let low_priority = reset_ahead == ResetAheadMode::Always;
            let background = (reset_ahead != ResetAheadMode::Never)
                .then(|| build_pool("torchwm-reset", num_threads, affinity_offset, low_priority, &mut threads))
                .transpose()?
                .map(Arc::new);
            Ok((pool, background))
        });
        let (pool, background) = match pools {
            Ok(pools) => pools,
            Err(error) => {
                // Rayon ends the threads it did start; they must be gone before the error is reported.
                threads.into_iter().for_each(|thread| drop(thread.join()));
                return Err(std::io::Error::other(error));
            }
        };
        let runner = Arc::new(JobRunner {
            envs: Arc::clone(envs),
            channels,
            mode,
            background: background.as_ref().map_or_else(Weak::new, Arc::downgrade),
            closing: AtomicBool::new(false),
        });
        Ok(Self { pool: Some(pool), background, threads, runner })
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

    /// Runs one job on the calling thread, as a pool thread would.
    pub fn run_job(&self, job: Job) -> Completion {
        self.runner.run_job(job)
    }

    /// Ends the threads once their tasks are done, and joins them. Idempotent.
    pub fn shut_down(&mut self) {
        self.runner.closing.store(true, Ordering::Relaxed);
        // Dropping the pools lets their threads exit once idle; joining waits for that. (A step task
        // handing out a reset holds the reset pool a moment longer; the reset it spawns sees `closing`.)
        drop(self.pool.take());
        drop(self.background.take());
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
    }

    /// In a forked child, where the threads do not exist: forgets them without waiting or waking any
    /// (the pool's locks may have been held by a thread at the fork).
    pub fn abandon(&mut self) {
        std::mem::forget(self.pool.take());
        std::mem::forget(self.background.take());
        self.threads.clear();
    }
}

impl Drop for WorkerPool {
    fn drop(&mut self) {
        self.shut_down();
    }
}

/// A pool of `num_threads` threads named `<name>-<i>`, pinned as `start` says, at the lowest priority
/// when `low_priority`; their handles go into `threads`.
fn build_pool(
    name: &'static str,
    num_threads: usize,
    affinity_offset: Option<usize>,
    low_priority: bool,
    threads: &mut Vec<JoinHandle<()>>,
) -> Result<ThreadPool, rayon::ThreadPoolBuildError> {
    let cores = core_affinity::get_core_ids().unwrap_or_default();
    ThreadPoolBuilder::new()
        .num_threads(num_threads)
        .thread_name(move |index| format!("{name}-{index}"))
        .start_handler(move |index| {
            pin_to_core(&cores, affinity_offset, index);
            if low_priority {
                lower_current_thread_priority();
            }
        })
        // Jobs catch their own panics (`run_job`); one here is a bug in the pool's own code, and
        // rayon's default would abort the process.
        .panic_handler(|_| eprintln!("torchwm: a worker-pool task panicked"))
        .spawn_handler(|thread| spawn_joinable(thread, threads))
        .build()
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

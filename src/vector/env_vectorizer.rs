//! `AtariVectorEnv`: the send/recv protocol over the worker pool.
//!
//! Invariants: at most one job per env is in flight; `send` needs the env ids of the last `recv`
//! (or `reset`), so each action reaches the env that produced the observation it answers. Every
//! argument is checked before anything is queued, so a rejected call leaves the env usable.
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use super::action_queue::{action_queue, ActionQueue, Job};
use super::config::{AutoresetMode, VectorConfig};
use super::result_staging::BatchResult;
use super::worker::{run_job, spawn_workers, EnvSlot, SharedEnvs};
use crate::atari::AtariEnv;
use crate::error::{Error, Result};
use crate::fork::fork_generation;

pub struct AtariVectorEnv {
    config: VectorConfig,
    batch_size: usize,
    num_threads: usize,
    obs_size: usize,
    action_set: Vec<i32>,
    envs: SharedEnvs,
    queue: ActionQueue,
    workers: Vec<JoinHandle<()>>,
    /// Jobs queued whose completion has not been received yet.
    in_flight: usize,
    /// Env ids of the last batch returned, which the next `send` addresses; `None` until a reset
    /// and after a send.
    last_env_ids: Option<Vec<usize>>,
    has_reset: bool,
    closed: bool,
    /// A failure that left jobs unaccounted for; the env must be reset before it is used again.
    broken: Option<Error>,
    fork_generation: u64,
}

impl AtariVectorEnv {
    pub fn new(config: VectorConfig) -> Result<Self> {
        config.validate()?;
        let batch_size = config.effective_batch_size();
        let num_threads = config.effective_num_threads();
        let same_step = config.autoreset_mode == AutoresetMode::SameStep;
        let mut slots = Vec::with_capacity(config.num_envs);
        for _ in 0..config.num_envs {
            // Unseeded, like ale_py: `reset(seed=...)` seeds each env and reloads its ROM.
            slots.push(Mutex::new(EnvSlot::new(AtariEnv::new(&config.rom_path, &config.env, None)?, same_step)));
        }
        let (action_set, obs_size) = {
            let first = slots[0].lock().expect("fresh mutex");
            (first.env.action_set().to_vec(), first.env.stacked_obs_size())
        };
        let envs: SharedEnvs = Arc::new(slots);
        let (queue, worker_channels) = action_queue(config.num_envs, num_threads);
        let workers =
            spawn_workers(&envs, worker_channels, num_threads, config.autoreset_mode, config.thread_affinity_offset)
                .map_err(|e| Error::Ale(format!("cannot start worker threads: {e}")))?;
        Ok(Self {
            config,
            batch_size,
            num_threads,
            obs_size,
            action_set,
            envs,
            queue,
            workers,
            in_flight: 0,
            last_env_ids: None,
            has_reset: false,
            closed: false,
            broken: None,
            fork_generation: fork_generation(),
        })
    }

    pub fn num_envs(&self) -> usize {
        self.config.num_envs
    }
    pub fn batch_size(&self) -> usize {
        self.batch_size
    }
    pub fn num_threads(&self) -> usize {
        self.num_threads
    }
    /// Bytes of one env's stacked observation.
    pub fn obs_size(&self) -> usize {
        self.obs_size
    }
    /// ALE action ids the action indices map to.
    pub fn action_set(&self) -> &[i32] {
        &self.action_set
    }
    pub fn config(&self) -> &VectorConfig {
        &self.config
    }
    pub fn is_closed(&self) -> bool {
        self.closed
    }

    fn check_usable(&self) -> Result<()> {
        if self.closed {
            return Err(Error::InvalidState("the environment is closed".into()));
        }
        if self.fork_generation != fork_generation() {
            return Err(Error::InvalidState(
                "this AtariVectorEnv was created before fork(); its worker threads do not exist in this \
                 process: create a new environment in the child"
                    .into(),
            ));
        }
        Ok(())
    }

    /// Resets `env_ids` (unique, in range) with per-env seeds (`None` keeps the env's RNG going) and
    /// returns the batch: all envs in sync mode, the first `batch_size` ready in async mode.
    pub fn reset(&mut self, env_ids: &[usize], seeds: &[Option<u32>]) -> Result<BatchResult> {
        self.check_usable()?;
        let num_envs = self.config.num_envs;
        if env_ids.len() != seeds.len() {
            return Err(Error::InvalidArgument(format!(
                "reset needs one seed per env: got {} env ids and {} seeds",
                env_ids.len(),
                seeds.len()
            )));
        }
        let mut is_reset = vec![false; num_envs];
        for &env_id in env_ids {
            if env_id >= num_envs {
                return Err(Error::InvalidArgument(format!("reset env id {env_id} is out of range [0, {num_envs})")));
            }
            if std::mem::replace(&mut is_reset[env_id], true) {
                return Err(Error::InvalidArgument(format!("reset has a duplicate env id {env_id}")));
            }
        }
        let partial = env_ids.len() != num_envs;
        if partial {
            if !self.has_reset || self.broken.is_some() {
                return Err(Error::InvalidState(format!(
                    "the first reset() must reset every environment (got {} of {num_envs})",
                    env_ids.len()
                )));
            }
            if self.batch_size != num_envs {
                return Err(Error::InvalidArgument(format!(
                    "a partial reset (reset_mask) needs batch_size == num_envs, got batch_size={} and num_envs={num_envs}",
                    self.batch_size
                )));
            }
        }
        // Jobs still running (async mode, or an abandoned send) finish before envs are reset.
        self.drain();
        self.broken = None;
        for (&env_id, &seed) in env_ids.iter().zip(seeds) {
            self.lock_env(env_id)?.env.set_seed(seed);
        }
        self.enqueue(env_ids.iter().map(|&env_id| Job::Run { env_id, force_reset: true }))?;
        self.has_reset = true;
        if partial {
            // Sync mode: envs left out report their current state alongside the reset ones.
            let completed = self.collect(env_ids.len())?;
            let batch = self.stage_ordered(&completed)?;
            self.last_env_ids = Some((0..num_envs).collect());
            Ok(batch)
        } else {
            self.recv_batch()
        }
    }

    /// Queues one step for each env of the last batch: `action_indices[i]` (an index into
    /// [`action_set`](Self::action_set)) and `paddle_strengths[i]` go to the env in row `i` of that batch.
    pub fn send(&mut self, action_indices: &[i64], paddle_strengths: &[f32]) -> Result<()> {
        self.check_usable()?;
        if let Some(error) = &self.broken {
            return Err(Error::InvalidState(format!(
                "the environment must be reset after an earlier failure: {error}"
            )));
        }
        if !self.has_reset {
            return Err(Error::InvalidState("send() called before reset()".into()));
        }
        if self.last_env_ids.is_none() {
            return Err(Error::InvalidState("send() called twice without recv(): call recv() first".into()));
        }
        if action_indices.len() != self.batch_size || paddle_strengths.len() != self.batch_size {
            return Err(Error::InvalidArgument(format!(
                "expected {} actions (batch_size), got {}",
                self.batch_size,
                action_indices.len()
            )));
        }
        let num_actions = self.action_set.len() as i64;
        if let Some(bad) = action_indices.iter().find(|&&a| !(0..num_actions).contains(&a)) {
            return Err(Error::InvalidArgument(format!("actions must be integers in [0, {num_actions}), got {bad}")));
        }
        if let Some(bad) = paddle_strengths.iter().find(|s| !s.is_finite()) {
            return Err(Error::InvalidArgument(format!("paddle strengths must be finite, got {bad}")));
        }
        let env_ids = self.last_env_ids.take().expect("checked above");
        // Envs about to reset go first: a reset (ALE's own ~60 frames plus noops) is many steps
        // long, and starting it first keeps the other threads from idling at the end of the batch.
        let mut resets_first = Vec::with_capacity(env_ids.len());
        let mut steps = Vec::with_capacity(env_ids.len());
        for ((&env_id, &action), &strength) in env_ids.iter().zip(action_indices).zip(paddle_strengths) {
            let mut slot = self.lock_env(env_id)?;
            slot.env.set_action(action as usize, strength)?;
            let resets = self.config.autoreset_mode == AutoresetMode::NextStep && slot.env.is_episode_over();
            if resets {
                resets_first.push(env_id)
            } else {
                steps.push(env_id)
            }
        }
        resets_first.extend(steps);
        self.enqueue(resets_first.into_iter().map(|env_id| Job::Run { env_id, force_reset: false }))
    }

    /// Waits for the next batch: all envs in env-id order in sync mode, otherwise the first
    /// `batch_size` envs to finish (their ids are in `env_ids`).
    pub fn recv(&mut self) -> Result<BatchResult> {
        self.check_usable()?;
        if let Some(error) = &self.broken {
            return Err(Error::InvalidState(format!(
                "the environment must be reset after an earlier failure: {error}"
            )));
        }
        if self.in_flight < self.batch_size {
            return Err(Error::InvalidState(if self.has_reset {
                "recv() called without a matching send(): call send(actions) first".into()
            } else {
                "recv() called before reset()".into()
            }));
        }
        self.recv_batch()
    }

    pub fn step(&mut self, action_indices: &[i64], paddle_strengths: &[f32]) -> Result<BatchResult> {
        self.send(action_indices, paddle_strengths)?;
        self.recv()
    }

    /// Stops and joins the workers. Idempotent.
    pub fn close(&mut self) {
        if self.closed {
            return;
        }
        self.closed = true;
        if self.fork_generation != fork_generation() {
            // In a forked child the workers do not exist: nothing to stop or join.
            self.workers.clear();
            return;
        }
        // Jobs still in flight finish before the workers take their Stop.
        self.drain();
        for _ in 0..self.workers.len() {
            let _ = self.queue.jobs.send(Job::Stop);
        }
        for worker in self.workers.drain(..) {
            let _ = worker.join();
        }
    }

    fn lock_env(&self, env_id: usize) -> Result<std::sync::MutexGuard<'_, EnvSlot>> {
        self.envs[env_id]
            .lock()
            .map_err(|_| Error::WorkerPanic(format!("env {env_id} was poisoned by an earlier panic")))
    }

    fn enqueue(&mut self, jobs: impl Iterator<Item = Job>) -> Result<()> {
        for job in jobs {
            self.queue.jobs.send(job).map_err(|_| Error::WorkerPanic("worker threads have stopped".into()))?;
            self.in_flight += 1;
        }
        Ok(())
    }

    /// Waits for every queued job and discards the results.
    fn drain(&mut self) {
        let _ = self.wait_for(self.in_flight, true);
        self.in_flight = 0;
    }

    /// Waits for `count` completions; with `help`, runs queued jobs on this thread meanwhile.
    fn wait_for(&self, count: usize, help: bool) -> Result<Vec<super::action_queue::Completion>> {
        let (envs, mode) = (&self.envs, self.config.autoreset_mode);
        self.queue.wait_for(count, help, |env_id, force_reset| run_job(envs, env_id, force_reset, mode))
    }

    /// Receives `count` completions, in arrival order. A failed job fails the batch (after all
    /// `count` are in, so no completion is left behind to confuse the next batch).
    fn collect(&mut self, count: usize) -> Result<Vec<usize>> {
        let mut env_ids = Vec::with_capacity(count);
        let mut first_error = None;
        // Sync mode: the caller steps envs too. Async mode: every core has a worker already.
        let completions = self.wait_for(count, self.batch_size == self.config.num_envs)?;
        self.in_flight -= count;
        for completion in completions {
            if let Err(error) = completion.result {
                first_error.get_or_insert(match error {
                    Error::Ale(message) => Error::Ale(format!("env {}: {message}", completion.env_id)),
                    other => other,
                });
            }
            env_ids.push(completion.env_id);
        }
        if let Some(error) = first_error {
            self.broken = Some(error.clone());
            return Err(error);
        }
        Ok(env_ids)
    }

    fn recv_batch(&mut self) -> Result<BatchResult> {
        let completed = self.collect(self.batch_size)?;
        let batch = if self.batch_size == self.config.num_envs {
            self.stage_ordered(&completed)?
        } else {
            let mut batch = BatchResult::new(self.batch_size, self.obs_size, self.same_step());
            for (row, &env_id) in completed.iter().enumerate() {
                batch.stage(row, env_id, &*self.lock_env(env_id)?, true);
            }
            batch
        };
        self.last_env_ids = Some(batch.env_ids.iter().map(|&id| id as usize).collect());
        Ok(batch)
    }

    /// Sync mode: row `i` is env `i`. Final observations are reported only for the envs that ran.
    fn stage_ordered(&self, ran: &[usize]) -> Result<BatchResult> {
        let num_envs = self.config.num_envs;
        let mut batch = BatchResult::new(num_envs, self.obs_size, self.same_step());
        let mut just_ran = vec![false; num_envs];
        for &env_id in ran {
            just_ran[env_id] = true;
        }
        for (env_id, &ran) in just_ran.iter().enumerate() {
            batch.stage(env_id, env_id, &*self.lock_env(env_id)?, ran);
        }
        Ok(batch)
    }

    fn same_step(&self) -> bool {
        self.config.autoreset_mode == AutoresetMode::SameStep
    }
}

impl Drop for AtariVectorEnv {
    fn drop(&mut self) {
        self.close();
    }
}

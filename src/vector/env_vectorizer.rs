//! `AtariVectorEnv`: the send/recv protocol over the worker pool.
//!
//! Invariants: at most one job per env is in flight; `send` needs the env ids of the last `recv`
//! (or `reset`), so each action reaches the env that produced the observation it answers. Every
//! argument is checked before anything is queued, so a rejected call leaves the env usable.
//!
//! Blocking waits ask the env's interrupt check (see [`AtariVectorEnv::set_interrupt_check`]) every
//! few milliseconds; a wait it gives up keeps the batch in flight: `recv` (or `step`, `send`, which
//! receive and drop it first) picks it up later, so an interrupted `step` leaves the env steppable.
use std::sync::{Arc, Mutex, TryLockError};

use super::action_queue::{action_queue, ActionQueue, Job};
use super::batch_result::BatchResult;
use super::config::{AutoresetMode, ResetAheadMode, VectorConfig};
use super::env_slot::{EnvSlot, SharedEnvs};
use super::reset_pacing::ResetPacing;
use super::worker_pool::WorkerPool;
use crate::atari::AtariEnv;
use crate::error::{Error, Result};
use crate::ffi::fork_generation;

mod batches;
mod render;
mod saved_states;

pub struct AtariVectorEnv {
    config: VectorConfig,
    batch_size: usize,
    num_threads: usize,
    obs_size: usize,
    action_set: Vec<i32>,
    /// Each env's game's minimal action set (ALE ids).
    minimal_action_sets: Vec<Vec<i32>>,
    envs: SharedEnvs,
    queue: ActionQueue,
    workers: WorkerPool,
    /// Jobs queued whose completion has not been received yet.
    in_flight: usize,
    /// Env ids of the last batch returned, which the next `send` addresses; `None` until a reset
    /// and after a send.
    last_env_ids: Option<Vec<usize>>,
    has_reset: bool,
    closed: bool,
    /// A failure that left jobs unaccounted for; the env must be reset before it is used again.
    broken: Option<Error>,
    /// A batch whose wait was interrupted: sent, not yet received.
    interrupted_batch: bool,
    interrupt_check: Box<dyn Fn() -> Result<()> + Send + Sync>,
    fork_generation: u64,
    /// Whether the resets of each sync batch run ahead.
    pacing: ResetPacing,
}

impl AtariVectorEnv {
    pub fn new(config: VectorConfig) -> Result<Self> {
        config.validate()?;
        let batch_size = config.effective_batch_size();
        let num_threads = config.effective_num_threads();
        let same_step = config.autoreset_mode == AutoresetMode::SameStep;
        let mut slots = Vec::with_capacity(config.num_envs);
        let mut minimal_action_sets = Vec::with_capacity(config.num_envs);
        for env_id in 0..config.num_envs {
            // Unseeded, like ale_py: `reset(seed=...)` seeds each env and reloads its ROM.
            let env = AtariEnv::new(config.rom_for(env_id), &config.env_config(env_id), None)?;
            minimal_action_sets.push(env.minimal_action_set().to_vec());
            slots.push(Mutex::new(EnvSlot::new(env, same_step)));
        }
        let (action_set, obs_size) = {
            let first = slots[0].lock().expect("fresh mutex");
            (first.env.action_set().to_vec(), first.env.stacked_obs_size())
        };
        // One action space for the batch: a pool of several games takes the full action set.
        if slots.iter().any(|slot| slot.lock().expect("fresh mutex").env.action_set() != action_set.as_slice()) {
            return Err(Error::InvalidArgument(
                "the envs' games have different minimal action sets: a pool of several games needs \
                 full_action_space=True"
                    .into(),
            ));
        }
        let envs: SharedEnvs = Arc::new(slots);
        let (queue, worker_channels) = action_queue(config.num_envs);
        // Resets run ahead only in next-step autoreset (the others reset within the step) and sync mode
        // (an async batch is whichever envs finish first: a reset holds none up; ahead gained nothing).
        let resets_ahead_apply = config.autoreset_mode == AutoresetMode::NextStep && batch_size == config.num_envs;
        let reset_ahead = if resets_ahead_apply { config.reset_ahead } else { ResetAheadMode::Never };
        let workers = WorkerPool::start(
            &envs,
            worker_channels,
            num_threads,
            config.autoreset_mode,
            config.thread_affinity_offset,
            reset_ahead,
        )
        .map_err(|e| Error::ThreadSpawn(std::sync::Arc::new(e)))?;
        Ok(Self {
            config,
            batch_size,
            num_threads,
            obs_size,
            action_set,
            minimal_action_sets,
            envs,
            queue,
            workers,
            in_flight: 0,
            last_env_ids: None,
            has_reset: false,
            closed: false,
            broken: None,
            interrupted_batch: false,
            interrupt_check: Box::new(|| Ok(())),
            fork_generation: fork_generation(),
            pacing: ResetPacing::new(reset_ahead, resets_ahead_apply),
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
    /// Each env's game's minimal action set (ALE ids): in a pool of several games, what each env's
    /// game uses of the full action set.
    pub fn minimal_action_sets(&self) -> &[Vec<i32>] {
        &self.minimal_action_sets
    }
    pub fn config(&self) -> &VectorConfig {
        &self.config
    }
    pub fn is_closed(&self) -> bool {
        self.closed
    }

    /// Sets what blocking waits call every few milliseconds: an error from it (`Interrupted` for
    /// Ctrl-C, `Closed` for a close from another thread) gives the wait up, keeping the work in flight.
    pub fn set_interrupt_check(&mut self, check: impl Fn() -> Result<()> + Send + Sync + 'static) {
        self.interrupt_check = Box::new(check);
    }

    fn check_usable(&self) -> Result<()> {
        if self.closed {
            return Err(Error::Closed);
        }
        if self.fork_generation != fork_generation() {
            return Err(created_before_fork());
        }
        Ok(())
    }

    /// Resets `env_ids` (unique, in range) with per-env seeds (`None` keeps the env's RNG going) and
    /// returns the batch: all envs in sync mode, the first `batch_size` ready in async mode.
    pub fn reset(&mut self, env_ids: &[usize], seeds: &[Option<u32>]) -> Result<BatchResult> {
        self.check_usable()?;
        let partial = self.check_reset(env_ids, seeds)?;
        let num_envs = self.config.num_envs;
        // Jobs still running (async mode, or an abandoned send) finish before envs are reset.
        self.drain(true)?;
        self.broken = None;
        for (&env_id, &seed) in env_ids.iter().zip(seeds) {
            let mut slot = self.lock_env(env_id)?;
            slot.env.set_seed(seed);
            // Unseeded, a reset done ahead is this reset; seeded, it reloads the ROM over it.
            if seed.is_some() {
                slot.ahead.cancel();
            }
        }
        self.enqueue(env_ids.iter().map(|&env_id| Job::reset(env_id)))?;
        self.has_reset = true;
        if partial {
            // Sync mode: envs left out report their current state alongside the reset ones.
            // Not interruptible: an interrupted partial reset would leave fewer envs in flight than a batch.
            let completed = self.collect(env_ids.len(), false)?;
            let batch = self.fill_ordered(&completed)?;
            self.last_env_ids = Some((0..num_envs).collect());
            self.pacing.batch_returned(false);
            Ok(batch)
        } else {
            self.recv_batch()
        }
    }

    /// The checks of `reset`'s arguments; returns whether the reset is partial.
    fn check_reset(&self, env_ids: &[usize], seeds: &[Option<u32>]) -> Result<bool> {
        let num_envs = self.config.num_envs;
        if env_ids.len() != seeds.len() {
            return Err(Error::InvalidArgument(format!(
                "reset needs one seed per env: got {} env ids and {} seeds",
                env_ids.len(),
                seeds.len()
            )));
        }
        if let Some(bad) = seeds.iter().flatten().find(|&&seed| i32::try_from(seed).is_err()) {
            return Err(Error::InvalidArgument(format!("seeds must be in [0, 2**31), got {bad}")));
        }
        self.check_env_ids("reset", env_ids)?;
        let partial = env_ids.len() != num_envs;
        // ale_py 0.12.1's rules and wording.
        if partial && (!self.has_reset || self.broken.is_some()) {
            return Err(Error::InvalidState(format!(
                "the first reset() must reset every environment (got {} of {num_envs})",
                env_ids.len()
            )));
        }
        if partial && self.batch_size != num_envs {
            return Err(Error::InvalidArgument(format!(
                "Partial reset is not supported for async mode where batch_size < num_envs (got batch_size={}, \
                 num_envs={num_envs})",
                self.batch_size
            )));
        }
        Ok(partial)
    }

    /// Env ids for `call`: each in range, none twice.
    fn check_env_ids(&self, call: &str, env_ids: &[usize]) -> Result<()> {
        let num_envs = self.config.num_envs;
        let mut seen = vec![false; num_envs];
        for &env_id in env_ids {
            if env_id >= num_envs {
                return Err(Error::InvalidArgument(format!("{call} env id {env_id} is out of range [0, {num_envs})")));
            }
            if std::mem::replace(&mut seen[env_id], true) {
                return Err(Error::InvalidArgument(format!("{call} has a duplicate env id {env_id}")));
            }
        }
        Ok(())
    }

    /// Queues one step for each env of the last batch: `action_indices[i]` (an index into
    /// [`action_set`](Self::action_set)) and `paddle_strengths[i]` go to the env in row `i` of that batch.
    pub fn send(&mut self, action_indices: &[i64], paddle_strengths: &[f32]) -> Result<()> {
        self.pacing.caller_sent();
        self.check_steppable()?;
        if self.interrupted_batch {
            // The caller gave up waiting for it (Ctrl-C): it is received and dropped here.
            self.recv_batch()?;
        }
        if self.last_env_ids.is_none() {
            return Err(Error::AlreadyPending("send() called twice without recv(): call recv() first".into()));
        }
        self.check_actions(action_indices, paddle_strengths)?;
        let env_ids = self.last_env_ids.take().unwrap_or_default();
        // Whether the steps that end an episode start its reset at once (sync, next-step mode only).
        let reset_ahead_at_end = self.pacing.run_ahead();
        // Envs about to reset go first: a reset (ALE's own ~60 frames plus noops) is many steps
        // long, and starting it first keeps the other threads from idling at the end of the batch.
        // Envs whose reset is still running ahead: at the lowest priority (`reset_ahead=True`) their
        // jobs go first, so the thread that takes one waits for that reset, leaving its core to it while
        // the others step; at normal priority (`"auto"`) they go last, so every thread steps the others
        // first while the reset shares the cores, and only the last job waits for what is left of it.
        let mut resets = Vec::with_capacity(env_ids.len());
        let mut steps = Vec::with_capacity(env_ids.len());
        let mut running_ahead = Vec::new();
        for ((&env_id, &action), &strength) in env_ids.iter().zip(action_indices).zip(paddle_strengths) {
            let action_index = action as usize;
            let job = Job { env_id, force_reset: false, action_index, paddle_strength: strength, reset_ahead_at_end };
            match self.envs[env_id].try_lock() {
                Ok(slot) if self.config.autoreset_mode == AutoresetMode::NextStep && slot.env.is_episode_over() => {
                    resets.push(job)
                }
                Ok(_) | Err(TryLockError::Poisoned(_)) => steps.push(job),
                Err(TryLockError::WouldBlock) => running_ahead.push(job),
            }
        }
        if self.config.reset_ahead == ResetAheadMode::Always {
            self.enqueue(running_ahead.into_iter().chain(resets).chain(steps))
        } else {
            self.enqueue(resets.into_iter().chain(steps).chain(running_ahead))
        }
    }

    fn check_steppable(&self) -> Result<()> {
        self.check_usable()?;
        if let Some(error) = &self.broken {
            return Err(Error::InvalidState(format!(
                "the environment must be reset after an earlier failure: {error}"
            )));
        }
        if !self.has_reset {
            return Err(Error::InvalidState("send() called before reset()".into()));
        }
        Ok(())
    }

    /// The one check of actions: one per env of the batch, indices into the action set, finite strengths.
    fn check_actions(&self, action_indices: &[i64], paddle_strengths: &[f32]) -> Result<()> {
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
        Ok(())
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
            return Err(if self.has_reset {
                Error::NoPendingCall("recv() called without a matching send(): call send(actions) first".into())
            } else {
                Error::NoPendingCall("recv() called before reset()".into())
            });
        }
        self.recv_batch()
    }

    /// `send` then `recv`, as one call: interrupted while waiting, it leaves the batch for the next
    /// `step`, `send` or `recv` to collect.
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
            self.workers.abandon();
            return;
        }
        // Jobs not started are dropped; running ones finish before the workers end.
        self.in_flight -= self.queue.discard_queued_jobs();
        let _ = self.drain(false);
        self.workers.shut_down();
    }
}

/// The error of any call, in a forked child, on an env created before the fork.
pub fn created_before_fork() -> Error {
    Error::InvalidState(
        "this AtariVectorEnv was created before fork(); its worker threads do not exist in this process: create \
         a new environment in the child"
            .into(),
    )
}

impl Drop for AtariVectorEnv {
    fn drop(&mut self) {
        self.close();
    }
}

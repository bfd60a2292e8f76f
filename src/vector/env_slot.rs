//! An env and what its last job produced; running one job (a reset or a step) on it.
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex};

use super::action_queue::{Completion, Job};
use super::config::AutoresetMode;
pub(crate) use super::reset_ahead::{EndedRow, ResetAhead};
use super::saved_state::SlotState;
use crate::atari::{AtariEnv, StepOutput};
use crate::error::{panic_message, Error, Result};

/// An env with what its last job produced.
pub(crate) struct EnvSlot {
    pub env: AtariEnv,
    pub output: StepOutput,
    /// Same-step mode: the observation that ended the episode, before the automatic reset.
    pub final_obs: Vec<u8>,
    pub has_final_obs: bool,
    /// Next-step mode: the reset that the ended episode's next step will be, done ahead of it.
    pub ahead: ResetAhead,
}

impl EnvSlot {
    pub fn new(env: AtariEnv, same_step: bool) -> Self {
        let final_size = if same_step { env.stacked_obs_size() } else { 0 };
        Self {
            env,
            output: StepOutput::default(),
            final_obs: vec![0; final_size],
            has_final_obs: false,
            ahead: ResetAhead::default(),
        }
    }

    /// Runs a job: a reset (`force_reset`) or a step, which resets instead when the episode is over
    /// in next-step mode. A reset already done ahead is that reset: its result is taken as it is.
    /// A step that ends its episode with `job.reset_ahead_at_end` queues the next reset ahead and
    /// returns its row, which the caller must have a reset thread run.
    fn run(&mut self, job: Job, mode: AutoresetMode) -> Result<Option<Box<EndedRow>>> {
        self.has_final_obs = false;
        if let Some(output) = self.ahead.take() {
            self.output = output?;
            return Ok(None);
        }
        if job.force_reset {
            self.env.reset()?;
            self.output = self.env.output()?;
            return Ok(None);
        }
        self.env.set_action(job.action_index, job.paddle_strength);
        match mode {
            AutoresetMode::NextStep => {
                if self.env.is_episode_over() {
                    self.env.reset()?;
                } else {
                    self.env.step()?;
                }
                self.output = self.env.output()?;
                if job.reset_ahead_at_end && self.env.is_episode_over() {
                    let ended = EndedRow::copy(&self.env, self.output);
                    self.ahead.queue();
                    return Ok(Some(ended));
                }
            }
            AutoresetMode::SameStep => self.step_and_reset_if_over()?,
            // An ended episode stays ended until the caller resets it: same observation and flags, no reward.
            AutoresetMode::Disabled if self.env.is_episode_over() => {
                self.output = StepOutput { reward: 0, raw_reward: 0, episode: None, ..self.output }
            }
            AutoresetMode::Disabled => {
                self.env.step()?;
                self.output = self.env.output()?;
            }
        }
        Ok(None)
    }

    /// The env's state with what the vectorizer keeps beside it. A reset queued ahead runs now: it is
    /// the reset the next step would take.
    pub fn save(&mut self) -> Result<SlotState> {
        let EnvSlot { env, ahead, .. } = self;
        ahead.run(env);
        let reset_ahead = ahead.saved()?;
        Ok(SlotState { env: self.env.save_state()?, output: self.output, reset_ahead })
    }

    /// Whether `state`'s buffers have this env's sizes (its settings were checked equal already).
    pub fn fits(&self, state: &SlotState) -> Result<bool> {
        let (height, width) = self.env.screen_dims()?;
        let ahead_fits = state.reset_ahead.as_ref().map_or(true, |saved| {
            saved.ended_obs.len() == self.env.stacked_obs_size()
                && Some(saved.ended_screen.len()) == height.checked_mul(width * 3)
        });
        Ok(ahead_fits && self.env.fits(&state.env))
    }

    /// Puts back a state that [`fits`](Self::fits).
    pub fn restore(&mut self, state: &SlotState) -> Result<()> {
        self.env.restore_state(&state.env)?;
        self.output = state.output;
        self.has_final_obs = false;
        self.ahead.restore(state.reset_ahead.as_ref());
        Ok(())
    }

    /// Same-step mode: a step that ends the episode keeps its observation in `final_obs` and resets.
    fn step_and_reset_if_over(&mut self) -> Result<()> {
        self.env.step()?;
        let ended = self.env.output()?;
        if !self.env.is_episode_over() {
            self.output = ended;
            return Ok(());
        }
        self.env.write_obs(&mut self.final_obs);
        self.has_final_obs = true;
        self.env.reset()?;
        // The new episode's lives and frame counters, the ended episode's rewards, flags and statistics.
        let started = self.env.output()?;
        self.output = StepOutput {
            reward: ended.reward,
            raw_reward: ended.raw_reward,
            episode: ended.episode,
            terminated: ended.terminated,
            truncated: ended.truncated,
            ..started
        };
        Ok(())
    }
}

/// A Mutex per env, no atomics: the lock that a job (or a reset ahead) takes on another thread than
/// the last one acquires what that one wrote before it unlocked (release/acquire), on every platform.
pub(crate) type SharedEnvs = Arc<Vec<Mutex<EnvSlot>>>;

/// Runs one job, turning a panic into an error (a panic must not unwind out of a worker or into Python).
/// A completion with an ended row has queued a reset ahead, which the caller must hand to a reset thread.
pub(crate) fn run_job(envs: &SharedEnvs, job: Job, mode: AutoresetMode) -> Completion {
    let result = catch_unwind(AssertUnwindSafe(|| lock_slot(envs, job.env_id)?.run(job, mode)))
        .unwrap_or_else(|payload| Err(Error::WorkerPanic(panic_message(payload.as_ref()))));
    Completion { env_id: job.env_id, result }
}

/// Runs the reset queued ahead for `env_id`, unless a job or the caller has taken or dropped it since.
/// It has no completion: whatever runs next on the env finds its result in the slot. A failure or panic
/// leaves the reset to that next job, which reports it.
pub(crate) fn run_reset_ahead(envs: &SharedEnvs, env_id: usize) {
    let _ = catch_unwind(AssertUnwindSafe(|| {
        if let Ok(mut slot) = lock_slot(envs, env_id) {
            let EnvSlot { env, ahead, .. } = &mut *slot;
            ahead.run(env);
        }
    }));
}

fn lock_slot(envs: &SharedEnvs, env_id: usize) -> Result<std::sync::MutexGuard<'_, EnvSlot>> {
    envs[env_id].lock().map_err(|_| Error::WorkerPanic(format!("env {env_id} was poisoned by an earlier panic")))
}

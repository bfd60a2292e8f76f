//! `AtariVectorEnv`'s jobs and batches: queueing jobs, waiting for their completions (interruptibly
//! or not), and filling the batch a `recv` or `reset` returns.

use super::AtariVectorEnv;
use crate::error::{Error, Result};
use crate::vector::action_queue::{Completion, Interrupt, Job};
use crate::vector::batch_result::{BatchResult, OptionalColumns};
use crate::vector::config::AutoresetMode;
use crate::vector::env_slot::{EndedRow, EnvSlot};

/// A job received for a batch: its env, and the row its step copied if it started a reset ahead.
pub(super) type Ran = (usize, Option<Box<EndedRow>>);

impl AtariVectorEnv {
    pub(super) fn lock_env(&self, env_id: usize) -> Result<std::sync::MutexGuard<'_, EnvSlot>> {
        self.envs[env_id]
            .lock()
            .map_err(|_| Error::WorkerPanic(format!("env {env_id} was poisoned by an earlier panic")))
    }

    /// Queues `jobs` in order (the pool's threads start them in that order) and wakes the pool.
    pub(super) fn enqueue(&mut self, jobs: impl Iterator<Item = Job>) -> Result<()> {
        let mut queued = 0;
        let sent = jobs.into_iter().try_for_each(|job| {
            self.queue.jobs.send(job).map_err(|_| Error::WorkerPanic("worker threads have stopped".into()))?;
            queued += 1;
            Ok(())
        });
        // Jobs queued before a failure are in flight too, and need a task to run them.
        self.in_flight += queued;
        self.workers.dispatch(queued);
        sent
    }

    /// Waits for every queued job and discards the results; `interruptible` lets the interrupt
    /// check give the wait up (close() waits regardless: the jobs must end before the workers do).
    pub(super) fn drain(&mut self, interruptible: bool) -> Result<()> {
        self.wait(self.in_flight, self.config.caller_steps_envs(), interruptible)?;
        self.in_flight = 0;
        self.interrupted_batch = false;
        Ok(())
    }

    /// Receives `count` completions, in arrival order: each env's id, and its row when its step ended
    /// the episode and started the next reset. A failed job fails the batch (after all `count` are in,
    /// so no completion is left behind to confuse the next batch).
    pub(super) fn collect(&mut self, count: usize, interruptible: bool) -> Result<Vec<Ran>> {
        let mut ran = Vec::with_capacity(count);
        let mut first_error = None;
        // Sync mode: the caller steps envs too. Async mode: every core has a worker already.
        let waited = self.wait(count, self.caller_helps(), interruptible);
        self.interrupted_batch = waited.is_err();
        let completions = waited?;
        self.in_flight -= count;
        for Completion { env_id, result } in completions {
            match result {
                Ok(ended) => ran.push((env_id, ended)),
                Err(error) => {
                    first_error.get_or_insert(match error {
                        Error::Ale(message) => Error::Ale(format!("env {env_id}: {message}")),
                        other => other,
                    });
                }
            }
        }
        if let Some(error) = first_error {
            self.broken = Some(error.clone());
            return Err(error);
        }
        Ok(ran)
    }

    /// Whether the calling thread steps envs too while it waits (see `VectorConfig::caller_steps_envs`).
    pub(super) fn caller_helps(&self) -> bool {
        self.batch_size == self.config.num_envs && self.config.caller_steps_envs()
    }

    /// Waits for `count` completions (with `help`, running queued jobs on this thread meanwhile);
    /// a wait the interrupt check gives up leaves them for the next wait.
    pub(super) fn wait(&mut self, count: usize, help: bool, interruptible: bool) -> Result<Vec<Completion>> {
        let never: Interrupt<'_> = &|| Ok(());
        let interrupt: Interrupt<'_> = if interruptible { &*self.interrupt_check } else { never };
        let workers = &self.workers;
        self.queue.wait_for(count, help, |job| workers.run_job(job), interrupt)
    }

    pub(super) fn recv_batch(&mut self) -> Result<BatchResult> {
        let completed = self.collect(self.batch_size, true)?;
        let batch = if self.batch_size == self.config.num_envs {
            self.fill_ordered(&completed)?
        } else {
            let mut batch = self.new_batch(self.batch_size);
            for (row, (env_id, ended)) in completed.iter().enumerate() {
                self.fill_ran_row(&mut batch, row, *env_id, ended.as_deref())?;
            }
            batch
        };
        self.pacing.batch_returned(completed.iter().any(|(_, ended)| ended.is_some()));
        self.last_env_ids = Some(batch.env_ids.iter().map(|&id| id as usize).collect());
        Ok(batch)
    }

    /// Sync mode: row `i` is env `i`. Final observations are reported only for the envs that ran.
    pub(super) fn fill_ordered(&self, ran: &[Ran]) -> Result<BatchResult> {
        let num_envs = self.config.num_envs;
        let mut batch = self.new_batch(num_envs);
        let mut just_ran = vec![false; num_envs];
        for (env_id, ended) in ran {
            self.fill_ran_row(&mut batch, *env_id, *env_id, ended.as_deref())?;
            just_ran[*env_id] = true;
        }
        for env_id in (0..num_envs).filter(|&env_id| !just_ran[env_id]) {
            batch.fill_row(env_id, env_id, &*self.lock_env(env_id)?, false);
        }
        Ok(batch)
    }

    /// Row `row` from env `env_id`, whose job ran for this batch: from the row its step copied when it
    /// started a reset ahead (without waiting for the env, which may be resetting), else from the env.
    fn fill_ran_row(&self, batch: &mut BatchResult, row: usize, env_id: usize, ended: Option<&EndedRow>) -> Result<()> {
        match ended {
            Some(ended) => batch.fill_ended_row(row, env_id, ended),
            None => batch.fill_row(row, env_id, &*self.lock_env(env_id)?, true),
        }
        Ok(())
    }

    fn new_batch(&self, rows: usize) -> BatchResult {
        let columns = OptionalColumns {
            same_step: self.same_step(),
            episode_statistics: self.config.episode_statistics,
            ram: self.config.ram_in_info,
        };
        BatchResult::new(rows, self.obs_size, columns)
    }

    pub(super) fn same_step(&self) -> bool {
        self.config.autoreset_mode == AutoresetMode::SameStep
    }
}

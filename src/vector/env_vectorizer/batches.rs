//! `AtariVectorEnv`'s jobs and batches: queueing jobs, waiting for their completions (interruptibly
//! or not), and filling the batch a `recv` or `reset` returns.

use super::AtariVectorEnv;
use crate::error::{Error, Result};
use crate::vector::action_queue::{Completion, Interrupt, Job};
use crate::vector::batch_result::{BatchResult, OptionalColumns};
use crate::vector::config::AutoresetMode;
use crate::vector::env_slot::{run_job, EnvSlot};

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

    /// Receives `count` completions, in arrival order. A failed job fails the batch (after all
    /// `count` are in, so no completion is left behind to confuse the next batch).
    pub(super) fn collect(&mut self, count: usize, interruptible: bool) -> Result<Vec<usize>> {
        let mut env_ids = Vec::with_capacity(count);
        let mut first_error = None;
        // Sync mode: the caller steps envs too. Async mode: every core has a worker already.
        let waited = self.wait(count, self.caller_helps(), interruptible);
        self.interrupted_batch = waited.is_err();
        let completions = waited?;
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

    /// Whether the calling thread steps envs too while it waits (see `VectorConfig::caller_steps_envs`).
    pub(super) fn caller_helps(&self) -> bool {
        self.batch_size == self.config.num_envs && self.config.caller_steps_envs()
    }

    /// Waits for `count` completions (with `help`, running queued jobs on this thread meanwhile);
    /// a wait the interrupt check gives up leaves them for the next wait.
    pub(super) fn wait(&mut self, count: usize, help: bool, interruptible: bool) -> Result<Vec<Completion>> {
        let never: Interrupt<'_> = &|| Ok(());
        let interrupt: Interrupt<'_> = if interruptible { &*self.interrupt_check } else { never };
        let (envs, mode) = (&self.envs, self.config.autoreset_mode);
        self.queue.wait_for(count, help, |job| run_job(envs, job, mode), interrupt)
    }

    pub(super) fn recv_batch(&mut self) -> Result<BatchResult> {
        let completed = self.collect(self.batch_size, true)?;
        let batch = if self.batch_size == self.config.num_envs {
            self.fill_ordered(&completed)?
        } else {
            let mut batch = self.new_batch(self.batch_size);
            for (row, &env_id) in completed.iter().enumerate() {
                batch.fill_row(row, env_id, &*self.lock_env(env_id)?, true);
            }
            batch
        };
        self.queue_resets_ahead(&completed)?;
        self.last_env_ids = Some(batch.env_ids.iter().map(|&id| id as usize).collect());
        Ok(batch)
    }

    /// Has the reset threads reset the envs among `ran` whose episode ended, while the caller works on
    /// the batch they are in (see `reset_ahead`), when the pacing says it pays (never outside next-step
    /// autoreset and sync mode). Called once that batch is filled.
    fn queue_resets_ahead(&mut self, ran: &[usize]) -> Result<()> {
        let mut queued = false;
        if self.pacing.run_ahead() {
            for &env_id in ran {
                let mut slot = self.lock_env(env_id)?;
                if slot.env.is_episode_over() {
                    slot.ahead.queue();
                    drop(slot);
                    self.workers.reset_ahead(env_id);
                    queued = true;
                }
            }
        }
        self.pacing.batch_returned(queued);
        Ok(())
    }

    /// Sync mode: row `i` is env `i`. Final observations are reported only for the envs that ran.
    pub(super) fn fill_ordered(&self, ran: &[usize]) -> Result<BatchResult> {
        let num_envs = self.config.num_envs;
        let mut batch = self.new_batch(num_envs);
        let mut just_ran = vec![false; num_envs];
        for &env_id in ran {
            just_ran[env_id] = true;
        }
        for (env_id, &ran) in just_ran.iter().enumerate() {
            batch.fill_row(env_id, env_id, &*self.lock_env(env_id)?, ran);
        }
        Ok(batch)
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

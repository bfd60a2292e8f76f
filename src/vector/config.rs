//! Settings of the vectorizer itself (the per-env ones are in `AtariConfig`).
use std::path::PathBuf;

use crate::atari::AtariConfig;
use crate::error::{Error, Result};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AutoresetMode {
    /// An env whose episode ended is reset by the next step (its observation starts the new episode).
    NextStep,
    /// An env whose episode ended is reset in the same step; the last observation goes to `final_obs`.
    SameStep,
}

#[derive(Debug, Clone)]
pub struct VectorConfig {
    pub rom_path: PathBuf,
    pub num_envs: usize,
    /// Envs per batch returned by `recv`; 0 means `num_envs` (synchronous, ordered by env id).
    pub batch_size: usize,
    /// Worker threads; 0 picks: in sync mode one fewer than the available cores (the caller's thread
    /// steps envs too while it waits), in async mode `min(batch_size, cores)` (the caller is busy with
    /// its policy while envs step).
    pub num_threads: usize,
    /// Pin worker `i` to core `(offset + i) % cores`; `None` leaves scheduling to the OS.
    pub thread_affinity_offset: Option<usize>,
    pub autoreset_mode: AutoresetMode,
    pub env: AtariConfig,
}

impl VectorConfig {
    pub fn new(rom_path: impl Into<PathBuf>, num_envs: usize, env: AtariConfig) -> Self {
        Self {
            rom_path: rom_path.into(),
            num_envs,
            batch_size: 0,
            num_threads: 0,
            thread_affinity_offset: None,
            autoreset_mode: AutoresetMode::NextStep,
            env,
        }
    }

    pub fn effective_batch_size(&self) -> usize {
        if self.batch_size == 0 {
            self.num_envs
        } else {
            self.batch_size
        }
    }

    pub fn effective_num_threads(&self) -> usize {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let wanted = match self.num_threads {
            0 if self.effective_batch_size() == self.num_envs => cores.saturating_sub(1),
            0 => self.effective_batch_size(),
            n => n,
        };
        wanted.min(cores).min(self.num_envs).max(1)
    }

    pub fn validate(&self) -> Result<()> {
        if self.num_envs == 0 {
            return Err(Error::InvalidArgument("num_envs must be a positive integer, got 0".into()));
        }
        if self.batch_size > self.num_envs {
            return Err(Error::InvalidArgument(format!(
                "batch_size must be in [0, num_envs={}], got {}",
                self.num_envs, self.batch_size
            )));
        }
        self.env.validate()
    }
}

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
    /// Worker threads; 0 means `min(batch_size, available cores)`.
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
        let wanted = if self.num_threads == 0 { self.effective_batch_size() } else { self.num_threads };
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

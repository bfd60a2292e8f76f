//! Settings of the vectorizer itself (the per-env ones are in `AtariConfig`), and their one check.
use std::path::{Path, PathBuf};

use super::per_env::PerEnvSettings;
use crate::atari::config::{check_int, NON_NEGATIVE, POSITIVE};
use crate::atari::AtariConfig;
use crate::error::{Error, Result};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AutoresetMode {
    /// An env whose episode ended is reset by the next step (its observation starts the new episode).
    NextStep,
    /// An env whose episode ended is reset in the same step; the last observation goes to `final_obs`.
    SameStep,
    /// An env whose episode ended stays ended (not stepped, reward 0) until the caller resets it.
    Disabled,
}

impl AutoresetMode {
    /// gymnasium's `AutoresetMode` values, in declaration order.
    pub const NAMES: [(&'static str, AutoresetMode); 3] =
        [("NextStep", Self::NextStep), ("SameStep", Self::SameStep), ("Disabled", Self::Disabled)];

    pub fn name(self) -> &'static str {
        Self::NAMES.iter().find(|(_, mode)| *mode == self).map_or("NextStep", |(name, _)| name)
    }
}

/// When ended envs reset ahead of the step that needs them (next-step autoreset, sync mode; see
/// `vector::reset_ahead`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResetAheadMode {
    /// Whenever the caller leaves a core idle between batches (a GPU or sleeping policy), on
    /// normal-priority threads; not while it keeps the cores busy (a CPU policy) or comes straight
    /// back (env-only loops), where a reset ahead only moves work around.
    Auto,
    /// Always, on the lowest-priority threads (nice 19).
    Always,
    /// Never: the step that needs the reset runs it.
    Never,
}

#[derive(Debug, Clone)]
pub struct VectorConfig {
    /// The games' ROMs: env `i` plays `roms[i % roms.len()]` (one for a pool of one game).
    pub roms: Vec<PathBuf>,
    pub num_envs: usize,
    /// Envs per batch returned by `recv`; 0 means `num_envs` (synchronous, ordered by env id).
    pub batch_size: usize,
    /// Worker threads; 0 picks: in sync mode one fewer than the available cores (the caller's thread
    /// steps envs too while it waits, if steps are short), in async mode `min(batch_size, cores)` (the caller is busy with
    /// its policy while envs step).
    pub num_threads: usize,
    /// Pin worker `i` to core `(offset + i) % cores`; `None` leaves scheduling to the OS.
    pub thread_affinity_offset: Option<usize>,
    pub autoreset_mode: AutoresetMode,
    /// ale_py's continuous actions (radius, theta, fire), mapped to the full action set by the caller.
    pub continuous: bool,
    /// Threshold of that mapping.
    pub continuous_action_threshold: f32,
    /// Report unclipped rewards and, when an episode ends, its raw return, steps and frames (torchwm's own).
    pub episode_statistics: bool,
    /// Next-step autoreset, sync mode: when to reset ended envs ahead (`reset_ahead`).
    pub reset_ahead: ResetAheadMode,
    /// Report each env's RAM after its step in `info["ram"]` (`ram_in_info`).
    pub ram_in_info: bool,
    pub env: AtariConfig,
    /// Settings of `env` given one value per env.
    pub per_env: PerEnvSettings,
}

/// Bytes one emulator takes besides the observation buffers (ALE's console, TIA buffers, ROM copy,
/// our raw frames), rounded up from a measurement (RSS grows ~340 KiB per env), so that a huge `num_envs`
/// is refused before the envs are built.
const EMULATOR_BYTES: u128 = 512 << 10;

/// The longest step or reset, in emulator frames, that the waiting thread runs itself (about 0.1 s
/// of emulation: the longest a Ctrl-C then waits to be seen).
const CALLER_JOB_FRAMES: u32 = 1000;

impl VectorConfig {
    pub fn new(rom_path: impl Into<PathBuf>, num_envs: usize, env: AtariConfig) -> Self {
        Self {
            roms: vec![rom_path.into()],
            num_envs,
            batch_size: 0,
            num_threads: 0,
            thread_affinity_offset: None,
            autoreset_mode: AutoresetMode::NextStep,
            continuous: false,
            continuous_action_threshold: 0.5,
            episode_statistics: false,
            reset_ahead: ResetAheadMode::Auto,
            ram_in_info: false,
            env,
            per_env: PerEnvSettings::default(),
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
            0 if self.effective_batch_size() == self.num_envs && self.caller_steps_envs() => cores.saturating_sub(1),
            0 => self.effective_batch_size(),
            n => n,
        };
        wanted.min(cores).min(self.num_envs).max(1)
    }

    /// Whether the thread waiting for a batch may step envs itself: only when a step or reset is
    /// short, since its wait can be interrupted (Ctrl-C) only between the jobs it runs.
    pub fn caller_steps_envs(&self) -> bool {
        self.env.frame_skip.max(self.env.noop_max) <= CALLER_JOB_FRAMES
    }

    /// The settings every env is built with (continuous mode uses the full action set), before the
    /// per-env ones.
    pub fn effective_env(&self) -> AtariConfig {
        AtariConfig { full_action_space: self.env.full_action_space || self.continuous, ..self.env.clone() }
    }

    /// The settings env `env_id` is built with.
    pub fn env_config(&self, env_id: usize) -> AtariConfig {
        let mut config = self.effective_env();
        self.per_env.apply(env_id, &mut config);
        config
    }

    /// The ROM env `env_id` plays.
    pub fn rom_for(&self, env_id: usize) -> &Path {
        &self.roms[env_id % self.roms.len()]
    }

    /// Whether the envs play more than one game.
    pub fn is_mixed_pool(&self) -> bool {
        self.roms.iter().any(|rom| rom != &self.roms[0])
    }

    /// The one check of every setting: the per-env ones ([`AtariConfig::validate`]), the
    /// vectorizer's, then the memory the buffers would take.
    pub fn validate(&self) -> Result<()> {
        self.env.validate()?;
        check_int("num_envs", self.num_envs, &POSITIVE)?;
        if self.roms.is_empty() || self.roms.len() > self.num_envs {
            return Err(Error::InvalidArgument(format!(
                "a pool needs 1 to num_envs={} games, got {}",
                self.num_envs,
                self.roms.len()
            )));
        }
        self.per_env.check_lengths(self.num_envs)?;
        if !self.per_env.is_empty() {
            (0..self.num_envs).try_for_each(|env_id| self.env_config(env_id).validate())?;
        }
        check_int("num_threads", self.num_threads, &NON_NEGATIVE)?;
        if let Some(offset) = self.thread_affinity_offset {
            check_int("thread_affinity_offset", offset, &NON_NEGATIVE)?;
        }
        if self.continuous_action_threshold.is_nan() {
            return Err(Error::InvalidArgument("continuous_action_threshold must be a number, got nan".into()));
        }
        if self.batch_size > self.num_envs {
            return Err(Error::InvalidArgument(format!(
                "batch_size must be in [0, num_envs={}], got {}",
                self.num_envs, self.batch_size
            )));
        }
        self.check_memory()
    }

    /// Refuses, before anything is allocated, settings whose buffers exceed this machine's memory.
    fn check_memory(&self) -> Result<()> {
        let obs = self.env.stacked_obs_bytes();
        let copies = if self.autoreset_mode == AutoresetMode::SameStep { 2 } else { 1 };
        let per_env = obs.saturating_mul(copies).saturating_add(EMULATOR_BYTES);
        let batch = (self.effective_batch_size() as u128).saturating_mul(obs.saturating_mul(copies));
        let total = (self.num_envs as u128).saturating_mul(per_env).saturating_add(batch);
        let limit = memory_limit();
        if total > limit {
            return Err(Error::TooLarge(format!(
                "AtariVectorEnv would need about {total} bytes (num_envs={} x observations of shape {:?}, plus \
                 the emulator), more than the {limit} bytes it may use",
                self.num_envs,
                self.env.obs_shape(),
            )));
        }
        Ok(())
    }
}

/// This machine's physical memory where it can be read, else what an address space can hold.
fn memory_limit() -> u128 {
    let address_space = isize::MAX as u128;
    crate::ffi::physical_memory().map_or(address_space, |bytes| u128::from(bytes).min(address_space))
}

//! Many `AtariEnv`s stepped in parallel by a pool of worker threads.
//!
//! Shape (after ale_py's own vectorizer): `action_queue` carries reset/step jobs to the workers,
//! `worker_pool` (a rayon pool) runs them on `env_slot`s and reports completions,
//! `batch_result` is the batch handed to the caller, filled from the finished envs, and
//! `env_vectorizer` ties them together with the send/recv protocol; `reset_ahead` runs the resets
//! of next-step autoreset while the caller computes its policy, when `reset_pacing` finds it pays; `saved_state` encodes saved envs
//! (`clone_states` / `restore_states`).
//! `settings` defines every keyword of the Python `AtariVectorEnv` once; `VectorConfig::validate`
//! checks them all, before anything is allocated.
mod action_queue;
mod batch_result;
mod batch_waiter;
mod config;
mod env_slot;
mod env_vectorizer;
mod per_env;
mod reset_ahead;
mod reset_pacing;
mod saved_state;
mod settings;
mod worker_pool;

pub use batch_result::{BatchResult, EpisodeColumns};
pub use config::{AutoresetMode, ResetAheadMode, VectorConfig};
pub use env_vectorizer::{created_before_fork, AtariVectorEnv};
pub use per_env::PerEnvSettings;
pub use settings::{find_setting, Kind, Setting, SettingValue, AUTO, SETTINGS};

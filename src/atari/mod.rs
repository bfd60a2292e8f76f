//! One Atari game with the standard preprocessing, stepped as ale_py's vectorizer steps it.
pub mod config;
mod env;
mod env_state;
mod ram;

pub use config::{AtariConfig, ObsFormat};
pub use env::{AtariEnv, EpisodeStats, StepOutput};
pub use env_state::AtariEnvState;
pub use ram::Ram;

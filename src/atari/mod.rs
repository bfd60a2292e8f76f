//! One Atari game with the standard preprocessing, stepped as ale_py's vectorizer steps it.
pub mod config;
mod env;
mod env_state;

pub use config::{AtariConfig, ObsFormat};
pub use env::{AtariEnv, EpisodeStats, Ram, StepOutput};
pub use env_state::AtariEnvState;

//! One Atari game with the standard preprocessing, stepped as ale_py's vectorizer steps it.
pub mod config;
mod env;

pub use config::{AtariConfig, ObsFormat};
pub use env::{AtariEnv, EpisodeStats, Ram, StepOutput};

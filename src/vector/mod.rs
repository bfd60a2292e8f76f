//! Many `AtariEnv`s stepped in parallel by a pool of worker threads.
//!
//! Shape (after ale_py's own vectorizer): [`action_queue`] carries reset/step jobs to the workers,
//! [`worker`] runs them and reports completions, [`result_staging`] copies finished envs into the
//! batch handed to the caller, and [`env_vectorizer`] ties them together with the send/recv protocol.
mod action_queue;
mod config;
mod env_vectorizer;
mod render;
mod result_staging;
mod worker;

pub use config::{AutoresetMode, VectorConfig};
pub use env_vectorizer::AtariVectorEnv;
pub use result_staging::BatchResult;

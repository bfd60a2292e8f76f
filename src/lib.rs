//! torchwm: a Rust core that drives the Arcade Learning Environment (ALE 0.12.1) and vectorizes it.
//!
//! Layers, bottom up: [`ffi`] (the C++ shim and its declarations, the only `unsafe`), [`ale`] (a safe
//! emulator handle), [`preprocess`] (frame operations), [`atari`] (one preprocessed Atari env),
//! [`vector`] (the thread pool that steps many of them), and `python` (pyo3 glue, behind the
//! `python` feature).
pub mod ale;
pub mod atari;
pub mod bench;
pub mod error;
mod ffi;
pub mod preprocess;
pub mod record;
pub mod vector;

// ALE reads gzip-compressed state and ROM files through zlib; this links libz-sys's static zlib.
use libz_sys as _;

pub use ale::{Ale, AleState};
pub use error::{Error, Result};

#[cfg(feature = "python")]
mod python;

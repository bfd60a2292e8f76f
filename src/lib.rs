//! torchwm: a Rust core that drives the Arcade Learning Environment (ALE, at the version pinned in
//! pyproject.toml: [`ALE_VERSION`]) and vectorizes it.
//!
//! Layers, bottom up; each uses only the ones below it:
//! - `ffi`: the C++ shim's declarations and owned handles, and fork detection; the only `unsafe` code
//!   (enforced below);
//! - [`ale`]: the safe emulator, its palettes and noop RNG;
//! - [`preprocess`]: frame operations on plain buffers;
//! - [`atari`]: one preprocessed Atari env;
//! - [`vector`]: the thread pool that steps many of them;
//! - `python`: pyo3 glue, behind the `python` feature.
//!
//! [`error`] is shared by all of them; [`bench`](mod@bench) measures the raw emulator (`torchwm bench`).
#![deny(unsafe_code)]
#![warn(clippy::undocumented_unsafe_blocks)]

pub mod ale;
pub mod atari;
pub mod bench;
pub mod doorbell;
pub mod error;
#[allow(unsafe_code)]
mod ffi;
pub mod poll_budget;
pub mod preprocess;
pub mod record;
mod sync;
pub mod vector;

// ALE reads gzip-compressed state and ROM files through zlib; this links libz-sys's static zlib.
use libz_sys as _;

pub use ale::{Ale, AleState, ALE_VERSION};
pub use error::{Error, Result};

#[cfg(feature = "python")]
mod python;

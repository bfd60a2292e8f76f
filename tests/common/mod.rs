//! Shared helpers for the Rust integration tests.
use std::path::PathBuf;

/// The ROM of `game`. A test that needs one fails, naming what is missing, when it cannot be found:
/// it must not pass without running.
pub fn rom(game: &str) -> PathBuf {
    torchwm::bench::find_rom(game).unwrap_or_else(|e| panic!("this test needs ROMs: {e}"))
}

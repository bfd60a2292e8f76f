//! The crate's error type: every failure a caller can see, typed.
use thiserror::Error;

#[derive(Debug, Error, Clone, PartialEq)]
pub enum Error {
    /// A C++ exception caught in the shim, with its message.
    #[error("ALE error: {0}")]
    Ale(String),
    /// The ROM file does not exist.
    #[error("ROM file not found: {0}")]
    RomNotFound(String),
    /// The file exists but is not a ROM that ALE supports.
    #[error("not a supported Atari 2600 ROM: {0}")]
    UnsupportedRom(String),
    /// An argument outside what the call accepts (bad action, shape, setting value...).
    #[error("{0}")]
    InvalidArgument(String),
    /// A call made in a state that does not allow it (recv before send, use after close...).
    #[error("{0}")]
    InvalidState(String),
    /// A worker thread panicked; the vector environment cannot be used any more.
    #[error("worker thread failed: {0}")]
    WorkerPanic(String),
}

pub type Result<T> = std::result::Result<T, Error>;

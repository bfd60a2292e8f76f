//! The crate's error type: every failure a caller can see, typed.
use std::io;
use std::sync::Arc;

use thiserror::Error;

use crate::record::RecordError;

/// Cloned where a broken vector env reports its first failure again; sources are shared for that.
#[derive(Debug, Error, Clone)]
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
    /// Settings whose buffers would not fit in memory (or in `usize`), refused before allocating.
    #[error("{0}")]
    TooLarge(String),
    /// A call made in a state that does not allow it (reset needed, use after fork, another thread...).
    #[error("{0}")]
    InvalidState(String),
    /// A call on a closed environment.
    #[error("the environment is closed")]
    Closed,
    /// A wait (`recv`) with no step in flight.
    #[error("{0}")]
    NoPendingCall(String),
    /// A second `send` while the first one's batch has not been received.
    #[error("{0}")]
    AlreadyPending(String),
    /// A blocking wait was given up because the caller asked (Ctrl-C); the work in flight is kept.
    #[error("interrupted")]
    Interrupted,
    /// A recording failed: the `RecordError` is this error's source (and its message this one's).
    #[error("{0}")]
    Record(#[from] RecordError),
    /// The operating system would not start the worker threads.
    #[error("cannot start worker threads: {0}")]
    ThreadSpawn(#[source] Arc<io::Error>),
    /// A worker thread panicked; the vector environment cannot be used any more.
    #[error("worker thread failed: {0}")]
    WorkerPanic(String),
}

impl Error {
    /// Whether the call was refused because of the environment's state (not its arguments).
    pub fn is_state_error(&self) -> bool {
        matches!(self, Error::InvalidState(_) | Error::Closed | Error::NoPendingCall(_) | Error::AlreadyPending(_))
    }
}

pub type Result<T> = std::result::Result<T, Error>;

/// The message of a caught panic's payload (a `&str` or `String` for `panic!` with a message).
pub(crate) fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic with no message".into())
}

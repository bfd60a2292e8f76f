//! What can go wrong while recording.
use std::io;
use std::sync::Arc;

use thiserror::Error;

/// The sources are shared (`Arc`) so that a recorder can keep its first failure and report it again.
#[derive(Debug, Error, Clone)]
pub enum RecordError {
    /// A setting or a frame batch outside what the recorder accepts.
    #[error("{0}")]
    InvalidArgument(String),
    /// The output file could not be created or written.
    #[error("cannot write {path}: {source}")]
    Io { path: String, source: Arc<io::Error> },
    /// The folder of the PNG stills does not exist.
    #[error("cannot write {path}: the folder {folder} does not exist")]
    MissingFolder { path: String, folder: String },
    /// The encoder thread could not be started.
    #[error("cannot write {path}: no encoder thread: {source}")]
    EncoderThread { path: String, source: Arc<io::Error> },
    /// The image crate could not encode a frame.
    #[error("cannot encode {path}: {source}")]
    Encode { path: String, source: Arc<image::ImageError> },
    /// The recorder was already finished.
    #[error("the recorder is closed")]
    Closed,
    /// The recorder was created before `fork()`: its encoder thread does not exist in this process.
    #[error("this recorder was created before fork(); its encoder thread does not exist in this process: create a new recorder in the child")]
    Forked,
    /// The encoder thread panicked (a bug); the recording is incomplete.
    #[error("the encoder thread failed: {0}")]
    EncoderPanic(String),
}

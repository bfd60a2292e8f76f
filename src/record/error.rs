//! What can go wrong while recording.
use thiserror::Error;

#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum RecordError {
    /// A setting or a frame batch outside what the recorder accepts.
    #[error("{0}")]
    InvalidArgument(String),
    /// The output file could not be created or written.
    #[error("cannot write {path}: {message}")]
    Io { path: String, message: String },
    /// The image crate could not encode a frame.
    #[error("cannot encode {path}: {message}")]
    Encode { path: String, message: String },
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

impl RecordError {
    /// The crate-wide error this maps to (one `Error -> PyErr` mapping serves the recorder too).
    pub fn into_error(self) -> crate::Error {
        let message = self.to_string();
        match self {
            RecordError::InvalidArgument(_) => crate::Error::InvalidArgument(message),
            RecordError::Io { .. } | RecordError::Encode { .. } => crate::Error::Io(message),
            RecordError::Closed | RecordError::Forked => crate::Error::InvalidState(message),
            RecordError::EncoderPanic(_) => crate::Error::WorkerPanic(message),
        }
    }
}

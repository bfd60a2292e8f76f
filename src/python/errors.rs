//! The one `Error -> PyErr` mapping, onto the classes of `torchwm.errors` (one exception tree for
//! the Rust core and both vectorizers, defined in Python so that it pickles).
use pyo3::exceptions::{PyFileNotFoundError, PyMemoryError, PyOSError};
use pyo3::prelude::*;

use crate::error::Error;
use crate::record::RecordError;

pyo3::import_exception!(torchwm.errors, AleError);
pyo3::import_exception!(torchwm.errors, AlreadyPendingCallError);
pyo3::import_exception!(torchwm.errors, ClosedEnvironmentError);
pyo3::import_exception!(torchwm.errors, EnvStateError);
pyo3::import_exception!(torchwm.errors, InvalidArgumentError);
pyo3::import_exception!(torchwm.errors, NoAsyncCallError);
pyo3::import_exception!(torchwm.errors, WorkerError);

impl From<Error> for PyErr {
    fn from(error: Error) -> PyErr {
        let message = error.to_string();
        match error {
            Error::InvalidArgument(_) | Error::UnsupportedRom(_) => InvalidArgumentError::new_err(message),
            Error::TooLarge(_) => PyMemoryError::new_err(message),
            Error::Record(record) => record_class(&record, message),
            // A thread-spawn failure has always been an AleError (the class callers may catch).
            Error::ThreadSpawn(_) => AleError::new_err(message),
            Error::RomNotFound(_) => PyFileNotFoundError::new_err(message),
            Error::InvalidState(_) => EnvStateError::new_err(message),
            Error::Closed => ClosedEnvironmentError::new_err(message),
            // gymnasium's protocol errors take (message, name of the call).
            Error::NoPendingCall(_) => NoAsyncCallError::new_err((message, "recv")),
            Error::AlreadyPending(_) => AlreadyPendingCallError::new_err((message, "send")),
            // Only `enter_core` produces it, and it replaces it with the signal handler's exception.
            Error::Interrupted => pyo3::exceptions::PyKeyboardInterrupt::new_err(message),
            Error::WorkerPanic(_) => WorkerError::new_err(message),
            Error::Ale(_) => AleError::new_err(message),
        }
    }
}

/// The classes of recording failures: bad arguments, files, state, and the encoder thread.
fn record_class(error: &RecordError, message: String) -> PyErr {
    match error {
        RecordError::InvalidArgument(_) => InvalidArgumentError::new_err(message),
        RecordError::Io { .. }
        | RecordError::MissingFolder { .. }
        | RecordError::EncoderThread { .. }
        | RecordError::Encode { .. } => PyOSError::new_err(message),
        RecordError::Closed | RecordError::Forked => EnvStateError::new_err(message),
        RecordError::EncoderPanic(_) => WorkerError::new_err(message),
    }
}

impl From<RecordError> for PyErr {
    fn from(error: RecordError) -> PyErr {
        Error::from(error).into()
    }
}

//! The one `Error -> PyErr` mapping, and the module's exception classes.
use pyo3::exceptions::{PyFileNotFoundError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;

use crate::error::Error;

pyo3::create_exception!(_core, TorchwmError, PyRuntimeError, "Base class of torchwm's runtime errors.");
pyo3::create_exception!(_core, AleError, TorchwmError, "The emulator (ALE, C++) reported an error.");
pyo3::create_exception!(
    _core,
    EnvStateError,
    TorchwmError,
    "A call the environment's state does not allow (closed, recv before send...)."
);
pyo3::create_exception!(_core, WorkerError, TorchwmError, "A worker thread failed.");

impl From<Error> for PyErr {
    fn from(error: Error) -> PyErr {
        let message = error.to_string();
        match error {
            Error::InvalidArgument(_) | Error::UnsupportedRom(_) => PyValueError::new_err(message),
            Error::RomNotFound(_) => PyFileNotFoundError::new_err(message),
            Error::InvalidState(_) => EnvStateError::new_err(message),
            Error::WorkerPanic(_) => WorkerError::new_err(message),
            Error::Ale(_) => AleError::new_err(message),
        }
    }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("TorchwmError", py.get_type::<TorchwmError>())?;
    m.add("AleError", py.get_type::<AleError>())?;
    m.add("EnvStateError", py.get_type::<EnvStateError>())?;
    m.add("WorkerError", py.get_type::<WorkerError>())?;
    Ok(())
}

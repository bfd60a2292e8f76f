//! pyo3 glue for `torchwm._core`: argument conversion and the GIL, no logic.
mod ale;
mod doorbell;
mod errors;
mod record;
mod settings;
mod vector;

use std::cell::RefCell;

use pyo3::prelude::*;

use crate::error::Error;

thread_local! {
    /// The exception a signal handler raised during this thread's `enter_core` (Ctrl-C: KeyboardInterrupt).
    static RAISED: RefCell<Option<PyErr>> = const { RefCell::new(None) };
}

/// Runs Rust core work with the GIL released (other Python threads run while envs step) and maps
/// its error to torchwm's Python classes. Work that waits calls [`check_signals`] between slices of
/// its wait: a Ctrl-C then ends the wait with the `KeyboardInterrupt` that Python's handler raised.
pub(crate) fn enter_core<T: Send>(py: Python<'_>, work: impl FnOnce() -> crate::Result<T> + Send) -> PyResult<T> {
    match py.detach(work) {
        Ok(value) => Ok(value),
        Err(Error::Interrupted) => Err(RAISED.with(|raised| raised.borrow_mut().take()).unwrap_or_else(|| {
            pyo3::exceptions::PyKeyboardInterrupt::new_err("interrupted while waiting for the environments")
        })),
        Err(error) => Err(error.into()),
    }
}

/// Runs Python's signal handlers (it takes the GIL for that); an exception they raise is kept for
/// [`enter_core`] and reported as `Error::Interrupted`. Handlers run only on the main thread.
pub(crate) fn check_signals() -> crate::Result<()> {
    Python::attach(|py| py.check_signals()).map_err(|raised| {
        RAISED.with(|slot| *slot.borrow_mut() = Some(raised));
        Error::Interrupted
    })
}

/// Whether this process takes the portable implementations (macOS's) of what differs between systems:
/// always off Linux; on Linux when `TORCHWM_PORTABLE=1` was set as the process first asked.
#[pyfunction]
fn uses_portable_implementations() -> bool {
    crate::ffi::uses_portable_implementations()
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("ALE_VERSION", crate::ALE_VERSION)?;
    m.add_class::<ale::Ale>()?;
    m.add_class::<ale::AleState>()?;
    m.add_class::<vector::AtariVectorCore>()?;
    m.add("ATARI_SETTINGS", settings::settings_table(m.py())?)?;
    m.add_class::<record::GridRecorder>()?;
    m.add_class::<doorbell::Doorbells>()?;
    m.add_function(wrap_pyfunction!(ale::is_supported_rom, m)?)?;
    m.add_function(wrap_pyfunction!(ale::set_log_level, m)?)?;
    m.add_function(wrap_pyfunction!(ale::emulator_frames_per_second, m)?)?;
    m.add_function(wrap_pyfunction!(uses_portable_implementations, m)?)?;
    Ok(())
}

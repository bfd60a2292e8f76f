//! pyo3 glue for `torchwm._core`: argument conversion and the GIL, no logic.
mod ale;
mod errors;
mod vector;

use pyo3::prelude::*;

/// Runs blocking work with the GIL released, so other Python threads run while envs step.
pub(crate) fn without_gil<T: Send>(py: Python<'_>, work: impl FnOnce() -> T + Send) -> T {
    py.detach(work)
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("ALE_VERSION", crate::ALE_VERSION)?;
    errors::register(m)?;
    m.add_class::<ale::Ale>()?;
    m.add_class::<ale::AleState>()?;
    m.add_class::<vector::AtariVectorCore>()?;
    m.add_function(wrap_pyfunction!(ale::is_supported_rom, m)?)?;
    m.add_function(wrap_pyfunction!(ale::set_log_level, m)?)?;
    m.add_function(wrap_pyfunction!(ale::emulator_frames_per_second, m)?)?;
    Ok(())
}

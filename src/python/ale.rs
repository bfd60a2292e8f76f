//! `torchwm._core.Ale`: one emulator, for tests and single-env use.
use std::path::PathBuf;
use std::sync::Mutex;

use numpy::ndarray::IxDyn;
use numpy::{PyArray1, PyArrayMethods};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::ale::{self as core_ale, LogLevel};
use crate::error::Error;

#[pyclass(module = "torchwm._core", name = "Ale")]
pub struct Ale {
    // A Mutex makes the non-Sync emulator shareable as a Python object; it is never contended.
    inner: Mutex<core_ale::Ale>,
}

#[pyclass(module = "torchwm._core", name = "AleState", frozen)]
pub struct AleState {
    inner: core_ale::AleState,
}

fn screen_array<'py>(py: Python<'py>, data: Vec<u8>, shape: &[usize]) -> PyResult<Bound<'py, PyAny>> {
    Ok(PyArray1::from_vec(py, data).reshape(IxDyn(shape))?.into_any())
}

impl Ale {
    fn with<T>(&self, f: impl FnOnce(&mut core_ale::Ale) -> crate::Result<T>) -> PyResult<T> {
        let mut ale = self.inner.lock().map_err(|_| Error::InvalidState("emulator lock poisoned".into()))?;
        Ok(f(&mut ale)?)
    }
}

#[pymethods]
impl Ale {
    #[new]
    fn new() -> PyResult<Self> {
        Ok(Self { inner: Mutex::new(core_ale::Ale::new()?) })
    }

    fn set_int(&self, key: &str, value: i32) -> PyResult<()> {
        self.with(|a| a.set_int(key, value))
    }
    fn set_float(&self, key: &str, value: f32) -> PyResult<()> {
        self.with(|a| a.set_float(key, value))
    }
    fn set_bool(&self, key: &str, value: bool) -> PyResult<()> {
        self.with(|a| a.set_bool(key, value))
    }
    fn set_string(&self, key: &str, value: &str) -> PyResult<()> {
        self.with(|a| a.set_string(key, value))
    }
    fn get_int(&self, key: &str) -> PyResult<i32> {
        self.with(|a| a.get_int(key))
    }
    fn get_float(&self, key: &str) -> PyResult<f32> {
        self.with(|a| a.get_float(key))
    }
    fn get_bool(&self, key: &str) -> PyResult<bool> {
        self.with(|a| a.get_bool(key))
    }
    fn get_string(&self, key: &str) -> PyResult<String> {
        self.with(|a| a.get_string(key))
    }
    fn load_rom(&self, path: PathBuf) -> PyResult<()> {
        self.with(|a| a.load_rom(&path))
    }
    #[pyo3(signature = (action, paddle_strength = 1.0))]
    fn act(&self, action: i32, paddle_strength: f32) -> PyResult<i32> {
        self.with(|a| a.act(action, paddle_strength))
    }
    fn reset_game(&self) -> PyResult<()> {
        self.with(|a| a.reset_game())
    }
    #[pyo3(signature = (with_truncation = true))]
    fn game_over(&self, with_truncation: bool) -> PyResult<bool> {
        self.with(|a| a.game_over(with_truncation))
    }
    fn game_truncated(&self) -> PyResult<bool> {
        self.with(|a| a.game_truncated())
    }
    fn lives(&self) -> PyResult<i32> {
        self.with(|a| a.lives())
    }
    fn frame_number(&self) -> PyResult<i32> {
        self.with(|a| a.frame_number())
    }
    fn episode_frame_number(&self) -> PyResult<i32> {
        self.with(|a| a.episode_frame_number())
    }
    fn minimal_action_set(&self) -> PyResult<Vec<i32>> {
        self.with(|a| a.minimal_action_set())
    }
    fn legal_action_set(&self) -> PyResult<Vec<i32>> {
        self.with(|a| a.legal_action_set())
    }
    fn available_modes(&self) -> PyResult<Vec<u32>> {
        self.with(|a| a.available_modes())
    }
    fn available_difficulties(&self) -> PyResult<Vec<u32>> {
        self.with(|a| a.available_difficulties())
    }
    fn set_mode(&self, mode: u32) -> PyResult<()> {
        self.with(|a| a.set_mode(mode))
    }
    fn mode(&self) -> PyResult<u32> {
        self.with(|a| a.mode())
    }
    fn set_difficulty(&self, difficulty: u32) -> PyResult<()> {
        self.with(|a| a.set_difficulty(difficulty))
    }
    fn difficulty(&self) -> PyResult<u32> {
        self.with(|a| a.difficulty())
    }
    fn screen_dims(&self) -> PyResult<(usize, usize)> {
        self.with(|a| a.screen_dims())
    }
    /// Grayscale screen, uint8 (height, width).
    fn screen_grayscale<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let (dims, data) = self.with(|a| Ok((a.screen_dims()?, a.screen_grayscale()?)))?;
        screen_array(py, data, &[dims.0, dims.1])
    }
    /// RGB screen, uint8 (height, width, 3).
    fn screen_rgb<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let (dims, data) = self.with(|a| Ok((a.screen_dims()?, a.screen_rgb()?)))?;
        screen_array(py, data, &[dims.0, dims.1, 3])
    }
    /// Palette indices, uint8 (height, width).
    fn screen_raw<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let (dims, data) = self.with(|a| {
            let dims = a.screen_dims()?;
            let mut buf = vec![0; dims.0 * dims.1];
            a.screen_raw_into(&mut buf)?;
            Ok((dims, buf))
        })?;
        screen_array(py, data, &[dims.0, dims.1])
    }
    /// The 128 bytes of console RAM, uint8.
    fn ram<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<u8>>> {
        let ram = self.with(|a| a.ram())?;
        Ok(PyArray1::from_vec(py, ram))
    }
    fn set_ram(&self, index: usize, value: u8) -> PyResult<()> {
        self.with(|a| a.set_ram(index, value))
    }
    #[pyo3(signature = (include_rng = false))]
    fn clone_state(&self, include_rng: bool) -> PyResult<AleState> {
        Ok(AleState { inner: self.with(|a| a.clone_state(include_rng))? })
    }
    fn restore_state(&self, state: &AleState) -> PyResult<()> {
        self.with(|a| a.restore_state(&state.inner))
    }
    /// `cloneState(include_rng=True).serialize()`: the bytes of ale_py's `ALEState.serialize()`.
    fn serialize_state<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let bytes = self.with(|a| a.serialize_state())?;
        Ok(PyBytes::new(py, &bytes))
    }
    /// Restores bytes from `serialize_state` (or ale_py's `ALEState.serialize()`) of the loaded ROM.
    fn restore_serialized_state(&self, state: &Bound<'_, PyBytes>) -> PyResult<()> {
        self.with(|a| a.restore_serialized_state(state.as_bytes()))
    }
}

/// Whether `path` is a ROM that ALE supports; FileNotFoundError when it does not exist.
#[pyfunction]
pub fn is_supported_rom(path: PathBuf) -> PyResult<bool> {
    Ok(core_ale::is_supported_rom(&path)?)
}

/// ALE's log level: 0 info, 1 warning, 2 error (the default).
#[pyfunction]
pub fn set_log_level(level: i32) -> PyResult<()> {
    let level = match level {
        0 => LogLevel::Info,
        1 => LogLevel::Warning,
        2 => LogLevel::Error,
        other => return Err(Error::InvalidArgument(format!("log level must be 0, 1 or 2, got {other}")).into()),
    };
    Ok(core_ale::set_log_level(level)?)
}

/// Raw single-thread emulator frames/s over `frames` random-action frames (GIL released).
#[pyfunction]
#[pyo3(signature = (rom_path, frames, seed = 0))]
pub fn emulator_frames_per_second(py: Python<'_>, rom_path: PathBuf, frames: u64, seed: u32) -> PyResult<f64> {
    super::enter_core(py, || crate::bench::emulator_frames_per_second(&rom_path, frames, seed))
}

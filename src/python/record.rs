//! `torchwm._core.GridRecorder`: the Rust recorder, fed numpy frame batches; encoding runs on its
//! own thread, and pushing releases the GIL while it waits for room in the queue.
use std::path::PathBuf;

use numpy::{PyReadonlyArrayDyn, PyUntypedArrayMethods};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use super::enter_core;
use crate::error::Error;
use crate::record::{ImageFormat, RecordConfig, RecordError, Recorder};

fn non_negative(name: &str, value: i64) -> Result<usize, RecordError> {
    usize::try_from(value).map_err(|_| RecordError::InvalidArgument(format!("{name} must be >= 0, got {value}")))
}

#[pyclass(module = "torchwm._core", name = "GridRecorder")]
pub struct GridRecorder {
    inner: Recorder,
}

#[pymethods]
impl GridRecorder {
    /// Writes batches of `num_frames` RGB frames of `frame_height x frame_width` to `path` as one
    /// grid image per batch: an animated GIF (`.gif`) or PNG stills `<stem>_<index:05>.png` (`.png`).
    #[new]
    #[pyo3(signature = (path, num_frames, frame_height, frame_width, *, cols=None, scale=None, padding=2, fps=15.0))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        path: PathBuf,
        num_frames: i64,
        frame_height: i64,
        frame_width: i64,
        cols: Option<i64>,
        scale: Option<f64>,
        padding: i64,
        fps: f64,
    ) -> PyResult<Self> {
        let mut config = RecordConfig::new(
            non_negative("num_frames", num_frames)?,
            non_negative("frame_height", frame_height)?,
            non_negative("frame_width", frame_width)?,
        );
        config.cols = cols.map(|c| non_negative("cols", c)).transpose()?;
        config.scale = scale;
        config.padding = non_negative("padding", padding)?;
        config.fps = fps;
        Ok(Self { inner: Recorder::create(&path, &config)? })
    }

    /// Queues one batch: a uint8 array `(num_frames, frame_height, frame_width, 3)`.
    fn push(&mut self, py: Python<'_>, frames: PyReadonlyArrayDyn<'_, u8>) -> PyResult<()> {
        let grid = self.inner.grid();
        let expected = [grid.num_frames, grid.frame_height, grid.frame_width, 3];
        if frames.shape() != expected {
            return Err(RecordError::InvalidArgument(format!(
                "frames must be a uint8 array of shape {expected:?}, got shape {:?}",
                frames.shape()
            ))
            .into());
        }
        let bytes = match frames.as_slice() {
            Ok(contiguous) => contiguous.to_vec(),
            Err(_) => frames.as_array().iter().copied().collect(),
        };
        let inner = &mut self.inner;
        enter_core(py, || inner.push(bytes).map_err(Error::from))
    }

    /// Writes what is queued and closes the output -> dict(path, format, images, width, height).
    /// Idempotent.
    fn close<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let inner = &mut self.inner;
        let summary = enter_core(py, || inner.finish().map_err(Error::from))?;
        let result = PyDict::new(py);
        result.set_item("path", summary.path)?;
        result.set_item("format", if summary.format == ImageFormat::Gif { "gif" } else { "png" })?;
        result.set_item("images", summary.images_written)?;
        result.set_item("width", summary.width)?;
        result.set_item("height", summary.height)?;
        Ok(result)
    }

    #[getter]
    fn closed(&self) -> bool {
        self.inner.is_finished()
    }
    /// `(height, width)` of each grid image.
    #[getter]
    fn image_size(&self) -> (usize, usize) {
        (self.inner.grid().canvas_height, self.inner.grid().canvas_width)
    }
}

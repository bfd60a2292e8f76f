//! `torchwm._core.AtariVectorCore`: the Rust vectorizer, handing batches to numpy without copies.
use std::path::PathBuf;

use numpy::ndarray::IxDyn;
use numpy::{PyArray1, PyArrayMethods, PyReadonlyArray1};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

use super::without_gil;
use crate::atari::{AtariConfig, ObsFormat};
use crate::error::Error;
use crate::vector::{AtariVectorEnv, AutoresetMode, BatchResult, VectorConfig};

#[pyclass(module = "torchwm._core", name = "AtariVectorCore")]
pub struct AtariVectorCore {
    inner: AtariVectorEnv,
    obs_shape: Vec<usize>,
}

impl AtariVectorCore {
    fn batch_obs_shape(&self, rows: usize) -> Vec<usize> {
        std::iter::once(rows).chain(self.obs_shape.iter().copied()).collect()
    }

    fn info<'py>(&self, py: Python<'py>, batch: &mut BatchResult) -> PyResult<Bound<'py, PyDict>> {
        let info = PyDict::new(py);
        info.set_item("env_id", PyArray1::from_vec(py, std::mem::take(&mut batch.env_ids)))?;
        info.set_item("lives", PyArray1::from_vec(py, std::mem::take(&mut batch.lives)))?;
        info.set_item("frame_number", PyArray1::from_vec(py, std::mem::take(&mut batch.frame_numbers)))?;
        info.set_item(
            "episode_frame_number",
            PyArray1::from_vec(py, std::mem::take(&mut batch.episode_frame_numbers)),
        )?;
        Ok(info)
    }

    fn obs_array<'py>(&self, py: Python<'py>, data: Vec<u8>, rows: usize) -> PyResult<Bound<'py, PyAny>> {
        Ok(PyArray1::from_vec(py, data).reshape(IxDyn(&self.batch_obs_shape(rows)))?.into_any())
    }
}

#[pymethods]
impl AtariVectorCore {
    #[new]
    #[pyo3(signature = (
        rom_path, num_envs, *, frame_skip, stack_num, img_height, img_width, grayscale, maxpool, noop_max,
        use_fire_reset, episodic_life, life_loss_info, reward_clipping, max_num_frames_per_episode,
        repeat_action_probability, full_action_space, batch_size, num_threads, thread_affinity_offset,
        same_step_autoreset
    ))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        rom_path: PathBuf,
        num_envs: usize,
        frame_skip: u32,
        stack_num: usize,
        img_height: usize,
        img_width: usize,
        grayscale: bool,
        maxpool: bool,
        noop_max: u32,
        use_fire_reset: bool,
        episodic_life: bool,
        life_loss_info: bool,
        reward_clipping: bool,
        max_num_frames_per_episode: u32,
        repeat_action_probability: f32,
        full_action_space: bool,
        batch_size: usize,
        num_threads: usize,
        thread_affinity_offset: i64,
        same_step_autoreset: bool,
    ) -> PyResult<Self> {
        let env = AtariConfig {
            img_height,
            img_width,
            obs_format: if grayscale { ObsFormat::Grayscale } else { ObsFormat::Rgb },
            stack_num,
            frame_skip,
            maxpool,
            noop_max,
            use_fire_reset,
            episodic_life,
            life_loss_info,
            reward_clipping,
            max_episode_frames: max_num_frames_per_episode,
            repeat_action_probability,
            full_action_space,
        };
        let mut config = VectorConfig::new(rom_path, num_envs, env);
        config.batch_size = batch_size;
        config.num_threads = num_threads;
        config.thread_affinity_offset = usize::try_from(thread_affinity_offset).ok();
        config.autoreset_mode = if same_step_autoreset { AutoresetMode::SameStep } else { AutoresetMode::NextStep };
        let mut obs_shape = vec![stack_num, img_height, img_width];
        if !grayscale {
            obs_shape.push(3);
        }
        let inner = without_gil(py, || AtariVectorEnv::new(config))?;
        Ok(Self { inner, obs_shape })
    }

    #[getter]
    fn num_envs(&self) -> usize {
        self.inner.num_envs()
    }
    #[getter]
    fn batch_size(&self) -> usize {
        self.inner.batch_size()
    }
    #[getter]
    fn num_threads(&self) -> usize {
        self.inner.num_threads()
    }
    #[getter]
    fn action_set(&self) -> Vec<i32> {
        self.inner.action_set().to_vec()
    }
    #[getter]
    fn closed(&self) -> bool {
        self.inner.is_closed()
    }

    /// Resets `env_ids` with `seeds` (a negative seed keeps the env's RNG) -> (obs, info).
    fn reset<'py>(&mut self, py: Python<'py>, env_ids: Vec<i64>, seeds: Vec<i64>) -> PyResult<Bound<'py, PyTuple>> {
        let num_envs = self.inner.num_envs() as i64;
        let env_ids = env_ids
            .into_iter()
            .map(|id| {
                usize::try_from(id)
                    .ok()
                    .filter(|&id| (id as i64) < num_envs)
                    .ok_or_else(|| Error::InvalidArgument(format!("reset env id {id} is out of range [0, {num_envs})")))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let seeds = seeds
            .into_iter()
            .map(|seed| match seed {
                s if s < 0 => Ok(None),
                s => i32::try_from(s)
                    .map(|s| Some(s as u32))
                    .map_err(|_| Error::InvalidArgument(format!("seeds must be in [0, 2**31), got {s}"))),
            })
            .collect::<Result<Vec<_>, _>>()?;
        let inner = &mut self.inner;
        let mut batch = without_gil(py, || inner.reset(&env_ids, &seeds))?;
        let rows = batch.batch_size();
        let info = self.info(py, &mut batch)?;
        let obs = self.obs_array(py, batch.obs, rows)?;
        PyTuple::new(py, [obs, info.into_any()])
    }

    /// Queues one step: `action_ids` (int64 indices into the action set) and `paddle_strengths`
    /// (float32) for the envs of the last batch, in its row order.
    fn send(
        &mut self,
        py: Python<'_>,
        action_ids: PyReadonlyArray1<'_, i64>,
        paddle_strengths: PyReadonlyArray1<'_, f32>,
    ) -> PyResult<()> {
        let actions = action_ids.as_slice()?.to_vec();
        let strengths = paddle_strengths.as_slice()?.to_vec();
        let inner = &mut self.inner;
        Ok(without_gil(py, || inner.send(&actions, &strengths))?)
    }

    /// Waits for the next batch -> (obs, rewards, terminations, truncations, info).
    fn recv<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let inner = &mut self.inner;
        let mut batch = without_gil(py, || inner.recv())?;
        let rows = batch.batch_size();
        let any_done = batch.any_done();
        let info = self.info(py, &mut batch)?;
        if let (Some(final_obs), Some(mask)) = (batch.final_obs.take(), batch.final_obs_mask.take()) {
            if any_done {
                info.set_item("final_obs", self.obs_array(py, final_obs, rows)?)?;
                info.set_item("_final_obs", PyArray1::from_vec(py, mask))?;
            }
        }
        let obs = self.obs_array(py, batch.obs, rows)?;
        let rewards = PyArray1::from_vec(py, batch.rewards).into_any();
        let terminations = PyArray1::from_vec(py, batch.terminations).into_any();
        let truncations = PyArray1::from_vec(py, batch.truncations).into_any();
        PyTuple::new(py, [obs, rewards, terminations, truncations, info.into_any()])
    }

    /// Every env's current screen -> uint8 array (num_envs, height, width, 3), RGB.
    fn render<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let inner = &self.inner;
        let (frames, (height, width)) = without_gil(py, || inner.render_rgb())?;
        Ok(PyArray1::from_vec(py, frames).reshape([self.inner.num_envs(), height, width, 3])?.into_any())
    }

    /// Stops and joins the worker threads. Idempotent.
    fn close(&mut self, py: Python<'_>) {
        let inner = &mut self.inner;
        without_gil(py, || inner.close());
    }
}

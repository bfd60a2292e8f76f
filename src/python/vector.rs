//! `torchwm._core.AtariVectorCore`: the Rust vectorizer, handing batches to numpy without copies.
//!
//! Threading contract: one call at a time steps an env (`reset`, `step`, `send`, `recv`); a second
//! thread calling one of them meanwhile gets `EnvStateError`. `close()` is safe from any thread: a
//! `recv`/`step` blocked in another thread then ends with `ClosedEnvironmentError`.
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, TryLockError};

use numpy::ndarray::IxDyn;
use numpy::{PyArray1, PyArrayMethods, PyReadonlyArray1};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyTuple};

use super::settings::{config_from_keywords, settings_dict};
use super::{check_signals, enter_core};
use crate::ale::RAM_SIZE;
use crate::error::Error;
use crate::ffi::fork_generation;
use crate::vector::{created_before_fork, AtariVectorEnv, BatchResult, EpisodeColumns};

#[pyclass(module = "torchwm._core", name = "AtariVectorCore", frozen)]
pub struct AtariVectorCore {
    inner: Mutex<AtariVectorEnv>,
    /// Set by `close()` before it waits for the lock, so that a blocked wait gives up. It publishes
    /// nothing (the env is behind `inner`'s Mutex); SeqCst is more than it needs, kept as the simplest
    /// argument where it is read once per call or wait check.
    closing: Arc<AtomicBool>,
    obs_shape: Vec<usize>,
    num_envs: usize,
    batch_size: usize,
    num_threads: usize,
    action_set: Vec<i32>,
    minimal_action_sets: Vec<Vec<i32>>,
    settings: Py<PyDict>,
    /// `fork_generation()` when created: another value means this is a forked child, where the
    /// worker threads do not exist and the lock may be held for ever by a thread that was not copied.
    fork_generation: u64,
}

impl AtariVectorCore {
    /// The env, for one call; a call already running in another thread makes this one fail.
    fn lock(&self) -> PyResult<MutexGuard<'_, AtariVectorEnv>> {
        if self.closing.load(Ordering::SeqCst) {
            return Err(Error::Closed.into());
        }
        if self.is_forked_copy() {
            return Err(created_before_fork().into());
        }
        self.inner.try_lock().map_err(|error| match error {
            TryLockError::WouldBlock => Error::InvalidState(
                "another thread is using this AtariVectorEnv: reset/step/send/recv must not run concurrently \
                 (one thread at a time; close() may come from any thread). In a process forked while a call \
                 was running, create a new environment."
                    .into(),
            )
            .into(),
            TryLockError::Poisoned(_) => Error::WorkerPanic("an earlier call panicked".into()).into(),
        })
    }

    fn is_forked_copy(&self) -> bool {
        self.fork_generation != fork_generation()
    }

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
        if let Some(ram) = batch.ram.take() {
            let rows = ram.len() / RAM_SIZE;
            info.set_item("ram", PyArray1::from_vec(py, ram).reshape([rows, RAM_SIZE])?)?;
        }
        Ok(info)
    }

    /// `episode_statistics`' keys: `raw_reward` always, `episode` and its mask `_episode` (gymnasium's
    /// `RecordEpisodeStatistics` layout) only in a batch where an episode ended.
    fn add_episode_info(py: Python<'_>, info: &Bound<'_, PyDict>, columns: EpisodeColumns) -> PyResult<()> {
        let any_ended = columns.any_ended();
        info.set_item("raw_reward", PyArray1::from_vec(py, columns.raw_rewards))?;
        if any_ended {
            let episode = PyDict::new(py);
            episode.set_item("r", PyArray1::from_vec(py, columns.returns))?;
            episode.set_item("l", PyArray1::from_vec(py, columns.lengths))?;
            episode.set_item("frames", PyArray1::from_vec(py, columns.frames))?;
            info.set_item("episode", episode)?;
            info.set_item("_episode", PyArray1::from_vec(py, columns.ended))?;
        }
        Ok(())
    }

    fn obs_array<'py>(&self, py: Python<'py>, data: Vec<u8>, rows: usize) -> PyResult<Bound<'py, PyAny>> {
        Ok(PyArray1::from_vec(py, data).reshape(IxDyn(&self.batch_obs_shape(rows)))?.into_any())
    }

    /// (obs, rewards, terminations, truncations, info) of a step's batch.
    fn step_tuple<'py>(&self, py: Python<'py>, mut batch: BatchResult) -> PyResult<Bound<'py, PyTuple>> {
        let rows = batch.batch_size();
        let any_done = batch.any_done();
        let info = self.info(py, &mut batch)?;
        if let (Some(final_obs), Some(mask)) = (batch.final_obs.take(), batch.final_obs_mask.take()) {
            if any_done {
                info.set_item("final_obs", self.obs_array(py, final_obs, rows)?)?;
                info.set_item("_final_obs", PyArray1::from_vec(py, mask))?;
            }
        }
        if let Some(columns) = batch.episodes.take() {
            Self::add_episode_info(py, &info, columns)?;
        }
        let obs = self.obs_array(py, batch.obs, rows)?;
        let rewards = PyArray1::from_vec(py, batch.rewards).into_any();
        let terminations = PyArray1::from_vec(py, batch.terminations).into_any();
        let truncations = PyArray1::from_vec(py, batch.truncations).into_any();
        PyTuple::new(py, [obs, rewards, terminations, truncations, info.into_any()])
    }
}

#[pymethods]
impl AtariVectorCore {
    /// Builds `num_envs` envs of `rom_path` (a path, or a list of them: env `i` plays the ROM
    /// `i % len`); `settings` are AtariVectorEnv's keywords (see `ATARI_SETTINGS`), each checked here.
    #[new]
    #[pyo3(signature = (rom_path, num_envs, **settings))]
    fn new(
        py: Python<'_>,
        rom_path: &Bound<'_, PyAny>,
        num_envs: &Bound<'_, PyAny>,
        settings: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Self> {
        let roms = match rom_path.extract::<PathBuf>() {
            Ok(path) => vec![path],
            Err(_) => rom_path.extract::<Vec<PathBuf>>()?,
        };
        let config = config_from_keywords(roms, num_envs, settings)?;
        let settings = settings_dict(py, &config)?.unbind();
        let obs_shape = config.env.obs_shape();
        let closing = Arc::new(AtomicBool::new(false));
        let mut inner = enter_core(py, || AtariVectorEnv::new(config))?;
        let closing_seen = Arc::clone(&closing);
        inner.set_interrupt_check(move || {
            if closing_seen.load(Ordering::SeqCst) {
                return Err(Error::Closed);
            }
            check_signals()
        });
        Ok(Self {
            num_envs: inner.num_envs(),
            batch_size: inner.batch_size(),
            num_threads: inner.num_threads(),
            action_set: inner.action_set().to_vec(),
            minimal_action_sets: inner.minimal_action_sets().to_vec(),
            inner: Mutex::new(inner),
            closing,
            obs_shape,
            settings,
            fork_generation: fork_generation(),
        })
    }

    #[getter]
    fn num_envs(&self) -> usize {
        self.num_envs
    }
    #[getter]
    fn batch_size(&self) -> usize {
        self.batch_size
    }
    #[getter]
    fn num_threads(&self) -> usize {
        self.num_threads
    }
    #[getter]
    fn action_set(&self) -> Vec<i32> {
        self.action_set.clone()
    }
    /// Each env's game's minimal action set (ALE ids).
    #[getter]
    fn minimal_action_sets(&self) -> Vec<Vec<i32>> {
        self.minimal_action_sets.clone()
    }
    /// Shape of one env's observation: (stack_num, img_height, img_width[, 3]), or (stack_num, 128) of RAM.
    #[getter]
    fn observation_shape(&self) -> Vec<usize> {
        self.obs_shape.clone()
    }
    /// Every keyword's value, as checked (aliases resolved, defaults filled in).
    #[getter]
    fn settings<'py>(&self, py: Python<'py>) -> Bound<'py, PyDict> {
        self.settings.bind(py).copy().unwrap_or_else(|_| PyDict::new(py))
    }
    #[getter]
    fn closed(&self) -> bool {
        self.closing.load(Ordering::SeqCst)
    }

    /// Resets the envs of `reset_mask` (all when None) with `seeds` (one per env reset; None keeps
    /// the env's RNG going) -> (obs, info).
    #[pyo3(signature = (reset_mask, seeds))]
    fn reset<'py>(
        &self,
        py: Python<'py>,
        reset_mask: Option<PyReadonlyArray1<'py, bool>>,
        seeds: Vec<Option<u32>>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let env_ids: Vec<usize> = match &reset_mask {
            None => (0..self.num_envs).collect(),
            Some(mask) => mask.as_slice()?.iter().enumerate().filter(|(_, &reset)| reset).map(|(id, _)| id).collect(),
        };
        let mut guard = self.lock()?;
        let inner = &mut *guard;
        let mut batch = enter_core(py, || inner.reset(&env_ids, &seeds))?;
        drop(guard);
        let rows = batch.batch_size();
        let info = self.info(py, &mut batch)?;
        let obs = self.obs_array(py, batch.obs, rows)?;
        PyTuple::new(py, [obs, info.into_any()])
    }

    /// Steps the envs of the last batch (send then recv, as one call) -> (obs, rewards,
    /// terminations, truncations, info). Interrupted (Ctrl-C), it leaves the batch in flight for the
    /// next step/send/recv, so the env stays steppable.
    fn step<'py>(
        &self,
        py: Python<'py>,
        action_ids: PyReadonlyArray1<'py, i64>,
        paddle_strengths: PyReadonlyArray1<'py, f32>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let (actions, strengths) = (action_ids.as_slice()?, paddle_strengths.as_slice()?);
        let mut guard = self.lock()?;
        let inner = &mut *guard;
        let batch = enter_core(py, || inner.step(actions, strengths))?;
        drop(guard);
        self.step_tuple(py, batch)
    }

    /// Queues one step: `action_ids` (int64 indices into the action set) and `paddle_strengths`
    /// (float32) for the envs of the last batch, in its row order.
    fn send<'py>(
        &self,
        py: Python<'py>,
        action_ids: PyReadonlyArray1<'py, i64>,
        paddle_strengths: PyReadonlyArray1<'py, f32>,
    ) -> PyResult<()> {
        let (actions, strengths) = (action_ids.as_slice()?, paddle_strengths.as_slice()?);
        let mut guard = self.lock()?;
        let inner = &mut *guard;
        enter_core(py, || inner.send(actions, strengths))
    }

    /// Waits for the next batch -> (obs, rewards, terminations, truncations, info).
    fn recv<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let mut guard = self.lock()?;
        let inner = &mut *guard;
        let batch = enter_core(py, || inner.recv())?;
        drop(guard);
        self.step_tuple(py, batch)
    }

    /// One saved state (bytes) per env of `env_ids`, between steps, in sync mode.
    fn clone_states<'py>(&self, py: Python<'py>, env_ids: Vec<usize>) -> PyResult<Vec<Bound<'py, PyBytes>>> {
        let mut guard = self.lock()?;
        let inner = &mut *guard;
        let states = enter_core(py, || inner.clone_states(&env_ids))?;
        drop(guard);
        Ok(states.iter().map(|state| PyBytes::new(py, state)).collect())
    }

    /// Puts `states[i]` (from `clone_states`) into env `env_ids[i]`; every state is checked first.
    fn restore_states(&self, py: Python<'_>, env_ids: Vec<usize>, states: Vec<Bound<'_, PyBytes>>) -> PyResult<()> {
        let states: Vec<&[u8]> = states.iter().map(|state| state.as_bytes()).collect();
        let mut guard = self.lock()?;
        let inner = &mut *guard;
        enter_core(py, || inner.restore_states(&env_ids, &states))
    }

    /// Every env's current screen -> uint8 array (num_envs, height, width, 3), RGB.
    fn render<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let guard = self.lock()?;
        let inner = &*guard;
        let num_envs = inner.num_envs();
        let (frames, (height, width)) = enter_core(py, || inner.render_rgb())?;
        drop(guard);
        Ok(PyArray1::from_vec(py, frames).reshape([num_envs, height, width, 3])?.into_any())
    }

    /// Stops and joins the worker threads; from any thread, ending a wait in another. Idempotent.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        self.closing.store(true, Ordering::SeqCst);
        if self.is_forked_copy() {
            // In a forked child there is nothing to stop, and the lock may belong to a thread that was
            // not copied: the child's copy is closed without touching it (the parent's env is unaffected).
            return Ok(());
        }
        // A call blocked in another thread sees `closing` within a few milliseconds and lets go.
        enter_core(py, || {
            let mut inner = self.inner.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            inner.close();
            Ok(())
        })
    }
}

//! `torchwm._core.Doorbells`: the process vectorizer's doorbells ([`crate::doorbell`]) over a
//! shared mapping of a memfd (on Windows a file mapping) that the parent creates and its workers
//! inherit or receive, and on Windows the events their sleepers wait on ([`WakeLines`]).
use std::time::Duration;

use pyo3::prelude::*;

use super::{check_signals, enter_core};
use crate::doorbell::{Doorbells as Bells, Patience, WakeLines};
use crate::error::Error;
use crate::ffi::SharedMapping;
use crate::poll_budget::PollBudget;

#[pyclass(module = "torchwm._core", name = "Doorbells", frozen)]
pub(crate) struct Doorbells {
    words: SharedMapping,
    wake: WakeLines,
    workers: usize,
    /// This process's polling budget: each side of a vectorizer waits through its own copy.
    polling: PollBudget,
}

impl Doorbells {
    fn bells(&self) -> Bells<'_> {
        Bells::new(self.words.words(), &self.wake, self.workers)
            .expect("checked in the constructor")
            .adapting(&self.polling)
    }

    fn check_worker(&self, w: usize) -> PyResult<()> {
        if w >= self.workers {
            return Err(Error::InvalidArgument(format!("worker {w} out of range ({} workers)", self.workers)).into());
        }
        Ok(())
    }
}

fn patience(spin_s: f64, yield_s: f64) -> PyResult<Patience> {
    Ok(Patience { spin: duration("spin_s", spin_s)?, yield_: duration("yield_s", yield_s)? })
}

fn duration(what: &str, seconds: f64) -> PyResult<Duration> {
    Duration::try_from_secs_f64(seconds).map_err(|_| {
        Error::InvalidArgument(format!("{what} must be a finite number of seconds >= 0, got {seconds}")).into()
    })
}

#[pymethods]
impl Doorbells {
    #[new]
    #[pyo3(signature = (fd, workers, wake_handles = None))]
    /// Maps the doorbells of `workers` workers from the file `fd` (a memfd of at least
    /// `words_needed(workers)` 32-bit words; on Windows a file mapping's handle); `fd` may be closed
    /// afterwards. Windows: `wake_handles` are the events another process's `wake_handles()` gave,
    /// duplicated into this one (this object then owns them); None creates new ones. Elsewhere the
    /// sleepers need no events: None (or an empty list).
    fn new(fd: i32, workers: usize, wake_handles: Option<Vec<isize>>) -> PyResult<Self> {
        let needed = Self::words_needed(workers)?;
        let words = SharedMapping::map(fd, needed)?;
        let lines = Bells::lines(workers).ok_or_else(|| Error::TooLarge(format!("{workers} workers")))?;
        let wake = match wake_handles {
            None => WakeLines::new(lines)?,
            Some(handles) => WakeLines::adopt(&handles)?,
        };
        Bells::new(words.words(), &wake, workers)?;
        Ok(Self { words, wake, workers, polling: PollBudget::default() })
    }

    /// The handles of the events this process's sleepers wait on, for another process to duplicate
    /// (they stay this object's); empty where sleeps need none (everywhere but Windows).
    fn wake_handles(&self) -> Vec<isize> {
        self.wake.handles()
    }

    /// How many 32-bit words the buffer for `workers` workers needs.
    #[staticmethod]
    fn words_needed(workers: usize) -> PyResult<usize> {
        Bells::words_needed(workers)
            .ok_or_else(|| Error::TooLarge(format!("no doorbell buffer can hold {workers} workers")).into())
    }

    /// Parent: gives each of `workers` a command of `kind` (each must have finished its last one).
    fn ring(&self, workers: Vec<usize>, kind: u32) -> PyResult<()> {
        for &w in &workers {
            self.check_worker(w)?;
        }
        let bells = self.bells();
        workers.iter().for_each(|&w| bells.ring(w, kind));
        Ok(())
    }

    /// Worker `w`: its result of `kind` to the `served`-th command is out.
    fn complete(&self, w: usize, kind: u32, served: u32) -> PyResult<()> {
        self.check_worker(w)?;
        self.bells().complete(w, kind, served);
        Ok(())
    }

    fn is_done(&self, w: usize) -> PyResult<bool> {
        self.check_worker(w)?;
        Ok(self.bells().is_done(w))
    }

    /// Those of `workers` whose last result is of `kind`.
    fn done_with_kind(&self, workers: Vec<usize>, kind: u32) -> PyResult<Vec<usize>> {
        for &w in &workers {
            self.check_worker(w)?;
        }
        let bells = self.bells();
        Ok(workers.into_iter().filter(|&w| bells.done_kind(w) == kind).collect())
    }

    /// Worker `w`: the kind of the command after the `seen`-th, or None after `timeout_s`. Spins up
    /// to `spin_s` (adapted: [`PollBudget`]), yields its core between checks for `yield_s`, then sleeps.
    fn wait_command(
        &self,
        py: Python<'_>,
        w: usize,
        seen: u32,
        spin_s: f64,
        yield_s: f64,
        timeout_s: f64,
    ) -> PyResult<Option<u32>> {
        self.check_worker(w)?;
        let (patience, timeout) = (patience(spin_s, yield_s)?, duration("timeout_s", timeout_s)?);
        enter_core(py, || self.bells().wait_command(w, seen, patience, timeout, check_signals))
    }

    /// Parent: waits until `need` of `workers` are done or `timeout_s` passed; the done ones. Waits
    /// as `wait_command` does.
    fn wait_done(
        &self,
        py: Python<'_>,
        workers: Vec<usize>,
        need: usize,
        spin_s: f64,
        yield_s: f64,
        timeout_s: f64,
    ) -> PyResult<Vec<usize>> {
        for &w in &workers {
            self.check_worker(w)?;
        }
        let (patience, timeout) = (patience(spin_s, yield_s)?, duration("timeout_s", timeout_s)?);
        enter_core(py, || self.bells().wait_done(&workers, need, patience, timeout, check_signals))
    }
}

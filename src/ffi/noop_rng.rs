//! `NoopRng`: an owned `std::mt19937`, for the noop-reset draws.
use std::ptr::{self, NonNull};

use super::bindings::{twm_noop_rng_free, twm_noop_rng_new, twm_noop_rng_seed, twm_noop_rng_uniform, TwmNoopRng};
use super::check;
use crate::error::{Error, Result};

/// `std::mt19937` with `std::uniform_int_distribution<int>`, from the C++ standard library, so noop
/// resets draw exactly what ale_py's vectorizer draws for the same seed.
pub(crate) struct NoopRng {
    ptr: NonNull<TwmNoopRng>,
}

// SAFETY: a plain PRNG state with no thread affinity, used through &mut only.
unsafe impl Send for NoopRng {}

impl Drop for NoopRng {
    fn drop(&mut self) {
        // SAFETY: owned pointer from twm_noop_rng_new, freed exactly once.
        unsafe { twm_noop_rng_free(self.ptr.as_ptr()) }
    }
}

impl NoopRng {
    pub(crate) fn new(seed: u32) -> Result<Self> {
        let mut ptr = ptr::null_mut();
        // SAFETY: live out-pointer; on success a fresh heap object we own.
        check(unsafe { twm_noop_rng_new(seed, &mut ptr) })?;
        NonNull::new(ptr).map(|ptr| Self { ptr }).ok_or_else(|| Error::Ale("rng allocation failed".into()))
    }
    pub(crate) fn seed(&mut self, seed: u32) {
        // SAFETY: live handle.
        unsafe { twm_noop_rng_seed(self.ptr.as_ptr(), seed) }
    }
    /// A uniform draw in `[low, high]`, both inclusive; `high` below `low` counts as `low`.
    pub(crate) fn uniform(&mut self, low: i32, high: i32) -> i32 {
        // SAFETY: live handle; the distribution's precondition `low <= high` holds by the `max`.
        unsafe { twm_noop_rng_uniform(self.ptr.as_ptr(), low, high.max(low)) }
    }
}

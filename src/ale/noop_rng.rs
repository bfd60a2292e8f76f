//! The random number generator of noop resets.
use crate::error::Result;
use crate::ffi::RawNoopRng;

/// `std::mt19937` with `std::uniform_int_distribution<int>`, from the C++ standard library, so noop
/// resets draw exactly what ale_py's vectorizer draws for the same seed.
pub(crate) struct NoopRng {
    raw: RawNoopRng,
}

impl NoopRng {
    pub(crate) fn new(seed: u32) -> Result<Self> {
        Ok(Self { raw: RawNoopRng::new(seed)? })
    }

    /// Restarts the sequence from `seed`.
    pub(crate) fn seed(&mut self, seed: u32) {
        self.raw.seed(seed);
    }

    /// A uniform draw in `[low, high]`, both inclusive; `high` below `low` counts as `low`.
    pub(crate) fn uniform(&mut self, low: i32, high: i32) -> i32 {
        self.raw.uniform(low, high)
    }
}

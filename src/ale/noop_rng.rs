//! The random number generator of noop resets, in Rust: `std::mt19937` and the draw of
//! `std::uniform_int_distribution<int>` as GCC's libstdc++ implements it (the library ale_py is built
//! with), so noop resets draw exactly what ale_py's vectorizer draws for the same seed, whichever C++
//! standard library compiled ALE (libc++'s distribution draws differently).
use rand_mt::Mt;

pub(crate) struct NoopRng {
    engine: Mt,
    /// Where the sequence is: its seed and the 32-bit values drawn since (a saved env keeps these).
    seed: u32,
    draws: u64,
}

impl NoopRng {
    pub(crate) fn new(seed: u32) -> Self {
        Self { engine: Mt::new(seed), seed, draws: 0 }
    }

    /// Restarts the sequence from `seed` (`std::mt19937::seed`).
    pub(crate) fn seed(&mut self, seed: u32) {
        self.engine.reseed(seed);
        (self.seed, self.draws) = (seed, 0);
    }

    /// `(seed, draws)`: where the sequence is, for [`restore_position`](Self::restore_position).
    pub(crate) fn position(&self) -> (u32, u64) {
        (self.seed, self.draws)
    }

    /// Puts the sequence where [`position`](Self::position) was: reseeds and draws again (one or two
    /// values are drawn per reset, so this is cheap).
    pub(crate) fn restore_position(&mut self, (seed, draws): (u32, u64)) {
        self.seed(seed);
        for _ in 0..draws {
            self.next_u32();
        }
    }

    fn next_u32(&mut self) -> u32 {
        self.draws += 1;
        self.engine.next_u32()
    }

    /// A uniform draw in `[low, high]`, both inclusive; `high` below `low` counts as `low`.
    pub(crate) fn uniform(&mut self, low: i32, high: i32) -> i32 {
        let span = (i64::from(high.max(low)) - i64::from(low)) as u64;
        let offset = match u32::try_from(span + 1) {
            Ok(range) => self.lemire(range),
            // The whole 32-bit range: libstdc++ takes the generator's value as it is.
            Err(_) => self.next_u32(),
        };
        // libstdc++ adds in unsigned arithmetic and converts back to int.
        (offset as i32).wrapping_add(low)
    }

    /// libstdc++'s `_S_nd`: Lemire's nearly divisionless reduction of a 32-bit draw to `[0, range)`.
    fn lemire(&mut self, range: u32) -> u32 {
        let mut product = u64::from(self.next_u32()) * u64::from(range);
        if (product as u32) < range {
            let threshold = range.wrapping_neg() % range;
            while (product as u32) < threshold {
                product = u64::from(self.next_u32()) * u64::from(range);
            }
        }
        (product >> 32) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::NoopRng;

    #[test]
    fn draws_are_libstdcxx_draws() {
        // std::mt19937(5489) (its default seed) yields 3499211612 first, as the standard requires.
        let mut rng = NoopRng::new(5489);
        assert_eq!(rng.engine.next_u32(), 3_499_211_612);
        // uniform_int_distribution<int>(0, 29) over std::mt19937(0), as libstdc++ 12 draws it.
        let mut rng = NoopRng::new(0);
        let draws: Vec<i32> = (0..8).map(|_| rng.uniform(0, 29)).collect();
        assert_eq!(draws, EXPECTED_0_29_SEED_0);
        assert_eq!(NoopRng::new(3).uniform(4, 2), 4);
    }

    #[test]
    fn a_restored_position_continues_the_sequence() {
        let mut rng = NoopRng::new(7);
        // Ranges that need one draw and ranges that often need two (Lemire's rejection).
        for high in [29, 5, i32::MAX, 1 << 30, 29] {
            rng.uniform(0, high);
        }
        let position = rng.position();
        let expected: Vec<i32> = (0..20).map(|i| rng.uniform(0, 29 + (i << 26))).collect();
        let mut restored = NoopRng::new(99);
        restored.uniform(0, 3);
        restored.restore_position(position);
        let continued: Vec<i32> = (0..20).map(|i| restored.uniform(0, 29 + (i << 26))).collect();
        assert_eq!(continued, expected);
    }

    // Checked, when this replaced the C++ one, against libstdc++ 12 for seeds 0..3000 and ranges from
    // empty to the whole of `i32`, 50 draws each.
    const EXPECTED_0_29_SEED_0: [i32; 8] = [16, 17, 21, 25, 18, 25, 16, 25];
}

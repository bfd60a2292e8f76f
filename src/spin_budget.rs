//! How long a doorbell waiter spins before it yields its core: as long as its recent waits took,
//! when that was short.
//!
//! Spinning (a `pause` loop, no system call) hands a result over fastest and is gentlest on a
//! hyper-threaded sibling, but only while the process waited for has a core of its own and answers
//! quickly; on a busy machine a spinning waiter takes the core the other side needs. So each waiter
//! keeps a budget:
//! - a wait that ended within the cap raises it to twice that wait (up to the cap);
//! - a longer one halves it (a caller whose policy takes long between batches);
//! - a wait in which the waiter lost its core while it polled (another thread ran: the machine is
//!   busy) zeroes it, and it stays zero for the next [`COOLDOWN_WAITS`] waits.
//!
//! Quick partners on free cores keep it near their answer time; on a loaded machine the waiter goes
//! straight to yielding and sleeping, as it would without a budget.
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};
use std::time::Duration;

/// Waits after a preempted one during which the budget stays zero.
pub const COOLDOWN_WAITS: u32 = 64;

/// A waiter's spin budget; starts at zero (no spinning until quick waits are seen).
#[derive(Debug, Default)]
pub struct SpinBudget {
    nanos: AtomicU64,
    cooldown: AtomicU32,
}

impl SpinBudget {
    /// How long the next wait spins, at most `cap`.
    pub fn spin(&self, cap: Duration) -> Duration {
        Duration::from_nanos(self.nanos.load(Relaxed)).min(cap)
    }

    /// Adapts the budget to a wait that took `waited`, spinning at most `cap`, in which the waiter
    /// was `preempted` (or not) while it polled.
    pub fn record(&self, waited: Duration, cap: Duration, preempted: bool) {
        if preempted {
            self.nanos.store(0, Relaxed);
            self.cooldown.store(COOLDOWN_WAITS, Relaxed);
            return;
        }
        let cooldown = self.cooldown.load(Relaxed);
        if cooldown > 0 {
            self.cooldown.store(cooldown - 1, Relaxed);
            return;
        }
        let cap = nanos(cap);
        let budget = self.nanos.load(Relaxed).min(cap);
        let waited = nanos(waited);
        let next = if waited <= cap { budget.max(waited.saturating_mul(2)).min(cap) } else { budget / 2 };
        self.nanos.store(next, Relaxed);
    }
}

fn nanos(duration: Duration) -> u64 {
    u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    const CAP: Duration = Duration::from_micros(500);

    #[test]
    fn quick_waits_raise_the_budget_to_twice_the_wait_up_to_the_cap() {
        let budget = SpinBudget::default();
        assert_eq!(budget.spin(CAP), Duration::ZERO);
        budget.record(Duration::from_micros(40), CAP, false);
        assert_eq!(budget.spin(CAP), Duration::from_micros(80));
        budget.record(Duration::from_micros(10), CAP, false); // a quicker wait keeps what was learnt
        assert_eq!(budget.spin(CAP), Duration::from_micros(80));
        budget.record(Duration::from_micros(400), CAP, false);
        assert_eq!(budget.spin(CAP), CAP);
    }

    #[test]
    fn long_waits_halve_the_budget_to_zero() {
        let budget = SpinBudget::default();
        budget.record(Duration::from_micros(200), CAP, false);
        let mut spins = vec![budget.spin(CAP)];
        for _ in 0..20 {
            budget.record(Duration::from_millis(3), CAP, false);
            spins.push(budget.spin(CAP));
        }
        assert_eq!(spins[..3], [Duration::from_micros(400), Duration::from_micros(200), Duration::from_micros(100)]);
        assert_eq!(*spins.last().unwrap(), Duration::ZERO);
    }

    #[test]
    fn a_preempted_wait_zeroes_the_budget_for_the_cooldown() {
        let budget = SpinBudget::default();
        budget.record(Duration::from_micros(200), CAP, false);
        budget.record(Duration::from_micros(30), CAP, true);
        assert_eq!(budget.spin(CAP), Duration::ZERO);
        for _ in 0..COOLDOWN_WAITS {
            budget.record(Duration::from_micros(20), CAP, false);
            assert_eq!(budget.spin(CAP), Duration::ZERO);
        }
        budget.record(Duration::from_micros(20), CAP, false);
        assert_eq!(budget.spin(CAP), Duration::from_micros(40));
    }

    #[test]
    fn a_zero_cap_never_spins() {
        let budget = SpinBudget::default();
        budget.record(Duration::from_micros(5), Duration::ZERO, false);
        assert_eq!(budget.spin(Duration::ZERO), Duration::ZERO);
        assert_eq!(budget.spin(CAP), Duration::ZERO);
    }
}

//! How long a doorbell waiter polls before it sleeps: spinning for about as long as its recent waits
//! took, when that was short, then yielding its core between checks; or not at all on a busy machine.
//!
//! Spinning (a `pause` loop, no system call) hands a result over fastest and is gentlest on a
//! hyper-threaded sibling, but only while the process waited for has a core of its own and answers
//! quickly. On a busy machine polling of any kind loses: a spinning waiter takes the core the other
//! side needs, and a yielding one hands its core to another job for a whole time slice, while a
//! sleeping one is woken with priority. Measured on 2 loaded cores, CartPole 1x4: 7.0 ms a batch
//! polling, 0.4 ms sleeping at once. So each waiter keeps a budget:
//! - a wait that ended within the spin cap raises the spin to twice that wait (up to the cap);
//! - a longer one halves it (a caller whose policy takes long between batches);
//! - a wait in which the waiter lost its core while it polled (two checks more than [`PREEMPTED`]
//!   apart: another thread ran) stops all polling for a cooldown of [`MIN_COOLDOWN`] waits, doubled
//!   (up to [`MAX_COOLDOWN`]) each time the first polling wait after one is preempted again.
//!
//! Quick partners on free cores keep the spin near their answer time; on a loaded machine the waiter
//! sleeps at once, and tries polling again once a cooldown is over.
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};
use std::time::Duration;

/// Longer than this between two checks of a polling waiter, and it lost its core to another thread:
/// the machine is busy (on a free core a check follows the last within a microsecond).
pub const PREEMPTED: Duration = Duration::from_micros(50);
/// Waits without polling after a preempted one; doubled while preemption goes on.
pub const MIN_COOLDOWN: u32 = 64;
pub const MAX_COOLDOWN: u32 = 4096;

/// How long a waiter spins and then yields before it sleeps (at most, with a [`PollBudget`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Patience {
    pub spin: Duration,
    pub yield_: Duration,
}

/// A waiter's polling budget; starts with no spin (until quick waits are seen) and polling allowed.
/// Its atomics are Relaxed: they publish nothing and only steer how long a wait polls (any value read
/// is a valid budget); threads that wait through one at once may lose an update: a worse guess, no more.
#[derive(Debug)]
pub struct PollBudget {
    spin_nanos: AtomicU64,
    /// Waits left that sleep at once.
    cooldown: AtomicU32,
    /// The next cooldown's length.
    next_cooldown: AtomicU32,
}

impl Default for PollBudget {
    fn default() -> Self {
        Self { spin_nanos: AtomicU64::new(0), cooldown: AtomicU32::new(0), next_cooldown: AtomicU32::new(MIN_COOLDOWN) }
    }
}

impl PollBudget {
    /// The patience of the next wait: `cap`'s yield and at most its spin, or none in a cooldown.
    pub fn patience(&self, cap: Patience) -> Patience {
        if self.cooldown.load(Relaxed) > 0 {
            return Patience::default();
        }
        Patience { spin: Duration::from_nanos(self.spin_nanos.load(Relaxed)).min(cap.spin), yield_: cap.yield_ }
    }

    /// Adapts the budget to a wait under `cap` that took `waited`, in which the waiter was
    /// `preempted` (or not) while it polled.
    pub fn record(&self, waited: Duration, cap: Patience, preempted: bool) {
        let cooldown = self.cooldown.load(Relaxed);
        if cooldown > 0 {
            self.cooldown.store(cooldown - 1, Relaxed); // it slept at once: nothing learnt
            return;
        }
        if preempted {
            let length = self.next_cooldown.load(Relaxed);
            self.cooldown.store(length, Relaxed);
            self.next_cooldown.store(length.saturating_mul(2).min(MAX_COOLDOWN), Relaxed);
            self.spin_nanos.store(0, Relaxed);
            return;
        }
        self.next_cooldown.store(MIN_COOLDOWN, Relaxed);
        let cap = nanos(cap.spin);
        let spin = self.spin_nanos.load(Relaxed).min(cap);
        let waited = nanos(waited);
        let next = if waited <= cap { spin.max(waited.saturating_mul(2)).min(cap) } else { spin / 2 };
        self.spin_nanos.store(next, Relaxed);
    }
}

fn nanos(duration: Duration) -> u64 {
    u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    const CAP: Patience = Patience { spin: Duration::from_micros(500), yield_: Duration::from_micros(300) };

    fn spin(budget: &PollBudget) -> Duration {
        budget.patience(CAP).spin
    }

    #[test]
    fn quick_waits_raise_the_spin_to_twice_the_wait_up_to_the_cap() {
        let budget = PollBudget::default();
        assert_eq!(budget.patience(CAP).spin, Duration::ZERO);
        assert_eq!(budget.patience(CAP).yield_, CAP.yield_);
        budget.record(Duration::from_micros(40), CAP, false);
        assert_eq!(spin(&budget), Duration::from_micros(80));
        budget.record(Duration::from_micros(10), CAP, false); // a quicker wait keeps what was learnt
        assert_eq!(spin(&budget), Duration::from_micros(80));
        budget.record(Duration::from_micros(400), CAP, false);
        assert_eq!(spin(&budget), CAP.spin);
    }

    #[test]
    fn long_waits_halve_the_spin_to_zero() {
        let budget = PollBudget::default();
        budget.record(Duration::from_micros(200), CAP, false);
        let mut spins = vec![spin(&budget)];
        for _ in 0..20 {
            budget.record(Duration::from_millis(3), CAP, false);
            spins.push(spin(&budget));
        }
        assert_eq!(spins[..3], [Duration::from_micros(400), Duration::from_micros(200), Duration::from_micros(100)]);
        assert_eq!(*spins.last().unwrap(), Duration::ZERO);
    }

    /// Records `count` waits as the waiter would: each with the patience the budget gave it.
    fn waits(budget: &PollBudget, count: u32, preempted_when_polling: bool) -> u32 {
        let mut polled = 0;
        for _ in 0..count {
            let polls = budget.patience(CAP) != Patience::default();
            polled += u32::from(polls);
            budget.record(Duration::from_micros(20), CAP, polls && preempted_when_polling);
        }
        polled
    }

    #[test]
    fn a_preempted_wait_stops_polling_for_a_cooldown_that_doubles_while_preemption_goes_on() {
        let budget = PollBudget::default();
        budget.record(Duration::from_micros(200), CAP, false);
        budget.record(Duration::from_micros(30), CAP, true);
        assert_eq!(budget.patience(CAP), Patience::default());
        // A busy machine: one polling wait (preempted) per cooldown, each twice the last.
        assert_eq!(waits(&budget, MIN_COOLDOWN, true), 0);
        assert_eq!(waits(&budget, 1 + 2 * MIN_COOLDOWN, true), 1);
        assert_eq!(waits(&budget, 1 + 4 * MIN_COOLDOWN, true), 1);
        // The machine frees up: every wait polls again, and the next cooldown is the shortest.
        assert_eq!(waits(&budget, 10, false), 10);
        assert_eq!(spin(&budget), Duration::from_micros(40));
        assert_eq!(budget.next_cooldown.load(Relaxed), MIN_COOLDOWN);
    }

    #[test]
    fn cooldowns_stop_doubling_at_the_most() {
        let budget = PollBudget::default();
        for _ in 0..20 {
            budget.record(Duration::ZERO, CAP, true);
            while budget.patience(CAP) == Patience::default() {
                budget.record(Duration::ZERO, CAP, false);
            }
        }
        assert_eq!(budget.next_cooldown.load(Relaxed), MAX_COOLDOWN);
    }

    #[test]
    fn a_zero_cap_never_spins() {
        let cap = Patience { spin: Duration::ZERO, yield_: CAP.yield_ };
        let budget = PollBudget::default();
        budget.record(Duration::from_micros(5), cap, false);
        assert_eq!(budget.patience(cap).spin, Duration::ZERO);
    }
}

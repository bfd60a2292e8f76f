//! Every system: polls the word, sleeping between reads, each sleep twice the last up to
//! `LONGEST_NAP`. It needs no kernel object, so it works the same between processes as between
//! threads; what it costs is up to `LONGEST_NAP` of latency once a waiter has slept that long (the
//! doorbells spin and yield first, so only idle waiters get here).
use std::sync::atomic::{AtomicU32, Ordering::SeqCst};
use std::time::{Duration, Instant};

use super::WaitEnd;

const FIRST_NAP: Duration = Duration::from_micros(20);
const LONGEST_NAP: Duration = Duration::from_millis(1);

pub(super) fn wait(word: &AtomicU32, expected: u32, timeout: Duration) -> WaitEnd {
    let start = Instant::now();
    let mut nap = FIRST_NAP;
    loop {
        if word.load(SeqCst) != expected {
            return WaitEnd::Woken;
        }
        let left = timeout.saturating_sub(start.elapsed());
        if left.is_zero() {
            return WaitEnd::TimedOut;
        }
        std::thread::sleep(nap.min(left));
        nap = (nap * 2).min(LONGEST_NAP);
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{ends_when_another_thread_changes_the_word, times_out_while_the_word_holds};
    use super::*;

    #[test]
    fn the_wait_ends_once_the_word_changed_without_a_wake() {
        ends_when_another_thread_changes_the_word(wait, |_| {});
    }

    #[test]
    fn the_wait_times_out_while_the_word_holds() {
        times_out_while_the_word_holds(wait);
    }

    #[test]
    fn a_word_that_already_changed_ends_the_wait_at_once() {
        let word = AtomicU32::new(1);
        let start = Instant::now();
        assert_eq!(wait(&word, 0, Duration::from_secs(60)), WaitEnd::Woken);
        assert!(start.elapsed() < Duration::from_secs(30));
    }
}

//! Sleeping while a 32-bit word that other processes may share (a `MAP_SHARED` mapping) holds a
//! value, and waking those sleepers: the sleep of the process vectorizer's doorbells
//! ([`crate::doorbell`]). Linux's futex system call, or a portable poll with short sleeps
//! (on Linux `platform` picks; elsewhere the portable one is the only one).
use std::sync::atomic::AtomicU32;
use std::time::Duration;

#[cfg(target_os = "linux")]
mod linux;
mod portable;

/// How a [`wait`] ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WaitEnd {
    /// The word did not hold `expected` (any more), or a wake came: read it again.
    Woken,
    /// The timeout passed.
    TimedOut,
    /// A signal arrived (Ctrl-C): the caller runs the signal handlers.
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))] // only Linux's futex ends on a signal
    Interrupted,
}

/// Sleeps while `word` holds `expected`, for at most `timeout`; may also end early (`Woken`)
/// for no reason, so callers read the word again.
pub(crate) fn wait(word: &AtomicU32, expected: u32, timeout: Duration) -> WaitEnd {
    #[cfg(target_os = "linux")]
    if !super::platform::portable() {
        return linux::wait(word, expected, timeout);
    }
    portable::wait(word, expected, timeout)
}

/// Wakes every process sleeping in [`wait`] on `word`. The portable sleepers need no wake: they
/// see the word change within their next short sleep.
pub(crate) fn wake_all(word: &AtomicU32) {
    #[cfg(target_os = "linux")]
    if !super::platform::portable() {
        linux::wake_all(word);
    }
    #[cfg(not(target_os = "linux"))]
    let _ = word;
}

/// What both implementations must do, as tests over either's `wait` (and `wake_all`).
#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::Ordering::SeqCst;
    use std::time::Instant;

    type Wait = fn(&AtomicU32, u32, Duration) -> WaitEnd;

    /// A waiter on a word that another thread changes (and wakes with `wake`) 50 ms later sees the
    /// change long before its 20 s timeout.
    pub(super) fn ends_when_another_thread_changes_the_word(wait: Wait, wake: fn(&AtomicU32)) {
        let word = AtomicU32::new(0);
        let start = Instant::now();
        std::thread::scope(|scope| {
            scope.spawn(|| {
                std::thread::sleep(Duration::from_millis(50));
                word.store(1, SeqCst);
                wake(&word);
            });
            while word.load(SeqCst) == 0 {
                assert_ne!(wait(&word, 0, Duration::from_secs(20)), WaitEnd::TimedOut);
            }
        });
        assert!(start.elapsed() < Duration::from_secs(10), "took {:?}", start.elapsed());
    }

    pub(super) fn times_out_while_the_word_holds(wait: Wait) {
        let word = AtomicU32::new(7);
        let start = Instant::now();
        assert_eq!(wait(&word, 7, Duration::from_millis(30)), WaitEnd::TimedOut);
        assert!(start.elapsed() >= Duration::from_millis(30));
    }

    #[test]
    fn the_chosen_implementation_sees_the_change() {
        ends_when_another_thread_changes_the_word(wait, wake_all);
    }
}

//! Sleeping while a 32-bit word that other processes may share (a `MAP_SHARED` mapping) holds a
//! value, and waking those sleepers: the sleep of the process vectorizer's doorbells
//! ([`crate::doorbell`]). Linux's futex system call, or a portable poll with short sleeps
//! (on Linux `platform` picks; macOS has only the portable one); on Windows a kernel event per line
//! of words ([`WakeLines`]), since its address-keyed wait does not cross processes.
use std::sync::atomic::AtomicU32;
use std::time::Duration;

use crate::error::{Error, Result};

#[cfg(target_os = "linux")]
mod linux;
mod portable;
#[cfg(windows)]
mod windows;

/// What the sleepers on lines of shared words (one sleeper a line) sleep on. Where the kernel keys a
/// sleep by the word's address (Linux's futex) or the sleeper polls (the portable column), nothing of
/// its own; on Windows a kernel event per line, which other processes receive as duplicated handles
/// ([`handles`](Self::handles), [`adopt`](Self::adopt)).
pub struct WakeLines {
    #[cfg(windows)]
    events: Vec<windows::Event>,
    lines: usize,
}

impl WakeLines {
    /// What `lines` new lines sleep on.
    pub fn new(lines: usize) -> Result<Self> {
        #[cfg(windows)]
        {
            let events = (0..lines).map(|_| windows::Event::new()).collect::<std::io::Result<Vec<_>>>();
            let events = events.map_err(|e| Error::InvalidState(format!("creating the doorbells' events: {e}")))?;
            Ok(Self { events, lines })
        }
        #[cfg(not(windows))]
        {
            let _ = lines;
            Ok(Self { lines: usize::MAX }) // nothing a line: any number of lines is covered
        }
    }

    /// Takes ownership of the handles another process's [`handles`](Self::handles) gave, duplicated
    /// into this one (one a line); none where sleeps need no object of their own.
    pub fn adopt(handles: &[isize]) -> Result<Self> {
        #[cfg(windows)]
        {
            let events = handles.iter().map(|&raw| windows::Event::adopt(raw)).collect::<std::io::Result<Vec<_>>>();
            let events = events.map_err(|e| Error::InvalidArgument(format!("a doorbell event handle: {e}")))?;
            Ok(Self { events, lines: handles.len() })
        }
        #[cfg(not(windows))]
        match handles {
            [] => Ok(Self { lines: usize::MAX }),
            _ => Err(Error::InvalidArgument("doorbell event handles are Windows's; none is needed here".into())),
        }
    }

    /// The handles another process adopts to share these lines' sleeps (none where nothing is shared).
    pub fn handles(&self) -> Vec<isize> {
        #[cfg(windows)]
        return self.events.iter().map(windows::Event::raw).collect();
        #[cfg(not(windows))]
        Vec::new()
    }

    /// Whether lines `0..lines` have what they sleep on.
    pub fn covers(&self, lines: usize) -> bool {
        lines <= self.lines
    }

    /// Sleeps while `word` (of line `line`) holds `expected`, for at most `timeout`; may also end early
    /// (`Woken`) for no reason, so callers read the word again.
    pub(crate) fn wait(&self, line: usize, word: &AtomicU32, expected: u32, timeout: Duration) -> WaitEnd {
        #[cfg(windows)]
        return self.events[line].wait(word, expected, timeout);
        #[cfg(not(windows))]
        {
            let _ = line;
            wait(word, expected, timeout)
        }
    }

    /// Wakes the sleeper of line `line`, whose `word` changed.
    pub(crate) fn wake_all(&self, line: usize, word: &AtomicU32) {
        #[cfg(windows)]
        {
            let _ = word;
            self.events[line].set();
        }
        #[cfg(not(windows))]
        {
            let _ = line;
            wake_all(word);
        }
    }
}

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
#[cfg_attr(windows, allow(dead_code))] // Windows sleeps on its events; the portable poll is tested there
fn wait(word: &AtomicU32, expected: u32, timeout: Duration) -> WaitEnd {
    #[cfg(target_os = "linux")]
    if !super::platform::portable() {
        return linux::wait(word, expected, timeout);
    }
    portable::wait(word, expected, timeout)
}

/// Wakes every process sleeping in [`wait`] on `word`. The portable sleepers need no wake: they
/// see the word change within their next short sleep.
#[cfg_attr(windows, allow(dead_code))]
fn wake_all(word: &AtomicU32) {
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

//! Windows: a kernel event per line of doorbell words, which the line's one sleeper waits on and the
//! other side sets. Windows's own address-keyed wait (`WaitOnAddress`) wakes threads of one process
//! only, and a polled sleep there wakes at the system's timer tick (about 15.6 ms by default). The
//! parent creates the events; its workers receive duplicates of their handles (Python's
//! `multiprocessing` duplicates handles into the processes it spawns) and adopt them.
//!
//! An event is auto-reset: a wait that it ends clears it. A set that no wait consumes (the sleeper saw
//! its word change before it slept) ends the next wait at once, which the caller takes as a spurious
//! wake-up and reads its word again; a set is never lost, since the event holds it until a wait.
use std::ffi::c_void;
use std::io;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, Ordering::SeqCst};
use std::time::Duration;

use windows_sys::Win32::Foundation::{CloseHandle, GetHandleInformation, HANDLE, WAIT_OBJECT_0, WAIT_TIMEOUT};
use windows_sys::Win32::System::Threading::{CreateEventW, SetEvent, WaitForSingleObject};

use super::WaitEnd;

/// An auto-reset event, closed on drop.
pub(crate) struct Event(NonNull<c_void>);

// SAFETY: an event handle is a kernel object's name in this process; any thread may wait on, set or
// close it.
unsafe impl Send for Event {}
// SAFETY: as above: `&Event` only waits and sets, which the kernel serialises.
unsafe impl Sync for Event {}

impl Event {
    /// A new event, not set, that no other process can open by name (it has none).
    pub(crate) fn new() -> io::Result<Self> {
        // SAFETY: no security attributes, auto-reset (bManualReset 0), initially not set, no name.
        let handle = unsafe { CreateEventW(std::ptr::null(), 0, 0, std::ptr::null()) };
        NonNull::new(handle).map(Self).ok_or_else(io::Error::last_os_error)
    }

    /// Takes ownership of `raw`, a handle of an event duplicated into this process (closed on drop).
    pub(crate) fn adopt(raw: isize) -> io::Result<Self> {
        let handle = raw as HANDLE;
        let mut flags = 0u32;
        // SAFETY: reads a handle's flags into a live local; a value that is no open handle fails (0).
        // Unlike a wait, it leaves the event's state alone.
        if unsafe { GetHandleInformation(handle, &mut flags) } == 0 {
            return Err(io::Error::last_os_error());
        }
        NonNull::new(handle).map(Self).ok_or_else(|| io::Error::other("a null handle"))
    }

    /// The handle, for the caller to duplicate into another process; it stays this event's.
    pub(crate) fn raw(&self) -> isize {
        self.0.as_ptr() as isize
    }

    /// Sleeps until the event is set, for at most `timeout`, while `word` holds `expected`.
    pub(super) fn wait(&self, word: &AtomicU32, expected: u32, timeout: Duration) -> WaitEnd {
        if word.load(SeqCst) != expected {
            return WaitEnd::Woken;
        }
        // Whole milliseconds, rounded up: a wait of less than one would return at once and spin.
        let millis = timeout.as_nanos().div_ceil(1_000_000).min(u128::from(u32::MAX - 1)) as u32;
        // SAFETY: waits on the live handle this object owns.
        match unsafe { WaitForSingleObject(self.0.as_ptr(), millis) } {
            WAIT_OBJECT_0 => WaitEnd::Woken,
            WAIT_TIMEOUT => WaitEnd::TimedOut,
            // WAIT_FAILED cannot happen on a live event handle; read the word again.
            _ => WaitEnd::Woken,
        }
    }

    /// Ends the wait of the event's sleeper, or the next one.
    pub(super) fn set(&self) {
        // SAFETY: sets the live event this object owns.
        unsafe { SetEvent(self.0.as_ptr()) };
    }
}

impl Drop for Event {
    fn drop(&mut self) {
        // SAFETY: closes the handle this object owns, used by nothing after it.
        unsafe { CloseHandle(self.0.as_ptr()) };
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{ends_when_another_thread_changes_the_word, times_out_while_the_word_holds};
    use super::*;
    use std::sync::OnceLock;

    fn event() -> &'static Event {
        static EVENT: OnceLock<Event> = OnceLock::new();
        EVENT.get_or_init(|| Event::new().unwrap())
    }

    #[test]
    fn a_set_ends_the_wait_once_the_word_changed() {
        ends_when_another_thread_changes_the_word(
            |word, expected, timeout| event().wait(word, expected, timeout),
            |_| event().set(),
        );
    }

    #[test]
    fn the_wait_times_out_while_the_word_holds() {
        let own = Event::new().unwrap();
        let word = AtomicU32::new(7);
        assert_eq!(own.wait(&word, 7, Duration::from_millis(30)), WaitEnd::TimedOut);
        times_out_while_the_word_holds(|word, expected, timeout| Event::new().unwrap().wait(word, expected, timeout));
    }

    #[test]
    fn a_set_before_the_wait_is_not_lost_and_an_adopted_duplicate_is_the_same_event() {
        use windows_sys::Win32::Foundation::{DuplicateHandle, DUPLICATE_SAME_ACCESS};
        use windows_sys::Win32::System::Threading::GetCurrentProcess;

        let own = Event::new().unwrap();
        let mut copy: HANDLE = std::ptr::null_mut();
        // SAFETY: duplicates a live handle of this process within it, into a live local.
        let ok = unsafe {
            DuplicateHandle(
                GetCurrentProcess(),
                own.0.as_ptr(),
                GetCurrentProcess(),
                &mut copy,
                0,
                0,
                DUPLICATE_SAME_ACCESS,
            )
        };
        assert_ne!(ok, 0);
        let adopted = Event::adopt(copy as isize).unwrap();
        adopted.set();
        let word = AtomicU32::new(1);
        assert_eq!(own.wait(&word, 1, Duration::from_secs(20)), WaitEnd::Woken);
        assert_eq!(own.wait(&word, 1, Duration::from_millis(20)), WaitEnd::TimedOut, "auto-reset");
        assert!(Event::adopt(0x7fff_fff0).is_err(), "no such handle");
    }
}

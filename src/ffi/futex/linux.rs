//! Futex waits and wakes on a 32-bit word that other processes may share (a `MAP_SHARED` mapping):
//! the sleep of the process vectorizer's doorbells ([`crate::doorbell`]).
use std::sync::atomic::AtomicU32;
use std::time::Duration;

/// How a [`wait`] ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WaitEnd {
    /// The word did not hold `expected` (any more), or a wake came: read it again.
    Woken,
    /// The timeout passed.
    TimedOut,
    /// A signal arrived (Ctrl-C): the caller runs the signal handlers.
    Interrupted,
}

/// Sleeps while `word` holds `expected`, for at most `timeout`. Shared (not `FUTEX_PRIVATE`): the
/// waker may be another process mapping the same memory.
pub(crate) fn wait(word: &AtomicU32, expected: u32, timeout: Duration) -> WaitEnd {
    let timeout = libc::timespec {
        tv_sec: timeout.as_secs().min(i64::MAX as u64) as libc::time_t,
        tv_nsec: timeout.subsec_nanos() as libc::c_long,
    };
    // SAFETY: FUTEX_WAIT reads the aligned 32-bit word `word` points to (a live reference for the
    // whole call) and a timespec on this stack frame; it writes nothing the program owns.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAIT,
            expected,
            &timeout as *const libc::timespec,
            std::ptr::null::<u32>(),
            0u32,
        )
    };
    if rc == 0 {
        return WaitEnd::Woken;
    }
    match std::io::Error::last_os_error().raw_os_error() {
        Some(libc::ETIMEDOUT) => WaitEnd::TimedOut,
        Some(libc::EINTR) => WaitEnd::Interrupted,
        _ => WaitEnd::Woken, // EAGAIN: the word had already changed
    }
}

/// Wakes every process sleeping in [`wait`] on `word`.
pub(crate) fn wake_all(word: &AtomicU32) {
    // SAFETY: FUTEX_WAKE only uses the address of the live word as a key; it reads and writes no memory.
    unsafe {
        libc::syscall(libc::SYS_futex, word.as_ptr(), libc::FUTEX_WAKE, i32::MAX, 0usize, 0usize, 0u32);
    }
}

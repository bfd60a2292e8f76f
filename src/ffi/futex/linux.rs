//! Linux: the futex system call, shared (not `FUTEX_PRIVATE`): the waker may be another process
//! mapping the same memory.
use std::sync::atomic::AtomicU32;
use std::time::Duration;

use super::WaitEnd;

pub(super) fn wait(word: &AtomicU32, expected: u32, timeout: Duration) -> WaitEnd {
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

pub(super) fn wake_all(word: &AtomicU32) {
    // SAFETY: FUTEX_WAKE only uses the address of the live word as a key; it reads and writes no memory.
    unsafe {
        libc::syscall(libc::SYS_futex, word.as_ptr(), libc::FUTEX_WAKE, i32::MAX, 0usize, 0usize, 0u32);
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{ends_when_another_thread_changes_the_word, times_out_while_the_word_holds};
    use super::*;

    #[test]
    fn a_wake_ends_the_wait_once_the_word_changed() {
        ends_when_another_thread_changes_the_word(wait, wake_all);
    }

    #[test]
    fn the_wait_times_out_while_the_word_holds() {
        times_out_while_the_word_holds(wait);
    }
}

//! The process's CPU time, to see how much of the machine the caller uses between batches.
//! `CLOCK_PROCESS_CPUTIME_ID` is POSIX; Linux and macOS (10.12 on) both have it. Windows: the kernel
//! and user times of `GetProcessTimes`.
use std::time::Duration;

/// CPU time used so far by all the process's threads; zero if the clock cannot be read, which
/// callers treat as "no CPU used".
#[cfg(unix)]
pub(crate) fn process_cpu_time() -> Duration {
    let mut now = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `now` is a live, writable timespec for the duration of the call; the clock id is a constant.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut now) };
    if rc != 0 {
        return Duration::ZERO;
    }
    Duration::new(now.tv_sec.max(0) as u64, now.tv_nsec.clamp(0, 999_999_999) as u32)
}

#[cfg(windows)]
pub(crate) fn process_cpu_time() -> Duration {
    use windows_sys::Win32::Foundation::FILETIME;
    use windows_sys::Win32::System::Threading::{GetCurrentProcess, GetProcessTimes};

    let mut times = [FILETIME { dwLowDateTime: 0, dwHighDateTime: 0 }; 4];
    let [creation, exit, kernel, user] = &mut times;
    // SAFETY: the pseudo-handle of this process needs no closing; the four FILETIMEs are live and
    // writable for the call. 0 means failure.
    if unsafe { GetProcessTimes(GetCurrentProcess(), creation, exit, kernel, user) } == 0 {
        return Duration::ZERO;
    }
    let ticks = |t: &FILETIME| (u64::from(t.dwHighDateTime) << 32) | u64::from(t.dwLowDateTime);
    // FILETIME counts 100-nanosecond ticks.
    Duration::from_nanos((ticks(kernel) + ticks(user)).saturating_mul(100))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn work_on_this_thread_adds_cpu_time() {
        let before = process_cpu_time();
        let start = std::time::Instant::now();
        let mut x = 0u64;
        while start.elapsed() < std::time::Duration::from_millis(200) {
            x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(1));
        }
        assert!(process_cpu_time() > before);
    }
}

//! Lowering the calling thread's scheduling priority (for the threads that run resets ahead), and the
//! process's CPU time (to see how much of the machine the caller uses between batches).
use std::time::Duration;

/// The nice value of threads that must only use CPU no one else wants.
const LOWEST_NICE: libc::c_int = 19;

/// Gives the calling thread the lowest priority of ordinary threads (nice 19), so that it runs on
/// cores the process's other threads (and the caller's own work) leave idle. A thread may always lower
/// its own priority; a failure leaves it unchanged, which is only slower, so it is ignored.
pub(crate) fn lower_current_thread_priority() {
    // The raw system call, not glibc's gettid(): that wrapper came with glibc 2.30, and the wheel
    // promises 2.28 (an unversioned reference the wheel audit does not see; scripts/check_wheel_symbols.py).
    // SAFETY: the gettid system call takes no arguments and cannot fail; setpriority with PRIO_PROCESS
    // and a thread id changes only that thread's nice value (Linux), here the calling thread's own.
    unsafe {
        let tid = libc::syscall(libc::SYS_gettid);
        libc::setpriority(libc::PRIO_PROCESS, tid as libc::id_t, LOWEST_NICE);
    }
}

/// CPU time used so far by all the process's threads (`CLOCK_PROCESS_CPUTIME_ID`); zero if the clock
/// cannot be read, which callers treat as "no CPU used".
pub(crate) fn process_cpu_time() -> Duration {
    let mut now = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `now` is a live, writable timespec for the duration of the call; the clock id is a constant.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut now) };
    if rc != 0 {
        return Duration::ZERO;
    }
    Duration::new(now.tv_sec.max(0) as u64, now.tv_nsec.clamp(0, 999_999_999) as u32)
}

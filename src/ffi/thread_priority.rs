//! Lowering the calling thread's scheduling priority (for the threads that run resets ahead).

/// The nice value of threads that must only use CPU no one else wants.
const LOWEST_NICE: libc::c_int = 19;

/// Gives the calling thread the lowest priority of ordinary threads (nice 19), so that it runs on
/// cores the process's other threads (and the caller's own work) leave idle. A thread may always lower
/// its own priority; a failure leaves it unchanged, which is only slower, so it is ignored.
pub(crate) fn lower_current_thread_priority() {
    // SAFETY: gettid takes no arguments and cannot fail; setpriority with PRIO_PROCESS and a thread id
    // changes only that thread's nice value (Linux), here the calling thread's own.
    unsafe {
        let tid = libc::gettid();
        libc::setpriority(libc::PRIO_PROCESS, tid as libc::id_t, LOWEST_NICE);
    }
}

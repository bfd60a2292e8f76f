//! Lowering the calling thread's scheduling priority, for the threads that run resets ahead: they
//! should only use cores the process's other threads (and the caller's own work) leave idle. A
//! thread may always lower its own priority; a failure leaves it unchanged, which is only slower,
//! so it is ignored.

/// Gives the calling thread the lowest priority of ordinary threads: nice 19 on Linux; on macOS the
/// utility quality-of-service class; on Windows `THREAD_PRIORITY_LOWEST`; elsewhere (and on Linux
/// with `TORCHWM_PORTABLE=1`) nothing, since POSIX has no per-thread nice value (`setpriority` there
/// would lower the whole process).
pub(crate) fn lower_current_thread_priority() {
    #[cfg(target_os = "linux")]
    if !super::platform::portable() {
        nice_current_thread();
        return;
    }
    lower_portably();
}

/// The nice value of threads that must only use CPU no one else wants.
#[cfg(target_os = "linux")]
const LOWEST_NICE: libc::c_int = 19;

#[cfg(target_os = "linux")]
fn nice_current_thread() {
    // The raw system call, not glibc's gettid(): that wrapper came with glibc 2.30, and the wheel
    // promises 2.28 (an unversioned reference the wheel audit does not see; scripts/check_wheel_symbols.py).
    // SAFETY: the gettid system call takes no arguments and cannot fail; setpriority with PRIO_PROCESS
    // and a thread id changes only that thread's nice value (Linux), here the calling thread's own.
    unsafe {
        let tid = libc::syscall(libc::SYS_gettid);
        libc::setpriority(libc::PRIO_PROCESS, tid as libc::id_t, LOWEST_NICE);
    }
}

/// macOS: utility, not background: background threads run on the efficiency cores only, while
/// resets ahead should take any idle core, as nice 19 does on Linux.
#[cfg(target_os = "macos")]
fn lower_portably() {
    // SAFETY: sets the calling thread's own QoS class from a constant; no memory is passed.
    unsafe {
        libc::pthread_set_qos_class_self_np(libc::qos_class_t::QOS_CLASS_UTILITY, 0);
    }
}

/// Windows: the lowest of the normal levels, not `THREAD_PRIORITY_IDLE`, which runs only when nothing
/// else at all wants the core.
#[cfg(windows)]
fn lower_portably() {
    use windows_sys::Win32::System::Threading::{GetCurrentThread, SetThreadPriority, THREAD_PRIORITY_LOWEST};

    // SAFETY: the pseudo-handle of the calling thread needs no closing; the level is a constant.
    unsafe {
        SetThreadPriority(GetCurrentThread(), THREAD_PRIORITY_LOWEST);
    }
}

#[cfg(not(any(target_os = "macos", windows)))]
fn lower_portably() {}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    /// The calling thread's nice value.
    fn own_nice() -> libc::c_int {
        // SAFETY: plain values; gettid cannot fail and getpriority reads only the thread's nice value.
        unsafe { libc::getpriority(libc::PRIO_PROCESS, libc::syscall(libc::SYS_gettid) as libc::id_t) }
    }

    #[test]
    fn linux_gives_the_thread_nice_19_and_no_other_thread() {
        let before = own_nice();
        let lowered = std::thread::spawn(|| {
            nice_current_thread();
            own_nice()
        });
        assert_eq!(lowered.join().unwrap(), LOWEST_NICE);
        assert_eq!(own_nice(), before);
    }

    #[test]
    fn the_portable_way_leaves_a_linux_thread_as_it_was() {
        let (before, after) = std::thread::spawn(|| {
            let before = own_nice();
            lower_portably();
            (before, own_nice())
        })
        .join()
        .unwrap();
        assert_eq!(before, after);
    }
}

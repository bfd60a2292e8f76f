//! Fork detection: a vector env created before `fork()` must know, in the child, that its worker
//! threads do not exist there (instead of deadlocking on them). A `pthread_atfork` child hook counts
//! the forks. Windows has no `fork()`: there the count stays 0.
use std::sync::atomic::{AtomicU64, Ordering};
#[cfg(unix)]
use std::sync::Once;

#[cfg(unix)]
static REGISTER: Once = Once::new();
/// Written in the child's only thread before any other code runs there, so any ordering would do;
/// SeqCst is kept as the simplest argument (read once per call).
static FORK_GENERATION: AtomicU64 = AtomicU64::new(0);

#[cfg(unix)]
extern "C" fn on_fork_child() {
    // Only an atomic add: async-signal-safe, as a child hook must be.
    FORK_GENERATION.fetch_add(1, Ordering::SeqCst);
}

/// How many `fork()`s lie between the process that started the program and this one: an object
/// that saved it at creation and reads a different value now is in a forked child. Registers the
/// counting hook on first use.
pub(crate) fn fork_generation() -> u64 {
    #[cfg(unix)]
    REGISTER.call_once(|| {
        // SAFETY: registers a plain `extern "C"` function with no prepare/parent hooks; the hook is
        // async-signal-safe (an atomic add). The result is ignored: it fails only for lack of
        // memory, and then fork detection is simply unavailable.
        unsafe {
            libc::pthread_atfork(None, None, Some(on_fork_child));
        }
    });
    FORK_GENERATION.load(Ordering::SeqCst)
}

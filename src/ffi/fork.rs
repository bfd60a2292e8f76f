//! A `pthread_atfork` child hook: counts forks so a vector env created before `fork()` knows, in the
//! child, that its worker threads do not exist there (instead of deadlocking on them).
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Once;

static FORK_GENERATION: AtomicU64 = AtomicU64::new(0);
static REGISTER: Once = Once::new();

extern "C" fn on_fork_child() {
    // Only an atomic store: async-signal-safe, as a child hook must be.
    FORK_GENERATION.fetch_add(1, Ordering::SeqCst);
}

/// Registers the hook (once per process) and returns the current generation.
pub(crate) fn fork_generation() -> u64 {
    REGISTER.call_once(|| {
        // SAFETY: registering a plain `extern "C"` function with no prepare/parent hooks; the
        // function only touches an atomic.
        unsafe {
            libc::pthread_atfork(None, None, Some(on_fork_child));
        }
    });
    FORK_GENERATION.load(Ordering::SeqCst)
}

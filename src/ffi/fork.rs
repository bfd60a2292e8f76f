//! Registration of a `pthread_atfork` child hook (the counting itself is safe code, in `crate::fork`).
use std::sync::Once;

static REGISTER: Once = Once::new();

/// Registers `hook` to run in the child after every `fork()`, once per process (later calls do
/// nothing). The hook must be async-signal-safe, as a child hook runs where only such calls are.
pub(crate) fn register_fork_child_hook(hook: extern "C" fn()) {
    REGISTER.call_once(|| {
        // SAFETY: registers a plain `extern "C"` function with no prepare/parent hooks; the caller's
        // hook is async-signal-safe (documented above). The result is ignored: it fails only for lack
        // of memory, and then fork detection is simply unavailable.
        unsafe {
            libc::pthread_atfork(None, None, Some(hook));
        }
    });
}

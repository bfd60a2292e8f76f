//! The C++ shim's declarations (`ale_shim.h`) and the handles over them: the crate's only `unsafe`
//! code.
//!
//! Each handle owns one C++ object through a `NonNull` pointer, frees it in `Drop`, and exposes safe
//! methods; a -1 return from the shim becomes `Error::Ale` carrying the C++ exception's message.
//! Every `unsafe` block says why it is sound in a `// SAFETY:` comment.
//!
//! It is also the crate's only code that differs between operating systems: one module per
//! facility, with Linux's implementation and a portable one (macOS's; Windows's where POSIX's calls
//! are not there); `platform` lets Linux pick the portable ones (docs/platforms.md).
use std::ffi::{c_int, CStr, CString};

use crate::error::{Error, Result};

mod bindings;
mod cpu_time;
mod fork;
pub(crate) mod futex;
mod physical_memory;
#[cfg(target_os = "linux")]
mod platform;
mod raw_ale;
#[cfg(feature = "python")]
mod shared_mapping;
mod thread_priority;

pub(crate) use bindings::TwmStickyActions as StickyActions;
use bindings::{twm_last_error, twm_rom_is_supported, twm_set_logger_mode};
pub(crate) use cpu_time::process_cpu_time;
pub(crate) use fork::fork_generation;
pub(crate) use physical_memory::physical_memory;
pub(crate) use raw_ale::{RawAle, RawState};
#[cfg(feature = "python")]
pub(crate) use shared_mapping::SharedMapping;
pub(crate) use thread_priority::lower_current_thread_priority;

/// Whether this process takes the portable implementation of each facility: always off Linux, and on
/// Linux when `TORCHWM_PORTABLE=1` (read once). Python's side of the seam asks this, so both sides agree.
#[cfg(all(target_os = "linux", feature = "python"))]
pub(crate) fn uses_portable_implementations() -> bool {
    platform::portable()
}

/// Off Linux the portable implementations are the only ones.
#[cfg(all(not(target_os = "linux"), feature = "python"))]
pub(crate) fn uses_portable_implementations() -> bool {
    true
}

/// Turns a shim return code into a `Result`, reading this thread's error message on failure.
fn check(rc: c_int) -> Result<()> {
    if rc == 0 {
        return Ok(());
    }
    // SAFETY: twm_last_error returns a NUL-terminated string owned by this thread's storage, valid
    // until the next shim call on this thread; it is copied out at once.
    let message = unsafe { CStr::from_ptr(twm_last_error()) }.to_string_lossy().into_owned();
    Err(Error::Ale(message))
}

pub(crate) fn c_string(what: &str, value: &str) -> Result<CString> {
    CString::new(value).map_err(|_| Error::InvalidArgument(format!("{what} must not contain NUL bytes: {value:?}")))
}

/// ALE's global log level: 0 info, 1 warning, 2 error.
pub(crate) fn set_logger_mode(mode: i32) -> Result<()> {
    // SAFETY: plain value argument; the shim validates it.
    check(unsafe { twm_set_logger_mode(mode) })
}

pub(crate) fn rom_is_supported(path: &CStr) -> Result<bool> {
    let mut out = 0;
    // SAFETY: `path` is a valid C string for the call; `out` is a live local.
    check(unsafe { twm_rom_is_supported(path.as_ptr(), &mut out) })?;
    Ok(out != 0)
}

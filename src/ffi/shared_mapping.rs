//! 32-bit atomic words in a file mapped `MAP_SHARED` (a memfd the process vectorizer's parent creates
//! and its workers inherit or receive): the memory of the doorbells ([`crate::doorbell`]).
use std::os::fd::RawFd;
use std::ptr::NonNull;
use std::sync::atomic::AtomicU32;

use crate::error::{Error, Result};

/// A shared mapping of a file's first `len` words, unmapped on drop.
pub(crate) struct SharedMapping {
    words: NonNull<AtomicU32>,
    len: usize,
}

// SAFETY: the mapping is only accessed as atomics, which threads (and processes) may share.
unsafe impl Send for SharedMapping {}
// SAFETY: as above: `&SharedMapping` gives out only `&[AtomicU32]`.
unsafe impl Sync for SharedMapping {}

impl SharedMapping {
    /// Maps the first `len` 32-bit words of the file `fd` (which must be at least that long); the
    /// mapping stays valid after `fd` is closed.
    pub(crate) fn map(fd: RawFd, len: usize) -> Result<Self> {
        let bytes = len
            .checked_mul(4)
            .filter(|&b| b > 0)
            .ok_or_else(|| Error::TooLarge(format!("a shared mapping of {len} words")))?;
        // SAFETY: fstat writes into the zeroed stat on this stack frame; a bad fd returns -1.
        let mut stat: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: as above.
        if unsafe { libc::fstat(fd, &mut stat) } != 0 {
            return Err(Error::InvalidArgument(format!("fd {fd}: {}", std::io::Error::last_os_error())));
        }
        if (stat.st_size as u64) < bytes as u64 {
            return Err(Error::InvalidArgument(format!("fd {fd} holds {} bytes, {bytes} needed", stat.st_size)));
        }
        // SAFETY: a new shared mapping chosen by the kernel (no existing memory is touched) of a
        // file checked above to be long enough; failure is MAP_FAILED.
        let ptr = unsafe {
            libc::mmap(std::ptr::null_mut(), bytes, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_SHARED, fd, 0)
        };
        if ptr == libc::MAP_FAILED {
            return Err(Error::InvalidArgument(format!("mmap of fd {fd}: {}", std::io::Error::last_os_error())));
        }
        let words = NonNull::new(ptr.cast::<AtomicU32>()).expect("mmap never returns NULL on success");
        Ok(Self { words, len })
    }

    pub(crate) fn words(&self) -> &[AtomicU32] {
        // SAFETY: `words` is a page-aligned mapping of `len` u32 that lives until drop; AtomicU32 has
        // u32's layout and every access to it (here or in other processes) is atomic.
        unsafe { std::slice::from_raw_parts(self.words.as_ptr(), self.len) }
    }
}

impl Drop for SharedMapping {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly the mapping made in `map`, which no reference outlives (`words`
        // borrows `self`).
        unsafe {
            libc::munmap(self.words.as_ptr().cast(), self.len * 4);
        }
    }
}

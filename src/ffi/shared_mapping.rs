//! 32-bit atomic words in a file mapped `MAP_SHARED` (a memfd the process vectorizer's parent creates
//! and its workers inherit or receive): the memory of the doorbells ([`crate::doorbell`]). On Windows
//! the number is a file mapping's handle (the parent creates it backed by the paging file, and its
//! workers receive duplicates), mapped with `MapViewOfFile`.
use std::ffi::c_int;
use std::ptr::NonNull;
use std::sync::atomic::AtomicU32;

use crate::error::{Error, Result};

/// What the number a mapping is made from is, in error messages.
const WHAT: &str = if cfg!(windows) { "file mapping handle" } else { "fd" };

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
    pub(crate) fn map(fd: c_int, len: usize) -> Result<Self> {
        let bytes = len
            .checked_mul(4)
            .filter(|&b| b > 0)
            .ok_or_else(|| Error::TooLarge(format!("a shared mapping of {len} words")))?;
        let ptr = map_file(fd, bytes)
            .map_err(|e| Error::InvalidArgument(format!("mapping {WHAT} {fd} ({bytes} bytes): {e}")))?;
        Ok(Self { words: ptr.cast::<AtomicU32>(), len })
    }

    pub(crate) fn words(&self) -> &[AtomicU32] {
        // SAFETY: `words` is a page-aligned mapping of `len` u32 that lives until drop; AtomicU32 has
        // u32's layout and every access to it (here or in other processes) is atomic.
        unsafe { std::slice::from_raw_parts(self.words.as_ptr(), self.len) }
    }
}

impl Drop for SharedMapping {
    fn drop(&mut self) {
        unmap(self.words.cast(), self.len * 4);
    }
}

/// Whether a file (or mapping) of `size` bytes holds the `bytes` a mapping needs; if not, the error
/// that says so.
fn checked_size(size: i64, bytes: usize) -> std::io::Result<()> {
    if u64::try_from(size).unwrap_or(0) < bytes as u64 {
        return Err(std::io::Error::other(format!("the file holds {size} bytes")));
    }
    Ok(())
}

#[cfg(unix)]
fn map_file(fd: c_int, bytes: usize) -> std::io::Result<NonNull<u8>> {
    // SAFETY: fstat writes into the zeroed stat on this stack frame; a bad fd returns -1.
    let mut stat: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    if unsafe { libc::fstat(fd, &mut stat) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    checked_size(stat.st_size, bytes)?;
    // SAFETY: a new shared mapping chosen by the kernel (no existing memory is touched) of a
    // file checked above to be long enough; failure is MAP_FAILED.
    let ptr =
        unsafe { libc::mmap(std::ptr::null_mut(), bytes, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_SHARED, fd, 0) };
    if ptr == libc::MAP_FAILED {
        return Err(std::io::Error::last_os_error());
    }
    Ok(NonNull::new(ptr.cast()).expect("mmap never returns NULL on success"))
}

#[cfg(unix)]
fn unmap(ptr: NonNull<u8>, bytes: usize) {
    // SAFETY: unmaps exactly a mapping made by `map_file`, which no reference outlives (`words`
    // borrows its `SharedMapping`).
    unsafe {
        libc::munmap(ptr.as_ptr().cast(), bytes);
    }
}

#[cfg(windows)]
use windows_sys::Win32::System::Memory::UnmapViewOfFile;

#[cfg(windows)]
fn map_file(fd: c_int, bytes: usize) -> std::io::Result<NonNull<u8>> {
    use windows_sys::Win32::System::Memory::{
        MapViewOfFile, VirtualQuery, FILE_MAP_ALL_ACCESS, MEMORY_BASIC_INFORMATION, MEMORY_MAPPED_VIEW_ADDRESS,
    };

    // A file mapping's handle: handles fit in 32 bits on 64-bit Windows, which keeps them so for
    // 32-bit processes. A C runtime's descriptor could not be passed instead: CPython's runtime (the
    // UCRT) is not the extension's (MinGW's Rust links msvcrt).
    let mapping = fd as isize as windows_sys::Win32::Foundation::HANDLE;
    // SAFETY: maps `bytes` of the mapping object; a handle that is not one, or a mapping smaller than
    // `bytes`, makes it fail (a null address). The view keeps the object alive once its handles close.
    let view = unsafe { MapViewOfFile(mapping, FILE_MAP_ALL_ACCESS, 0, 0, bytes) };
    let Some(ptr) = NonNull::new(view.Value.cast::<u8>()) else {
        return Err(std::io::Error::last_os_error());
    };
    // The view's committed size: a mapping of the paging file is as large as it was created.
    // SAFETY: VirtualQuery writes one MEMORY_BASIC_INFORMATION into the zeroed local.
    let mut info: MEMORY_BASIC_INFORMATION = unsafe { std::mem::zeroed() };
    // SAFETY: as above; the address is the view's, just mapped.
    let queried = unsafe { VirtualQuery(ptr.as_ptr().cast(), &mut info, std::mem::size_of_val(&info)) };
    if queried == 0 || checked_size(info.RegionSize as i64, bytes).is_err() {
        let error = std::io::Error::other(format!("the mapping holds {} bytes", info.RegionSize));
        // SAFETY: unmaps the view made above, which nothing else uses.
        unsafe { UnmapViewOfFile(MEMORY_MAPPED_VIEW_ADDRESS { Value: ptr.as_ptr().cast() }) };
        return Err(error);
    }
    Ok(ptr)
}

#[cfg(windows)]
fn unmap(ptr: NonNull<u8>, _bytes: usize) {
    use windows_sys::Win32::System::Memory::MEMORY_MAPPED_VIEW_ADDRESS;

    // SAFETY: unmaps exactly a view made by `map_file`, which no reference outlives.
    unsafe {
        UnmapViewOfFile(MEMORY_MAPPED_VIEW_ADDRESS { Value: ptr.as_ptr().cast() });
    }
}

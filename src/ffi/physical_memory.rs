//! This machine's physical memory, the ceiling of what a vector env may allocate: Linux's
//! `/proc/meminfo`, or (every POSIX system, and Linux with `TORCHWM_PORTABLE=1`) `sysconf`'s page
//! count, which Linux, macOS and the BSDs all have though POSIX does not require it; Windows's
//! `GlobalMemoryStatusEx`.

/// The machine's physical memory in bytes; None where it cannot be read.
pub(crate) fn physical_memory() -> Option<u64> {
    #[cfg(target_os = "linux")]
    if !super::platform::portable() {
        return meminfo_total();
    }
    system_total()
}

#[cfg(target_os = "linux")]
fn meminfo_total() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|line| line.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

#[cfg(unix)]
fn system_total() -> Option<u64> {
    // SAFETY: sysconf reads a system value named by a constant; -1 means unknown.
    let (pages, page_size) = unsafe { (libc::sysconf(libc::_SC_PHYS_PAGES), libc::sysconf(libc::_SC_PAGESIZE)) };
    let pages = u64::try_from(pages).ok()?;
    let page_size = u64::try_from(page_size).ok()?;
    pages.checked_mul(page_size)
}

#[cfg(windows)]
fn system_total() -> Option<u64> {
    use windows_sys::Win32::System::SystemInformation::{GlobalMemoryStatusEx, MEMORYSTATUSEX};

    // SAFETY: MEMORYSTATUSEX is plain data; zeroed is a valid value.
    let mut status: MEMORYSTATUSEX = unsafe { std::mem::zeroed() };
    // The call requires the structure's length set.
    status.dwLength = std::mem::size_of::<MEMORYSTATUSEX>() as u32;
    // SAFETY: `status` is live and writable for the call, its length set as required; 0 means failure.
    if unsafe { GlobalMemoryStatusEx(&mut status) } == 0 {
        return None;
    }
    Some(status.ullTotalPhys)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_system_reads_a_plausible_memory_size() {
        let bytes = physical_memory().unwrap();
        assert!(bytes >= 256 << 20, "{bytes}");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn linux_and_the_portable_reading_agree() {
        assert_eq!(meminfo_total().unwrap(), system_total().unwrap());
    }
}

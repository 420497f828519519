//! Memory shared between the processes of one machine: a named `memfd`,
//! mapped shared. Another process opens it through `/proc/<pid>/fd/<fd>`,
//! which the kernel allows between processes of one user only, after
//! checking that the link names a `memfd` of the expected name (a reused
//! descriptor number is never opened). The pool's DRAM segments and the
//! store's page of rank states are such memory.

use crate::soft::core::result::{SoftResult, fail};
use crate::types::{SMEM_ERROR, SMEM_NOT_CONNECTED};
use rustix::fd::{AsFd, AsRawFd, OwnedFd};
use rustix::fs::{MemfdFlags, Mode, OFlags};
use rustix::mm::{MapFlags, ProtFlags};

/// A shared mapping of a `memfd` (this process's or another's).
#[derive(Debug)]
pub(crate) struct SharedMemory {
    address: *mut u8,
    length: usize,
    fd: OwnedFd,
}

// SAFETY: the mapping is plain shared memory owned by this value; the bytes
// are only ever touched through raw pointers (or atomics) by callers that
// own the synchronisation.
unsafe impl Send for SharedMemory {}
// SAFETY: as for `Send`; the value itself is immutable after creation.
unsafe impl Sync for SharedMemory {}

impl SharedMemory {
    /// A new zeroed `memfd` named `name` of `length` bytes, mapped; a
    /// failure is reported with `code`.
    pub(crate) fn create(name: &str, length: usize, code: i32) -> SoftResult<Self> {
        let failed = |what: &str, error: rustix::io::Errno| {
            fail(
                code,
                format!("cannot create {length} bytes of shared memory ({name}): {what}: {error}"),
            )
        };
        let fd = match rustix::fs::memfd_create(name, MemfdFlags::CLOEXEC) {
            Ok(fd) => fd,
            Err(error) => return failed("memfd_create", error),
        };
        if let Err(error) = rustix::fs::ftruncate(&fd, length as u64) {
            return failed("ftruncate", error);
        }
        Self::map(fd, length)
    }

    /// Maps process `pid`'s `memfd` named `name`, its descriptor `fd`, of
    /// at least `length` bytes; `SMEM_NOT_CONNECTED` when it is gone.
    pub(crate) fn open(pid: u32, fd: u32, name: &str, length: usize) -> SoftResult<Self> {
        let path = format!("/proc/{pid}/fd/{fd}");
        let gone = |why: String| {
            fail(
                SMEM_NOT_CONNECTED,
                format!("the shared memory {name} of process {pid} is gone: {why}"),
            )
        };
        let target = match rustix::fs::readlink(path.as_str(), Vec::new()) {
            Ok(target) => target,
            Err(error) => return gone(format!("{path}: {error}")),
        };
        if !target.to_bytes().starts_with(format!("/memfd:{name}").as_bytes()) {
            return gone(format!("{path} is {}, not {name}", target.to_string_lossy()));
        }
        let flags = OFlags::RDWR | OFlags::CLOEXEC | OFlags::NOCTTY;
        let file = match rustix::fs::open(path.as_str(), flags, Mode::empty()) {
            Ok(file) => file,
            Err(error) => return gone(format!("{path} cannot be opened: {error}")),
        };
        match rustix::fs::fstat(&file) {
            Ok(stat) if stat.st_size as u64 >= length as u64 => Self::map(file, length),
            Ok(stat) => gone(format!("{path} holds {} bytes, not {length}", stat.st_size)),
            Err(error) => gone(format!("{path}: fstat: {error}")),
        }
    }

    fn map(fd: OwnedFd, length: usize) -> SoftResult<Self> {
        // SAFETY: a fresh shared mapping of a file we hold, at an address
        // the kernel picks; nothing else is replaced.
        let mapped = unsafe {
            rustix::mm::mmap(
                std::ptr::null_mut(),
                length,
                ProtFlags::READ | ProtFlags::WRITE,
                MapFlags::SHARED,
                fd.as_fd(),
                0,
            )
        };
        match mapped {
            Ok(address) => Ok(Self {
                address: address.cast(),
                length,
                fd,
            }),
            Err(error) => fail(
                SMEM_ERROR,
                format!("cannot map {length} bytes of shared memory: {error}"),
            ),
        }
    }

    /// The first byte.
    pub(crate) fn address(&self) -> *mut u8 {
        self.address
    }

    /// The bytes mapped.
    pub(crate) fn len(&self) -> usize {
        self.length
    }

    /// The descriptor number other processes open.
    pub(crate) fn raw_fd(&self) -> u32 {
        self.fd.as_raw_fd() as u32
    }
}

impl Drop for SharedMemory {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `map`, unmapped once.
        if let Err(error) = unsafe { rustix::mm::munmap(self.address.cast(), self.length) } {
            log::warn!("munmap of shared memory failed: {error}");
        }
    }
}

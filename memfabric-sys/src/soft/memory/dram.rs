//! Host memory of the pool: each rank's segment is a `memfd` named
//! `memfabric-soft-dram`, mapped shared. A peer opens it through
//! `/proc/<pid>/fd/<fd>`, which the kernel allows between processes of one
//! user only, after checking that the link names such a `memfd` (a reused
//! descriptor number is never opened).

use crate::soft::core::result::{SoftResult, fail};
use crate::types::{SMEM_ERROR, SMEM_MALLOC_FAILED, SMEM_NOT_CONNECTED};
use rustix::fd::{AsFd, AsRawFd, OwnedFd};
use rustix::fs::{MemfdFlags, Mode, OFlags};
use rustix::mm::{MapFlags, ProtFlags};

/// The name every pool `memfd` has.
const NAME: &str = "memfabric-soft-dram";

/// A shared mapping of a pool `memfd` (this rank's or a peer's).
#[derive(Debug)]
pub(crate) struct DramMapping {
    address: *mut u8,
    length: usize,
    fd: OwnedFd,
}

// SAFETY: the mapping is plain shared memory owned by this value; the bytes
// are only ever touched through raw pointers by callers that own the
// synchronisation (as with device memory).
unsafe impl Send for DramMapping {}
// SAFETY: as for `Send`; the value itself is immutable after creation.
unsafe impl Sync for DramMapping {}

impl DramMapping {
    /// A new zeroed segment of `length` bytes.
    pub(crate) fn create(length: usize) -> SoftResult<Self> {
        let failed = |what: &str, error: rustix::io::Errno| {
            fail(
                SMEM_MALLOC_FAILED,
                format!("cannot create {length} bytes of pool DRAM: {what}: {error}"),
            )
        };
        let fd = match rustix::fs::memfd_create(NAME, MemfdFlags::CLOEXEC) {
            Ok(fd) => fd,
            Err(error) => return failed("memfd_create", error),
        };
        if let Err(error) = rustix::fs::ftruncate(&fd, length as u64) {
            return failed("ftruncate", error);
        }
        Self::map(fd, length)
    }

    /// Maps process `pid`'s segment, its descriptor `fd`, of `length` bytes.
    pub(crate) fn open(pid: u32, fd: u32, length: usize) -> SoftResult<Self> {
        let path = format!("/proc/{pid}/fd/{fd}");
        let gone = |why: String| {
            fail(
                SMEM_NOT_CONNECTED,
                format!("the DRAM segment of process {pid} is gone: {why}"),
            )
        };
        let target = match rustix::fs::readlink(path.as_str(), Vec::new()) {
            Ok(target) => target,
            Err(error) => return gone(format!("{path}: {error}")),
        };
        if !target.to_bytes().starts_with(format!("/memfd:{NAME}").as_bytes()) {
            return gone(format!("{path} is {}, not a pool segment", target.to_string_lossy()));
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
            Err(error) => fail(SMEM_ERROR, format!("cannot map {length} bytes of pool DRAM: {error}")),
        }
    }

    /// The first byte.
    pub(crate) fn address(&self) -> *mut u8 {
        self.address
    }

    /// The descriptor number peers open.
    pub(crate) fn raw_fd(&self) -> u32 {
        self.fd.as_raw_fd() as u32
    }
}

impl Drop for DramMapping {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `map`, unmapped once.
        if let Err(error) = unsafe { rustix::mm::munmap(self.address.cast(), self.length) } {
            log::warn!("munmap of pool DRAM failed: {error}");
        }
    }
}

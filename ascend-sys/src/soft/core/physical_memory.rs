//! The bytes of one physical allocation: a `memfd` of its own, mapped once
//! into the device's view.
//!
//! Each physical allocation has its own `memfd` so that it can be shared
//! with another process (which opens it through `/proc/<pid>/fd/<fd>`). The
//! first page of the file is a header the sharing code uses; the
//! allocation's bytes follow it. The file is sparse: RAM is committed only
//! for pages written.

use crate::soft::core::soft_result::{SoftResult, fail};
use crate::types::ACL_ERROR_RT_MEMORY_ALLOCATION;
use rustix::fd::{AsFd, BorrowedFd, OwnedFd};
use rustix::fs::{MemfdFlags, ftruncate, memfd_create};
use rustix::mm::{MapFlags, ProtFlags, mmap, munmap};
use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, Ordering};

/// What reused physical memory is filled with ([`PhysicalMemory::poison`]).
pub(crate) const POISON: u8 = 0xA5;

/// Bytes before the allocation's data in the `memfd` (the sharing header).
pub(crate) const HEADER: u64 = 4096;

pub(crate) struct PhysicalMemory {
    memfd: OwnedFd,
    /// Mapping of the whole file (header and data).
    base: *mut u8,
    size: u64,
    /// Whether it was ever exported (another process may map it).
    exported: AtomicBool,
}

// SAFETY: the mapping is owned by this value and lives until it drops;
// bookkeeping is serialised by the VMM tables' lock, and byte copies through
// the view are the device's "DMA", whose races are the caller's.
unsafe impl Send for PhysicalMemory {}
// SAFETY: as for `Send`; no interior mutability in the value itself.
unsafe impl Sync for PhysicalMemory {}

impl PhysicalMemory {
    /// Creates `size` bytes of zeroed, sparse memory.
    pub(crate) fn create(size: u64) -> SoftResult<Self> {
        let failed = |what: &str, error: rustix::io::Errno| {
            fail(
                ACL_ERROR_RT_MEMORY_ALLOCATION,
                format!("physical memory: {what} failed: {error}"),
            )
        };
        let memfd = match memfd_create("ascend-soft-physical", MemfdFlags::CLOEXEC) {
            Ok(fd) => fd,
            Err(error) => return failed("memfd_create", error),
        };
        if let Err(error) = ftruncate(&memfd, HEADER + size) {
            return failed("ftruncate", error);
        }
        Self::map(memfd, size)
    }

    /// Maps an existing `memfd` (for example one opened from another
    /// process) holding a header and `size` bytes.
    pub(crate) fn map(memfd: OwnedFd, size: u64) -> SoftResult<Self> {
        let Ok(length) = usize::try_from(HEADER + size) else {
            return fail(
                ACL_ERROR_RT_MEMORY_ALLOCATION,
                "physical memory larger than the address space",
            );
        };
        // SAFETY: a fresh shared mapping of a file we hold, at an address the
        // kernel picks; nothing else refers to that range.
        let base = match unsafe {
            mmap(
                std::ptr::null_mut(),
                length,
                ProtFlags::READ | ProtFlags::WRITE,
                MapFlags::SHARED | MapFlags::NORESERVE,
                &memfd,
                0,
            )
        } {
            Ok(base) => base.cast::<u8>(),
            Err(error) => {
                return fail(
                    ACL_ERROR_RT_MEMORY_ALLOCATION,
                    format!("physical memory: mmap failed: {error}"),
                );
            }
        };
        Ok(Self {
            memfd,
            base,
            size,
            exported: AtomicBool::new(false),
        })
    }

    /// The device view of byte `offset` of the allocation.
    pub(crate) fn data(&self, offset: u64) -> *mut u8 {
        debug_assert!(offset <= self.size);
        // SAFETY: `HEADER + offset` is inside the mapping (offset ≤ size).
        unsafe { self.base.add((HEADER + offset) as usize) }
    }

    /// Bytes of the allocation (without the header).
    pub(crate) fn size(&self) -> u64 {
        self.size
    }

    /// Notes that the memory was exported: it is never reused in this
    /// process ([`super::kept`]).
    pub(crate) fn mark_exported(&self) {
        self.exported.store(true, Ordering::Relaxed);
    }

    /// Whether the memory was ever exported.
    pub(crate) fn was_exported(&self) -> bool {
        self.exported.load(Ordering::Relaxed)
    }

    /// Fills the allocation's bytes with [`POISON`]: memory taken back for
    /// another allocation shows no earlier contents, so code that reads
    /// physical memory it never wrote (a restore that did not happen)
    /// sees garbage, as it could on hardware, instead of the old bytes.
    pub(crate) fn poison(&self) {
        // SAFETY: the data part of the mapping, `size` bytes after the
        // header; nothing else touches a freed allocation's memory.
        unsafe { std::ptr::write_bytes(self.data(0), POISON, self.size as usize) };
    }

    /// The header page (for the sharing code).
    pub(crate) fn header(&self) -> *mut u8 {
        self.base
    }

    /// The `memfd`.
    pub(crate) fn fd(&self) -> BorrowedFd<'_> {
        self.memfd.as_fd()
    }
}

impl Drop for PhysicalMemory {
    fn drop(&mut self) {
        // SAFETY: the mapping was created in `map` with this length and is
        // owned by this value.
        if let Err(error) = unsafe { munmap(self.base.cast::<c_void>(), (HEADER + self.size) as usize) } {
            log::warn!("software device: munmap of physical memory failed: {error}");
        }
    }
}

//! One device's memory: sparse physical bytes in a `memfd`, the device's own
//! view of them, and the device virtual addresses user code sees.
//!
//! - **Physical memory** is a `memfd` of the device's capacity. It is sparse:
//!   host RAM is committed only for pages written, and freed pages are given
//!   back with `fallocate(PUNCH_HOLE)` — at once for a large free, in one
//!   batch for small ones (see [`Arena::after_free`]).
//! - **The device view** is a shared read-write mapping of that `memfd`,
//!   private to the software device: copies and memsets go through it.
//! - **Device addresses** are a separate range reserved `PROT_NONE` in the
//!   process: they are real, unique addresses, and a host dereference of one
//!   faults, as it does on hardware.

use super::fail::{SoftResult, fail};
use crate::types::ACL_ERROR_RT_MEMORY_ALLOCATION;
use rustix::fd::{AsFd, BorrowedFd, OwnedFd};
use rustix::fs::{FallocateFlags, MemfdFlags, fallocate, ftruncate, memfd_create};
use rustix::mm::{MapFlags, ProtFlags, mmap, mmap_anonymous, munmap};
use std::ffi::c_void;
use std::sync::atomic::{AtomicU64, Ordering};

/// The host page size used for hole punching.
const PAGE: u64 = 4096;

/// A free of at least this many bytes gives its pages back at once: one
/// system call is cheap next to the memory it returns.
const RELEASE_AT_ONCE: u64 = 1 << 20;

/// Smaller frees leave their pages resident (the next allocation of the
/// same space reuses them without faulting them in again) until this many
/// bytes were freed that way; then every free range is given back in one
/// batch. At most this much host RAM per device stays behind freed memory.
const STALE_BUDGET: u64 = 32 << 20;

pub(crate) struct Arena {
    /// Keeps the physical memory alive; the view maps it.
    _memfd: OwnedFd,
    view: *mut u8,
    device_base: usize,
    capacity: u64,
    /// Bytes freed by small frees since the last batch release.
    stale: AtomicU64,
}

// SAFETY: the raw pointers are addresses of mappings owned by the arena for
// the life of the process; all mutation of bookkeeping goes through the
// runtime's mutex, and byte copies through the view are the device's "DMA",
// whose races are the caller's, as on hardware.
unsafe impl Send for Arena {}
// SAFETY: see `Send`; the arena itself has no interior mutability.
unsafe impl Sync for Arena {}

impl Arena {
    /// Creates the physical memory, the device view and the device address
    /// range for one device of `capacity` bytes.
    pub(crate) fn new(device: i32, capacity: u64) -> SoftResult<Self> {
        let failed = |what: &str, error: rustix::io::Errno| {
            fail(
                ACL_ERROR_RT_MEMORY_ALLOCATION,
                format!("software device {device}: {what} failed: {error}"),
            )
        };
        let length = match usize::try_from(capacity) {
            Ok(length) => length,
            Err(_) => {
                return fail(
                    ACL_ERROR_RT_MEMORY_ALLOCATION,
                    "device memory larger than the address space",
                );
            }
        };
        let memfd = match memfd_create(format!("ascend-soft-device-{device}"), MemfdFlags::CLOEXEC) {
            Ok(fd) => fd,
            Err(error) => return failed("memfd_create", error),
        };
        if let Err(error) = ftruncate(&memfd, capacity) {
            return failed("ftruncate", error);
        }
        // SAFETY: a fresh shared mapping of our own memfd at an address the
        // kernel picks; nothing else refers to that range.
        let view = match unsafe {
            mmap(
                std::ptr::null_mut(),
                length,
                ProtFlags::READ | ProtFlags::WRITE,
                MapFlags::SHARED | MapFlags::NORESERVE,
                &memfd,
                0,
            )
        } {
            Ok(view) => view.cast::<u8>(),
            Err(error) => return failed("mmap of the device view", error),
        };
        // SAFETY: a fresh inaccessible anonymous reservation at an address
        // the kernel picks.
        let device_base = match unsafe {
            mmap_anonymous(
                std::ptr::null_mut(),
                length,
                ProtFlags::empty(),
                MapFlags::PRIVATE | MapFlags::NORESERVE,
            )
        } {
            Ok(base) => base as usize,
            Err(error) => {
                // SAFETY: `view` was mapped above with this length and is not
                // referenced anywhere else yet.
                let _ = unsafe { munmap(view.cast::<c_void>(), length) };
                return failed("mmap of the device address range", error);
            }
        };
        Ok(Self {
            _memfd: memfd,
            view,
            device_base,
            capacity,
            stale: AtomicU64::new(0),
        })
    }

    /// The device memory's `memfd` (an IPC key names it for importers).
    pub(crate) fn fd(&self) -> BorrowedFd<'_> {
        self._memfd.as_fd()
    }

    /// The first device address of this device.
    pub(crate) fn device_base(&self) -> usize {
        self.device_base
    }

    /// Whether `address` is one of this device's addresses.
    pub(crate) fn contains(&self, address: usize) -> bool {
        address.wrapping_sub(self.device_base) < self.capacity as usize
    }

    /// The device view of physical offset `offset`.
    pub(crate) fn view_at(&self, offset: u64) -> *mut u8 {
        debug_assert!(offset <= self.capacity);
        // SAFETY: `offset` is within the view mapping (callers translate
        // from allocations inside the capacity).
        unsafe { self.view.add(offset as usize) }
    }

    /// Gives back the pages of `size` freed bytes at `offset`, which now lie
    /// in the free range `merged`: at once for a large free (the whole pages
    /// of `merged` that the freed bytes touch), otherwise in a batch over
    /// every range of `free_ranges` once [`STALE_BUDGET`] bytes were freed.
    /// Until then the pages keep their bytes, as freed memory does on
    /// hardware.
    pub(crate) fn after_free<I: Iterator<Item = (u64, u64)>>(
        &self,
        (offset, size): (u64, u64),
        (start, length): (u64, u64),
        free_ranges: impl FnOnce() -> I,
    ) {
        if size >= RELEASE_AT_ONCE {
            // Pages partly freed before are free now if `merged` covers them.
            let low = (offset / PAGE * PAGE).max(start);
            let high = (offset + size).next_multiple_of(PAGE).min(start + length);
            self.release_pages(low, high - low);
            return;
        }
        if self.stale.fetch_add(size, Ordering::Relaxed) + size < STALE_BUDGET {
            return;
        }
        self.stale.store(0, Ordering::Relaxed);
        for (start, length) in free_ranges() {
            self.release_pages(start, length);
        }
    }

    /// Gives the host RAM behind the whole pages of `[offset, offset+size)`
    /// back to the system; those bytes read as zero afterwards.
    pub(crate) fn release_pages(&self, offset: u64, size: u64) {
        let start = offset.next_multiple_of(PAGE);
        let end = (offset + size) / PAGE * PAGE;
        if end > start {
            let flags = FallocateFlags::PUNCH_HOLE | FallocateFlags::KEEP_SIZE;
            if let Err(error) = fallocate(&self._memfd, flags, start, end - start) {
                log::warn!("software device: could not release pages: {error}");
            }
        }
    }
}

impl Drop for Arena {
    fn drop(&mut self) {
        let length = self.capacity as usize;
        // SAFETY: both ranges were mapped in `new` with `length` bytes and
        // the arena is their only owner.
        unsafe {
            let _ = munmap(self.view.cast::<c_void>(), length);
            let _ = munmap(self.device_base as *mut c_void, length);
        }
    }
}

//! One device's memory: sparse physical bytes in a `memfd`, the device's own
//! view of them, and the device virtual addresses user code sees.
//!
//! - **Physical memory** is a `memfd` of the device's capacity. It is sparse:
//!   host RAM is committed only for pages written, and freed pages are given
//!   back with `fallocate(PUNCH_HOLE)` — at once for a large free, in
//!   batches for small ones (see `device_mem`'s stale budget).
//! - **The device view** is a shared read-write mapping of that `memfd`,
//!   private to the software device: copies and memsets go through it.
//! - **Device addresses** are a separate range reserved `PROT_NONE` in the
//!   process: they are real, unique addresses, and a host dereference of one
//!   faults, as it does on hardware. Managed memory is the one exception:
//!   its range of device addresses is mapped to its own physical bytes
//!   ([`Arena::expose`]), so the host dereferences the same address the
//!   device uses.

use crate::soft::core::byte_locks;
use crate::soft::core::soft_result::{SoftResult, fail};
use crate::types::ACL_ERROR_RT_MEMORY_ALLOCATION;
use rustix::fd::{AsFd, BorrowedFd, OwnedFd};
use rustix::fs::{FallocateFlags, MemfdFlags, fallocate, ftruncate, memfd_create};
use rustix::mm::{MapFlags, ProtFlags, mmap, mmap_anonymous, munmap};
use std::ffi::c_void;

/// The host page size used for hole punching.
const PAGE: u64 = 4096;

/// A free of at least this many bytes gives its pages back at once: one
/// system call is cheap next to the memory it returns.
pub(crate) const RELEASE_AT_ONCE: u64 = 1 << 20;

pub(crate) struct Arena {
    /// Keeps the physical memory alive; the view maps it.
    _memfd: OwnedFd,
    view: *mut u8,
    device_base: usize,
    capacity: u64,
}

// SAFETY: the raw pointers are addresses of mappings owned by the arena for
// the life of the process; the arena keeps no bookkeeping (the device-memory
// family's locks say who owns which range), and byte copies through the view
// are the device's "DMA", serialised by the byte locks.
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
        let view = match map_aligned(&memfd, length) {
            Ok(view) => view,
            Err((what, error)) => return failed(what, error),
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

    /// The device's memory in bytes.
    pub(crate) fn capacity(&self) -> u64 {
        self.capacity
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

    /// Maps the physical bytes `[offset, offset + length)` at their own
    /// device addresses, readable and writable by the host (managed
    /// memory): the host then sees the bytes the device view sees. Both
    /// `offset` and `length` must be multiples of the host page size, inside
    /// the capacity, and the range an allocation of the caller.
    pub(crate) fn expose(&self, offset: u64, length: usize) -> SoftResult {
        debug_assert!(offset.is_multiple_of(PAGE) && (length as u64).is_multiple_of(PAGE));
        debug_assert!(offset + length as u64 <= self.capacity);
        let address = self.device_base + offset as usize;
        // SAFETY: `[address, address + length)` lies inside the device
        // address reservation this arena owns (the caller's allocation), so
        // MAP_FIXED replaces only that part of it.
        let mapped = unsafe {
            mmap(
                address as *mut c_void,
                length,
                ProtFlags::READ | ProtFlags::WRITE,
                MapFlags::SHARED | MapFlags::FIXED,
                &self._memfd,
                offset,
            )
        };
        match mapped {
            Ok(_) => Ok(()),
            Err(error) => fail(
                ACL_ERROR_RT_MEMORY_ALLOCATION,
                format!("mapping managed memory for the host failed: {error}"),
            ),
        }
    }

    /// Makes the device addresses of `[offset, offset + length)`
    /// inaccessible to the host again (undoes [`Arena::expose`]). On
    /// failure the range stays mapped, which only leaves it readable.
    pub(crate) fn conceal(&self, offset: u64, length: usize) {
        let address = self.device_base + offset as usize;
        // SAFETY: as in `expose`: a part of this arena's own reservation.
        let restored = unsafe {
            mmap_anonymous(
                address as *mut c_void,
                length,
                ProtFlags::empty(),
                MapFlags::PRIVATE | MapFlags::NORESERVE | MapFlags::FIXED,
            )
        };
        if let Err(error) = restored {
            log::warn!("software device: could not unmap managed memory from the host: {error}");
        }
    }

    /// Gives back the pages of a large free (at least
    /// [`RELEASE_AT_ONCE`] bytes at `offset`), which now lie in the free
    /// range `merged`: the whole pages of `merged` that the freed bytes
    /// touch (pages partly freed before are free now if `merged` covers
    /// them).
    pub(crate) fn release_freed(&self, (offset, size): (u64, u64), (start, length): (u64, u64)) {
        let low = (offset / PAGE * PAGE).max(start);
        let high = (offset + size).next_multiple_of(PAGE).min(start + length);
        self.release_pages(low, high - low);
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

/// Maps `memfd` shared read-write at an address aligned to a byte-lock
/// chunk, so that each chunk of physical memory is one chunk of the view and
/// copies into different chunks never share a byte lock.
fn map_aligned(memfd: &OwnedFd, length: usize) -> Result<*mut u8, (&'static str, rustix::io::Errno)> {
    let align = byte_locks::CHUNK;
    let padded = length + align;
    // SAFETY: a fresh inaccessible anonymous reservation at an address the
    // kernel picks; it only holds the place for the view.
    let reserved = unsafe {
        mmap_anonymous(
            std::ptr::null_mut(),
            padded,
            ProtFlags::empty(),
            MapFlags::PRIVATE | MapFlags::NORESERVE,
        )
    }
    .map_err(|error| ("mmap of the device view's reservation", error))? as usize;
    let start = reserved.next_multiple_of(align);
    // SAFETY: `[start, start + length)` lies inside the reservation just
    // made, which nothing else refers to; MAP_FIXED replaces that part.
    let mapped = unsafe {
        mmap(
            start as *mut c_void,
            length,
            ProtFlags::READ | ProtFlags::WRITE,
            MapFlags::SHARED | MapFlags::NORESERVE | MapFlags::FIXED,
            memfd,
            0,
        )
    };
    // SAFETY: the head and tail of the reservation around the view (the
    // whole reservation if the view failed) belong to no one else.
    unsafe {
        if let Err(error) = mapped {
            let _ = munmap(reserved as *mut c_void, padded);
            return Err(("mmap of the device view", error));
        }
        if start > reserved {
            let _ = munmap(reserved as *mut c_void, start - reserved);
        }
        let tail = reserved + padded - (start + length);
        if tail > 0 {
            let _ = munmap((start + length) as *mut c_void, tail);
        }
    }
    Ok(start as *mut u8)
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

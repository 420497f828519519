//! [`MappedRegion`]: physical memory mapped into a reserved range.

use super::physical::PhysicalAlloc;
use super::properties::MemLocation;
use super::range::VirtualRange;
use crate::error::{Call, Error, Result, check};
use crate::memory::{DeviceSlice, DeviceSliceMut};
use ascend_sys as sys;
use bytemuck::Pod;
use std::ffi::c_void;
use std::fmt;
use std::ptr::NonNull;

/// Access rights of a location to a mapping (`aclrtMemAccessFlags`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Access {
    /// No access.
    None,
    /// Read only.
    Read,
    /// Read and write (the only kind `set_access` accepts today).
    ReadWrite,
}

impl Access {
    /// The C value.
    pub fn raw(self) -> sys::aclrtMemAccessFlags {
        match self {
            Access::None => sys::ACL_RT_MEM_ACCESS_FLAGS_NONE,
            Access::Read => sys::ACL_RT_MEM_ACCESS_FLAGS_READ,
            Access::ReadWrite => sys::ACL_RT_MEM_ACCESS_FLAGS_READWRITE,
        }
    }

    fn from_raw(raw: u64) -> Option<Self> {
        match raw {
            raw if raw == u64::from(sys::ACL_RT_MEM_ACCESS_FLAGS_NONE) => Some(Access::None),
            raw if raw == u64::from(sys::ACL_RT_MEM_ACCESS_FLAGS_READ) => Some(Access::Read),
            raw if raw == u64::from(sys::ACL_RT_MEM_ACCESS_FLAGS_READWRITE) => Some(Access::ReadWrite),
            _ => None,
        }
    }
}

/// A grant of access for [`MappedRegion::set_access`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct AccessDesc {
    /// Who gets access.
    pub location: MemLocation,
    /// What access.
    pub access: Access,
}

impl AccessDesc {
    /// Read-write access for `location`.
    #[must_use]
    pub fn read_write(location: MemLocation) -> Self {
        Self {
            location,
            access: Access::ReadWrite,
        }
    }

    fn raw(self) -> sys::aclrtMemAccessDesc {
        sys::aclrtMemAccessDesc {
            flags: self.access.raw(),
            location: self.location.raw(),
            rsv: [0; 12],
        }
    }
}

/// A physical allocation mapped at an address of a [`VirtualRange`]. It
/// borrows both, so neither can be freed, released or moved while it lives;
/// dropping it (or [`MappedRegion::unmap`]) unmaps (`aclrtUnmapMem`).
///
/// It is the only mapping of its physical memory in this process (a second
/// one is refused while it lives), so [`MappedRegion::as_mut_slice`] is an
/// exclusive view of those bytes. When the unmap fails, the memory stays
/// marked as mapped: it is never mapped a second time.
///
/// **Threads:** `MappedRegion` is `Send` and `Sync`.
///
/// **Guide:** [Concepts: the VMM lifecycle in types](crate::guide::concepts).
pub struct MappedRegion<'a> {
    range: &'a VirtualRange,
    physical: &'a PhysicalAlloc,
    offset: usize,
    accessible: bool,
    mapped: bool,
}

impl<'a> MappedRegion<'a> {
    pub(crate) fn new(range: &'a VirtualRange, physical: &'a PhysicalAlloc, offset: usize, accessible: bool) -> Self {
        Self {
            range,
            physical,
            offset,
            accessible,
            mapped: true,
        }
    }

    /// The first device address of the mapping.
    pub fn address(&self) -> *mut c_void {
        (self.range.base() as usize + self.offset) as *mut c_void
    }

    /// Size in bytes (the physical allocation's size).
    pub fn size(&self) -> usize {
        self.physical.size()
    }

    /// Offset of the mapping in its range.
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// The physical allocation mapped.
    pub fn physical(&self) -> &'a PhysicalAlloc {
        self.physical
    }

    /// Whether any access was granted (false after
    /// [`VirtualRange::map_no_access`] until [`MappedRegion::set_access`]).
    pub fn is_accessible(&self) -> bool {
        self.accessible
    }

    /// Grants access (`aclrtMemSetAccess` over the whole mapping).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for an empty list; the runtime's code.
    pub fn set_access(&mut self, grants: &[AccessDesc]) -> Result<()> {
        grant(self.address(), self.size(), grants)?;
        self.accessible = true;
        Ok(())
    }

    /// The access `location` has (`aclrtMemGetAccess`); `None` when it was
    /// never set.
    ///
    /// # Errors
    ///
    /// The runtime's code.
    pub fn access(&self, location: MemLocation) -> Result<Option<Access>> {
        access_of(self.address(), location)
    }

    /// A new owned reference to the mapped physical allocation
    /// (`aclrtMemRetainAllocationHandle`); it must be freed on its own, and
    /// is when dropped. It is the same memory, so it cannot be mapped while
    /// this mapping (or any other of the memory) lives.
    ///
    /// # Errors
    ///
    /// The runtime's code.
    pub fn retain_physical(&self) -> Result<PhysicalAlloc> {
        let mut handle = std::ptr::null_mut();
        // SAFETY: a mapped address and a valid out-pointer.
        check("aclrtMemRetainAllocationHandle", unsafe {
            sys::aclrtMemRetainAllocationHandle(self.address(), &mut handle)
        })?;
        let handle = NonNull::new(handle).ok_or_else(|| {
            Error::invalid(
                Call::new("MappedRegion::retain_physical", "aclrtMemRetainAllocationHandle"),
                "the runtime returned NULL",
            )
        })?;
        // SAFETY: a live handle of this allocation with one new reference,
        // owned by the returned value.
        unsafe { PhysicalAlloc::from_handle(handle, self.size(), *self.physical.prop(), self.physical.slot().clone()) }
    }

    /// A typed view of the mapping's bytes.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when the size is not a whole number of
    /// `T`s.
    pub fn as_slice<T: Pod>(&self) -> Result<DeviceSlice<'_, T>> {
        let len = elements::<T>(Call::rust("MappedRegion::as_slice"), self.address(), self.size())?;
        // SAFETY: the mapping holds `size` bytes at `address` while `self`
        // is borrowed.
        Ok(unsafe { DeviceSlice::from_raw_parts(self.address(), len, self.physical.device()) })
    }

    /// An exclusive typed view of the mapping's bytes.
    ///
    /// # Errors
    ///
    /// As [`MappedRegion::as_slice`].
    pub fn as_mut_slice<T: Pod>(&mut self) -> Result<DeviceSliceMut<'_, T>> {
        let len = elements::<T>(Call::rust("MappedRegion::as_mut_slice"), self.address(), self.size())?;
        // SAFETY: as in `as_slice`; `&mut self` makes it unique among this
        // region's views, and the map slot makes this region the only
        // mapping of the memory in this process.
        Ok(unsafe { DeviceSliceMut::from_raw_parts(self.address(), len, self.physical.device()) })
    }

    /// Unmaps now, reporting a failure.
    ///
    /// # Errors
    ///
    /// The runtime's code from `aclrtUnmapMem`.
    pub fn unmap(mut self) -> Result<()> {
        self.unmap_inner()
    }

    fn unmap_inner(&mut self) -> Result<()> {
        if !std::mem::replace(&mut self.mapped, false) {
            return Ok(());
        }
        unmap_at(self.range, self.physical, self.offset)
    }
}

/// `aclrtMemSetAccess` over the whole mapping of `size` bytes at `address`.
pub(super) fn grant(address: *mut c_void, size: usize, grants: &[AccessDesc]) -> Result<()> {
    if grants.is_empty() {
        return Err(Error::invalid(
            Call::new("MappedRegion::grant", "aclrtMemSetAccess"),
            "no access descriptors",
        ));
    }
    let mut raw: Vec<sys::aclrtMemAccessDesc> = grants.iter().map(|grant| grant.raw()).collect();
    // SAFETY: a live mapping's exact address and size (the caller's), and
    // `raw.len()` descriptors live for the call.
    check("aclrtMemSetAccess", unsafe {
        sys::aclrtMemSetAccess(address, size, raw.as_mut_ptr(), raw.len())
    })
}

/// `aclrtMemGetAccess` of `location` at a mapped `address`.
pub(super) fn access_of(address: *mut c_void, location: MemLocation) -> Result<Option<Access>> {
    let mut raw = location.raw();
    let mut flags = 0;
    // SAFETY: valid pointers; the runtime checks the address.
    check("aclrtMemGetAccess", unsafe {
        sys::aclrtMemGetAccess(address, &mut raw, &mut flags)
    })?;
    Ok(Access::from_raw(flags))
}

/// Unmaps the mapping of `physical` at `offset` in `range`. After a failed
/// unmap the runtime may still hold the mapping: its place stays taken in
/// the range, so no overlapping map is attempted, and the memory keeps its
/// map slot, so no second view of it appears.
pub(super) fn unmap_at(range: &VirtualRange, physical: &PhysicalAlloc, offset: usize) -> Result<()> {
    let address = (range.base() as usize + offset) as *mut c_void;
    // SAFETY: the start of a live mapping, unmapped once (each mapping
    // value calls this once).
    check("aclrtUnmapMem", unsafe { sys::aclrtUnmapMem(address) })?;
    log::trace!("aclrtUnmapMem: {address:p}");
    range.forget(offset);
    physical.slot().give_back();
    Ok(())
}

/// The number of `T`s in `size` bytes at `address`, which must be a whole
/// number of them, aligned for `T`.
pub(super) fn elements<T: Pod>(call: Call, address: *mut c_void, size: usize) -> Result<usize> {
    if size_of::<T>() == 0 || !size.is_multiple_of(size_of::<T>()) {
        return Err(Error::invalid(
            call,
            format!(
                "{size} bytes are not a whole number of {}-byte elements",
                size_of::<T>()
            ),
        ));
    }
    if !(address as usize).is_multiple_of(align_of::<T>()) {
        return Err(Error::invalid(call, "the mapping is not aligned for the element type"));
    }
    Ok(size / size_of::<T>())
}

impl Drop for MappedRegion<'_> {
    fn drop(&mut self) {
        if let Err(error) = self.unmap_inner() {
            log::warn!("MappedRegion drop: {error}");
        }
    }
}

impl fmt::Debug for MappedRegion<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MappedRegion")
            .field("address", &self.address())
            .field("size", &self.size())
            .field("accessible", &self.accessible)
            .finish()
    }
}

//! [`MappedRegion`]: physical memory mapped into a reserved range.

use super::physical::PhysicalAlloc;
use super::range::VirtualRange;
use crate::error::{Call, Error, Result, check};
use crate::memory::MemLocation;
use crate::memory::{DeviceSlice, DeviceSliceMut};
use ascend_sys as sys;
use bytemuck::Pod;
use std::ffi::c_void;
use std::fmt;
use std::ptr::NonNull;

/// Access rights of a location to a mapping (`aclrtMemAccessFlags`).
///
/// It comes back from [`MappedRegion::access`] and goes into an
/// [`AccessDesc`]:
///
/// ```
/// use ascend::vmm::{Access, MemLocation};
/// # use ascend::Device;
/// # use ascend::vmm::{PhysicalAlloc, PhysicalMemProp, VirtualRange};
/// # let device = Device::new(0)?;
/// # let prop = PhysicalMemProp::device(&device);
/// # let granule = prop.round_up(1)?;
/// # let range = VirtualRange::reserve(granule)?;
/// # let physical = PhysicalAlloc::new(&prop, granule)?;
/// let region = range.map(0, &physical)?;
/// // `map` grants read-write access to the memory's own device...
/// match region.access(MemLocation::Device(device.id()))? {
///     Some(Access::ReadWrite) => {}
///     other => panic!("unexpected access {other:?}"),
/// }
/// // ...and nothing to anyone else.
/// assert_eq!(region.access(MemLocation::Host)?, None);
/// # Ok::<(), ascend::Error>(())
/// ```
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
    ///
    /// # Examples
    ///
    /// For raw `ascend_sys` calls, such as reading a mapping's flags directly:
    ///
    /// ```
    /// use ascend::vmm::{Access, MemLocation};
    /// # use ascend::Device;
    /// # use ascend::vmm::{PhysicalAlloc, PhysicalMemProp, VirtualRange};
    /// # let device = Device::new(0)?;
    /// # let prop = PhysicalMemProp::device(&device);
    /// # let granule = prop.round_up(1)?;
    /// # let range = VirtualRange::reserve(granule)?;
    /// # let physical = PhysicalAlloc::new(&prop, granule)?;
    /// let region = range.map(0, &physical)?;
    /// let mut location = MemLocation::Device(device.id()).raw();
    /// let mut flags = 0;
    /// // SAFETY: a live mapping's address and valid out-pointers.
    /// let code = unsafe { ascend::sys::aclrtMemGetAccess(region.address(), &mut location, &mut flags) };
    /// ascend::check("aclrtMemGetAccess", code)?;
    /// assert_eq!(flags, u64::from(Access::ReadWrite.raw()));
    /// # Ok::<(), ascend::Error>(())
    /// ```
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
///
/// ```
/// use ascend::vmm::{Access, AccessDesc, MemLocation};
/// # use ascend::Device;
/// # use ascend::vmm::{PhysicalAlloc, PhysicalMemProp, VirtualRange};
/// # let device = Device::new(0)?;
/// # let prop = PhysicalMemProp::device(&device);
/// # let granule = prop.round_up(1)?;
/// # let range = VirtualRange::reserve(granule)?;
/// # let physical = PhysicalAlloc::new(&prop, granule)?;
/// let mut region = range.map_no_access(0, &physical)?;
/// let grant = AccessDesc::read_write(MemLocation::Device(device.id()));
/// region.set_access(&[grant])?;
/// // The runtime accepts only read-write grants today.
/// let read_only = AccessDesc { location: MemLocation::Host, access: Access::Read };
/// assert!(region.set_access(&[read_only]).is_err());
/// # Ok::<(), ascend::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct AccessDesc {
    /// Who gets access.
    pub location: MemLocation,
    /// What access.
    pub access: Access,
}

impl AccessDesc {
    /// Read-write access for `location`.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::vmm::{Access, AccessDesc, MemLocation};
    /// let grant = AccessDesc::read_write(MemLocation::Host);
    /// assert_eq!(grant, AccessDesc { location: MemLocation::Host, access: Access::ReadWrite });
    /// ```
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
///
/// ```
/// use ascend::Device;
/// use ascend::vmm::{PhysicalAlloc, PhysicalMemProp, VirtualRange};
/// let device = Device::new(0)?;
/// let prop = PhysicalMemProp::device(&device);
/// let granule = prop.round_up(1)?;
/// let range = VirtualRange::reserve(granule)?;
/// let physical = PhysicalAlloc::new(&prop, granule)?;
/// let mut region = range.map(0, &physical)?;
/// region.as_mut_slice::<u64>()?.fill_bytes(0xAB)?;
/// assert_eq!(region.as_slice::<u8>()?.slice(..2)?.to_vec()?, [0xAB, 0xAB]);
/// region.unmap()?; // the borrows end: `physical` and `range` may go now
/// physical.free()?;
/// range.release()?;
/// # Ok::<(), ascend::Error>(())
/// ```
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
    ///
    /// # Examples
    ///
    /// ```
    /// # use ascend::Device;
    /// # use ascend::vmm::{PhysicalAlloc, PhysicalMemProp, VirtualRange};
    /// # let device = Device::new(0)?;
    /// # let prop = PhysicalMemProp::device(&device);
    /// # let granule = prop.round_up(1)?;
    /// let range = VirtualRange::reserve(2 * granule)?;
    /// # let physical = PhysicalAlloc::new(&prop, granule)?;
    /// let region = range.map(granule, &physical)?;
    /// assert_eq!(region.address() as usize, range.base() as usize + granule);
    /// // Views of the mapping start there too.
    /// assert_eq!(region.as_slice::<u8>()?.as_raw(), region.address().cast_const());
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn address(&self) -> *mut c_void {
        (self.range.base() as usize + self.offset) as *mut c_void
    }

    /// Size in bytes (the physical allocation's size).
    ///
    /// # Examples
    ///
    /// ```
    /// # use ascend::Device;
    /// # use ascend::vmm::{PhysicalAlloc, PhysicalMemProp, VirtualRange};
    /// # let device = Device::new(0)?;
    /// # let prop = PhysicalMemProp::device(&device);
    /// # let granule = prop.round_up(1)?;
    /// let range = VirtualRange::reserve(2 * granule)?;
    /// let physical = PhysicalAlloc::new(&prop, 2 * granule)?;
    /// let region = range.map(0, &physical)?;
    /// assert_eq!(region.size(), 2 * granule);
    /// assert_eq!(region.as_slice::<u32>()?.len(), 2 * granule / 4);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn size(&self) -> usize {
        self.physical.size()
    }

    /// Offset of the mapping in its range.
    ///
    /// # Examples
    ///
    /// ```
    /// # use ascend::Device;
    /// # use ascend::vmm::{PhysicalAlloc, PhysicalMemProp, VirtualRange};
    /// # let device = Device::new(0)?;
    /// # let prop = PhysicalMemProp::device(&device);
    /// # let granule = prop.round_up(1)?;
    /// let range = VirtualRange::reserve(3 * granule)?;
    /// # let physical = PhysicalAlloc::new(&prop, granule)?;
    /// let region = range.map(2 * granule, &physical)?;
    /// assert_eq!(region.offset(), 2 * granule);
    /// assert_eq!(region.offset() + region.size(), range.size()); // the last granule
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// The physical allocation mapped.
    ///
    /// # Examples
    ///
    /// ```
    /// # use ascend::Device;
    /// # use ascend::vmm::{PhysicalAlloc, PhysicalMemProp, VirtualRange};
    /// # let device = Device::new(0)?;
    /// # let prop = PhysicalMemProp::device(&device);
    /// # let granule = prop.round_up(1)?;
    /// # let range = VirtualRange::reserve(granule)?;
    /// let physical = PhysicalAlloc::new(&prop, granule)?;
    /// let region = range.map(0, &physical)?;
    /// assert!(std::ptr::eq(region.physical(), &physical));
    /// assert_eq!(region.physical().prop(), &prop);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn physical(&self) -> &'a PhysicalAlloc {
        self.physical
    }

    /// Whether any access was granted (false after
    /// [`VirtualRange::map_no_access`] until [`MappedRegion::set_access`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::vmm::{AccessDesc, MemLocation};
    /// # use ascend::Device;
    /// # use ascend::vmm::{PhysicalAlloc, PhysicalMemProp, VirtualRange};
    /// # let device = Device::new(0)?;
    /// # let prop = PhysicalMemProp::device(&device);
    /// # let granule = prop.round_up(1)?;
    /// # let range = VirtualRange::reserve(2 * granule)?;
    /// # let (first, second) = (PhysicalAlloc::new(&prop, granule)?, PhysicalAlloc::new(&prop, granule)?);
    /// assert!(range.map(0, &first)?.is_accessible());
    /// let mut region = range.map_no_access(granule, &second)?;
    /// assert!(!region.is_accessible());
    /// region.set_access(&[AccessDesc::read_write(MemLocation::Device(device.id()))])?;
    /// assert!(region.is_accessible());
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn is_accessible(&self) -> bool {
        self.accessible
    }

    /// Grants access (`aclrtMemSetAccess` over the whole mapping).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for an empty list; the runtime's code.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::vmm::{Access, AccessDesc, MemLocation};
    /// # use ascend::Device;
    /// # use ascend::vmm::{PhysicalAlloc, PhysicalMemProp, VirtualRange};
    /// # let device = Device::new(0)?;
    /// # let prop = PhysicalMemProp::device(&device);
    /// # let granule = prop.round_up(1)?;
    /// # let range = VirtualRange::reserve(granule)?;
    /// # let physical = PhysicalAlloc::new(&prop, granule)?;
    /// let mut region = range.map(0, &physical)?;
    /// assert_eq!(region.access(MemLocation::Host)?, None);
    /// region.set_access(&[AccessDesc::read_write(MemLocation::Host)])?;
    /// assert_eq!(region.access(MemLocation::Host)?, Some(Access::ReadWrite));
    /// // An empty list is refused before any call.
    /// assert!(matches!(region.set_access(&[]), Err(ascend::Error::InvalidArgument { .. })));
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtMemSetAccess")]
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
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::vmm::{Access, AccessDesc, MemLocation};
    /// # use ascend::Device;
    /// # use ascend::vmm::{PhysicalAlloc, PhysicalMemProp, VirtualRange};
    /// # let device = Device::new(0)?;
    /// # let prop = PhysicalMemProp::device(&device);
    /// # let granule = prop.round_up(1)?;
    /// # let range = VirtualRange::reserve(granule)?;
    /// # let physical = PhysicalAlloc::new(&prop, granule)?;
    /// let owner = MemLocation::Device(device.id());
    /// let mut region = range.map_no_access(0, &physical)?;
    /// assert_eq!(region.access(owner)?, None); // never set
    /// region.set_access(&[AccessDesc::read_write(owner)])?;
    /// assert_eq!(region.access(owner)?, Some(Access::ReadWrite));
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtMemGetAccess")]
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
    ///
    /// # Examples
    ///
    /// ```
    /// # use ascend::Device;
    /// # use ascend::vmm::{PhysicalAlloc, PhysicalMemProp, VirtualRange};
    /// # let device = Device::new(0)?;
    /// # let prop = PhysicalMemProp::device(&device);
    /// # let granule = prop.round_up(1)?;
    /// let range = VirtualRange::reserve(2 * granule)?;
    /// let physical = PhysicalAlloc::new(&prop, granule)?;
    /// let mut region = range.map(0, &physical)?;
    /// region.as_mut_slice::<u8>()?.fill_bytes(7)?;
    /// let retained = region.retain_physical()?;
    /// assert!(range.map(granule, &retained).is_err()); // the same memory, still mapped
    /// drop(region);
    /// physical.free()?; // the retained reference keeps the memory alive
    /// let again = range.map(granule, &retained)?;
    /// assert_eq!(again.as_slice::<u8>()?.slice(..2)?.to_vec()?, [7, 7]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtMemRetainAllocationHandle")]
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
    ///
    /// # Examples
    ///
    /// ```
    /// # use ascend::Device;
    /// # use ascend::vmm::{PhysicalAlloc, PhysicalMemProp, VirtualRange};
    /// # let device = Device::new(0)?;
    /// # let prop = PhysicalMemProp::device(&device);
    /// # let granule = prop.round_up(1)?;
    /// # let range = VirtualRange::reserve(granule)?;
    /// # let physical = PhysicalAlloc::new(&prop, granule)?;
    /// let mut region = range.map(0, &physical)?;
    /// region.as_mut_slice::<u16>()?.fill_bytes(1)?;
    /// let words = region.as_slice::<u16>()?;
    /// assert_eq!(words.len(), granule / 2);
    /// assert_eq!(words.slice(..2)?.to_vec()?, [0x0101, 0x0101]);
    /// // The mapping's size must be a whole number of elements.
    /// assert!(region.as_slice::<[u8; 3]>().is_err());
    /// # Ok::<(), ascend::Error>(())
    /// ```
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
    ///
    /// # Examples
    ///
    /// ```
    /// # use ascend::Device;
    /// # use ascend::vmm::{PhysicalAlloc, PhysicalMemProp, VirtualRange};
    /// # let device = Device::new(0)?;
    /// # let prop = PhysicalMemProp::device(&device);
    /// # let granule = prop.round_up(1)?;
    /// # let range = VirtualRange::reserve(granule)?;
    /// # let physical = PhysicalAlloc::new(&prop, granule)?;
    /// let mut region = range.map(0, &physical)?;
    /// let mut floats = region.as_mut_slice::<f32>()?;
    /// floats.slice_mut(..3)?.write_from_host(&[0.5, 1.5, 2.5])?;
    /// assert_eq!(region.as_slice::<f32>()?.slice(..3)?.to_vec()?, [0.5, 1.5, 2.5]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
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
    ///
    /// # Examples
    ///
    /// ```
    /// # use ascend::Device;
    /// # use ascend::vmm::{PhysicalAlloc, PhysicalMemProp, VirtualRange};
    /// # let device = Device::new(0)?;
    /// # let prop = PhysicalMemProp::device(&device);
    /// # let granule = prop.round_up(1)?;
    /// let range = VirtualRange::reserve(2 * granule)?;
    /// # let physical = PhysicalAlloc::new(&prop, granule)?;
    /// let low = range.map(0, &physical)?;
    /// assert!(range.map(granule, &physical).is_err()); // mapped once at a time
    /// low.unmap()?;
    /// let high = range.map(granule, &physical)?; // now it can move
    /// assert_eq!(high.offset(), granule);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtUnmapMem")]
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
pub(crate) fn elements<T: Pod>(call: Call, address: *mut c_void, size: usize) -> Result<usize> {
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

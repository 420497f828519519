//! [`OwnedMapping`]: a mapping that owns its range and its physical memory.

use super::mapped::{self, Access, AccessDesc};
use super::physical::PhysicalAlloc;
use super::range::{Mappable, VirtualRange};
use crate::Call;
use crate::error::{Error, Result};
use crate::memory::MemLocation;
use crate::memory::{DeviceSlice, DeviceSliceMut};
use bytemuck::Pod;
use std::ffi::c_void;
use std::fmt;
use std::sync::Arc;

/// Physical memory mapped into a range, owning a share of both: the
/// long-lived form of [`MappedRegion`](super::MappedRegion) for structures
/// that keep mappings (a tensor's storage, an allocator's segments).
///
/// It holds the range and the physical memory in [`Arc`]s, so neither can
/// be released or freed while it lives: the range is released when its last
/// owner (range value or mapping) is gone, the physical memory likewise.
/// Dropping it (or [`OwnedMapping::unmap`]) unmaps. It is `'static`,
/// `Send` and `Sync`. As with every mapping, one physical allocation is
/// mapped once at a time in the process, so [`OwnedMapping::as_mut_slice`]
/// is an exclusive view.
///
/// If the unmap in `Drop` fails, the runtime may still map the memory: the
/// mapping then keeps its range and physical memory alive forever (a leak,
/// never a release or a free under a live mapping).
///
/// ```
/// use std::sync::Arc;
/// use ascend::Device;
/// use ascend::vmm::{OwnedMapping, PhysicalAlloc, PhysicalMemProp, VirtualRange};
/// let device = Device::new(0)?;
/// let prop = PhysicalMemProp::device(&device);
/// let granule = prop.round_up(1)?;
/// let range = Arc::new(VirtualRange::reserve(2 * granule)?);
/// let physical = Arc::new(PhysicalAlloc::new(&prop, granule)?);
/// let mut mapping = OwnedMapping::new(Arc::clone(&range), granule, physical)?;
/// mapping.as_mut_slice::<u32>()?.fill_bytes(7)?;
/// // The mapping can move to another thread; the range goes with it.
/// drop(range);
/// let read = std::thread::spawn(move || mapping.as_slice::<u8>()?.slice(..2)?.to_vec())
///     .join()
///     .expect("no panic")?;
/// assert_eq!(read, [7, 7]);
/// # Ok::<(), ascend::Error>(())
/// ```
///
/// **Threads:** `OwnedMapping` is `Send` and `Sync` (with the default
/// `PhysicalAlloc`, and whenever `P` is), and `'static`: store it anywhere.
///
/// **Guide:** [Concepts: owned forms](crate::guide::concepts).
pub struct OwnedMapping<P: Mappable = PhysicalAlloc> {
    range: Arc<VirtualRange>,
    physical: Arc<P>,
    offset: usize,
    accessible: bool,
    mapped: bool,
}

/// A failed [`OwnedMapping::unmap`]: the runtime's error, and the mapping,
/// still mapped, given back.
///
/// An unmap that fails, on the software device (which can fail a call on
/// purpose: [`inject_fault`](crate::sys::soft::inject_fault)):
///
/// ```
/// use ascend::sys::{self, soft};
/// use ascend::vmm::UnmapError;
/// # use std::sync::Arc;
/// # use ascend::Device;
/// # use ascend::vmm::{PhysicalAlloc, PhysicalMemProp, VirtualRange, OwnedMapping};
/// # let device = Device::new(0)?;
/// # let prop = PhysicalMemProp::device(&device);
/// # let granule = prop.round_up(1)?;
/// # let range = Arc::new(VirtualRange::reserve(2 * granule)?);
/// # let physical = Arc::new(PhysicalAlloc::new(&prop, granule)?);
/// let mapping = OwnedMapping::new(range, 0, physical)?;
/// soft::inject_fault("aclrtUnmapMem", 1, sys::ACL_ERROR_RT_INTERNAL_ERROR).expect("a bound function");
/// let Err(UnmapError { mapping, error }) = mapping.unmap() else {
///     panic!("the injected fault fails the unmap");
/// };
/// assert!(matches!(error, ascend::Error::Acl { api: "aclrtUnmapMem", .. }));
/// // The mapping came back, still mapped: try again.
/// let physical = mapping.unmap().map_err(|failed| failed.error)?;
/// assert_eq!(physical.size(), granule);
/// # Ok::<(), ascend::Error>(())
/// ```
pub struct UnmapError<P: Mappable = PhysicalAlloc> {
    /// The mapping, which the runtime may still map.
    pub mapping: OwnedMapping<P>,
    /// What `aclrtUnmapMem` returned.
    pub error: Error,
}

impl<P: Mappable> OwnedMapping<P> {
    /// Maps all of `physical` at `offset` bytes into `range`, readable and
    /// writable by its owner (`aclrtMapMem`).
    ///
    /// # Errors
    ///
    /// As [`VirtualRange::map`]: [`Error::InvalidArgument`] before any call
    /// for a bad offset, an overlap, or memory already mapped in this
    /// process; the runtime's code.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use ascend::Device;
    /// use ascend::vmm::{OwnedMapping, PhysicalAlloc, PhysicalMemProp, VirtualRange};
    /// let device = Device::new(0)?;
    /// let prop = PhysicalMemProp::device(&device);
    /// let granule = prop.round_up(1)?;
    /// let range = Arc::new(VirtualRange::reserve(2 * granule)?);
    /// let physical = Arc::new(PhysicalAlloc::new(&prop, granule)?);
    /// let mapping = OwnedMapping::new(Arc::clone(&range), 0, Arc::clone(&physical))?;
    /// assert_eq!((mapping.offset(), mapping.size()), (0, granule));
    /// // One physical allocation is mapped once at a time in the process.
    /// assert!(OwnedMapping::new(range, granule, physical).is_err());
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn new(range: Arc<VirtualRange>, offset: usize, physical: Arc<P>) -> Result<Self> {
        Self::map(range, offset, physical, true)
    }

    /// Maps with no access (`aclrtMemMapNoAccess`); see
    /// [`VirtualRange::map_no_access`].
    ///
    /// # Errors
    ///
    /// As [`OwnedMapping::new`]; `Error::Unsupported` on a CANN without it.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use ascend::Device;
    /// use ascend::vmm::{AccessDesc, MemLocation, OwnedMapping, PhysicalAlloc, PhysicalMemProp, VirtualRange};
    /// let device = Device::new(0)?;
    /// let prop = PhysicalMemProp::device(&device);
    /// let granule = prop.round_up(1)?;
    /// let range = Arc::new(VirtualRange::reserve(granule)?);
    /// let physical = Arc::new(PhysicalAlloc::new(&prop, granule)?);
    /// let mut mapping = OwnedMapping::new_no_access(range, 0, physical)?;
    /// assert!(!mapping.is_accessible());
    /// mapping.set_access(&[AccessDesc::read_write(MemLocation::Device(device.id()))])?;
    /// mapping.as_mut_slice::<u8>()?.fill_bytes(3)?;
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn new_no_access(range: Arc<VirtualRange>, offset: usize, physical: Arc<P>) -> Result<Self> {
        Self::map(range, offset, physical, false)
    }

    fn map(range: Arc<VirtualRange>, offset: usize, physical: Arc<P>, accessible: bool) -> Result<Self> {
        let method = if accessible {
            "OwnedMapping::new"
        } else {
            "OwnedMapping::new_no_access"
        };
        range.map_raw(method, offset, physical.physical(), accessible)?;
        Ok(Self {
            range,
            physical,
            offset,
            accessible,
            mapped: true,
        })
    }

    /// The first device address of the mapping.
    ///
    /// # Examples
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use ascend::Device;
    /// # use ascend::vmm::{PhysicalAlloc, PhysicalMemProp, VirtualRange, OwnedMapping};
    /// # let device = Device::new(0)?;
    /// # let prop = PhysicalMemProp::device(&device);
    /// # let granule = prop.round_up(1)?;
    /// # let range = Arc::new(VirtualRange::reserve(2 * granule)?);
    /// # let physical = Arc::new(PhysicalAlloc::new(&prop, granule)?);
    /// let mapping = OwnedMapping::new(Arc::clone(&range), granule, physical)?;
    /// assert_eq!(mapping.address() as usize, range.base() as usize + granule);
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
    /// # use std::sync::Arc;
    /// # use ascend::Device;
    /// # use ascend::vmm::{PhysicalAlloc, PhysicalMemProp, VirtualRange, OwnedMapping};
    /// # let device = Device::new(0)?;
    /// # let prop = PhysicalMemProp::device(&device);
    /// # let granule = prop.round_up(1)?;
    /// # let range = Arc::new(VirtualRange::reserve(2 * granule)?);
    /// let physical = Arc::new(PhysicalAlloc::new(&prop, 2 * granule)?);
    /// let mapping = OwnedMapping::new(range, 0, physical)?;
    /// assert_eq!(mapping.size(), 2 * granule);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn size(&self) -> usize {
        self.physical.physical().size()
    }

    /// Offset of the mapping in its range.
    ///
    /// # Examples
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use ascend::Device;
    /// # use ascend::vmm::{PhysicalAlloc, PhysicalMemProp, VirtualRange, OwnedMapping};
    /// # let device = Device::new(0)?;
    /// # let prop = PhysicalMemProp::device(&device);
    /// # let granule = prop.round_up(1)?;
    /// # let range = Arc::new(VirtualRange::reserve(2 * granule)?);
    /// # let physical = Arc::new(PhysicalAlloc::new(&prop, granule)?);
    /// let mapping = OwnedMapping::new(range, granule, physical)?;
    /// assert_eq!(mapping.offset(), granule);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// The range it is mapped into.
    ///
    /// # Examples
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use ascend::Device;
    /// # use ascend::vmm::{PhysicalAlloc, PhysicalMemProp, VirtualRange, OwnedMapping};
    /// # let device = Device::new(0)?;
    /// # let prop = PhysicalMemProp::device(&device);
    /// # let granule = prop.round_up(1)?;
    /// # let range = Arc::new(VirtualRange::reserve(2 * granule)?);
    /// # let physical = Arc::new(PhysicalAlloc::new(&prop, granule)?);
    /// let mapping = OwnedMapping::new(Arc::clone(&range), 0, physical)?;
    /// assert!(Arc::ptr_eq(mapping.range(), &range));
    /// drop(range); // the mapping keeps the range reserved
    /// assert_eq!(mapping.range().size(), 2 * granule);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn range(&self) -> &Arc<VirtualRange> {
        &self.range
    }

    /// The physical memory mapped.
    ///
    /// # Examples
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use ascend::Device;
    /// # use ascend::vmm::{PhysicalAlloc, PhysicalMemProp, VirtualRange, OwnedMapping};
    /// # let device = Device::new(0)?;
    /// # let prop = PhysicalMemProp::device(&device);
    /// # let granule = prop.round_up(1)?;
    /// # let range = Arc::new(VirtualRange::reserve(2 * granule)?);
    /// # let physical = Arc::new(PhysicalAlloc::new(&prop, granule)?);
    /// let mapping = OwnedMapping::new(range, 0, Arc::clone(&physical))?;
    /// assert!(Arc::ptr_eq(mapping.physical(), &physical));
    /// assert_eq!(Arc::strong_count(&physical), 2); // the mapping holds a share
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn physical(&self) -> &Arc<P> {
        &self.physical
    }

    /// Whether any access was granted.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::vmm::{AccessDesc, MemLocation};
    /// # use std::sync::Arc;
    /// # use ascend::Device;
    /// # use ascend::vmm::{PhysicalAlloc, PhysicalMemProp, VirtualRange, OwnedMapping};
    /// # let device = Device::new(0)?;
    /// # let prop = PhysicalMemProp::device(&device);
    /// # let granule = prop.round_up(1)?;
    /// # let range = Arc::new(VirtualRange::reserve(2 * granule)?);
    /// # let physical = Arc::new(PhysicalAlloc::new(&prop, granule)?);
    /// let mut mapping = OwnedMapping::new_no_access(range, 0, physical)?;
    /// assert!(!mapping.is_accessible());
    /// mapping.set_access(&[AccessDesc::read_write(MemLocation::Device(device.id()))])?;
    /// assert!(mapping.is_accessible());
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
    /// # use std::sync::Arc;
    /// # use ascend::Device;
    /// # use ascend::vmm::{PhysicalAlloc, PhysicalMemProp, VirtualRange, OwnedMapping};
    /// # let device = Device::new(0)?;
    /// # let prop = PhysicalMemProp::device(&device);
    /// # let granule = prop.round_up(1)?;
    /// # let range = Arc::new(VirtualRange::reserve(2 * granule)?);
    /// # let physical = Arc::new(PhysicalAlloc::new(&prop, granule)?);
    /// let mut mapping = OwnedMapping::new(range, 0, physical)?;
    /// mapping.set_access(&[AccessDesc::read_write(MemLocation::Host)])?;
    /// assert_eq!(mapping.access(MemLocation::Host)?, Some(Access::ReadWrite));
    /// assert!(mapping.set_access(&[]).is_err()); // nothing to grant
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn set_access(&mut self, grants: &[AccessDesc]) -> Result<()> {
        mapped::grant(self.address(), self.size(), grants)?;
        self.accessible = true;
        Ok(())
    }

    /// The access `location` has (`aclrtMemGetAccess`).
    ///
    /// # Errors
    ///
    /// The runtime's code.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::vmm::{Access, MemLocation};
    /// # use std::sync::Arc;
    /// # use ascend::Device;
    /// # use ascend::vmm::{PhysicalAlloc, PhysicalMemProp, VirtualRange, OwnedMapping};
    /// # let device = Device::new(0)?;
    /// # let prop = PhysicalMemProp::device(&device);
    /// # let granule = prop.round_up(1)?;
    /// # let range = Arc::new(VirtualRange::reserve(2 * granule)?);
    /// # let physical = Arc::new(PhysicalAlloc::new(&prop, granule)?);
    /// let mapping = OwnedMapping::new(range, 0, physical)?;
    /// assert_eq!(mapping.access(MemLocation::Device(device.id()))?, Some(Access::ReadWrite));
    /// assert_eq!(mapping.access(MemLocation::Host)?, None);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn access(&self, location: MemLocation) -> Result<Option<Access>> {
        mapped::access_of(self.address(), location)
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
    /// use std::sync::Arc;
    /// use ascend::Device;
    /// use ascend::vmm::{OwnedMapping, PhysicalAlloc, PhysicalMemProp, VirtualRange};
    /// let device = Device::new(0)?;
    /// let prop = PhysicalMemProp::device(&device);
    /// let granule = prop.round_up(1)?;
    /// let range = Arc::new(VirtualRange::reserve(2 * granule)?);
    /// let physical = Arc::new(PhysicalAlloc::new(&prop, granule)?);
    /// let mut mapping = OwnedMapping::new(range, 0, physical)?;
    /// mapping.as_mut_slice::<u16>()?.slice_mut(..2)?.write_from_host(&[1, 2])?;
    /// assert_eq!(mapping.as_slice::<u16>()?.slice(..2)?.to_vec()?, [1, 2]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn as_slice<T: Pod>(&self) -> Result<DeviceSlice<'_, T>> {
        let len = mapped::elements::<T>(Call::rust("OwnedMapping::as_slice"), self.address(), self.size())?;
        // SAFETY: the mapping holds `size` bytes at `address` while `self`
        // is borrowed.
        Ok(unsafe { DeviceSlice::from_raw_parts(self.address(), len, self.physical.physical().device()) })
    }

    /// An exclusive typed view of the mapping's bytes.
    ///
    /// # Errors
    ///
    /// As [`OwnedMapping::as_slice`].
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use ascend::Device;
    /// use ascend::vmm::{OwnedMapping, PhysicalAlloc, PhysicalMemProp, VirtualRange};
    /// let device = Device::new(0)?;
    /// let prop = PhysicalMemProp::device(&device);
    /// let granule = prop.round_up(1)?;
    /// let range = Arc::new(VirtualRange::reserve(2 * granule)?);
    /// let physical = Arc::new(PhysicalAlloc::new(&prop, granule)?);
    /// let mut mapping = OwnedMapping::new(range, 0, physical)?;
    /// mapping.as_mut_slice::<u16>()?.slice_mut(..2)?.write_from_host(&[1, 2])?;
    /// assert_eq!(mapping.as_slice::<u16>()?.slice(..2)?.to_vec()?, [1, 2]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn as_mut_slice<T: Pod>(&mut self) -> Result<DeviceSliceMut<'_, T>> {
        let len = mapped::elements::<T>(Call::rust("OwnedMapping::as_mut_slice"), self.address(), self.size())?;
        // SAFETY: as in `as_slice`; `&mut self` makes it unique among this
        // mapping's views, and the map slot makes this the only mapping of
        // the memory in the process.
        Ok(unsafe { DeviceSliceMut::from_raw_parts(self.address(), len, self.physical.physical().device()) })
    }

    /// Unmaps now and gives the physical memory back (the range share is
    /// dropped).
    ///
    /// # Errors
    ///
    /// [`UnmapError`] with the runtime's code and the mapping, which the
    /// runtime may still map: retry, or drop it (which retries once and
    /// then keeps the range and memory alive forever).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use ascend::Device;
    /// use ascend::vmm::{OwnedMapping, PhysicalAlloc, PhysicalMemProp, VirtualRange};
    /// let device = Device::new(0)?;
    /// let prop = PhysicalMemProp::device(&device);
    /// let granule = prop.round_up(1)?;
    /// let range = Arc::new(VirtualRange::reserve(2 * granule)?);
    /// let physical = Arc::new(PhysicalAlloc::new(&prop, granule)?);
    /// let mapping = OwnedMapping::new(Arc::clone(&range), 0, physical)?;
    /// // The physical memory comes back, and can be mapped elsewhere.
    /// let physical = mapping.unmap().map_err(|failed| failed.error)?;
    /// let _moved = OwnedMapping::new(range, granule, physical)?;
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn unmap(mut self) -> std::result::Result<Arc<P>, UnmapError<P>> {
        self.mapped = false;
        match mapped::unmap_at(&self.range, self.physical.physical(), self.offset) {
            Ok(()) => Ok(Arc::clone(&self.physical)),
            Err(error) => {
                self.mapped = true;
                Err(UnmapError { mapping: self, error })
            }
        }
    }
}

impl<P: Mappable> Drop for OwnedMapping<P> {
    fn drop(&mut self) {
        if !std::mem::replace(&mut self.mapped, false) {
            return;
        }
        if let Err(error) = mapped::unmap_at(&self.range, self.physical.physical(), self.offset) {
            log::warn!(
                "OwnedMapping drop: {error}; the range and the physical memory stay alive, since the runtime may still \
                 map them"
            );
            std::mem::forget(Arc::clone(&self.range));
            std::mem::forget(Arc::clone(&self.physical));
        }
    }
}

impl<P: Mappable> fmt::Debug for OwnedMapping<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OwnedMapping")
            .field("address", &self.address())
            .field("size", &self.size())
            .field("accessible", &self.accessible)
            .finish()
    }
}

impl<P: Mappable> fmt::Debug for UnmapError<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UnmapError")
            .field("mapping", &self.mapping)
            .field("error", &self.error)
            .finish()
    }
}

impl<P: Mappable> fmt::Display for UnmapError<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} (the mapping at {:?} is kept)",
            self.error,
            self.mapping.address()
        )
    }
}

impl<P: Mappable> std::error::Error for UnmapError<P> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.error)
    }
}

// SAFETY: the mapping's `size` bytes at `address` are device memory reached
// with its physical memory's device context; address, size and device never
// change; the mapping holds its range and memory, unmaps only when dropped
// or consumed by `unmap` (and a leaked mapping stays mapped forever); it is
// the only mapping of its memory in the process, and is written only
// through `&mut self`.
unsafe impl<P: Mappable> crate::memory::DeviceStorage for OwnedMapping<P> {
    fn device(&self) -> &crate::Device {
        self.physical.physical().device()
    }

    fn device_ptr(&self) -> *const c_void {
        self.address()
    }

    fn byte_len(&self) -> usize {
        self.size()
    }
}

// SAFETY: as above; exclusive access to the mapping is exclusive access to
// its bytes (no other mapping of the memory exists in the process).
unsafe impl<P: Mappable> crate::memory::DeviceStorageMut for OwnedMapping<P> {}

//! [`VirtualRange`]: reserved device addresses.

use super::granule;
use super::mapped::MappedRegion;
use super::physical::PhysicalAlloc;
use crate::Call;
use crate::error::{Error, Result, check};
use ascend_sys as sys;
use std::ffi::c_void;
use std::fmt;
use std::sync::Mutex;

/// Physical memory [`VirtualRange::map`] accepts: a [`PhysicalAlloc`] or an
/// [`ImportedAlloc`](crate::share::ImportedAlloc). Sealed: only this crate's
/// owners of a physical-memory handle implement it.
///
/// Code generic over where physical memory came from:
///
/// ```
/// use ascend::vmm::{Mappable, MappedRegion, VirtualRange};
/// # use ascend::Device;
/// # use ascend::vmm::{PhysicalAlloc, PhysicalMemProp};
/// # let device = Device::new(0)?;
/// # let prop = PhysicalMemProp::device(&device);
/// # let granule = prop.round_up(1)?;
/// /// Maps `physical` at the start of `range`, whoever allocated it.
/// fn map_at_start<'a, P: Mappable>(range: &'a VirtualRange, physical: &'a P) -> ascend::Result<MappedRegion<'a>> {
///     range.map(0, physical)
/// }
/// let range = VirtualRange::reserve(granule)?;
/// let physical = PhysicalAlloc::new(&prop, granule)?;
/// assert_eq!(map_at_start(&range, &physical)?.address(), range.base());
/// # Ok::<(), ascend::Error>(())
/// ```
pub trait Mappable: sealed::Sealed {}

pub(crate) mod sealed {
    /// The handle behind a [`Mappable`](super::Mappable) value.
    pub trait Sealed {
        /// The owned handle, borrowed for as long as the mapping lives.
        fn physical(&self) -> &super::PhysicalAlloc;
    }
}

impl Mappable for PhysicalAlloc {}

impl sealed::Sealed for PhysicalAlloc {
    fn physical(&self) -> &PhysicalAlloc {
        self
    }
}

/// A reserved range of device addresses (`aclrtReserveMemAddress` /
/// `aclrtReleaseMemAddress`). Physical memory is mapped into it with
/// [`VirtualRange::map`]; each mapping borrows the range, so the range can be
/// released only after every mapping is gone.
///
/// ```
/// use ascend::Device;
/// use ascend::vmm::{PhysicalAlloc, PhysicalMemProp, VirtualRange};
/// let device = Device::new(0)?;
/// let prop = PhysicalMemProp::device(&device);
/// let granule = prop.round_up(1)?;
/// let range = VirtualRange::reserve(2 * granule)?;
/// let physical = PhysicalAlloc::new(&prop, granule)?;
/// let mut region = range.map(granule, &physical)?;
/// region.as_mut_slice::<u32>()?.fill_bytes(0)?;
/// assert_eq!(region.as_slice::<u32>()?.slice(..4)?.to_vec()?, [0; 4]);
/// // Overlapping mappings are refused before any call...
/// let other = PhysicalAlloc::new(&prop, granule)?;
/// assert!(range.map(granule, &other).is_err());
/// // ...and so is a second mapping of the same memory.
/// assert!(range.map(0, &physical).is_err());
/// drop(region);
/// # Ok::<(), ascend::Error>(())
/// ```
///
/// **Threads:** `VirtualRange` is `Send` and `Sync`; mappings borrow it, so it
/// can be shared by reference (or owned through an `Arc` by
/// [`OwnedMapping`](crate::vmm::OwnedMapping)).
///
/// **Guide:** [Concepts: the VMM lifecycle in types](crate::guide::concepts);
/// error codes the software device picks: [Choices where the runtime is
/// silent](crate::guide::runtime_choices).
pub struct VirtualRange {
    base: usize,
    size: usize,
    released: bool,
    /// `(offset, len)` of the live mappings, for the overlap check.
    mapped: Mutex<Vec<(usize, usize)>>,
}

impl VirtualRange {
    /// Reserves `size` bytes of device addresses at an address the runtime
    /// picks. `size` should be a multiple of the granularity of what will be
    /// mapped.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`], before any call, when `size` is not a
    /// positive multiple of the granularity of huge-page device memory (the
    /// message names it); the runtime's code.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::Device;
    /// use ascend::vmm::{PhysicalAlloc, PhysicalMemProp, VirtualRange};
    /// let device = Device::new(0)?;
    /// let prop = PhysicalMemProp::device(&device);
    /// let granule = prop.round_up(1)?;
    /// let range = VirtualRange::reserve(4 * granule)?;
    /// assert_eq!(range.size(), 4 * granule);
    /// let physical = PhysicalAlloc::new(&prop, granule)?;
    /// let mut region = range.map(granule, &physical)?;
    /// region.as_mut_slice::<u8>()?.fill_bytes(1)?;
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtReserveMemAddress")]
    pub fn reserve(size: usize) -> Result<Self> {
        Self::reserve_inner(
            Call::new("VirtualRange::reserve", "aclrtReserveMemAddress"),
            size,
            std::ptr::null_mut(),
        )
    }

    /// Reserves `size` bytes at exactly `address` (`expectPtr`).
    ///
    /// # Errors
    ///
    /// As [`VirtualRange::reserve`]; the runtime refuses an address that is
    /// misaligned or in use.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::Device;
    /// use ascend::vmm::{PhysicalAlloc, PhysicalMemProp, VirtualRange};
    /// let device = Device::new(0)?;
    /// let prop = PhysicalMemProp::device(&device);
    /// let granule = prop.round_up(1)?;
    /// let first = VirtualRange::reserve(2 * granule)?;
    /// let wanted = first.base() as usize;
    /// first.release()?;
    /// // The same addresses again (for example, to restore a layout).
    /// let again = VirtualRange::reserve_at(2 * granule, wanted)?;
    /// assert_eq!(again.base() as usize, wanted);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtReserveMemAddress")]
    pub fn reserve_at(size: usize, address: usize) -> Result<Self> {
        const CALL: Call = Call::new("VirtualRange::reserve_at", "aclrtReserveMemAddress");
        if address == 0 {
            return Err(Error::invalid(CALL, "address 0 means \"anywhere\": use reserve"));
        }
        let granularity = granule::address_granularity()?;
        granule::require_aligned(CALL, "address", address, granularity)?;
        Self::reserve_inner(CALL, size, address as *mut c_void)
    }

    fn reserve_inner(call: Call, size: usize, expect: *mut c_void) -> Result<Self> {
        let granularity = granule::address_granularity()?;
        granule::require_size(call, size, granularity)?;
        let mut base = std::ptr::null_mut();
        // SAFETY: `base` is a valid out-pointer; `expect` is an address hint.
        check("aclrtReserveMemAddress", unsafe {
            sys::aclrtReserveMemAddress(&mut base, size, 0, expect, 0)
        })?;
        log::trace!("aclrtReserveMemAddress: {size} bytes at {base:p}");
        Ok(Self {
            base: base as usize,
            size,
            released: false,
            mapped: Mutex::new(Vec::new()),
        })
    }

    /// The first address.
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
    /// assert!((range.base() as usize).is_multiple_of(granule));
    /// # let physical = PhysicalAlloc::new(&prop, granule)?;
    /// let region = range.map(granule, &physical)?;
    /// assert_eq!(region.address() as usize, range.base() as usize + granule);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn base(&self) -> *mut c_void {
        self.base as *mut c_void
    }

    /// Size in bytes.
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
    /// assert_eq!(range.size(), 3 * granule);
    /// let physical = PhysicalAlloc::new(&prop, 2 * granule)?;
    /// assert!(range.map(2 * granule, &physical).is_err()); // would run past the end
    /// let _fits = range.map(granule, &physical)?;
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn size(&self) -> usize {
        self.size
    }

    /// Maps all of `physical` at `offset` bytes into the range, readable and
    /// writable by its owner (`aclrtMapMem`). `physical` is a
    /// [`PhysicalAlloc`] or an imported allocation ([`Mappable`]).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`], before any call, when `offset` is not a
    /// multiple of the physical allocation's granularity, the mapping would
    /// run past the end of the range, it overlaps a live mapping, or the
    /// physical memory is already mapped in this process (by any handle to
    /// it); the runtime's code.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::Device;
    /// use ascend::vmm::{PhysicalAlloc, PhysicalMemProp, VirtualRange};
    /// let device = Device::new(0)?;
    /// let prop = PhysicalMemProp::device(&device);
    /// let granule = prop.round_up(1)?;
    /// let range = VirtualRange::reserve(2 * granule)?;
    /// let (physical, other) = (PhysicalAlloc::new(&prop, granule)?, PhysicalAlloc::new(&prop, granule)?);
    /// let mut low = range.map(0, &physical)?;
    /// low.as_mut_slice::<u32>()?.slice_mut(..4)?.write_from_host(&[1, 2, 3, 4])?;
    /// assert_eq!(low.as_slice::<u32>()?.slice(..4)?.to_vec()?, [1, 2, 3, 4]);
    /// assert!(range.map(granule / 2, &other).is_err()); // not a multiple of the granularity
    /// assert!(range.map(0, &other).is_err()); // overlaps `low`
    /// let _high = range.map(granule, &other)?;
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtMapMem")]
    pub fn map<'a, P: Mappable>(&'a self, offset: usize, physical: &'a P) -> Result<MappedRegion<'a>> {
        let physical = sealed::Sealed::physical(physical);
        self.map_raw("VirtualRange::map", offset, physical, true)?;
        Ok(MappedRegion::new(self, physical, offset, true))
    }

    /// Maps `physical` at `offset` with no access
    /// (`aclrtMemMapNoAccess`): nothing may touch it until
    /// [`MappedRegion::set_access`].
    ///
    /// # Errors
    ///
    /// As [`VirtualRange::map`]; `Error::Unsupported` on a CANN without it.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::Device;
    /// use ascend::vmm::{AccessDesc, MemLocation, PhysicalAlloc, PhysicalMemProp, VirtualRange};
    /// let device = Device::new(0)?;
    /// let prop = PhysicalMemProp::device(&device);
    /// let granule = prop.round_up(1)?;
    /// let range = VirtualRange::reserve(granule)?;
    /// let physical = PhysicalAlloc::new(&prop, granule)?;
    /// let mut region = range.map_no_access(0, &physical)?;
    /// assert!(!region.is_accessible());
    /// region.set_access(&[AccessDesc::read_write(MemLocation::Device(device.id()))])?;
    /// region.as_mut_slice::<u8>()?.fill_bytes(0)?;
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtMemMapNoAccess")]
    pub fn map_no_access<'a, P: Mappable>(&'a self, offset: usize, physical: &'a P) -> Result<MappedRegion<'a>> {
        let physical = sealed::Sealed::physical(physical);
        self.map_raw("VirtualRange::map_no_access", offset, physical, false)?;
        Ok(MappedRegion::new(self, physical, offset, false))
    }

    /// Checks and maps `physical` at `offset`, recording the mapping in the
    /// range and taking the memory's map slot. The caller makes the value
    /// that unmaps it ([`super::mapped::unmap_at`]) exactly once.
    pub(super) fn map_raw(
        &self,
        method: &'static str,
        offset: usize,
        physical: &PhysicalAlloc,
        accessible: bool,
    ) -> Result<()> {
        let api = if accessible {
            "aclrtMapMem"
        } else {
            "aclrtMemMapNoAccess"
        };
        let call = Call::new(method, api);
        let size = physical.size();
        let granularity = physical.granularity();
        let end = offset
            .checked_add(size)
            .filter(|&end| end <= self.size)
            .ok_or_else(|| {
                Error::invalid(
                    call,
                    format!(
                        "{size} bytes at offset {offset:#x} run past the end of the {}-byte range",
                        self.size
                    ),
                )
            })?;
        // `offset < self.size` now, so `base + offset` is inside the range.
        granule::require_aligned(call, "offset", offset, granularity)?;
        granule::require_aligned(call, "address", self.base + offset, granularity)?;
        let mut mapped = self.mapped.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some((other, len)) = mapped.iter().find(|(start, len)| *start < end && offset < start + len) {
            return Err(Error::invalid(
                call,
                format!("offset {offset:#x}+{size:#x} overlaps the mapping at offset {other:#x}+{len:#x}"),
            ));
        }
        if !physical.slot().take() {
            return Err(Error::invalid(
                call,
                "this physical memory is already mapped in this process; a second mapping would \
                 alias its exclusive view (unmap the first, or map aliases through ascend_sys)",
            ));
        }
        let address = (self.base + offset) as *mut c_void;
        // SAFETY: a reserved address inside this range and a live handle;
        // the runtime validates the rest.
        let code = unsafe {
            if accessible {
                sys::aclrtMapMem(address, size, 0, physical.as_raw(), 0)
            } else {
                sys::aclrtMemMapNoAccess(address, size, 0, physical.as_raw(), 0)
            }
        };
        if let Err(error) = check(api, code) {
            physical.slot().give_back();
            return Err(error);
        }
        log::trace!("{api}: {size} bytes at {address:p} (offset {offset} of the range)");
        mapped.push((offset, size));
        Ok(())
    }

    /// Forgets the mapping at `offset` (called when a region is unmapped).
    pub(crate) fn forget(&self, offset: usize) {
        let mut mapped = self.mapped.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        mapped.retain(|(start, _)| *start != offset);
    }

    /// Releases the range now, reporting a failure.
    ///
    /// # Errors
    ///
    /// The runtime's code from `aclrtReleaseMemAddress`.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::Device;
    /// use ascend::vmm::{PhysicalAlloc, PhysicalMemProp, VirtualRange};
    /// let device = Device::new(0)?;
    /// let prop = PhysicalMemProp::device(&device);
    /// let granule = prop.round_up(1)?;
    /// let range = VirtualRange::reserve(granule)?;
    /// {
    ///     let physical = PhysicalAlloc::new(&prop, granule)?;
    ///     let _mapping = range.map(0, &physical)?;
    /// } // mappings borrow the range: they end before it can be released
    /// range.release()?; // reports a failure, which a drop could only log
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtReleaseMemAddress")]
    pub fn release(mut self) -> Result<()> {
        self.release_inner()
    }

    fn release_inner(&mut self) -> Result<()> {
        if std::mem::replace(&mut self.released, true) {
            return Ok(());
        }
        // SAFETY: the base of a live reservation, released once; no mapping
        // remains (each borrows `self`).
        check("aclrtReleaseMemAddress", unsafe {
            sys::aclrtReleaseMemAddress(self.base())
        })?;
        log::trace!("aclrtReleaseMemAddress: {:p}", self.base());
        Ok(())
    }
}

impl Drop for VirtualRange {
    fn drop(&mut self) {
        if let Err(error) = self.release_inner() {
            log::warn!("VirtualRange drop: {error}");
        }
    }
}

impl fmt::Debug for VirtualRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("VirtualRange")
            .field("base", &self.base())
            .field("size", &self.size)
            .finish()
    }
}

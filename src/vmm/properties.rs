//! Typed physical-memory properties: where memory lives and which pages.
//! Where ([`MemLocation`]) is defined in `memory`, below this module: a
//! pointer's attributes report it too.

use crate::Call;
use crate::Device;
use crate::error::{Error, Result, check};
use crate::memory::MemLocation;
use ascend_sys as sys;

/// Page size and reachability of physical memory (`aclrtMemAttr`).
///
/// The runtime picks DDR or HBM from the location for the `ACL_MEM_*`
/// attributes this type offers; use [`MemAttr::from_raw`] for the older
/// `ACL_DDR_MEM_*` / `ACL_HBM_MEM_*` values.
///
/// ```
/// use ascend::vmm::{Granularity, MemAttr, PhysicalAlloc, PhysicalMemProp};
/// # use ascend::Device;
/// # let device = Device::new(0)?;
/// let normal = PhysicalMemProp::device(&device).with_attr(MemAttr::NORMAL);
/// assert_eq!(normal.attr(), MemAttr::NORMAL);
/// let physical = PhysicalAlloc::new(&normal, normal.granularity(Granularity::Minimum)?)?;
/// assert_eq!(physical.prop().attr(), MemAttr::NORMAL);
/// # Ok::<(), ascend::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MemAttr(sys::aclrtMemAttr);

impl MemAttr {
    /// Normal pages (`ACL_MEM_NORMAL`).
    pub const NORMAL: Self = Self(sys::ACL_MEM_NORMAL);
    /// 2 MiB huge pages (`ACL_MEM_HUGE`).
    pub const HUGE: Self = Self(sys::ACL_MEM_HUGE);
    /// 1 GiB pages (`ACL_MEM_HUGE1G`), device memory only: at a host
    /// location the software device refuses them with
    /// `ACL_ERROR_RT_FEATURE_NOT_SUPPORT`.
    pub const GIANT: Self = Self(sys::ACL_MEM_HUGE1G);
    /// Normal pages reachable by peers (`ACL_MEM_P2P_NORMAL`).
    pub const P2P_NORMAL: Self = Self(sys::ACL_MEM_P2P_NORMAL);
    /// Huge pages reachable by peers (`ACL_MEM_P2P_HUGE`).
    pub const P2P_HUGE: Self = Self(sys::ACL_MEM_P2P_HUGE);
    /// 1 GiB pages reachable by peers (`ACL_MEM_P2P_HUGE1G`).
    pub const P2P_GIANT: Self = Self(sys::ACL_MEM_P2P_HUGE1G);

    /// Any C value; the runtime validates it.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::sys;
    /// use ascend::vmm::{MemAttr, PhysicalAlloc, PhysicalMemProp};
    /// # use ascend::Device;
    /// # let device = Device::new(0)?;
    /// assert_eq!(MemAttr::from_raw(sys::ACL_MEM_HUGE), MemAttr::HUGE);
    /// // An older attribute that names the memory kind itself.
    /// let hbm = PhysicalMemProp::device(&device).with_attr(MemAttr::from_raw(sys::ACL_HBM_MEM_HUGE));
    /// let physical = PhysicalAlloc::new(&hbm, hbm.round_up(1)?)?;
    /// assert_eq!(physical.prop().attr().raw(), sys::ACL_HBM_MEM_HUGE);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn from_raw(raw: sys::aclrtMemAttr) -> Self {
        Self(raw)
    }

    /// The C value.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::sys;
    /// use ascend::vmm::MemAttr;
    /// assert_eq!(MemAttr::HUGE.raw(), sys::ACL_MEM_HUGE);
    /// assert_eq!(MemAttr::from_raw(MemAttr::P2P_NORMAL.raw()), MemAttr::P2P_NORMAL);
    /// ```
    pub fn raw(self) -> sys::aclrtMemAttr {
        self.0
    }
}

/// Which granularity to ask for.
///
/// ```
/// use ascend::vmm::{Granularity, PhysicalMemProp};
/// # use ascend::Device;
/// # let device = Device::new(0)?;
/// let prop = PhysicalMemProp::device(&device);
/// let minimum = prop.granularity(Granularity::Minimum)?;
/// let recommended = prop.granularity(Granularity::Recommended)?;
/// assert!(recommended >= minimum && recommended.is_multiple_of(minimum));
/// # Ok::<(), ascend::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Granularity {
    /// The smallest size and alignment the runtime accepts.
    Minimum,
    /// The size and alignment the runtime recommends for performance.
    Recommended,
}

/// The properties of a physical allocation (`aclrtPhysicalMemProp`).
///
/// ```
/// use ascend::Device;
/// use ascend::vmm::{Granularity, MemAttr, PhysicalMemProp};
/// let device = Device::new(0)?;
/// let prop = PhysicalMemProp::device(&device);
/// let granule = prop.granularity(Granularity::Minimum)?;
/// assert!(granule.is_power_of_two());
/// let giant = prop.with_attr(MemAttr::GIANT);
/// assert!(giant.granularity(Granularity::Minimum)? >= granule);
/// # Ok::<(), ascend::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PhysicalMemProp {
    location: MemLocation,
    attr: MemAttr,
}

impl PhysicalMemProp {
    /// Huge-page memory on `device`, the common case.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::vmm::{MemAttr, MemLocation, PhysicalMemProp};
    /// # use ascend::Device;
    /// # let device = Device::new(0)?;
    /// let prop = PhysicalMemProp::device(&device);
    /// assert_eq!((prop.location(), prop.attr()), (MemLocation::Device(device.id()), MemAttr::HUGE));
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[must_use]
    pub fn device(device: &Device) -> Self {
        Self {
            location: MemLocation::Device(device.id()),
            attr: MemAttr::HUGE,
        }
    }

    /// Huge-page host memory (mappable into device address ranges).
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::vmm::{PhysicalAlloc, PhysicalMemProp, VirtualRange};
    /// let prop = PhysicalMemProp::host();
    /// let size = prop.round_up(1)?;
    /// let (range, physical) = (VirtualRange::reserve(size)?, PhysicalAlloc::new(&prop, size)?);
    /// let mut region = range.map(0, &physical)?; // host memory at device addresses
    /// region.as_mut_slice::<u8>()?.fill_bytes(9)?;
    /// assert_eq!(region.as_slice::<u8>()?.slice(..2)?.to_vec()?, [9, 9]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[must_use]
    pub fn host() -> Self {
        Self {
            location: MemLocation::Host,
            attr: MemAttr::HUGE,
        }
    }

    /// Memory at `location` with `attr`.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::vmm::{MemAttr, MemLocation, PhysicalMemProp};
    /// # use ascend::Device;
    /// # let device = Device::new(0)?;
    /// let prop = PhysicalMemProp::new(MemLocation::Device(device.id()), MemAttr::HUGE);
    /// assert_eq!(prop, PhysicalMemProp::device(&device));
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn new(location: MemLocation, attr: MemAttr) -> Self {
        Self { location, attr }
    }

    /// The same location with another attribute.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::vmm::{MemAttr, PhysicalMemProp};
    /// # use ascend::Device;
    /// # let device = Device::new(0)?;
    /// let prop = PhysicalMemProp::device(&device);
    /// let peer = prop.with_attr(MemAttr::P2P_HUGE);
    /// assert_eq!((peer.location(), peer.attr()), (prop.location(), MemAttr::P2P_HUGE));
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[must_use]
    pub fn with_attr(self, attr: MemAttr) -> Self {
        Self { attr, ..self }
    }

    /// Where the memory lives.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::vmm::{MemLocation, PhysicalMemProp};
    /// # use ascend::Device;
    /// # let device = Device::new(0)?;
    /// assert_eq!(PhysicalMemProp::device(&device).location(), MemLocation::Device(device.id()));
    /// assert_eq!(PhysicalMemProp::host().location(), MemLocation::Host);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn location(&self) -> MemLocation {
        self.location
    }

    /// The memory attribute.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::vmm::{MemAttr, PhysicalMemProp};
    /// assert_eq!(PhysicalMemProp::host().attr(), MemAttr::HUGE);
    /// assert_eq!(PhysicalMemProp::host().with_attr(MemAttr::NORMAL).attr(), MemAttr::NORMAL);
    /// ```
    pub fn attr(&self) -> MemAttr {
        self.attr
    }

    /// The C struct (handle type NONE, allocation type PINNED).
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::sys;
    /// use ascend::vmm::PhysicalMemProp;
    /// # use ascend::Device;
    /// # let device = Device::new(0)?;
    /// let prop = PhysicalMemProp::device(&device);
    /// let raw = prop.raw();
    /// assert_eq!(raw.allocationType, sys::ACL_MEM_ALLOCATION_TYPE_PINNED);
    /// assert_eq!((raw.memAttr, raw.location.id), (prop.attr().raw(), device.id() as u32));
    /// assert_eq!(PhysicalMemProp::from_raw(&raw)?, prop);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn raw(&self) -> sys::aclrtPhysicalMemProp {
        sys::aclrtPhysicalMemProp {
            handleType: sys::ACL_MEM_HANDLE_TYPE_NONE,
            allocationType: sys::ACL_MEM_ALLOCATION_TYPE_PINNED,
            memAttr: self.attr.raw(),
            location: self.location.raw(),
            reserve: 0,
        }
    }

    /// The properties a C struct describes.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for a location type this crate does not
    /// model.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::sys;
    /// use ascend::vmm::PhysicalMemProp;
    /// let mut raw = PhysicalMemProp::host().raw();
    /// assert_eq!(PhysicalMemProp::from_raw(&raw)?, PhysicalMemProp::host());
    /// raw.location.type_ = sys::ACL_MEM_LOCATION_TYPE_UNREGISTERED;
    /// assert!(matches!(PhysicalMemProp::from_raw(&raw), Err(ascend::Error::InvalidArgument { .. })));
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn from_raw(raw: &sys::aclrtPhysicalMemProp) -> Result<Self> {
        let location = MemLocation::from_raw(raw.location).ok_or_else(|| {
            Error::invalid(
                Call::rust("PhysicalMemProp::from_raw"),
                format!("location type {}", raw.location.type_),
            )
        })?;
        Ok(Self {
            location,
            attr: MemAttr(raw.memAttr),
        })
    }

    /// The allocation granularity for these properties
    /// (`aclrtMemGetAllocationGranularity`): sizes of physical allocations
    /// and addresses of mappings must be multiples of it.
    ///
    /// # Errors
    ///
    /// The runtime's code for properties it refuses.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::vmm::{Granularity, PhysicalAlloc, PhysicalMemProp};
    /// # use ascend::Device;
    /// # let device = Device::new(0)?;
    /// let prop = PhysicalMemProp::device(&device);
    /// let granule = prop.granularity(Granularity::Minimum)?;
    /// assert!(granule.is_power_of_two());
    /// assert!(PhysicalAlloc::new(&prop, granule / 2).is_err()); // not a multiple
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtMemGetAllocationGranularity")]
    pub fn granularity(&self, which: Granularity) -> Result<usize> {
        crate::backend()?;
        let mut raw = self.raw();
        let option = match which {
            Granularity::Minimum => sys::ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM,
            Granularity::Recommended => sys::ACL_RT_MEM_ALLOC_GRANULARITY_RECOMMENDED,
        };
        let mut value = 0;
        // SAFETY: `raw` and `value` are valid for the call.
        check("aclrtMemGetAllocationGranularity", unsafe {
            sys::aclrtMemGetAllocationGranularity(&mut raw, option, &mut value)
        })?;
        Ok(value)
    }

    /// `size` rounded up to the minimum granularity.
    ///
    /// # Errors
    ///
    /// As [`PhysicalMemProp::granularity`], or [`Error::InvalidArgument`]
    /// when the rounded size overflows.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::vmm::{Granularity, PhysicalMemProp};
    /// # use ascend::Device;
    /// # let device = Device::new(0)?;
    /// let prop = PhysicalMemProp::device(&device);
    /// let granule = prop.granularity(Granularity::Minimum)?;
    /// assert_eq!(prop.round_up(1)?, granule);
    /// assert_eq!(prop.round_up(granule)?, granule);
    /// assert_eq!(prop.round_up(granule + 1)?, 2 * granule);
    /// assert!(prop.round_up(usize::MAX).is_err()); // overflows
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtMemGetAllocationGranularity")]
    pub fn round_up(&self, size: usize) -> Result<usize> {
        let granule = self.granularity(Granularity::Minimum)?;
        size.checked_next_multiple_of(granule)
            .ok_or_else(|| Error::invalid(Call::rust("PhysicalMemProp::round_up"), format!("{size} overflows")))
    }
}

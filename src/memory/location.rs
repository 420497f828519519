//! [`MemLocation`]: where memory lives (`aclrtMemLocation`), a device, the
//! host or a host NUMA node.
//!
//! It is public as `ascend::vmm::MemLocation` (physical-memory properties
//! and access grants name it); it is defined here, below `vmm`, because
//! [`pointer_attributes`](super::pointer_attributes) reports it too.

use ascend_sys as sys;

/// Where physical memory lives (`aclrtMemLocation`).
///
/// ```
/// use ascend::vmm::{MemLocation, PhysicalMemProp};
/// # use ascend::Device;
/// # let device = Device::new(0)?;
/// let on_device = PhysicalMemProp::device(&device).location();
/// let context = match on_device {
///     MemLocation::Device(id) => id,
///     MemLocation::Host | MemLocation::HostNuma(_) => 0,
///     _ => unreachable!("a location this example does not know"),
/// };
/// assert_eq!(context, device.id());
/// assert_eq!(PhysicalMemProp::host().location(), MemLocation::Host);
/// # Ok::<(), ascend::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum MemLocation {
    /// Device memory of the device with this id.
    Device(i32),
    /// Host memory.
    Host,
    /// Host memory on the NUMA node with this id.
    HostNuma(u32),
}

impl MemLocation {
    /// The C struct.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::sys;
    /// use ascend::vmm::MemLocation;
    /// let raw = MemLocation::Device(1).raw();
    /// assert_eq!((raw.type_, raw.id), (sys::ACL_MEM_LOCATION_TYPE_DEVICE, 1));
    /// assert_eq!(MemLocation::HostNuma(3).raw().type_, sys::ACL_MEM_LOCATION_TYPE_HOST_NUMA);
    /// ```
    pub fn raw(self) -> sys::aclrtMemLocation {
        match self {
            MemLocation::Device(id) => sys::aclrtMemLocation {
                id: id as u32,
                type_: sys::ACL_MEM_LOCATION_TYPE_DEVICE,
            },
            MemLocation::Host => sys::aclrtMemLocation {
                id: 0,
                type_: sys::ACL_MEM_LOCATION_TYPE_HOST,
            },
            MemLocation::HostNuma(node) => sys::aclrtMemLocation {
                id: node,
                type_: sys::ACL_MEM_LOCATION_TYPE_HOST_NUMA,
            },
        }
    }

    /// The location a C struct names, or `None` for a type this crate does
    /// not model (`UNREGISTERED`, `MANAGED`, unknown values).
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::sys;
    /// use ascend::vmm::MemLocation;
    /// assert_eq!(MemLocation::from_raw(MemLocation::Host.raw()), Some(MemLocation::Host));
    /// let managed = sys::aclrtMemLocation { id: 0, type_: sys::ACL_MEM_LOCATION_TYPE_MANAGED };
    /// assert_eq!(MemLocation::from_raw(managed), None);
    /// ```
    pub fn from_raw(raw: sys::aclrtMemLocation) -> Option<Self> {
        match raw.type_ {
            sys::ACL_MEM_LOCATION_TYPE_DEVICE => Some(MemLocation::Device(raw.id as i32)),
            sys::ACL_MEM_LOCATION_TYPE_HOST => Some(MemLocation::Host),
            sys::ACL_MEM_LOCATION_TYPE_HOST_NUMA => Some(MemLocation::HostNuma(raw.id)),
            _ => None,
        }
    }
}

//! [`HostRegisterType`] (V1) and [`HostRegisterFlags`] (V2): how host memory
//! is registered.

use ascend_sys as sys;

/// How `aclrtHostRegister` (V1) registers memory (`aclrtHostRegisterType`).
///
/// A V1 registration is always mapped: it returns a device pointer.
///
/// ```
/// use ascend::Device;
/// use ascend::host_register::{AlignedHostBuf, HostRegisterType, HostRegistration};
/// let device = Device::new(0)?;
/// let mut buf = AlignedHostBuf::<u8>::zeroed(4096)?;
/// let registration = HostRegistration::register(&device, &mut buf, HostRegisterType::default())?;
/// assert_eq!(registration.register_type(), Some(HostRegisterType::Mapped));
/// assert!(registration.registered_pointer().is_some()); // V1 always maps
/// # Ok::<(), ascend::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum HostRegisterType {
    /// Map the memory into the device's address space
    /// (`ACL_HOST_REGISTER_MAPPED`).
    #[default]
    Mapped,
    /// `ACL_HOST_REGISTER_IOMEMORY` — reserved by the documentation (not
    /// supported by current runtimes).
    IoMemory,
    /// `ACL_HOST_REGISTER_READONLY` — reserved by the documentation (not
    /// supported by current runtimes).
    ReadOnly,
}

impl HostRegisterType {
    /// The C value.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::host_register::HostRegisterType;
    /// use ascend::sys;
    /// assert_eq!(HostRegisterType::Mapped.raw(), sys::ACL_HOST_REGISTER_MAPPED);
    /// assert_eq!(HostRegisterType::ReadOnly.raw(), sys::ACL_HOST_REGISTER_READONLY);
    /// // The V1 value is not the V2 flag of the same name.
    /// assert_ne!(HostRegisterType::Mapped.raw(), sys::ACL_HOST_REG_MAPPED);
    /// ```
    pub fn raw(self) -> sys::aclrtHostRegisterType {
        match self {
            HostRegisterType::Mapped => sys::ACL_HOST_REGISTER_MAPPED,
            HostRegisterType::IoMemory => sys::ACL_HOST_REGISTER_IOMEMORY,
            HostRegisterType::ReadOnly => sys::ACL_HOST_REGISTER_READONLY,
        }
    }
}

bitflags::bitflags! {
    /// The flags of `aclrtHostRegisterV2` (the `ACL_HOST_REG_*` macros; note
    /// that `MAPPED` is `0x2` here, not the V1 enum's `0`). At least one
    /// flag must be set.
    ///
    /// ```
    /// use ascend::host_register::HostRegisterFlags;
    /// let flags = HostRegisterFlags::MAPPED | HostRegisterFlags::PINNED;
    /// assert_eq!(flags.bits(), 0x1000_0002);
    /// ```
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    pub struct HostRegisterFlags: u32 {
        /// Map the memory into the device's address space: the registration
        /// has a device pointer ([`HostRegistration::device_pointer`](super::HostRegistration::device_pointer)).
        const MAPPED = sys::ACL_HOST_REG_MAPPED;
        /// Reserved by the documentation (`ACL_HOST_REG_IOMEMORY`).
        const IOMEMORY = sys::ACL_HOST_REG_IOMEMORY;
        /// Reserved by the documentation (`ACL_HOST_REG_READONLY`).
        const READONLY = sys::ACL_HOST_REG_READONLY;
        /// Page-lock pageable memory (`ACL_HOST_REG_PINNED`); alone it gives
        /// no device pointer. Refused for memory that is already page-locked
        /// (from `aclrtMallocHost`).
        const PINNED = sys::ACL_HOST_REG_PINNED;
    }
}

//! [`DevicePointer`]: the device-side address of registered host memory.

use std::ffi::c_void;
use std::fmt;
use std::marker::PhantomData;
use std::ptr::NonNull;

/// The device address of a mapped host registration
/// (`aclrtHostGetDevicePointer`), valid while the registration it came from
/// lives (the lifetime `'r` borrows it).
///
/// It is an opaque address for **device code only**: the runtime documents
/// that such pointers cannot be used for memory copies or sets, so this type
/// offers none. Hand [`DevicePointer::as_raw`] to a kernel; the host side of
/// the memory is reached through the registration itself.
///
/// ```
/// use ascend::Device;
/// use ascend::host_register::{AlignedHostBuf, HostRegisterType, HostRegistration};
/// let device = Device::new(0)?;
/// let mut buf = AlignedHostBuf::<u32>::zeroed(1024)?;
/// let registration = HostRegistration::register(&device, &mut buf, HostRegisterType::Mapped)?;
/// let pointer = registration.device_pointer()?;
/// assert_eq!(pointer.byte_len(), 4096);
/// // The runtime gives the same address as at registration.
/// assert_eq!(registration.registered_pointer(), Some(pointer));
/// # Ok::<(), ascend::Error>(())
/// ```
///
/// **Threads:** `DevicePointer` is `Send` and `Sync`.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct DevicePointer<'r> {
    raw: NonNull<c_void>,
    byte_len: usize,
    _registration: PhantomData<&'r ()>,
}

// SAFETY: an address value; this crate never dereferences it.
unsafe impl Send for DevicePointer<'_> {}
// SAFETY: as above.
unsafe impl Sync for DevicePointer<'_> {}

impl DevicePointer<'_> {
    pub(crate) fn new(raw: NonNull<c_void>, byte_len: usize) -> Self {
        Self {
            raw,
            byte_len,
            _registration: PhantomData,
        }
    }

    /// The raw device address, for device code. It must not be passed to
    /// copy or set functions, and not be used after the registration ends.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::Device;
    /// use ascend::host_register::{AlignedHostBuf, HostRegisterFlags, HostRegistration};
    /// let device = Device::new(0)?;
    /// let mut buf = AlignedHostBuf::<u8>::zeroed(4096)?;
    /// let registration = HostRegistration::register_v2(&device, &mut buf, HostRegisterFlags::MAPPED)?;
    /// let raw = registration.device_pointer()?.as_raw(); // for a kernel's argument list
    /// assert!(!raw.is_null());
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn as_raw(&self) -> *mut c_void {
        self.raw.as_ptr()
    }

    /// The address as an integer.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::Device;
    /// use ascend::host_register::{AlignedHostBuf, HostRegisterType, HostRegistration};
    /// let device = Device::new(0)?;
    /// let mut buf = AlignedHostBuf::<u8>::zeroed(4096)?;
    /// let registration = HostRegistration::register(&device, &mut buf, HostRegisterType::Mapped)?;
    /// let pointer = registration.device_pointer()?;
    /// assert_eq!(pointer.addr(), pointer.as_raw() as usize);
    /// println!("device address {:#x}", pointer.addr());
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn addr(&self) -> usize {
        self.raw.as_ptr() as usize
    }

    /// Bytes registered behind this address.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::Device;
    /// use ascend::host_register::{AlignedHostBuf, HostRegisterFlags, HostRegistration};
    /// let device = Device::new(0)?;
    /// let mut buf = AlignedHostBuf::<u64>::zeroed(1000)?;
    /// let registration = HostRegistration::register_v2(&device, &mut buf, HostRegisterFlags::MAPPED)?;
    /// assert_eq!(registration.device_pointer()?.byte_len(), 8000);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn byte_len(&self) -> usize {
        self.byte_len
    }
}

impl fmt::Debug for DevicePointer<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DevicePointer({:#x}, {} bytes)", self.addr(), self.byte_len)
    }
}

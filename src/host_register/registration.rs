//! [`HostRegistration`]: borrowed host memory registered with the device.

use super::HOST_REGISTER_ALIGN;
use super::device_pointer::DevicePointer;
use super::flags::{HostRegisterFlags, HostRegisterType};
use crate::Device;
use crate::error::{Call, Error, Result, check};
use ascend_sys as sys;
use bytemuck::Pod;
use std::ffi::c_void;
use std::fmt;
use std::marker::PhantomData;
use std::ptr::NonNull;

/// How a registration was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    V1(HostRegisterType),
    V2(HostRegisterFlags),
}

/// Host memory registered with the device (`aclrtHostRegister` or
/// `aclrtHostRegisterV2`), borrowed mutably for `'a`; dropping it (or
/// [`HostRegistration::unregister`]) unregisters (`aclrtHostUnregister`).
///
/// **Element types:** any [`Pod`](bytemuck::Pod) type (plain bytes, every
/// bit pattern valid). For a struct of your own, derive it through the
/// SDK's re-export, with no `bytemuck` dependency of your own:
/// `#[derive(Clone, Copy, ascend::bytemuck::Pod, ascend::bytemuck::Zeroable)]`,
/// `#[bytemuck(crate = "ascend::bytemuck")]`, `#[repr(C)]` (runnable example:
/// [`crate::bytemuck`]).
///
/// While it lives the memory cannot be freed, moved or used except through
/// [`HostRegistration::as_slice`] / [`HostRegistration::as_mut_slice`]:
/// device code may write it through the device pointer of a mapped
/// registration, so the borrow is exclusive (see the
/// [module documentation](super)). Element types are [`Pod`], since the
/// device may store any bytes there.
///
/// ```
/// use ascend::{Device, DeviceBuf};
/// use ascend::host_register::{AlignedHostBuf, HostRegisterFlags, HostRegistration};
/// let device = Device::new(0)?;
/// let mut buf = AlignedHostBuf::<f32>::from_slice(&[1.0, 2.0, 3.0])?;
/// let mut registration = HostRegistration::register_v2(&device, &mut buf, HostRegisterFlags::MAPPED)?;
/// registration.as_mut_slice()[0] = 5.0;
/// // The host side stays ordinary host memory for copies:
/// let on_device = DeviceBuf::from_slice(&device, registration.as_slice())?;
/// assert_eq!(on_device.to_vec()?, [5.0, 2.0, 3.0]);
/// drop(registration);
/// assert_eq!(buf[0], 5.0);
/// # Ok::<(), ascend::Error>(())
/// ```
///
/// **Threads:** `HostRegistration<'a, T>` is `Send` when `T` is `Send` and
/// `Sync` when `T` is `Sync`, like the `&'a mut [T]` it holds.
///
/// **Guide:** [Concepts: memory kinds](crate::guide::concepts).
pub struct HostRegistration<'a, T = u8> {
    host: NonNull<T>,
    len: usize,
    device: Device,
    kind: Kind,
    /// The device pointer `aclrtHostRegister` (V1) returned.
    registered_pointer: Option<NonNull<c_void>>,
    registered: bool,
    _host: PhantomData<&'a mut [T]>,
}

// SAFETY: the registration stands for a `&'a mut [T]` (sendable when `T`
// is) and a device id; unregistering works from any thread once the
// device is made current there.
unsafe impl<T: Pod + Send> Send for HostRegistration<'_, T> {}
// SAFETY: shared access gives only `&[T]` and queries.
unsafe impl<T: Pod + Sync> Sync for HostRegistration<'_, T> {}

/// The byte size of `host`, refused when it cannot be registered: empty, or
/// not starting on a 4 KiB boundary.
fn checked_range<T>(call: Call, host: &[T]) -> Result<(u64, usize)> {
    let bytes = size_of_val(host);
    if bytes == 0 {
        return Err(Error::invalid(
            call,
            "the host memory is empty: at least one byte must be registered",
        ));
    }
    let address = host.as_ptr() as usize;
    if !address.is_multiple_of(HOST_REGISTER_ALIGN) {
        return Err(Error::invalid(
            call,
            format!(
                "the host pointer {address:#x} is not aligned to 4 KiB ({HOST_REGISTER_ALIGN} bytes), as the runtime requires; allocate it with AlignedHostBuf"
            ),
        ));
    }
    let size = u64::try_from(bytes).map_err(|_| Error::invalid(call, format!("{bytes} bytes do not fit in u64")))?;
    Ok((size, bytes))
}

impl<'a, T: Pod> HostRegistration<'a, T> {
    /// Registers `host` with `device` through `aclrtHostRegister` (V1),
    /// which maps it and returns its device pointer
    /// ([`HostRegistration::registered_pointer`]).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when `host` is empty or not 4 KiB-aligned;
    /// the runtime's code, e.g. `ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED`
    /// (507910) when the range overlaps a registered one, or
    /// `ACL_ERROR_RT_FEATURE_NOT_SUPPORT` on chips without host
    /// registration. The reserved types pass the runtime's own check; the
    /// driver decides about them.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::Device;
    /// use ascend::host_register::{AlignedHostBuf, HostRegisterType, HostRegistration};
    /// let device = Device::new(0)?;
    /// let mut buf = AlignedHostBuf::<u32>::zeroed(2048)?;
    /// let registration = HostRegistration::register(&device, &mut buf, HostRegisterType::Mapped)?;
    /// assert!(registration.registered_pointer().is_some());
    /// drop(registration); // aclrtHostUnregister
    /// // Memory that does not start on a 4 KiB boundary is refused.
    /// let error = HostRegistration::register(&device, &mut buf[1..], HostRegisterType::Mapped).unwrap_err();
    /// assert!(matches!(error, ascend::Error::InvalidArgument { .. }));
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtHostRegister")]
    pub fn register(device: &Device, host: &'a mut [T], kind: HostRegisterType) -> Result<Self> {
        const API: &str = "aclrtHostRegister";
        let (size, _) = checked_range(Call::new("HostRegistration::register", API), host)?;
        device.make_current()?;
        let mut device_pointer = std::ptr::null_mut();
        // SAFETY: `host` is `size` bytes of live, exclusively borrowed host
        // memory, and stays so for `'a` (the registration holds the borrow
        // and unregisters before it ends); `device_pointer` is a valid
        // out-pointer.
        check(API, unsafe {
            sys::aclrtHostRegister(host.as_mut_ptr().cast(), size, kind.raw(), &mut device_pointer)
        })?;
        let mut registration = Self::new(device, host, Kind::V1(kind));
        registration.registered_pointer = NonNull::new(device_pointer);
        Ok(registration)
    }

    /// Registers `host` with `device` through `aclrtHostRegisterV2` with
    /// `flags` (`MAPPED` for a device pointer, `PINNED` to page-lock, or
    /// both).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when `host` is empty or not 4 KiB-aligned,
    /// or `flags` is empty; the runtime's code, e.g.
    /// `ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED` (507910) when the range
    /// overlaps a registered one.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::Device;
    /// use ascend::host_register::{AlignedHostBuf, HostRegisterFlags, HostRegistration};
    /// let device = Device::new(0)?;
    /// let mut buf = AlignedHostBuf::<u8>::zeroed(8192)?;
    /// let flags = HostRegisterFlags::MAPPED | HostRegisterFlags::PINNED;
    /// let registration = HostRegistration::register_v2(&device, &mut buf, flags)?;
    /// assert_eq!(registration.flags(), Some(flags));
    /// registration.unregister()?;
    /// // At least one flag is needed.
    /// let error = HostRegistration::register_v2(&device, &mut buf, HostRegisterFlags::empty()).unwrap_err();
    /// assert!(matches!(error, ascend::Error::InvalidArgument { .. }));
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtHostRegisterV2")]
    pub fn register_v2(device: &Device, host: &'a mut [T], flags: HostRegisterFlags) -> Result<Self> {
        const API: &str = "aclrtHostRegisterV2";
        if flags.is_empty() {
            return Err(Error::invalid(
                Call::new("HostRegistration::register_v2", API),
                "no flag given: set MAPPED, PINNED or both",
            ));
        }
        let (size, _) = checked_range(Call::new("HostRegistration::register_v2", API), host)?;
        device.make_current()?;
        // SAFETY: as in `register`.
        check(API, unsafe {
            sys::aclrtHostRegisterV2(host.as_mut_ptr().cast(), size, flags.bits())
        })?;
        Ok(Self::new(device, host, Kind::V2(flags)))
    }

    fn new(device: &Device, host: &'a mut [T], kind: Kind) -> Self {
        let len = host.len();
        Self {
            host: NonNull::from(host).cast(),
            len,
            device: device.clone(),
            kind,
            registered_pointer: None,
            registered: true,
            _host: PhantomData,
        }
    }

    /// The device pointer of this registration, asked of the runtime
    /// (`aclrtHostGetDevicePointer`). Only mapped registrations have one.
    ///
    /// # Errors
    ///
    /// The runtime's code: `ACL_ERROR_RT_PARAM_INVALID` for a registration
    /// without a mapping (`PINNED` alone).
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::Device;
    /// use ascend::host_register::{AlignedHostBuf, HostRegisterFlags, HostRegistration};
    /// let device = Device::new(0)?;
    /// let mut buf = AlignedHostBuf::<u8>::zeroed(4096)?;
    /// let mapped = HostRegistration::register_v2(&device, &mut buf, HostRegisterFlags::MAPPED)?;
    /// assert_eq!(mapped.device_pointer()?.byte_len(), 4096);
    /// drop(mapped);
    /// // Page-locked only: no device address.
    /// let pinned = HostRegistration::register_v2(&device, &mut buf, HostRegisterFlags::PINNED)?;
    /// let error = pinned.device_pointer().unwrap_err();
    /// assert_eq!(error.code(), Some(ascend::ErrorCode::RT_PARAM_INVALID));
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtHostGetDevicePointer")]
    pub fn device_pointer(&self) -> Result<DevicePointer<'_>> {
        const API: &str = "aclrtHostGetDevicePointer";
        self.device.make_current()?;
        let mut raw = std::ptr::null_mut();
        // SAFETY: the registered base address (not dereferenced by the
        // call), a valid out-pointer, and the flag the API requires (0).
        check(API, unsafe {
            sys::aclrtHostGetDevicePointer(self.host.as_ptr().cast(), &mut raw, 0)
        })?;
        let raw = NonNull::new(raw).ok_or_else(|| {
            Error::invalid(
                Call::new("HostRegistration::device_pointer", API),
                "the runtime returned NULL with success",
            )
        })?;
        Ok(DevicePointer::new(raw, self.byte_len()))
    }

    /// The device pointer `aclrtHostRegister` (V1) returned; `None` for a
    /// V2 registration (ask [`HostRegistration::device_pointer`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::Device;
    /// use ascend::host_register::{AlignedHostBuf, HostRegisterFlags, HostRegisterType, HostRegistration};
    /// let device = Device::new(0)?;
    /// let mut v1_buf = AlignedHostBuf::<u8>::zeroed(4096)?;
    /// let v1 = HostRegistration::register(&device, &mut v1_buf, HostRegisterType::Mapped)?;
    /// assert_eq!(v1.registered_pointer(), Some(v1.device_pointer()?));
    /// let mut v2_buf = AlignedHostBuf::<u8>::zeroed(4096)?;
    /// let v2 = HostRegistration::register_v2(&device, &mut v2_buf, HostRegisterFlags::MAPPED)?;
    /// assert_eq!(v2.registered_pointer(), None); // ask device_pointer() instead
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn registered_pointer(&self) -> Option<DevicePointer<'_>> {
        self.registered_pointer
            .map(|raw| DevicePointer::new(raw, self.byte_len()))
    }

    /// The V1 type, for a registration made by
    /// [`HostRegistration::register`].
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::Device;
    /// use ascend::host_register::{AlignedHostBuf, HostRegisterFlags, HostRegisterType, HostRegistration};
    /// let device = Device::new(0)?;
    /// let mut buf = AlignedHostBuf::<u8>::zeroed(4096)?;
    /// let v1 = HostRegistration::register(&device, &mut buf, HostRegisterType::Mapped)?;
    /// assert_eq!(v1.register_type(), Some(HostRegisterType::Mapped));
    /// drop(v1);
    /// let v2 = HostRegistration::register_v2(&device, &mut buf, HostRegisterFlags::MAPPED)?;
    /// assert_eq!(v2.register_type(), None);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn register_type(&self) -> Option<HostRegisterType> {
        match self.kind {
            Kind::V1(kind) => Some(kind),
            Kind::V2(_) => None,
        }
    }

    /// The V2 flags, for a registration made by
    /// [`HostRegistration::register_v2`].
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::Device;
    /// use ascend::host_register::{AlignedHostBuf, HostRegisterFlags, HostRegisterType, HostRegistration};
    /// let device = Device::new(0)?;
    /// let mut buf = AlignedHostBuf::<u8>::zeroed(4096)?;
    /// let v2 = HostRegistration::register_v2(&device, &mut buf, HostRegisterFlags::PINNED)?;
    /// assert_eq!(v2.flags(), Some(HostRegisterFlags::PINNED));
    /// drop(v2);
    /// let v1 = HostRegistration::register(&device, &mut buf, HostRegisterType::Mapped)?;
    /// assert_eq!(v1.flags(), None);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn flags(&self) -> Option<HostRegisterFlags> {
        match self.kind {
            Kind::V1(_) => None,
            Kind::V2(flags) => Some(flags),
        }
    }

    /// The device it was registered with.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::Device;
    /// use ascend::host_register::{AlignedHostBuf, HostRegisterFlags, HostRegistration};
    /// let device = Device::new(0)?;
    /// let mut buf = AlignedHostBuf::<u8>::zeroed(4096)?;
    /// let registration = HostRegistration::register_v2(&device, &mut buf, HostRegisterFlags::PINNED)?;
    /// assert_eq!(registration.device(), &device);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// Number of elements registered.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::Device;
    /// use ascend::host_register::{AlignedHostBuf, HostRegisterFlags, HostRegistration};
    /// let device = Device::new(0)?;
    /// let mut buf = AlignedHostBuf::<u16>::zeroed(3000)?;
    /// let registration = HostRegistration::register_v2(&device, &mut buf, HostRegisterFlags::PINNED)?;
    /// assert_eq!(registration.len(), 3000);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no element is registered (never true: empty memory is
    /// refused).
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::Device;
    /// use ascend::host_register::{AlignedHostBuf, HostRegisterFlags, HostRegistration};
    /// let device = Device::new(0)?;
    /// let mut buf = AlignedHostBuf::<u8>::zeroed(4096)?;
    /// let registration = HostRegistration::register_v2(&device, &mut buf, HostRegisterFlags::PINNED)?;
    /// assert!(!registration.is_empty());
    /// drop(registration);
    /// // Empty memory is refused before any call.
    /// assert!(HostRegistration::register_v2(&device, &mut buf[..0], HostRegisterFlags::PINNED).is_err());
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bytes registered.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::Device;
    /// use ascend::host_register::{AlignedHostBuf, HostRegisterFlags, HostRegistration};
    /// let device = Device::new(0)?;
    /// let mut buf = AlignedHostBuf::<f64>::zeroed(100)?;
    /// let registration = HostRegistration::register_v2(&device, &mut buf, HostRegisterFlags::PINNED)?;
    /// assert_eq!(registration.byte_len(), 800);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn byte_len(&self) -> usize {
        size_of_val(self.as_slice())
    }

    /// The registered host memory. Device work writing it through the
    /// device pointer must have finished.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, DeviceBuf};
    /// use ascend::host_register::{AlignedHostBuf, HostRegisterFlags, HostRegistration};
    /// let device = Device::new(0)?;
    /// let mut buf = AlignedHostBuf::from_slice(&[1u32, 2, 3])?;
    /// let registration = HostRegistration::register_v2(&device, &mut buf, HostRegisterFlags::PINNED)?;
    /// // Upload from the page-locked memory.
    /// let on_device = DeviceBuf::from_slice(&device, registration.as_slice())?;
    /// assert_eq!(on_device.to_vec()?, [1, 2, 3]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn as_slice(&self) -> &[T] {
        // SAFETY: the exclusively borrowed `[T]` given at registration,
        // valid for `'a`, which outlives `&self`.
        unsafe { std::slice::from_raw_parts(self.host.as_ptr(), self.len) }
    }

    /// The registered host memory, mutably. Device work using it through
    /// the device pointer must have finished.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, DeviceBuf};
    /// use ascend::host_register::{AlignedHostBuf, HostRegisterFlags, HostRegistration};
    /// let device = Device::new(0)?;
    /// let mut buf = AlignedHostBuf::<u32>::zeroed(3)?;
    /// let mut registration = HostRegistration::register_v2(&device, &mut buf, HostRegisterFlags::PINNED)?;
    /// // Download into the page-locked memory.
    /// DeviceBuf::from_slice(&device, &[7u32, 8, 9])?.read_to_host(registration.as_mut_slice())?;
    /// assert_eq!(registration.as_slice(), [7, 8, 9]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn as_mut_slice(&mut self) -> &mut [T] {
        // SAFETY: as in `as_slice`; `&mut self` makes the access unique.
        unsafe { std::slice::from_raw_parts_mut(self.host.as_ptr(), self.len) }
    }

    /// Unregisters now, reporting a failure. The memory is released from
    /// its borrow either way.
    ///
    /// # Errors
    ///
    /// The runtime's code from `aclrtHostUnregister`.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::Device;
    /// use ascend::host_register::{AlignedHostBuf, HostRegisterType, HostRegistration};
    /// let device = Device::new(0)?;
    /// let mut buf = AlignedHostBuf::<u8>::zeroed(4096)?;
    /// let registration = HostRegistration::register(&device, &mut buf, HostRegisterType::Mapped)?;
    /// registration.unregister()?; // reports a failure, which a drop could only log
    /// buf[0] = 1; // the borrow has ended
    /// // The memory can be registered again.
    /// HostRegistration::register(&device, &mut buf, HostRegisterType::Mapped)?.unregister()?;
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtHostUnregister")]
    pub fn unregister(mut self) -> Result<()> {
        self.release()
    }
}

// Needs no `T: Pod`: the drop runs for any element type.
impl<T> HostRegistration<'_, T> {
    fn release(&mut self) -> Result<()> {
        if !std::mem::take(&mut self.registered) {
            return Ok(());
        }
        self.device.make_current()?;
        // SAFETY: the base address registered by this value, unregistered
        // once (`registered` was cleared above).
        check("aclrtHostUnregister", unsafe {
            sys::aclrtHostUnregister(self.host.as_ptr().cast())
        })
    }
}

impl<T> Drop for HostRegistration<'_, T> {
    fn drop(&mut self) {
        if let Err(error) = self.release() {
            log::warn!("HostRegistration drop: {error}");
        }
    }
}

impl<T: Pod> fmt::Debug for HostRegistration<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HostRegistration")
            .field("host", &self.host)
            .field("len", &self.len)
            .field("device", &self.device.id())
            .field("kind", &self.kind)
            .field("registered_pointer", &self.registered_pointer)
            .finish()
    }
}

//! [`DeviceBuf`]: an owned, typed allocation of device memory.

mod cast;
mod raw_parts;
mod sub_views;

use super::byte_len::byte_len;
use super::view::{DeviceSlice, DeviceSliceMut};
use super::{AllocCall, MallocPolicy};
use crate::Call;
use crate::Device;
use crate::error::{Result, check};
use ascend_sys as sys;
use bytemuck::Pod;
use std::ffi::c_void;
use std::fmt;
use std::marker::PhantomData;
use std::ptr::NonNull;

/// `len` elements of `T` in device memory (`aclrtMalloc` / `aclrtFree`).
///
/// **Element types:** any [`Pod`](bytemuck::Pod) type (plain bytes, every
/// bit pattern valid). For a struct of your own, derive it through the
/// SDK's re-export, with no `bytemuck` dependency of your own:
/// `#[derive(Clone, Copy, ascend::bytemuck::Pod, ascend::bytemuck::Zeroable)]`,
/// `#[bytemuck(crate = "ascend::bytemuck")]`, `#[repr(C)]` (runnable example:
/// [`crate::bytemuck`]).
///
/// The memory is never a Rust reference; its bytes move only through the
/// copy methods, which check lengths first. Dropping the buffer frees it
/// (best effort, a failure is logged); [`DeviceBuf::free`] frees it and
/// reports the error.
///
/// ```
/// use ascend::{Device, DeviceBuf};
/// let device = Device::new(0)?;
/// let buf = DeviceBuf::from_slice(&device, &[1u32, 2, 3])?;
/// assert_eq!(buf.len(), 3);
/// assert_eq!(buf.to_vec()?, [1, 2, 3]);
/// # Ok::<(), ascend::Error>(())
/// ```
///
/// **Threads:** `DeviceBuf<T>` is `Send` and `Sync`: move it to another thread
/// or share it (`&DeviceBuf` only reads the device memory, through copies out).
///
/// **Guide:** [Concepts: memory kinds](crate::guide::concepts); the calls it
/// makes are in [AscendCL → Rust](crate::guide::acl_to_rust).
pub struct DeviceBuf<T> {
    /// Device address; `None` for an empty buffer (nothing allocated).
    address: Option<NonNull<c_void>>,
    len: usize,
    device: Device,
    _elements: PhantomData<T>,
}

// SAFETY: the buffer owns its device allocation exclusively; the address is
// never dereferenced on the host, and every call through it first makes the
// buffer's device current on the calling thread.
unsafe impl<T: Pod> Send for DeviceBuf<T> {}
// SAFETY: `&DeviceBuf` only allows reads of device memory through the
// runtime (copies out), which may run concurrently.
unsafe impl<T: Pod> Sync for DeviceBuf<T> {}

impl<T: Pod> DeviceBuf<T> {
    /// Allocates `len` elements without initialising them.
    ///
    /// # Safety
    ///
    /// The contents are whatever the device memory held. Reading them back
    /// gives arbitrary bit patterns, which every `Pod` type accepts, but the
    /// values are meaningless: write the buffer before relying on it.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) if the byte
    /// size overflows; the runtime's code (e.g. out of device memory).
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, DeviceBuf};
    /// let device = Device::new(0)?;
    /// // SAFETY: every element is written (below) before it is read.
    /// let mut buf = unsafe { DeviceBuf::<f32>::uninit(&device, 1024) }?;
    /// buf.write_from_host(&[0.5; 1024])?;
    /// assert_eq!(buf.to_vec()?, [0.5; 1024]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtMalloc")]
    pub unsafe fn uninit(device: &Device, len: usize) -> Result<Self> {
        // SAFETY: forwarded contract.
        unsafe {
            Self::uninit_for(
                "DeviceBuf::uninit",
                device,
                len,
                MallocPolicy::HugeFirst,
                AllocCall::Malloc,
            )
        }
    }

    /// Allocates `len` elements with an explicit page policy, without
    /// initialising them.
    ///
    /// # Safety
    ///
    /// As [`DeviceBuf::uninit`].
    ///
    /// # Errors
    ///
    /// As [`DeviceBuf::uninit`]; a policy the chip cannot honour fails with
    /// the runtime's code.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, DeviceBuf, MallocPolicy};
    /// let device = Device::new(0)?;
    /// // SAFETY: the buffer is filled before it is read.
    /// let mut buf = unsafe { DeviceBuf::<u8>::uninit_with_policy(&device, 4096, MallocPolicy::NormalOnly) }?;
    /// buf.fill_bytes(0xAB)?;
    /// assert!(buf.to_vec()?.iter().all(|&byte| byte == 0xAB));
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtMalloc")]
    pub unsafe fn uninit_with_policy(device: &Device, len: usize, policy: MallocPolicy) -> Result<Self> {
        // SAFETY: forwarded contract.
        unsafe { Self::uninit_for("DeviceBuf::uninit_with_policy", device, len, policy, AllocCall::Malloc) }
    }

    /// Allocates `len` elements with an explicit page policy and allocation
    /// call ([`AllocCall`]), without initialising them.
    ///
    /// # Safety
    ///
    /// As [`DeviceBuf::uninit`].
    ///
    /// # Errors
    ///
    /// As [`DeviceBuf::uninit_with_policy`].
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::memory::AllocCall;
    /// use ascend::{Device, DeviceBuf, MallocPolicy};
    /// let device = Device::new(0)?;
    /// // SAFETY: the buffer is zeroed before it is read.
    /// let mut buf =
    ///     unsafe { DeviceBuf::<u32>::uninit_with(&device, 256, MallocPolicy::HugeFirst, AllocCall::Align32) }?;
    /// buf.fill_bytes(0)?;
    /// assert_eq!(buf.to_vec()?, [0; 256]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias("aclrtMalloc", "aclrtMallocAlign32", "aclrtMallocCached", "aclrtMallocWithCfg"))]
    pub unsafe fn uninit_with(device: &Device, len: usize, policy: MallocPolicy, call: AllocCall) -> Result<Self> {
        // SAFETY: forwarded contract.
        unsafe { Self::uninit_for("DeviceBuf::uninit_with", device, len, policy, call) }
    }

    /// [`DeviceBuf::uninit_with`] for the public method `method`.
    ///
    /// Inlined into its caller, which builds the buffer itself from the
    /// address [`malloc_bytes`] returns: built in a returned value
    /// instead, a move out of it (any `?`) reads the word-by-word stores
    /// with wider loads, which the processor cannot forward from them, and
    /// the caller waits for its own stores (about 15 ns of a 4 KiB
    /// `DeviceBuf::zeroed`, `benches/zeroed_instructions.rs`).
    ///
    /// # Safety
    ///
    /// As [`DeviceBuf::uninit_with`].
    #[inline(always)]
    unsafe fn uninit_for(
        method: &'static str,
        device: &Device,
        len: usize,
        policy: MallocPolicy,
        call: AllocCall,
    ) -> Result<Self> {
        let bytes = byte_len::<T>(Call::new(method, call.api()), len)?;
        let address = malloc_bytes(device, bytes, policy, call)?;
        Ok(Self {
            address,
            len,
            device: device.clone(),
            _elements: PhantomData,
        })
    }

    /// Allocates `len` zeroed elements.
    ///
    /// # Errors
    ///
    /// As [`DeviceBuf::uninit`], and the memset's code.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, DeviceBuf};
    /// let device = Device::new(0)?;
    /// let buf = DeviceBuf::<i64>::zeroed(&device, 100)?;
    /// assert_eq!(buf.to_vec()?, [0; 100]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias("aclrtMalloc", "aclrtMemset"))]
    pub fn zeroed(device: &Device, len: usize) -> Result<Self> {
        // SAFETY: the buffer is filled with zeros before it is returned.
        let mut buf = unsafe {
            Self::uninit_for(
                "DeviceBuf::zeroed",
                device,
                len,
                MallocPolicy::HugeFirst,
                AllocCall::Malloc,
            )
        }?;
        buf.fill_bytes(0)?;
        Ok(buf)
    }

    /// Allocates a buffer holding a copy of `data`.
    ///
    /// # Errors
    ///
    /// As [`DeviceBuf::uninit`], and the copy's code.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, DeviceBuf};
    /// let device = Device::new(0)?;
    /// let buf = DeviceBuf::from_slice(&device, &[1.0f32, 2.0, 3.0])?;
    /// assert_eq!((buf.len(), buf.byte_len()), (3, 12));
    /// assert_eq!(buf.to_vec()?, [1.0, 2.0, 3.0]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias("aclrtMalloc", "aclrtMemcpy"))]
    pub fn from_slice(device: &Device, data: &[T]) -> Result<Self> {
        // SAFETY: the whole buffer is overwritten by the copy below.
        let mut buf = unsafe {
            Self::uninit_for(
                "DeviceBuf::from_slice",
                device,
                data.len(),
                MallocPolicy::HugeFirst,
                AllocCall::Malloc,
            )
        }?;
        buf.write_from_host(data)?;
        Ok(buf)
    }

    /// Number of elements.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, DeviceBuf};
    /// let device = Device::new(0)?;
    /// let buf = DeviceBuf::<f32>::zeroed(&device, 1000)?;
    /// assert_eq!(buf.len(), 1000);
    /// assert_eq!(buf.to_vec()?.len(), buf.len());
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the buffer has no elements.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, DeviceBuf};
    /// let device = Device::new(0)?;
    /// let empty = DeviceBuf::<u8>::from_slice(&device, &[])?; // allocates nothing
    /// assert!(empty.is_empty());
    /// assert!(empty.as_raw().is_null());
    /// assert!(!DeviceBuf::from_slice(&device, &[1u8])?.is_empty());
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Size in bytes.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, DeviceBuf};
    /// let device = Device::new(0)?;
    /// let buf = DeviceBuf::<u64>::zeroed(&device, 10)?;
    /// assert_eq!(buf.byte_len(), 80);
    /// assert_eq!(buf.cast::<u8>()?.len(), 80); // the same bytes, as u8
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn byte_len(&self) -> usize {
        self.len * size_of::<T>()
    }

    /// The device the memory lives on.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, DeviceBuf};
    /// let device = Device::new(0)?;
    /// let buf = DeviceBuf::<u8>::zeroed(&device, 64)?;
    /// assert_eq!(buf.device(), &device);
    /// // E.g. to allocate a companion buffer on the same device:
    /// let twin = DeviceBuf::<u8>::zeroed(buf.device(), buf.len())?;
    /// assert_eq!(twin.device().id(), 0);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// The device address, for raw `ascend-sys` calls (NULL when empty).
    /// It must not be dereferenced on the host, nor freed.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, DeviceBuf, sys};
    /// let device = Device::new(0)?;
    /// let buf = DeviceBuf::from_slice(&device, &[1u8, 2, 3, 4])?;
    /// let mut host = [0u8; 4];
    /// // SAFETY: `buf` owns 4 bytes at this address and outlives the call;
    /// // `host` holds 4 bytes.
    /// ascend::check("aclrtMemcpy", unsafe {
    ///     sys::aclrtMemcpy(host.as_mut_ptr().cast(), 4, buf.as_raw(), 4, sys::ACL_MEMCPY_DEVICE_TO_HOST)
    /// })?;
    /// assert_eq!(host, [1, 2, 3, 4]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn as_raw(&self) -> *mut c_void {
        self.address.map_or(std::ptr::null_mut(), NonNull::as_ptr)
    }

    /// A shared view of the whole buffer.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, DeviceBuf};
    /// let device = Device::new(0)?;
    /// let buf = DeviceBuf::from_slice(&device, &[1u8, 2, 3, 4])?;
    /// let view = buf.as_slice();
    /// assert_eq!(view.slice(1..3)?.to_vec()?, [2, 3]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn as_slice(&self) -> DeviceSlice<'_, T> {
        // SAFETY: the buffer owns `len` elements at `as_raw()` (or is empty)
        // for as long as it is borrowed, on `self.device`.
        unsafe { DeviceSlice::from_raw_parts(self.as_raw(), self.len, &self.device) }
    }

    /// An exclusive view of the whole buffer.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, DeviceBuf};
    /// let device = Device::new(0)?;
    /// let mut buf = DeviceBuf::<u8>::zeroed(&device, 4)?;
    /// buf.as_mut_slice().slice_mut(2..)?.fill_bytes(9)?;
    /// assert_eq!(buf.to_vec()?, [0, 0, 9, 9]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn as_mut_slice(&mut self) -> DeviceSliceMut<'_, T> {
        // SAFETY: as in `as_slice`, and `&mut self` makes the view unique.
        unsafe { DeviceSliceMut::from_raw_parts(self.as_raw(), self.len, &self.device) }
    }

    /// Copies `src` (host) into the buffer; the lengths must be equal.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) on a length
    /// mismatch (nothing is copied); the runtime's code.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, DeviceBuf};
    /// let device = Device::new(0)?;
    /// let mut buf = DeviceBuf::<u16>::zeroed(&device, 3)?;
    /// buf.write_from_host(&[7, 8, 9])?;
    /// assert_eq!(buf.to_vec()?, [7, 8, 9]);
    /// assert!(buf.write_from_host(&[1, 2]).is_err()); // the lengths must be equal
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtMemcpy")]
    pub fn write_from_host(&mut self, src: &[T]) -> Result<()> {
        self.as_mut_slice()
            .copy_from_host_for(Call::new("DeviceBuf::write_from_host", "aclrtMemcpy"), src)
    }

    /// Copies the buffer into `dst` (host); the lengths must be equal.
    ///
    /// # Errors
    ///
    /// As [`DeviceBuf::write_from_host`].
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, DeviceBuf};
    /// let device = Device::new(0)?;
    /// let buf = DeviceBuf::from_slice(&device, &[1u32, 2, 3])?;
    /// let mut host = [0u32; 3];
    /// buf.read_to_host(&mut host)?;
    /// assert_eq!(host, [1, 2, 3]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtMemcpy")]
    pub fn read_to_host(&self, dst: &mut [T]) -> Result<()> {
        self.as_slice()
            .copy_to_host_for(Call::new("DeviceBuf::read_to_host", "aclrtMemcpy"), dst)
    }

    /// Copies another device buffer (same length) into this one.
    ///
    /// # Errors
    ///
    /// As [`DeviceBuf::write_from_host`].
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, DeviceBuf};
    /// let device = Device::new(0)?;
    /// let src = DeviceBuf::from_slice(&device, &[4i32, 5, 6])?;
    /// let mut dst = DeviceBuf::<i32>::zeroed(&device, 3)?;
    /// dst.copy_from_device(&src)?;
    /// assert_eq!(dst.to_vec()?, [4, 5, 6]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtMemcpy")]
    pub fn copy_from_device(&mut self, src: &DeviceBuf<T>) -> Result<()> {
        self.as_mut_slice()
            .copy_from_device_for(Call::new("DeviceBuf::copy_from_device", "aclrtMemcpy"), &src.as_slice())
    }

    /// The contents, copied into a new `Vec`.
    ///
    /// # Errors
    ///
    /// As [`DeviceBuf::read_to_host`].
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, DeviceBuf};
    /// let device = Device::new(0)?;
    /// let buf = DeviceBuf::from_slice(&device, &[0.25f64; 8])?;
    /// assert_eq!(buf.to_vec()?, vec![0.25; 8]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtMemcpy")]
    pub fn to_vec(&self) -> Result<Vec<T>> {
        self.as_slice().to_vec()
    }

    /// Sets every byte of the buffer to `value` (`aclrtMemset`).
    ///
    /// # Errors
    ///
    /// The runtime's code.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, DeviceBuf};
    /// let device = Device::new(0)?;
    /// let mut buf = DeviceBuf::<u32>::zeroed(&device, 4)?;
    /// buf.fill_bytes(0x01)?;
    /// assert_eq!(buf.to_vec()?, [0x0101_0101; 4]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtMemset")]
    pub fn fill_bytes(&mut self, value: u8) -> Result<()> {
        self.as_mut_slice().fill_bytes(value)
    }

    /// Sets every 32-bit element of the buffer to `value`
    /// (`aclrtMemsetD32`): the [`DeviceSliceMut::fill_u32`] of the whole
    /// buffer.
    ///
    /// # Errors
    ///
    /// As [`DeviceSliceMut::fill_u32`]: a byte length that is not a
    /// multiple of 4 is refused before any call.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, DeviceBuf};
    /// let device = Device::new(0)?;
    /// let mut buf = DeviceBuf::<u32>::zeroed(&device, 3)?;
    /// buf.fill_u32(0xDEAD_BEEF)?;
    /// assert_eq!(buf.to_vec()?, [0xDEAD_BEEF; 3]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtMemsetD32")]
    pub fn fill_u32(&mut self, value: u32) -> Result<()> {
        self.as_mut_slice().fill_u32(value)
    }

    /// Frees the memory now, reporting a failure.
    ///
    /// # Errors
    ///
    /// The runtime's code from `aclrtFree`; the memory is then in an unknown
    /// state and is not freed again.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, DeviceBuf};
    /// let device = Device::new(0)?;
    /// let buf = DeviceBuf::<u8>::zeroed(&device, 1 << 20)?;
    /// buf.free()?; // reports a failure, which a drop could only log
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtFree")]
    pub fn free(mut self) -> Result<()> {
        self.release()
    }

    /// Waits for all work queued on the buffer's device, then frees the
    /// memory (`aclrtFreeWithDevSync`). Use it when asynchronous work queued
    /// outside this crate's scopes may still use the buffer.
    ///
    /// ```
    /// use ascend::{Device, DeviceBuf};
    /// let device = Device::new(0)?;
    /// let buf = DeviceBuf::<u32>::zeroed(&device, 1024)?;
    /// buf.free_with_device_sync()?;
    /// # Ok::<(), ascend::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// The runtime's code, including a failure of queued work reported by
    /// the synchronisation (the runtime then does not free: the memory is
    /// in an unknown state and is not freed again).
    #[doc(alias = "aclrtFreeWithDevSync")]
    pub fn free_with_device_sync(mut self) -> Result<()> {
        if self.address.is_none() {
            return Ok(());
        }
        // On failure here the buffer still owns the memory; `Drop` frees it.
        self.device.make_current()?;
        let Some(address) = self.address.take() else {
            return Ok(());
        };
        // SAFETY: the address came from `aclrtMalloc` and is freed once
        // (`take` above).
        check("aclrtFreeWithDevSync", unsafe {
            sys::aclrtFreeWithDevSync(address.as_ptr())
        })?;
        log::trace!("aclrtFreeWithDevSync: {:p}", address.as_ptr());
        Ok(())
    }
}

// Needs no `T: Pod`: the drop runs for any element type.
impl<T> DeviceBuf<T> {
    fn release(&mut self) -> Result<()> {
        let Some(address) = self.address.take() else {
            return Ok(());
        };
        // SAFETY: the address came from `aclrtMalloc` and is freed once
        // (`take` above); `aclrtFree` needs no current device.
        check("aclrtFree", unsafe { sys::aclrtFree(address.as_ptr()) })?;
        log::trace!("aclrtFree: {:p}", address.as_ptr());
        Ok(())
    }
}

impl<T> Drop for DeviceBuf<T> {
    fn drop(&mut self) {
        if let Err(error) = self.release() {
            log::warn!("DeviceBuf drop: {error}");
        }
    }
}

impl<T: Pod> fmt::Debug for DeviceBuf<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DeviceBuf")
            .field("address", &self.as_raw())
            .field("len", &self.len)
            .field("device", &self.device.id())
            .finish()
    }
}

/// `bytes` of uninitialised memory on `device` by `call` with `policy`:
/// its address, or `None` for 0 bytes (nothing allocated).
///
/// # Errors
///
/// As [`DeviceBuf::uninit_with`].
#[inline(never)]
fn malloc_bytes(
    device: &Device,
    bytes: usize,
    policy: MallocPolicy,
    call: AllocCall,
) -> Result<Option<NonNull<c_void>>> {
    if bytes == 0 {
        return Ok(None);
    }
    let api = call.api();
    device.make_current()?;
    let mut raw = std::ptr::null_mut();
    let policy = policy.raw();
    // SAFETY: `raw` is a valid out-pointer and `bytes` is non-zero; the
    // configuration (when used) outlives the call.
    let code = unsafe {
        match call {
            AllocCall::Malloc => sys::aclrtMalloc(&mut raw, bytes, policy),
            AllocCall::Align32 => sys::aclrtMallocAlign32(&mut raw, bytes, policy),
            AllocCall::Cached => sys::aclrtMallocCached(&mut raw, bytes, policy),
            AllocCall::WithModuleId(module) => {
                let mut attr = sys::aclrtMallocAttribute {
                    attr: sys::ACL_RT_MEM_ATTR_MODULE_ID,
                    value: sys::aclrtMallocAttrValue { moduleId: module },
                };
                let mut config = sys::aclrtMallocConfig {
                    attrs: &mut attr,
                    numAttrs: 1,
                };
                sys::aclrtMallocWithCfg(&mut raw, bytes, policy, &mut config)
            }
        }
    };
    check(api, code)?;
    log::trace!("{api}: {bytes} bytes at {raw:p} on device {}", device.id());
    Ok(NonNull::new(raw))
}

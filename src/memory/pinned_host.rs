//! [`PinnedHostBuf`]: page-locked host memory from the runtime.

use super::byte_len::byte_len;
use crate::Call;
use crate::Device;
use crate::error::{Error, Result, check};
use ascend_sys as sys;
use bytemuck::Pod;
use std::fmt;
use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;

/// The alignment `aclrtMallocHost` guarantees.
pub(crate) const HOST_ALIGN: usize = 64;

/// `len` elements of `T` in page-locked host memory (`aclrtMallocHost` /
/// `aclrtFreeHost`), usable as a slice.
///
/// **Element types:** any [`Pod`](bytemuck::Pod) type (plain bytes, every
/// bit pattern valid). For a struct of your own, derive it through the
/// SDK's re-export, with no `bytemuck` dependency of your own:
/// `#[derive(Clone, Copy, ascend::bytemuck::Pod, ascend::bytemuck::Zeroable)]`,
/// `#[bytemuck(crate = "ascend::bytemuck")]`, `#[repr(C)]` (runnable example:
/// [`crate::bytemuck`]).
///
/// Page-locked memory is what asynchronous copies need to run truly
/// asynchronously. The buffer derefs to `[T]`.
///
/// ```
/// use ascend::{Device, PinnedHostBuf};
/// let device = Device::new(0)?;
/// let mut host = PinnedHostBuf::<f32>::zeroed(&device, 4)?;
/// host[1] = 2.5;
/// assert_eq!(&host[..], &[0.0, 2.5, 0.0, 0.0]);
/// # Ok::<(), ascend::Error>(())
/// ```
///
/// **Threads:** `PinnedHostBuf<T>` is `Send` and `Sync`, like `Vec<T>`.
///
/// **Guide:** [Concepts: memory kinds](crate::guide::concepts).
// Laid out in order, the pointer last: an `Option` of a buffer is tested
// on the pointer, and a copy of the rest then starts where the buffer
// does, in the words it was stored in. With the pointer first, the rest
// was read a word off, across stores the processor cannot forward
// (docs/performance.md, "PinnedPool hit": with the other copies, 64 -> 30
// ns per hit).
#[repr(C)]
pub struct PinnedHostBuf<T> {
    len: usize,
    /// Elements allocated at `pointer`, at least `len` (more only for a
    /// [`PinnedPool`](crate::pool::PinnedPool)'s buffer, whose bucket is
    /// larger than the request).
    capacity: usize,
    /// Whether `pointer` came from `aclrtMallocHost` (not for empty
    /// buffers): [`ALLOCATED`] or 0. A whole word, not a `bool`: the spare
    /// values of a `bool` held the tag of every `Option` and `Result` of a
    /// buffer, and copying those then read words across stores of other
    /// widths, which the processor cannot forward (see the layout note
    /// above).
    allocated: usize,
    pointer: NonNull<T>,
}

/// [`PinnedHostBuf`]'s `allocated` for memory from the runtime.
const ALLOCATED: usize = 1;

// SAFETY: the buffer owns its host allocation exclusively, like a `Box<[T]>`.
unsafe impl<T: Pod> Send for PinnedHostBuf<T> {}
// SAFETY: shared access is only through `&[T]`, like a `Box<[T]>`.
unsafe impl<T: Pod> Sync for PinnedHostBuf<T> {}

impl<T: Pod> PinnedHostBuf<T> {
    /// Allocates `len` zeroed elements.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] if the byte size overflows or `T` needs an
    /// alignment above 64 bytes; the runtime's code.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, PinnedHostBuf};
    /// let device = Device::new(0)?;
    /// let mut host = PinnedHostBuf::<f32>::zeroed(&device, 1024)?;
    /// host[0] = 1.0; // page-locked host memory derefs to [f32]
    /// assert_eq!(host.len(), 1024);
    /// assert_eq!(host.iter().sum::<f32>(), 1.0);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtMallocHost")]
    pub fn zeroed(device: &Device, len: usize) -> Result<Self> {
        Self::zeroed_for("PinnedHostBuf::zeroed", device, len)
    }

    /// [`PinnedHostBuf::zeroed`] for the public method `method`.
    fn zeroed_for(method: &'static str, device: &Device, len: usize) -> Result<Self> {
        // SAFETY: every byte is zeroed below, before the buffer is read.
        let mut buf = unsafe { Self::uninit_for(method, device, len) }?;
        // SAFETY: the buffer owns `len * size_of::<T>()` writable bytes at
        // its pointer (the product did not overflow: they were allocated;
        // none for an empty buffer); zero is a valid `T` (`Pod: Zeroable`),
        // so the elements are initialised after.
        unsafe { buf.as_mut_ptr().cast::<u8>().write_bytes(0, len * size_of::<T>()) };
        Ok(buf)
    }

    /// Allocates `len` elements without initialising them
    /// (`aclrtMallocHost`), for memory that an asynchronous copy from the
    /// device fills at once.
    ///
    /// ```
    /// use ascend::{Device, DeviceBuf, PinnedHostBuf, stream::Stream};
    /// let device = Device::new(0)?;
    /// let stream = Stream::new(&device)?;
    /// let on_device = DeviceBuf::from_slice(&device, &[3.5f32; 1024])?;
    /// // SAFETY: the download below writes every element before the buffer
    /// // is read, and the buffer is not read if it fails.
    /// let host = unsafe { PinnedHostBuf::<f32>::uninit(&device, 1024) }?;
    /// let mut host = host;
    /// stream.scope(|s| s.copy_to_host(&on_device, &mut host))?;
    /// assert!(host.iter().all(|&x| x == 3.5));
    /// # Ok::<(), ascend::Error>(())
    /// ```
    ///
    /// # Safety
    ///
    /// The contents are uninitialised memory. Until every element has been
    /// written, the buffer must not be read or referenced as a slice: no
    /// `Deref` or `DerefMut` (indexing, iteration, `&buf[..]`, `Debug`).
    /// Write it through asynchronous copies into it (a scope's
    /// `copy_to_host` with `&mut buf` as the destination, or an
    /// [`Ordered`](crate::stream::Ordered) buffer's `copy_from_device`),
    /// which must then have finished, or through the pointer of
    /// [`PinnedHostBuf::as_mut_ptr`]. Dropping or freeing it unread is
    /// fine.
    ///
    /// # Errors
    ///
    /// As [`PinnedHostBuf::zeroed`].
    #[doc(alias = "aclrtMallocHost")]
    pub unsafe fn uninit(device: &Device, len: usize) -> Result<Self> {
        // SAFETY: forwarded contract.
        unsafe { Self::uninit_for("PinnedHostBuf::uninit", device, len) }
    }

    /// [`PinnedHostBuf::uninit`] for the public method `method`.
    ///
    /// # Safety
    ///
    /// As [`PinnedHostBuf::uninit`].
    unsafe fn uninit_for(method: &'static str, device: &Device, len: usize) -> Result<Self> {
        let call = Call::new(method, "aclrtMallocHost");
        if align_of::<T>() > HOST_ALIGN {
            return Err(Error::invalid(
                call,
                format!(
                    "alignment {} is above the 64 bytes the runtime guarantees",
                    align_of::<T>()
                ),
            ));
        }
        let bytes = byte_len::<T>(call, len)?;
        if bytes == 0 {
            return Ok(Self {
                pointer: NonNull::dangling(),
                len,
                capacity: len,
                allocated: 0,
            });
        }
        device.make_current()?;
        let mut raw = std::ptr::null_mut();
        // SAFETY: `raw` is a valid out-pointer; `bytes` is non-zero.
        check("aclrtMallocHost", unsafe { sys::aclrtMallocHost(&mut raw, bytes) })?;
        log::trace!("aclrtMallocHost: {bytes} bytes at {raw:p}");
        let Some(pointer) = NonNull::new(raw.cast::<T>()) else {
            return Err(Error::invalid(call, "the runtime returned NULL with success"));
        };
        Ok(Self {
            pointer,
            len,
            capacity: len,
            allocated: ALLOCATED,
        })
    }

    /// Number of elements (without reading them).
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, PinnedHostBuf};
    /// let device = Device::new(0)?;
    /// // SAFETY: only the length is asked; the elements are never read.
    /// let staging = unsafe { PinnedHostBuf::<f32>::uninit(&device, 256) }?;
    /// assert_eq!(staging.len(), 256);
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
    /// use ascend::{Device, PinnedHostBuf};
    /// let device = Device::new(0)?;
    /// assert!(PinnedHostBuf::<u8>::zeroed(&device, 0)?.is_empty());
    /// assert!(!PinnedHostBuf::from_slice(&device, &[1u8])?.is_empty());
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Number of elements allocated: the length, except for a
    /// [`PinnedPool`](crate::pool::PinnedPool)'s buffer, whose capacity is
    /// its bucket's size (the request rounded up) while its length is the
    /// request. Only the length is reachable as a slice and by copies.
    ///
    /// ```
    /// use ascend::pool::PinnedPool;
    /// let device = ascend::Device::new(0)?;
    /// let pool = PinnedPool::new(&device);
    /// let staging = pool.alloc(3000)?.into_inner()?;
    /// assert_eq!((staging.len(), staging.capacity()), (3000, 4096));
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// The first element's address, without reading the elements (also on
    /// an uninitialised buffer).
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, PinnedHostBuf, memory::pointer_attributes, vmm::MemLocation};
    /// let device = Device::new(0)?;
    /// // SAFETY: the buffer is only looked up by address, never read.
    /// let staging = unsafe { PinnedHostBuf::<u64>::uninit(&device, 512) }?;
    /// let attributes = pointer_attributes(staging.as_ptr().cast())?;
    /// assert_eq!(attributes.location, Some(MemLocation::Host)); // page-locked by the runtime
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn as_ptr(&self) -> *const T {
        self.pointer.as_ptr()
    }

    /// The first element's address, for writing, without creating a
    /// reference to the elements (also on an uninitialised buffer, see
    /// [`PinnedHostBuf::uninit`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, PinnedHostBuf};
    /// let device = Device::new(0)?;
    /// // SAFETY: every element is written through the pointer (below)
    /// // before the buffer is read.
    /// let mut host = unsafe { PinnedHostBuf::<u32>::uninit(&device, 4) }?;
    /// let first = host.as_mut_ptr();
    /// for i in 0..4 {
    ///     // SAFETY: `i` is within the 4 allocated elements.
    ///     unsafe { first.add(i).write(10 * i as u32) };
    /// }
    /// assert_eq!(&host[..], [0, 10, 20, 30]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn as_mut_ptr(&mut self) -> *mut T {
        self.pointer.as_ptr()
    }

    /// Allocates a buffer holding a copy of `data`.
    ///
    /// # Errors
    ///
    /// As [`PinnedHostBuf::zeroed`].
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, DeviceBuf, PinnedHostBuf};
    /// let device = Device::new(0)?;
    /// let host = PinnedHostBuf::from_slice(&device, &[1u8, 2, 3])?;
    /// assert_eq!(&host[..], [1, 2, 3]);
    /// let on_device = DeviceBuf::from_slice(&device, &host)?;
    /// assert_eq!(on_device.to_vec()?, [1, 2, 3]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtMallocHost")]
    pub fn from_slice(device: &Device, data: &[T]) -> Result<Self> {
        let mut buf = Self::zeroed_for("PinnedHostBuf::from_slice", device, data.len())?;
        buf.copy_from_slice(data);
        Ok(buf)
    }

    /// Frees the memory now, reporting a failure.
    ///
    /// # Errors
    ///
    /// The runtime's code from `aclrtFreeHost`.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, PinnedHostBuf};
    /// let device = Device::new(0)?;
    /// let host = PinnedHostBuf::<u8>::zeroed(&device, 4096)?;
    /// host.free()?; // reports a failure, which a drop could only log
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtFreeHost")]
    pub fn free(mut self) -> Result<()> {
        self.release()
    }

    /// Waits for all work queued on `device`, then frees the memory
    /// (`aclrtFreeHostWithDevSync`, with `device` made current: the runtime
    /// synchronises the current device). Use it when asynchronous work
    /// queued outside this crate's scopes may still use the buffer.
    ///
    /// ```
    /// use ascend::{Device, PinnedHostBuf};
    /// let device = Device::new(0)?;
    /// let host = PinnedHostBuf::<u8>::zeroed(&device, 4096)?;
    /// host.free_with_device_sync(&device)?;
    /// # Ok::<(), ascend::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// The runtime's code, including a failure of queued work reported by
    /// the synchronisation (the runtime then does not free: the memory is
    /// in an unknown state and is not freed again).
    #[doc(alias = "aclrtFreeHostWithDevSync")]
    pub fn free_with_device_sync(mut self, device: &Device) -> Result<()> {
        // On failure here the buffer still owns the memory; `Drop` frees it.
        device.make_current()?;
        if std::mem::take(&mut self.allocated) != ALLOCATED {
            return Ok(());
        }
        // SAFETY: the pointer came from `aclrtMallocHost` and is freed once
        // (`allocated` was cleared above).
        check("aclrtFreeHostWithDevSync", unsafe {
            sys::aclrtFreeHostWithDevSync(self.pointer.as_ptr().cast())
        })?;
        log::trace!("aclrtFreeHostWithDevSync: {:p}", self.pointer);
        Ok(())
    }
}

// Needs no `T: Pod`: the drop runs for any element type.
impl<T> PinnedHostBuf<T> {
    fn release(&mut self) -> Result<()> {
        if std::mem::take(&mut self.allocated) != ALLOCATED {
            return Ok(());
        }
        // SAFETY: the pointer came from `aclrtMallocHost` and is freed once
        // (`allocated` was cleared above).
        check("aclrtFreeHost", unsafe {
            sys::aclrtFreeHost(self.pointer.as_ptr().cast())
        })?;
        log::trace!("aclrtFreeHost: {:p}", self.pointer);
        Ok(())
    }
}

impl<T: Pod> PinnedHostBuf<T> {
    /// The buffer's own pointer, with the write permission of the
    /// allocation (not derived from a shared slice), for device work that
    /// writes it while the host is kept away by other means.
    pub(crate) fn raw_pointer(&self) -> *mut T {
        self.pointer.as_ptr()
    }

    /// Sets the length to `len` elements, at most the capacity (`false`,
    /// and nothing changed, beyond it).
    ///
    /// # Safety
    ///
    /// The first `len` elements must be initialised (a zeroed buffer's
    /// are, up to its capacity), or the buffer must be treated as
    /// uninitialised (see [`PinnedHostBuf::uninit`]).
    pub(crate) unsafe fn set_len(&mut self, len: usize) -> bool {
        if len > self.capacity {
            return false;
        }
        self.len = len;
        true
    }
}

impl PinnedHostBuf<u8> {
    /// The buffer's memory as `len` elements of `T`, within its capacity
    /// (a [`PinnedPool`](crate::pool::PinnedPool)'s typed buffer); the
    /// buffer back, unchanged, when `T` is zero-sized, the capacity is not
    /// a whole number of elements, the pointer is not aligned for `T`, or
    /// `len` elements do not fit.
    ///
    /// The elements are as initialised as the bytes were: every bit
    /// pattern is a valid `T` (`Pod`).
    pub(crate) fn into_typed<T: Pod>(self, len: usize) -> Result<PinnedHostBuf<T>, Self> {
        let element = size_of::<T>();
        if element == 0
            || !self.capacity.is_multiple_of(element)
            || !(self.pointer.as_ptr() as usize).is_multiple_of(align_of::<T>())
            || len > self.capacity / element
        {
            return Err(self);
        }
        // The allocation moves to the typed buffer: this one must not free it.
        let this = std::mem::ManuallyDrop::new(self);
        Ok(PinnedHostBuf {
            len,
            capacity: this.capacity / element,
            allocated: this.allocated,
            pointer: this.pointer.cast(),
        })
    }
}

impl<T: Pod> PinnedHostBuf<T> {
    /// The buffer's memory as bytes: its length and capacity in bytes
    /// (the inverse of [`PinnedHostBuf::into_typed`]).
    pub(crate) fn into_bytes(self) -> PinnedHostBuf<u8> {
        // The allocation moves to the byte buffer: this one must not free it.
        let this = std::mem::ManuallyDrop::new(self);
        // The products are the allocation's byte sizes (or smaller), which
        // fit: the memory was allocated.
        PinnedHostBuf {
            len: this.len.saturating_mul(size_of::<T>()),
            capacity: this.capacity.saturating_mul(size_of::<T>()),
            allocated: this.allocated,
            pointer: this.pointer.cast(),
        }
    }
}

impl<T: Pod> Deref for PinnedHostBuf<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        // SAFETY: `len` initialised, aligned elements (or a dangling pointer
        // with a zero byte size), owned by `self`.
        unsafe { std::slice::from_raw_parts(self.pointer.as_ptr(), self.len) }
    }
}

impl<T: Pod> DerefMut for PinnedHostBuf<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as in `deref`, and `&mut self` makes the access unique.
        unsafe { std::slice::from_raw_parts_mut(self.pointer.as_ptr(), self.len) }
    }
}

impl<T> Drop for PinnedHostBuf<T> {
    fn drop(&mut self) {
        if let Err(error) = self.release() {
            log::warn!("PinnedHostBuf drop: {error}");
        }
    }
}

impl<T: Pod + fmt::Debug> fmt::Debug for PinnedHostBuf<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<T: Pod> PinnedHostBuf<T> {
    /// Allocates `len` zeroed elements with allocation attributes
    /// (`aclrtMallocHostWithCfg`).
    ///
    /// ```
    /// use ascend::{Device, PinnedHostBuf, host_register::HostMallocConfig};
    /// let device = Device::new(0)?;
    /// let config = HostMallocConfig::new().with_module_id(33);
    /// let host = PinnedHostBuf::<u8>::zeroed_with_config(&device, 100, &config)?;
    /// assert!(host.iter().all(|&b| b == 0));
    /// # Ok::<(), ascend::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`PinnedHostBuf::zeroed`]; `ACL_ERROR_RT_FEATURE_NOT_SUPPORT` for
    /// [`HostMallocConfig::with_same_address`](crate::host_register::HostMallocConfig::with_same_address)
    /// where the device lacks it.
    #[doc(alias = "aclrtMallocHostWithCfg")]
    pub fn zeroed_with_config(
        device: &Device,
        len: usize,
        config: &crate::host_register::HostMallocConfig,
    ) -> Result<Self> {
        const API: &str = "aclrtMallocHostWithCfg";
        if align_of::<T>() > HOST_ALIGN {
            return Err(Error::invalid(
                Call::new("PinnedHostBuf::zeroed_with_config", API),
                format!(
                    "alignment {} is above the 64 bytes the runtime guarantees",
                    align_of::<T>()
                ),
            ));
        }
        let bytes = byte_len::<T>(Call::new("PinnedHostBuf::zeroed_with_config", API), len)?;
        if bytes == 0 {
            return Ok(Self {
                pointer: NonNull::dangling(),
                len,
                capacity: len,
                allocated: 0,
            });
        }
        let size = u64::try_from(bytes).map_err(|_| {
            Error::invalid(
                Call::new("PinnedHostBuf::zeroed_with_config", API),
                format!("{bytes} bytes do not fit in u64"),
            )
        })?;
        let mut attributes = config.attributes();
        let mut cfg = sys::aclrtMallocConfig {
            attrs: attributes.as_mut_ptr(),
            numAttrs: attributes.len(),
        };
        // No attributes: no configuration, as for a plain `aclrtMallocHost`.
        let cfg: *mut sys::aclrtMallocConfig = if attributes.is_empty() {
            std::ptr::null_mut()
        } else {
            &mut cfg
        };
        device.make_current()?;
        let mut raw = std::ptr::null_mut();
        // SAFETY: `raw` is a valid out-pointer; `cfg` is NULL or points at
        // `attributes.len()` attributes that outlive the call; `size` is
        // non-zero.
        check(API, unsafe { sys::aclrtMallocHostWithCfg(&mut raw, size, cfg) })?;
        log::trace!("{API}: {size} bytes at {raw:p}");
        let Some(pointer) = NonNull::new(raw.cast::<T>()) else {
            return Err(Error::invalid(
                Call::new("PinnedHostBuf::zeroed_with_config", API),
                "the runtime returned NULL with success",
            ));
        };
        // SAFETY: the allocation holds `bytes` writable bytes; zero is a
        // valid `T` (`Pod: Zeroable`).
        unsafe { pointer.as_ptr().cast::<u8>().write_bytes(0, bytes) };
        Ok(Self {
            pointer,
            len,
            capacity: len,
            allocated: ALLOCATED,
        })
    }
}

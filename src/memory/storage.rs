//! [`DeviceStorage`] and [`DeviceStorageMut`]: device memory owned by any
//! type, so that a framework's own block type works wherever a
//! [`DeviceBuf`] does.

use super::DeviceBuf;
use crate::Device;
use bytemuck::Pod;
use std::ffi::c_void;
use std::sync::Arc;

/// A value that owns (or holds a share of) a range of device memory: its
/// device, its address and its size in bytes.
///
/// Implement it for a framework's own memory type — a caching allocator's
/// block, an operator library's workspace — to use that type with this
/// crate: typed views for copies ([`DeviceSlice::from_storage`],
/// [`DeviceSliceMut::from_storage`]), stream-ordered ownership
/// ([`Ordered`]) and IPC export
/// ([`IpcExport::new`]). It is implemented for [`DeviceBuf`], and for
/// `Box` and `Arc` of any storage.
///
/// ```
/// use ascend::memory::DeviceStorage;
/// use ascend::{Device, DeviceBuf, DeviceSlice};
/// use std::sync::Arc;
/// let device = Device::new(0)?;
/// let shared = Arc::new(DeviceBuf::from_slice(&device, &[1u16, 2, 3, 4])?);
/// assert_eq!(DeviceStorage::byte_len(&shared), 8);
/// let pairs = DeviceSlice::<u32>::from_storage(&shared)?; // the same 8 bytes
/// assert_eq!(pairs.len(), 2);
/// # Ok::<(), ascend::Error>(())
/// ```
///
/// # Safety
///
/// This crate queues device work on the range and lends typed views of it
/// on the strength of these promises. For every value `s` of the type:
///
/// - **A live range.** `s.byte_len()` bytes at `s.device_ptr()` are device
///   memory that the runtime reaches with a context of `s.device()`
///   current (the address is NULL only when `s.byte_len()` is 0).
/// - **Stable.** The three methods return the same values for as long as
///   `s` lives, moves included (moving `s` does not move its memory).
/// - **Freed only by dropping.** The range stays allocated until `s` is
///   dropped: nothing else frees it, and a value that is leaked (never
///   dropped, e.g. after [`std::mem::forget`]) never lets it be freed or
///   reused. A type that only borrows the owner of the memory cannot
///   promise this (forgetting the value ends the borrow); one that holds
///   the owner (e.g. in an `Arc`) can.
/// - **Suspended only while reserved.** A type may unmap its range for a
///   while only if it documents it and the addresses stay reserved for it
///   meanwhile, so that nothing else is ever mapped there: device work on
///   the range then fails in the runtime or on the device and reaches no
///   other memory, and the host is never touched. (A
///   [`DevicePool`](crate::pool::DevicePool) asleep does this.)
/// - **No writer while shared.** While `s` is borrowed shared, nothing
///   writes the range; it is written only through exclusive access to `s`
///   (`&mut s`, or `s` by value), and only for a type that also implements
///   [`DeviceStorageMut`].
///
/// [`DeviceSlice::from_storage`]: crate::DeviceSlice::from_storage
/// [`DeviceSliceMut::from_storage`]: crate::DeviceSliceMut::from_storage
/// [`Ordered`]: crate::stream::Ordered
/// [`IpcExport::new`]: crate::share::IpcExport::new
pub unsafe trait DeviceStorage {
    /// The device whose context reaches the memory.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::memory::DeviceStorage;
    /// use ascend::{Device, DeviceBuf};
    /// let device = Device::new(0)?;
    /// let block: Box<dyn DeviceStorage> = Box::new(DeviceBuf::<u8>::zeroed(&device, 64)?);
    /// assert_eq!(block.device(), &device);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    fn device(&self) -> &Device;

    /// The first device address of the range (never dereferenced on the
    /// host); NULL only for an empty range.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::memory::{DeviceStorage, address_range};
    /// use ascend::{Device, DeviceBuf};
    /// let device = Device::new(0)?;
    /// let buf = DeviceBuf::<u32>::zeroed(&device, 100)?;
    /// assert_eq!(buf.device_ptr(), buf.as_raw().cast_const());
    /// assert_eq!(address_range(buf.device_ptr())?.base, buf.device_ptr() as usize);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    fn device_ptr(&self) -> *const c_void;

    /// The size of the range in bytes.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::memory::DeviceStorage;
    /// use ascend::{Device, DeviceBuf};
    /// /// The bytes held by a set of blocks of any storage type.
    /// fn total_bytes(blocks: &[&dyn DeviceStorage]) -> usize {
    ///     blocks.iter().map(|block| block.byte_len()).sum()
    /// }
    /// let device = Device::new(0)?;
    /// let (a, b) = (DeviceBuf::<u16>::zeroed(&device, 10)?, DeviceBuf::<f64>::zeroed(&device, 3)?);
    /// assert_eq!(total_bytes(&[&a, &b]), 20 + 24);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    fn byte_len(&self) -> usize;
}

/// A [`DeviceStorage`] whose holder may write the range: exclusive access
/// to the value (`&mut` or ownership) is exclusive access to its bytes.
///
/// ```
/// use ascend::{Device, DeviceBuf, DeviceSlice, DeviceSliceMut};
/// let device = Device::new(0)?;
/// let mut block = Box::new(DeviceBuf::<u8>::zeroed(&device, 8)?);
/// DeviceSliceMut::<u32>::from_storage(&mut block)?.write_from_host(&[1, 2])?;
/// assert_eq!(DeviceSlice::<u32>::from_storage(&block)?.to_vec()?, [1, 2]);
/// # Ok::<(), ascend::Error>(())
/// ```
///
/// # Safety
///
/// The promises of [`DeviceStorage`], and: while a value is borrowed
/// exclusively or owned by value, nothing else reads or writes its range
/// (no other value, view or queued work reaches those bytes), so whoever
/// holds `&mut s` or `s` may write them, also asynchronously for as long
/// as it keeps `s`.
pub unsafe trait DeviceStorageMut: DeviceStorage {
    /// The first device address of the range, for writing.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::memory::{DeviceStorage, DeviceStorageMut};
    /// use ascend::{Device, DeviceBuf, sys};
    /// let device = Device::new(0)?;
    /// let mut block = Box::new(DeviceBuf::<u8>::zeroed(&device, 8)?);
    /// let (address, bytes) = (block.device_ptr_mut(), DeviceStorage::byte_len(&block));
    /// // SAFETY: `address` is the start of `bytes` bytes of device memory that
    /// // `block` owns; `&mut block` above makes this the only writer.
    /// ascend::check("aclrtMemset", unsafe { sys::aclrtMemset(address, bytes, 0xEE, bytes) })?;
    /// assert_eq!(block.to_vec()?, [0xEE; 8]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    fn device_ptr_mut(&mut self) -> *mut c_void {
        self.device_ptr().cast_mut()
    }
}

// SAFETY: the buffer owns its allocation (`aclrtMalloc*` on its device) and
// frees it only when dropped or freed by value; a leaked buffer is never
// freed. The address, length and device never change, and device memory
// is written only through `&mut self` or by value.
unsafe impl<T: Pod> DeviceStorage for DeviceBuf<T> {
    fn device(&self) -> &Device {
        DeviceBuf::device(self)
    }

    fn device_ptr(&self) -> *const c_void {
        self.as_raw()
    }

    fn byte_len(&self) -> usize {
        DeviceBuf::byte_len(self)
    }
}

// SAFETY: the buffer owns its allocation exclusively: no other value or
// view reaches it while the buffer is borrowed exclusively or moved.
unsafe impl<T: Pod> DeviceStorageMut for DeviceBuf<T> {}

// SAFETY: the box owns the storage: the promises of `S` carry over (moving
// the box does not move `S`, and dropping it drops `S`).
unsafe impl<S: DeviceStorage + ?Sized> DeviceStorage for Box<S> {
    fn device(&self) -> &Device {
        (**self).device()
    }

    fn device_ptr(&self) -> *const c_void {
        (**self).device_ptr()
    }

    fn byte_len(&self) -> usize {
        (**self).byte_len()
    }
}

// SAFETY: `&mut Box<S>` and `Box<S>` give exclusive access to `S`.
unsafe impl<S: DeviceStorageMut + ?Sized> DeviceStorageMut for Box<S> {
    fn device_ptr_mut(&mut self) -> *mut c_void {
        (**self).device_ptr_mut()
    }
}

// SAFETY: every `Arc` clone shares `S`, which is dropped (and so may free
// its range) only with the last clone; a leaked clone keeps it alive.
// Holders get only `&S`, under which `S` promises no writes. `Arc` is not
// `DeviceStorageMut`: another clone may be reading.
unsafe impl<S: DeviceStorage + ?Sized> DeviceStorage for Arc<S> {
    fn device(&self) -> &Device {
        (**self).device()
    }

    fn device_ptr(&self) -> *const c_void {
        (**self).device_ptr()
    }

    fn byte_len(&self) -> usize {
        (**self).byte_len()
    }
}

//! Typed views of device memory: [`DeviceSlice`] and [`DeviceSliceMut`].
//!
//! A view is a handle to `len` elements at a device address, borrowed from
//! the owner of the memory ([`DeviceBuf`](crate::DeviceBuf), a
//! [`MappedRegion`](crate::vmm::MappedRegion), ...). It is never a Rust
//! reference to the bytes: data moves only through its copy methods, which
//! check lengths, and sub-views are bounds-checked.

mod cast;
mod from_storage;
mod split;

use super::byte_len::same_len;
use super::transfer;
use crate::Device;
use crate::error::{Call, Error, Result};
use ascend_sys as sys;
use bytemuck::Pod;
use std::ffi::c_void;
use std::fmt;
use std::marker::PhantomData;
use std::ops::{Bound, RangeBounds};

/// A shared view of `len` elements of `T` in device memory.
///
/// **Element types:** any [`Pod`](bytemuck::Pod) type (plain bytes, every
/// bit pattern valid). For a struct of your own, derive it through the
/// SDK's re-export, with no `bytemuck` dependency of your own:
/// `#[derive(Clone, Copy, ascend::bytemuck::Pod, ascend::bytemuck::Zeroable)]`,
/// `#[bytemuck(crate = "ascend::bytemuck")]`, `#[repr(C)]` (runnable example:
/// [`crate::bytemuck`]).
///
/// ```
/// use ascend::{Device, DeviceBuf};
/// let device = Device::new(0)?;
/// let buf = DeviceBuf::from_slice(&device, &[10u16, 11, 12, 13])?;
/// let middle = buf.as_slice().slice(1..3)?;
/// assert_eq!(middle.to_vec()?, [11, 12]);
/// assert!(buf.as_slice().slice(2..9).is_err());
/// # Ok::<(), ascend::Error>(())
/// ```
///
/// **Threads:** `DeviceSlice` is `Send`, `Sync` and `Copy`: a shared view only
/// reads.
///
/// **Guide:** [Concepts: memory kinds](crate::guide::concepts).
pub struct DeviceSlice<'a, T> {
    address: usize,
    len: usize,
    device: &'a Device,
    _elements: PhantomData<&'a [T]>,
}

/// An exclusive view of `len` elements of `T` in device memory.
///
/// **Element types:** any [`Pod`](bytemuck::Pod) type (plain bytes, every
/// bit pattern valid). For a struct of your own, derive it through the
/// SDK's re-export, with no `bytemuck` dependency of your own:
/// `#[derive(Clone, Copy, ascend::bytemuck::Pod, ascend::bytemuck::Zeroable)]`,
/// `#[bytemuck(crate = "ascend::bytemuck")]`, `#[repr(C)]` (runnable example:
/// [`crate::bytemuck`]).
///
/// ```
/// use ascend::{Device, DeviceBuf};
/// let device = Device::new(0)?;
/// let mut buf = DeviceBuf::<u32>::zeroed(&device, 6)?;
/// let mut view = buf.as_mut_slice();
/// assert!(view.slice_mut(..7).is_err()); // sub-views are bounds-checked
/// let (mut left, mut right) = view.split_at_mut(3)?; // two disjoint writers
/// left.fill_bytes(0x01)?;
/// right.write_from_host(&[4, 5, 6])?;
/// assert_eq!(buf.to_vec()?, [0x0101_0101, 0x0101_0101, 0x0101_0101, 4, 5, 6]);
/// # Ok::<(), ascend::Error>(())
/// ```
////// An exclusive view of `len` elements of `T` in device memory.
///
/// **Threads:** `DeviceSliceMut` is `Send` and `Sync`: it is the only way to
/// the bytes it covers, and a `&DeviceSliceMut` only reads.
///
/// **Guide:** [Concepts: memory kinds](crate::guide::concepts).
pub struct DeviceSliceMut<'a, T> {
    address: usize,
    len: usize,
    device: &'a Device,
    _elements: PhantomData<&'a mut [T]>,
}

impl<T: Pod> Clone for DeviceSlice<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T: Pod> Copy for DeviceSlice<'_, T> {}

// SAFETY: a view is an address and a length; the memory it names is only
// touched through the runtime, which may be called from any thread.
unsafe impl<T: Pod> Send for DeviceSlice<'_, T> {}
// SAFETY: as above; shared views only read.
unsafe impl<T: Pod> Sync for DeviceSlice<'_, T> {}
// SAFETY: as above; the exclusive view is unique by its borrow.
unsafe impl<T: Pod> Send for DeviceSliceMut<'_, T> {}
// SAFETY: `&DeviceSliceMut` only allows reads (through `as_slice`).
unsafe impl<T: Pod> Sync for DeviceSliceMut<'_, T> {}

/// `range` of a view of `len` elements, checked.
fn sub_range(call: Call, len: usize, range: impl RangeBounds<usize>) -> Result<(usize, usize)> {
    let start = match range.start_bound() {
        Bound::Included(&start) => start,
        Bound::Excluded(&start) => start.saturating_add(1),
        Bound::Unbounded => 0,
    };
    let end = match range.end_bound() {
        Bound::Included(&end) => end.saturating_add(1),
        Bound::Excluded(&end) => end,
        Bound::Unbounded => len,
    };
    if start > end || end > len {
        return Err(Error::invalid(
            call,
            format!("range {start}..{end} is out of bounds for a view of {len} elements"),
        ));
    }
    Ok((start, end - start))
}

impl<'a, T: Pod> DeviceSlice<'a, T> {
    /// A view of `len` elements at the device address `address`.
    ///
    /// # Safety
    ///
    /// `address` must be the start of `len * size_of::<T>()` bytes of device
    /// memory (accessible to `device`) that stay allocated and are not
    /// written through another view for `'a`.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, DeviceBuf, DeviceSlice};
    /// let device = Device::new(0)?;
    /// let buf = DeviceBuf::from_slice(&device, &[1u16, 2, 3, 4])?;
    /// // SAFETY: `buf` holds 4 `u16` at this address, outlives the view and is
    /// // not written while the view lives.
    /// let view = unsafe { DeviceSlice::<u16>::from_raw_parts(buf.as_raw(), 4, &device) };
    /// assert_eq!(view.to_vec()?, [1, 2, 3, 4]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub unsafe fn from_raw_parts(address: *mut c_void, len: usize, device: &'a Device) -> Self {
        Self {
            address: address as usize,
            len,
            device,
            _elements: PhantomData,
        }
    }

    /// Number of elements.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, DeviceBuf};
    /// let device = Device::new(0)?;
    /// let buf = DeviceBuf::<u16>::zeroed(&device, 10)?;
    /// assert_eq!(buf.as_slice().len(), 10);
    /// assert_eq!(buf.as_slice().slice(2..5)?.len(), 3);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the view has no elements.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, DeviceBuf};
    /// let device = Device::new(0)?;
    /// let buf = DeviceBuf::<u16>::zeroed(&device, 4)?;
    /// assert!(!buf.as_slice().is_empty());
    /// assert!(buf.as_slice().slice(4..)?.is_empty()); // the empty tail
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
    /// let buf = DeviceBuf::<f32>::zeroed(&device, 16)?;
    /// let quarter = buf.as_slice().slice(..4)?;
    /// assert_eq!(quarter.byte_len(), 16);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn byte_len(&self) -> usize {
        self.len * size_of::<T>()
    }

    /// The device address (for raw `ascend-sys` calls; never dereference it
    /// on the host).
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, DeviceBuf};
    /// let device = Device::new(0)?;
    /// let buf = DeviceBuf::<u32>::zeroed(&device, 8)?;
    /// let tail = buf.as_slice().slice(6..)?;
    /// // A sub-view starts `start * size_of::<T>()` bytes into the buffer.
    /// assert_eq!(tail.as_raw() as usize, buf.as_raw() as usize + 6 * 4);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn as_raw(&self) -> *const c_void {
        self.address as *const c_void
    }

    /// The device whose context the view's copies use.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, DeviceBuf};
    /// let device = Device::new(0)?;
    /// let buf = DeviceBuf::from_slice(&device, &[1u8, 2, 3])?;
    /// let view = buf.as_slice();
    /// // E.g. to stage a copy of the view on its own device:
    /// let copy = DeviceBuf::from_slice(view.device(), &view.to_vec()?)?;
    /// assert_eq!((copy.device(), copy.to_vec()?), (&device, vec![1, 2, 3]));
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn device(&self) -> &'a Device {
        self.device
    }

    /// A sub-view of the elements in `range`.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when `range` is out of bounds.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, DeviceBuf};
    /// let device = Device::new(0)?;
    /// let buf = DeviceBuf::from_slice(&device, &[10u32, 20, 30, 40])?;
    /// let view = buf.as_slice();
    /// let tail = view.slice(2..)?;
    /// assert_eq!(tail.to_vec()?, [30, 40]);
    /// assert_eq!(tail.slice(..1)?.to_vec()?, [30]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn slice(&self, range: impl RangeBounds<usize>) -> Result<DeviceSlice<'a, T>> {
        self.slice_for(Call::rust("DeviceSlice::slice"), range)
    }

    /// [`DeviceSlice::slice`] for the public method `call`.
    pub(crate) fn slice_for(&self, call: Call, range: impl RangeBounds<usize>) -> Result<DeviceSlice<'a, T>> {
        let (start, len) = sub_range(call, self.len, range)?;
        Ok(DeviceSlice {
            address: self.address + start * size_of::<T>(),
            len,
            device: self.device,
            _elements: PhantomData,
        })
    }

    /// Copies the view into `dst` (host); the lengths must be equal.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] on a length mismatch (nothing is copied);
    /// the runtime's code.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, DeviceBuf};
    /// let device = Device::new(0)?;
    /// let buf = DeviceBuf::from_slice(&device, &[1u8, 2, 3, 4])?;
    /// let mut host = [0u8; 2];
    /// buf.as_slice().slice(2..)?.read_to_host(&mut host)?;
    /// assert_eq!(host, [3, 4]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtMemcpy")]
    pub fn read_to_host(&self, dst: &mut [T]) -> Result<()> {
        self.copy_to_host_for(Call::new("DeviceSlice::read_to_host", "aclrtMemcpy"), dst)
    }

    /// [`DeviceSlice::read_to_host`] for the public method `call`.
    pub(crate) fn copy_to_host_for(&self, call: Call, dst: &mut [T]) -> Result<()> {
        same_len(call, self.len, dst.len())?;
        transfer::copy(
            self.device,
            dst.as_mut_ptr().cast(),
            self.as_raw(),
            self.byte_len(),
            sys::ACL_MEMCPY_DEVICE_TO_HOST,
        )
    }

    /// The contents, copied into a new `Vec`.
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
    /// let buf = DeviceBuf::from_slice(&device, &[5i8, -5])?;
    /// assert_eq!(buf.as_slice().to_vec()?, [5, -5]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtMemcpy")]
    pub fn to_vec(&self) -> Result<Vec<T>> {
        let mut out = vec![T::zeroed(); self.len];
        self.copy_to_host_for(Call::new("DeviceSlice::to_vec", "aclrtMemcpy"), &mut out)?;
        Ok(out)
    }
}

impl<'a, T: Pod> DeviceSliceMut<'a, T> {
    /// An exclusive view of `len` elements at the device address `address`.
    ///
    /// # Safety
    ///
    /// As [`DeviceSlice::from_raw_parts`], and no other view may use the
    /// memory for `'a`.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, DeviceBuf, DeviceSliceMut};
    /// let device = Device::new(0)?;
    /// let buf = DeviceBuf::<u32>::zeroed(&device, 4)?;
    /// // SAFETY: `buf` holds 4 `u32` at this address, outlives the view, and
    /// // nothing else uses them while the view lives.
    /// let mut view = unsafe { DeviceSliceMut::<u32>::from_raw_parts(buf.as_raw(), 4, &device) };
    /// view.write_from_host(&[1, 2, 3, 4])?;
    /// assert_eq!(buf.to_vec()?, [1, 2, 3, 4]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub unsafe fn from_raw_parts(address: *mut c_void, len: usize, device: &'a Device) -> Self {
        Self {
            address: address as usize,
            len,
            device,
            _elements: PhantomData,
        }
    }

    /// Number of elements.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, DeviceBuf};
    /// let device = Device::new(0)?;
    /// let mut buf = DeviceBuf::<u16>::zeroed(&device, 10)?;
    /// let mut view = buf.as_mut_slice();
    /// assert_eq!(view.len(), 10);
    /// assert_eq!(view.slice_mut(3..)?.len(), 7);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the view has no elements.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, DeviceBuf};
    /// let device = Device::new(0)?;
    /// let mut buf = DeviceBuf::<u8>::zeroed(&device, 4)?;
    /// let (head, tail) = buf.as_mut_slice().split_at_mut(4)?;
    /// assert!(!head.is_empty());
    /// assert!(tail.is_empty());
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
    /// let mut buf = DeviceBuf::<u64>::zeroed(&device, 4)?;
    /// assert_eq!(buf.as_mut_slice().byte_len(), 32);
    /// assert_eq!(buf.as_mut_slice().cast::<u8>()?.len(), 32);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn byte_len(&self) -> usize {
        self.len * size_of::<T>()
    }

    /// The device address (for raw `ascend-sys` calls).
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, DeviceBuf, sys};
    /// let device = Device::new(0)?;
    /// let mut buf = DeviceBuf::<u8>::zeroed(&device, 8)?;
    /// let mut view = buf.as_mut_slice();
    /// let tail = view.slice_mut(4..)?;
    /// // SAFETY: the view covers 4 bytes of live device memory and is their
    /// // only writer while it lives.
    /// ascend::check("aclrtMemset", unsafe { sys::aclrtMemset(tail.as_raw(), 4, 0x7F, 4) })?;
    /// assert_eq!(buf.to_vec()?, [0, 0, 0, 0, 0x7F, 0x7F, 0x7F, 0x7F]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn as_raw(&self) -> *mut c_void {
        self.address as *mut c_void
    }

    /// A shared view of the same elements, for the borrow's duration.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, DeviceBuf};
    /// let device = Device::new(0)?;
    /// let mut buf = DeviceBuf::from_slice(&device, &[1u8, 2])?;
    /// let view = buf.as_mut_slice();
    /// assert_eq!(view.as_slice().to_vec()?, [1, 2]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn as_slice(&self) -> DeviceSlice<'_, T> {
        DeviceSlice {
            address: self.address,
            len: self.len,
            device: self.device,
            _elements: PhantomData,
        }
    }

    /// An exclusive sub-view of the elements in `range`.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when `range` is out of bounds.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, DeviceBuf};
    /// let device = Device::new(0)?;
    /// let mut buf = DeviceBuf::<u8>::zeroed(&device, 4)?;
    /// let mut view = buf.as_mut_slice();
    /// view.slice_mut(..2)?.fill_bytes(7)?;
    /// assert_eq!(buf.to_vec()?, [7, 7, 0, 0]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn slice_mut(&mut self, range: impl RangeBounds<usize>) -> Result<DeviceSliceMut<'_, T>> {
        let (start, len) = sub_range(Call::rust("DeviceSliceMut::slice_mut"), self.len, range)?;
        Ok(DeviceSliceMut {
            address: self.address + start * size_of::<T>(),
            len,
            device: self.device,
            _elements: PhantomData,
        })
    }

    /// Copies `src` (host) into the view; the lengths must be equal.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] on a length mismatch (nothing is copied);
    /// the runtime's code.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, DeviceBuf};
    /// let device = Device::new(0)?;
    /// let mut buf = DeviceBuf::<u16>::zeroed(&device, 4)?;
    /// buf.as_mut_slice().slice_mut(1..3)?.write_from_host(&[5, 6])?;
    /// assert_eq!(buf.to_vec()?, [0, 5, 6, 0]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtMemcpy")]
    pub fn write_from_host(&mut self, src: &[T]) -> Result<()> {
        self.copy_from_host_for(Call::new("DeviceSliceMut::write_from_host", "aclrtMemcpy"), src)
    }

    /// [`DeviceSliceMut::write_from_host`] for the public method `call`.
    pub(crate) fn copy_from_host_for(&mut self, call: Call, src: &[T]) -> Result<()> {
        same_len(call, self.len, src.len())?;
        transfer::copy(
            self.device,
            self.as_raw(),
            src.as_ptr().cast(),
            self.byte_len(),
            sys::ACL_MEMCPY_HOST_TO_DEVICE,
        )
    }

    /// Copies another device view (same length) into this one.
    ///
    /// # Errors
    ///
    /// As [`DeviceSliceMut::write_from_host`].
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, DeviceBuf};
    /// let device = Device::new(0)?;
    /// let src = DeviceBuf::from_slice(&device, &[1u32, 2, 3, 4])?;
    /// let mut dst = DeviceBuf::<u32>::zeroed(&device, 2)?;
    /// dst.as_mut_slice().copy_from_device(&src.slice(2..)?)?;
    /// assert_eq!(dst.to_vec()?, [3, 4]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtMemcpy")]
    pub fn copy_from_device(&mut self, src: &DeviceSlice<'_, T>) -> Result<()> {
        self.copy_from_device_for(Call::new("DeviceSliceMut::copy_from_device", "aclrtMemcpy"), src)
    }

    /// [`DeviceSliceMut::copy_from_device`] for the public method `call`.
    pub(crate) fn copy_from_device_for(&mut self, call: Call, src: &DeviceSlice<'_, T>) -> Result<()> {
        same_len(call, self.len, src.len)?;
        transfer::copy(
            self.device,
            self.as_raw(),
            src.as_raw(),
            self.byte_len(),
            sys::ACL_MEMCPY_DEVICE_TO_DEVICE,
        )
    }

    /// Sets every byte of the view to `value` (`aclrtMemset`).
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
    /// let mut buf = DeviceBuf::<u8>::zeroed(&device, 3)?;
    /// buf.as_mut_slice().slice_mut(1..)?.fill_bytes(0xFF)?;
    /// assert_eq!(buf.to_vec()?, [0, 0xFF, 0xFF]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtMemset")]
    pub fn fill_bytes(&mut self, value: u8) -> Result<()> {
        transfer::fill(self.device, self.as_raw(), value, self.byte_len())
    }

    /// Sets every 32-bit element of the view to `value`, in the device's
    /// byte order (`aclrtMemsetD32`); an empty view does nothing.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] if the view does not start on a 4-byte
    /// boundary or its byte length is not a multiple of 4 (nothing is
    /// called then); otherwise the runtime's code.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, DeviceBuf};
    /// let device = Device::new(0)?;
    /// let mut buf = DeviceBuf::<u32>::zeroed(&device, 4)?;
    /// buf.as_mut_slice().slice_mut(1..3)?.fill_u32(0xDEAD_BEEF)?;
    /// assert_eq!(buf.to_vec()?, [0, 0xDEAD_BEEF, 0xDEAD_BEEF, 0]);
    /// // Two bytes are not a 32-bit element.
    /// let mut bytes = DeviceBuf::<u8>::zeroed(&device, 6)?;
    /// assert!(bytes.as_mut_slice().slice_mut(..2)?.fill_u32(1).is_err());
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtMemsetD32")]
    pub fn fill_u32(&mut self, value: u32) -> Result<()> {
        transfer::fill_u32(
            Call::new("DeviceSliceMut::fill_u32", "aclrtMemsetD32"),
            self.device,
            self.as_raw(),
            value,
            self.byte_len(),
        )
    }
}

impl<T: Pod> fmt::Debug for DeviceSlice<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DeviceSlice")
            .field("address", &self.as_raw())
            .field("len", &self.len)
            .field("device", &self.device.id())
            .finish()
    }
}

impl<T: Pod> fmt::Debug for DeviceSliceMut<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DeviceSliceMut")
            .field("address", &self.as_raw())
            .field("len", &self.len)
            .field("device", &self.device.id())
            .finish()
    }
}

//! [`DeviceBuf::into_raw`] and [`DeviceBuf::from_raw`]: handing an
//! allocation to code outside this crate (a sub-allocator, an operator
//! library) and taking it back.

use super::DeviceBuf;
use crate::Device;
use bytemuck::Pod;
use std::ffi::c_void;
use std::marker::PhantomData;
use std::ptr::NonNull;

impl<T: Pod> DeviceBuf<T> {
    /// Gives up ownership of the memory without freeing it: returns its
    /// device address (NULL for an empty buffer, which owns nothing), its
    /// length in elements of `T`, and its device.
    ///
    /// The caller now owns the allocation: free it with `aclrtFree`, or
    /// give it back to [`DeviceBuf::from_raw`]. Keep the returned
    /// [`Device`] (or another of the same id) alive meanwhile: when the last
    /// `Device` of an id is dropped, the runtime resets the device, which
    /// frees all of its memory.
    ///
    /// ```
    /// use ascend::{Device, DeviceBuf};
    /// let device = Device::new(0)?;
    /// let buf = DeviceBuf::from_slice(&device, &[1u32, 2, 3, 4])?;
    /// let (address, len, device) = buf.into_raw();
    /// assert_eq!(len, 4);
    /// // SAFETY: the allocation `into_raw` gave up, on its device, read
    /// // back as the 16 bytes it holds; nothing else uses or frees it.
    /// let bytes = unsafe { DeviceBuf::<u8>::from_raw(address, 16, &device) };
    /// assert_eq!(bytes.to_vec()?[..4], 1u32.to_ne_bytes());
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[must_use = "the memory leaks unless it is freed or given back to `DeviceBuf::from_raw`"]
    pub fn into_raw(mut self) -> (*mut c_void, usize, Device) {
        // With the address taken, dropping `self` frees nothing.
        let address = self.address.take().map_or(std::ptr::null_mut(), NonNull::as_ptr);
        (address, self.len, self.device.clone())
    }

    /// Takes ownership of `len` elements of device memory at `address`: the
    /// returned buffer frees it (`aclrtFree`) when dropped or
    /// [freed](DeviceBuf::free). A NULL `address` makes an empty buffer that
    /// owns nothing.
    ///
    /// The element type may differ from the one the memory was allocated or
    /// given up with, as long as the bytes cover `len` elements (see also
    /// [`DeviceBuf::cast`], which checks this).
    ///
    /// # Safety
    ///
    /// Either `address` is NULL and `len * size_of::<T>()` is 0, or all of:
    ///
    /// - `address` is the start of an allocation made by `aclrtMalloc`,
    ///   `aclrtMallocAlign32`, `aclrtMallocCached` or `aclrtMallocWithCfg`
    ///   with a context of `device` current (directly, or given up by
    ///   [`DeviceBuf::into_raw`] of a buffer on `device`), and not freed
    ///   since. Dropping the last [`Device`] of its id resets the device and
    ///   frees it: keep one alive while the memory is held raw.
    /// - The allocation holds at least `len * size_of::<T>()` bytes (so the
    ///   product does not overflow).
    /// - Ownership moves to the returned buffer: nothing else frees the
    ///   memory, and nothing else reads or writes it while the buffer lives
    ///   except through the buffer (and the views it lends). That includes
    ///   device work queued before this call: it must have finished.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, DeviceBuf};
    /// let device = Device::new(0)?;
    /// let (address, len, device) = DeviceBuf::from_slice(&device, &[9u16; 8])?.into_raw();
    /// // SAFETY: the allocation `into_raw` gave up, on its device, with its
    /// // length; nothing else uses or frees it.
    /// let buf = unsafe { DeviceBuf::<u16>::from_raw(address, len, &device) };
    /// assert_eq!(buf.to_vec()?, [9; 8]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub unsafe fn from_raw(address: *mut c_void, len: usize, device: &Device) -> Self {
        Self {
            address: NonNull::new(address),
            len,
            device: device.clone(),
            _elements: PhantomData,
        }
    }
}

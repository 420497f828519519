//! [`ScopedDevice`] and [`ScopedHost`]: buffers an
//! [`AsyncScope`](super::AsyncScope) holds exclusively until it ends, as
//! copyable handles for several transfers.

use super::lengths::checked_range;
use super::sides::sealed::{DeviceRead, DeviceWrite, HostRead, HostWrite};
use crate::error::{Call, Result};
use bytemuck::Pod;
use std::ffi::c_void;
use std::fmt;
use std::marker::PhantomData;
use std::ops::RangeBounds;

/// `range` of `len` elements, checked: `(start, length)`.
fn sub_range(call: Call, len: usize, range: impl RangeBounds<usize>) -> Result<(usize, usize)> {
    checked_range(call, len, "elements", range).map(|range| (range.start, range.len()))
}

/// Device memory held exclusively by a scope until it ends
/// ([`AsyncScope::hold_device`](super::AsyncScope::hold_device)): a
/// copyable handle that any number of the scope's transfers may read or
/// write, in stream order. It cannot leave the scope.
///
/// ```
/// use ascend::{Device, DeviceBuf, stream::Stream};
/// let device = Device::new(0)?;
/// let stream = Stream::new(&device)?;
/// let mut on_device = DeviceBuf::<u8>::zeroed(&device, 8)?;
/// let mut out = [0u8; 8];
/// stream.scope(|s| {
///     let held = s.hold_device(&mut on_device);
///     s.fill_bytes(held, 1)?;
///     s.copy_to_device(&[9u8; 4], held.slice(4..)?)?;
///     s.copy_to_host(held, &mut out)
/// })?;
/// assert_eq!(out, [1, 1, 1, 1, 9, 9, 9, 9]);
/// # Ok::<(), ascend::Error>(())
/// ```
pub struct ScopedDevice<'scope, T> {
    address: usize,
    len: usize,
    _scope: PhantomData<&'scope mut &'scope ()>,
    _elements: PhantomData<fn() -> T>,
}

/// Host memory held exclusively by a scope until it ends
/// ([`AsyncScope::hold_host`](super::AsyncScope::hold_host)): a copyable
/// handle that any number of the scope's transfers may read or write, in
/// stream order. It cannot leave the scope.
///
/// ```
/// use ascend::{Device, DeviceBuf, PinnedHostBuf, stream::Stream};
/// let device = Device::new(0)?;
/// let stream = Stream::new(&device)?;
/// let first = DeviceBuf::from_slice(&device, &[1u8; 4])?;
/// let second = DeviceBuf::from_slice(&device, &[2u8; 4])?;
/// let mut host = PinnedHostBuf::<u8>::zeroed(&device, 8)?;
/// stream.scope(|s| {
///     let held = s.hold_host(&mut host); // written by two copies
///     s.copy_to_host(&first, held.slice(..4)?)?;
///     s.copy_to_host(&second, held.slice(4..)?)
/// })?;
/// assert_eq!(&host[..], [1, 1, 1, 1, 2, 2, 2, 2]);
/// # Ok::<(), ascend::Error>(())
/// ```
pub struct ScopedHost<'scope, T> {
    pointer: *mut T,
    len: usize,
    _scope: PhantomData<&'scope mut &'scope ()>,
}

impl<T: Pod> Clone for ScopedDevice<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T: Pod> Copy for ScopedDevice<'_, T> {}
impl<T: Pod> Clone for ScopedHost<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T: Pod> Copy for ScopedHost<'_, T> {}

impl<'scope, T: Pod> ScopedDevice<'scope, T> {
    /// Wraps memory the scope borrowed exclusively for `'scope`.
    pub(crate) fn new(address: *mut c_void, len: usize) -> Self {
        Self {
            address: address as usize,
            len,
            _scope: PhantomData,
            _elements: PhantomData,
        }
    }

    /// Number of elements.
    ///
    /// ```
    /// # use ascend::{Device, DeviceBuf, stream::Stream};
    /// # let device = Device::new(0)?;
    /// # let stream = Stream::new(&device)?;
    /// let mut on_device = DeviceBuf::<u16>::zeroed(&device, 10)?;
    /// stream.scope(|s| {
    ///     let held = s.hold_device(&mut on_device);
    ///     assert_eq!(held.len(), 10);
    ///     assert_eq!(held.slice(2..5)?.len(), 3);
    ///     Ok(())
    /// })?;
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it has no elements.
    ///
    /// ```
    /// # use ascend::{Device, DeviceBuf, stream::Stream};
    /// # let device = Device::new(0)?;
    /// # let stream = Stream::new(&device)?;
    /// let mut on_device = DeviceBuf::<u16>::zeroed(&device, 4)?;
    /// stream.scope(|s| {
    ///     let held = s.hold_device(&mut on_device);
    ///     assert!(!held.is_empty());
    ///     assert!(held.slice(4..)?.is_empty()); // the empty tail is in bounds
    ///     Ok(())
    /// })?;
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The device address (never dereference it on the host).
    ///
    /// ```
    /// # use ascend::{Device, DeviceBuf, stream::Stream};
    /// # let device = Device::new(0)?;
    /// # let stream = Stream::new(&device)?;
    /// let mut on_device = DeviceBuf::<u32>::zeroed(&device, 8)?;
    /// let start = on_device.as_raw() as usize;
    /// stream.scope(|s| {
    ///     let held = s.hold_device(&mut on_device);
    ///     assert_eq!(held.as_raw() as usize, start);
    ///     assert_eq!(held.slice(2..)?.as_raw() as usize, start + 2 * 4); // 2 elements of 4 bytes in
    ///     Ok(())
    /// })?;
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn as_raw(&self) -> *mut c_void {
        self.address as *mut c_void
    }

    /// The elements in `range`, held the same way.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) when `range` is out of bounds.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, DeviceBuf, Error, stream::Stream};
    /// let device = Device::new(0)?;
    /// let stream = Stream::new(&device)?;
    /// let mut on_device = DeviceBuf::<u8>::zeroed(&device, 4)?;
    /// stream.scope(|s| {
    ///     let held = s.hold_device(&mut on_device);
    ///     s.fill_bytes(held.slice(..2)?, 1)?;
    ///     s.fill_bytes(held.slice(2..)?, 2)?;
    ///     assert!(matches!(held.slice(3..6), Err(Error::InvalidArgument { .. })));
    ///     Ok(())
    /// })?;
    /// assert_eq!(on_device.to_vec()?, [1, 1, 2, 2]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn slice(&self, range: impl RangeBounds<usize>) -> Result<Self> {
        let (start, len) = sub_range(Call::rust("ScopedDevice::slice"), self.len, range)?;
        Ok(Self {
            // In bounds of the held memory, so no overflow.
            address: self.address + start * size_of::<T>(),
            len,
            _scope: PhantomData,
            _elements: PhantomData,
        })
    }
}

impl<'scope, T: Pod> ScopedHost<'scope, T> {
    /// Wraps memory the scope borrowed exclusively for `'scope`.
    pub(crate) fn new(pointer: *mut T, len: usize) -> Self {
        Self {
            pointer,
            len,
            _scope: PhantomData,
        }
    }

    /// Number of elements.
    ///
    /// ```
    /// # use ascend::{Device, stream::Stream};
    /// # let device = Device::new(0)?;
    /// # let stream = Stream::new(&device)?;
    /// let mut host = vec![0i64; 6];
    /// stream.scope(|s| {
    ///     let held = s.hold_host(&mut host);
    ///     assert_eq!(held.len(), 6);
    ///     assert_eq!(held.slice(1..)?.len(), 5);
    ///     Ok(())
    /// })?;
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it has no elements.
    ///
    /// ```
    /// # use ascend::{Device, stream::Stream};
    /// # let device = Device::new(0)?;
    /// # let stream = Stream::new(&device)?;
    /// let mut host = [0u8; 3];
    /// stream.scope(|s| {
    ///     let held = s.hold_host(&mut host);
    ///     assert!(!held.is_empty());
    ///     assert!(held.slice(..0)?.is_empty());
    ///     Ok(())
    /// })?;
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The elements in `range`, held the same way.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) when `range` is out of bounds.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, DeviceBuf, Error, stream::Stream};
    /// let device = Device::new(0)?;
    /// let stream = Stream::new(&device)?;
    /// let on_device = DeviceBuf::from_slice(&device, &[4u32, 5])?;
    /// let mut host = [0u32; 4];
    /// stream.scope(|s| {
    ///     let held = s.hold_host(&mut host);
    ///     s.copy_to_host(&on_device, held.slice(2..)?)?; // into the last two
    ///     assert!(matches!(held.slice(..5), Err(Error::InvalidArgument { .. })));
    ///     Ok(())
    /// })?;
    /// assert_eq!(host, [0, 0, 4, 5]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn slice(&self, range: impl RangeBounds<usize>) -> Result<Self> {
        let (start, len) = sub_range(Call::rust("ScopedHost::slice"), self.len, range)?;
        Ok(Self {
            pointer: self.pointer.wrapping_add(start),
            len,
            _scope: PhantomData,
        })
    }
}

impl<'scope, T: Pod> DeviceRead<'scope, T> for ScopedDevice<'scope, T> {
    fn device_read(self) -> (*const c_void, usize) {
        (self.as_raw(), self.len)
    }
}
impl<'scope, T: Pod> DeviceWrite<'scope, T> for ScopedDevice<'scope, T> {
    fn device_write(self) -> (*mut c_void, usize) {
        (self.as_raw(), self.len)
    }
}
impl<'scope, T: Pod> HostRead<'scope, T> for ScopedHost<'scope, T> {
    fn host_read(self) -> (*const T, usize) {
        (self.pointer, self.len)
    }
}
impl<'scope, T: Pod> HostWrite<'scope, T> for ScopedHost<'scope, T> {
    fn host_write(self) -> (*mut T, usize) {
        (self.pointer, self.len)
    }
}

impl<T: Pod> fmt::Debug for ScopedDevice<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ScopedDevice")
            .field("address", &self.as_raw())
            .field("len", &self.len)
            .finish()
    }
}

impl<T: Pod> fmt::Debug for ScopedHost<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ScopedHost")
            .field("pointer", &self.pointer)
            .field("len", &self.len)
            .finish()
    }
}

//! The buffers an [`AsyncScope`](super::AsyncScope) accepts on each side of
//! a transfer: [`HostSource`], [`HostDest`], [`DeviceSource`],
//! [`DeviceDest`].
//!
//! Each is implemented for borrows of lifetime `'a` only, and the scope asks
//! for `'a` = its own `'scope`: whatever is named in a transfer stays
//! borrowed (shared for sources, exclusive for destinations) until the scope
//! has synchronised. To queue several transfers that write the same buffer,
//! let the scope hold it once ([`AsyncScope::hold_device`],
//! [`AsyncScope::hold_host`]) and pass the handle it returns.
//!
//! [`AsyncScope::hold_device`]: super::AsyncScope::hold_device
//! [`AsyncScope::hold_host`]: super::AsyncScope::hold_host

use crate::memory::{DeviceBuf, DeviceSlice, DeviceSliceMut, PinnedHostBuf};
use bytemuck::Pod;
use std::ffi::c_void;

pub(crate) mod sealed {
    use bytemuck::Pod;
    use std::ffi::c_void;

    /// Host memory read by a transfer, borrowed for `'a`: its start and
    /// length in elements.
    pub trait HostRead<'a, T: Pod> {
        /// Start and length.
        fn host_read(self) -> (*const T, usize);
    }

    /// Host memory written by a transfer, borrowed exclusively for `'a`.
    pub trait HostWrite<'a, T: Pod> {
        /// Start and length.
        fn host_write(self) -> (*mut T, usize);
    }

    /// Device memory read by a transfer, borrowed for `'a`: its device
    /// address and length in elements.
    pub trait DeviceRead<'a, T: Pod> {
        /// Address and length.
        fn device_read(self) -> (*const c_void, usize);
    }

    /// Device memory written by a transfer, borrowed exclusively for `'a`.
    pub trait DeviceWrite<'a, T: Pod> {
        /// Address and length.
        fn device_write(self) -> (*mut c_void, usize);
    }
}

use sealed::{DeviceRead, DeviceWrite, HostRead, HostWrite};

/// Host memory a transfer reads: `&PinnedHostBuf<T>` (page-locked, so the
/// copy is truly asynchronous), or `&[T]`, `&[T; N]`, `&Vec<T>` (pageable:
/// the runtime synchronises the stream and copies at once), or a
/// [`ScopedHost`](super::ScopedHost). Sealed.
///
/// A helper that queues work on a scope names the sides by these traits:
///
/// ```
/// use ascend::stream::{AsyncScope, DeviceDest, HostSource, Stream};
/// use ascend::{Device, DeviceBuf, PinnedHostBuf, Result};
/// fn upload<'scope>(
///     s: &AsyncScope<'scope, '_>,
///     src: impl HostSource<'scope, f32>,
///     dst: impl DeviceDest<'scope, f32>,
/// ) -> Result<()> {
///     s.copy_to_device(src, dst)
/// }
/// # let device = Device::new(0)?;
/// # let stream = Stream::new(&device)?;
/// let pinned = PinnedHostBuf::from_slice(&device, &[1.0f32; 2])?;
/// let pageable = vec![2.0f32; 2];
/// let mut on_device = DeviceBuf::<f32>::zeroed(&device, 6)?;
/// let (a, rest) = on_device.split_at_mut(2)?;
/// let (b, c) = rest.split_at_mut(2)?;
/// stream.scope(|s| {
///     upload(s, &pinned, a)?;
///     upload(s, &pageable, b)?;
///     upload(s, &[3.0f32; 2], c)
/// })?;
/// assert_eq!(on_device.to_vec()?, [1.0, 1.0, 2.0, 2.0, 3.0, 3.0]);
/// # Ok::<(), ascend::Error>(())
/// ```
pub trait HostSource<'a, T: Pod>: HostRead<'a, T> {}
impl<'a, T: Pod, S: HostRead<'a, T>> HostSource<'a, T> for S {}

/// Host memory a transfer writes: `&mut PinnedHostBuf<T>`, or `&mut [T]`,
/// `&mut [T; N]`, `&mut Vec<T>` (pageable, see [`HostSource`]), or a
/// [`ScopedHost`](super::ScopedHost). Sealed.
///
/// ```
/// use ascend::stream::{AsyncScope, DeviceSource, HostDest, Stream};
/// use ascend::{Device, DeviceBuf, PinnedHostBuf, Result};
/// fn download<'scope>(
///     s: &AsyncScope<'scope, '_>,
///     src: impl DeviceSource<'scope, u8>,
///     dst: impl HostDest<'scope, u8>,
/// ) -> Result<()> {
///     s.copy_to_host(src, dst)
/// }
/// # let device = Device::new(0)?;
/// # let stream = Stream::new(&device)?;
/// let on_device = DeviceBuf::from_slice(&device, &[4u8; 3])?;
/// let mut pinned = PinnedHostBuf::<u8>::zeroed(&device, 3)?;
/// let mut array = [0u8; 3];
/// let mut vec = vec![0u8; 3];
/// stream.scope(|s| {
///     download(s, &on_device, &mut pinned)?;
///     download(s, &on_device, &mut array)?;
///     download(s, &on_device, &mut vec[..])
/// })?;
/// assert_eq!((&pinned[..], array, vec), (&[4u8; 3][..], [4; 3], vec![4; 3]));
/// # Ok::<(), ascend::Error>(())
/// ```
pub trait HostDest<'a, T: Pod>: HostWrite<'a, T> {}
impl<'a, T: Pod, D: HostWrite<'a, T>> HostDest<'a, T> for D {}

/// Device memory a transfer reads: `&DeviceBuf<T>`, a [`DeviceSlice`] (or a
/// reference to one), `&DeviceSliceMut`, or a
/// [`ScopedDevice`](super::ScopedDevice). Sealed. Any other
/// [`DeviceStorage`](crate::memory::DeviceStorage) takes part through a
/// typed view of it, [`DeviceSlice::from_storage`].
///
/// ```
/// use ascend::{Device, DeviceBuf, Result, stream::{AsyncScope, DeviceSource, ScopedDevice, Stream}};
/// fn duplicate<'scope>(
///     s: &AsyncScope<'scope, '_>,
///     src: impl DeviceSource<'scope, i32> + Copy,
///     dst: ScopedDevice<'scope, i32>,
/// ) -> Result<()> {
///     let half = dst.len() / 2;
///     s.copy_on_device(src, dst.slice(..half)?)?;
///     s.copy_on_device(src, dst.slice(half..)?)
/// }
/// # let device = Device::new(0)?;
/// # let stream = Stream::new(&device)?;
/// let src = DeviceBuf::from_slice(&device, &[1i32, 2, 3, 4])?;
/// let mut dst = DeviceBuf::<i32>::zeroed(&device, 4)?;
/// stream.scope(|s| {
///     let dst = s.hold_device(&mut dst);
///     duplicate(s, src.slice(..2)?, dst) // a `DeviceSlice`: `Copy`, readable twice
/// })?;
/// assert_eq!(dst.to_vec()?, [1, 2, 1, 2]);
/// # Ok::<(), ascend::Error>(())
/// ```
pub trait DeviceSource<'a, T: Pod>: DeviceRead<'a, T> {}
impl<'a, T: Pod, S: DeviceRead<'a, T>> DeviceSource<'a, T> for S {}

/// Device memory a transfer writes: `&mut DeviceBuf<T>`, a
/// [`DeviceSliceMut`], `&mut DeviceSliceMut`, or a
/// [`ScopedDevice`](super::ScopedDevice). Sealed. Any other
/// [`DeviceStorageMut`](crate::memory::DeviceStorageMut) takes part through
/// a typed view of it, [`DeviceSliceMut::from_storage`].
///
/// ```
/// use ascend::{Device, DeviceBuf, Result, stream::{AsyncScope, DeviceDest, Stream}};
/// fn clear<'scope>(s: &AsyncScope<'scope, '_>, dst: impl DeviceDest<'scope, u16>) -> Result<()> {
///     s.fill_bytes(dst, 0)
/// }
/// # let device = Device::new(0)?;
/// # let stream = Stream::new(&device)?;
/// let mut whole = DeviceBuf::from_slice(&device, &[9u16; 4])?;
/// let mut part = DeviceBuf::from_slice(&device, &[9u16; 4])?;
/// stream.scope(|s| {
///     clear(s, &mut whole)?; // `&mut DeviceBuf`
///     clear(s, part.slice_mut(1..3)?) // a `DeviceSliceMut`
/// })?;
/// assert_eq!((whole.to_vec()?, part.to_vec()?), (vec![0; 4], vec![9, 0, 0, 9]));
/// # Ok::<(), ascend::Error>(())
/// ```
pub trait DeviceDest<'a, T: Pod>: DeviceWrite<'a, T> {}
impl<'a, T: Pod, D: DeviceWrite<'a, T>> DeviceDest<'a, T> for D {}

impl<'a, T: Pod> HostRead<'a, T> for &'a [T] {
    fn host_read(self) -> (*const T, usize) {
        (self.as_ptr(), self.len())
    }
}
impl<'a, T: Pod, const N: usize> HostRead<'a, T> for &'a [T; N] {
    fn host_read(self) -> (*const T, usize) {
        (self.as_ptr(), N)
    }
}
impl<'a, T: Pod> HostRead<'a, T> for &'a Vec<T> {
    fn host_read(self) -> (*const T, usize) {
        (self.as_ptr(), self.len())
    }
}
impl<'a, T: Pod> HostRead<'a, T> for &'a PinnedHostBuf<T> {
    fn host_read(self) -> (*const T, usize) {
        (self.as_ptr(), self.len())
    }
}

impl<'a, T: Pod> HostWrite<'a, T> for &'a mut [T] {
    fn host_write(self) -> (*mut T, usize) {
        (self.as_mut_ptr(), self.len())
    }
}
impl<'a, T: Pod, const N: usize> HostWrite<'a, T> for &'a mut [T; N] {
    fn host_write(self) -> (*mut T, usize) {
        (self.as_mut_ptr(), N)
    }
}
impl<'a, T: Pod> HostWrite<'a, T> for &'a mut Vec<T> {
    fn host_write(self) -> (*mut T, usize) {
        (self.as_mut_ptr(), self.len())
    }
}
impl<'a, T: Pod> HostWrite<'a, T> for &'a mut PinnedHostBuf<T> {
    fn host_write(self) -> (*mut T, usize) {
        (self.as_mut_ptr(), self.len())
    }
}

impl<'a, T: Pod> DeviceRead<'a, T> for DeviceSlice<'a, T> {
    fn device_read(self) -> (*const c_void, usize) {
        (self.as_raw(), self.len())
    }
}
impl<'a, T: Pod> DeviceRead<'a, T> for &'a DeviceSlice<'_, T> {
    fn device_read(self) -> (*const c_void, usize) {
        (self.as_raw(), self.len())
    }
}
impl<'a, T: Pod> DeviceRead<'a, T> for &'a DeviceSliceMut<'_, T> {
    fn device_read(self) -> (*const c_void, usize) {
        (self.as_raw(), self.len())
    }
}
impl<'a, T: Pod> DeviceRead<'a, T> for &'a DeviceBuf<T> {
    fn device_read(self) -> (*const c_void, usize) {
        (self.as_raw(), self.len())
    }
}

impl<'a, T: Pod> DeviceWrite<'a, T> for DeviceSliceMut<'a, T> {
    fn device_write(self) -> (*mut c_void, usize) {
        (self.as_raw(), self.len())
    }
}
impl<'a, T: Pod> DeviceWrite<'a, T> for &'a mut DeviceSliceMut<'_, T> {
    fn device_write(self) -> (*mut c_void, usize) {
        (self.as_raw(), self.len())
    }
}
impl<'a, T: Pod> DeviceWrite<'a, T> for &'a mut DeviceBuf<T> {
    fn device_write(self) -> (*mut c_void, usize) {
        (self.as_raw(), self.len())
    }
}

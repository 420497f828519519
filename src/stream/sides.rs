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
pub trait HostSource<'a, T: Pod>: HostRead<'a, T> {}
impl<'a, T: Pod, S: HostRead<'a, T>> HostSource<'a, T> for S {}

/// Host memory a transfer writes: `&mut PinnedHostBuf<T>`, or `&mut [T]`,
/// `&mut [T; N]`, `&mut Vec<T>` (pageable, see [`HostSource`]), or a
/// [`ScopedHost`](super::ScopedHost). Sealed.
pub trait HostDest<'a, T: Pod>: HostWrite<'a, T> {}
impl<'a, T: Pod, D: HostWrite<'a, T>> HostDest<'a, T> for D {}

/// Device memory a transfer reads: `&DeviceBuf<T>`, a [`DeviceSlice`] (or a
/// reference to one), `&DeviceSliceMut`, or a
/// [`ScopedDevice`](super::ScopedDevice). Sealed. Any other
/// [`DeviceStorage`](crate::memory::DeviceStorage) takes part through a
/// typed view of it, [`DeviceSlice::from_storage`].
pub trait DeviceSource<'a, T: Pod>: DeviceRead<'a, T> {}
impl<'a, T: Pod, S: DeviceRead<'a, T>> DeviceSource<'a, T> for S {}

/// Device memory a transfer writes: `&mut DeviceBuf<T>`, a
/// [`DeviceSliceMut`], `&mut DeviceSliceMut`, or a
/// [`ScopedDevice`](super::ScopedDevice). Sealed. Any other
/// [`DeviceStorageMut`](crate::memory::DeviceStorageMut) takes part through
/// a typed view of it, [`DeviceSliceMut::from_storage`].
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

//! The asynchronous operations on [`Ordered`] buffers.

use super::Ordered;
use super::tracks::Tracks;
use crate::error::{Result, check};
use crate::memory::{DeviceStorage, DeviceStorageMut, PinnedHostBuf};
use crate::stream::Stream;
use crate::stream::lengths::{byte_len, same_len};
use ascend_sys as sys;
use bytemuck::Pod;
use std::ffi::c_void;
use std::sync::{Arc, MutexGuard};

/// The tracks of a write to `dst` and a read of `src`, locked in address
/// order so that two threads copying both ways cannot deadlock. `None`
/// for the source when it is the destination.
fn lock_pair<'a, D, S>(
    dst: &'a Ordered<D>,
    src: &'a Ordered<S>,
) -> (MutexGuard<'a, Tracks>, Option<MutexGuard<'a, Tracks>>) {
    let (dst_at, src_at) = (&dst.tracks as *const _ as usize, &src.tracks as *const _ as usize);
    if dst_at == src_at {
        (dst.tracks(), None)
    } else if dst_at < src_at {
        let first = dst.tracks();
        (first, Some(src.tracks()))
    } else {
        let second = src.tracks();
        (dst.tracks(), Some(second))
    }
}

/// Orders a copy on `stream` after the conflicting uses of both sides,
/// queues it with `queue`, and notes it.
fn ordered_copy<D, S>(
    stream: &Arc<Stream>,
    dst: &Ordered<D>,
    src: &Ordered<S>,
    queue: impl FnOnce() -> Result<()>,
) -> Result<()> {
    let (mut dst_tracks, mut src_tracks) = lock_pair(dst, src);
    dst_tracks.order(stream, true)?;
    if let Some(src_tracks) = &src_tracks {
        src_tracks.order(stream, false)?;
    }
    queue()?;
    dst_tracks.note(stream, true);
    if let Some(src_tracks) = &mut src_tracks {
        src_tracks.note(stream, false);
    }
    Ok(())
}

impl<D: DeviceStorageMut> Ordered<D> {
    /// Queues on `stream` a copy of the pinned buffer `src` into this
    /// device memory (`aclrtMemcpyAsync`, host to device), after the uses
    /// of either on other streams that it conflicts with. The device side
    /// is a [`DeviceBuf`](crate::DeviceBuf) or any owned
    /// [`DeviceStorageMut`] (an owned mapping, a segment block, a
    /// framework's own block).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) when the
    /// byte lengths differ; the runtime's code (nothing is queued then).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use ascend::stream::{Ordered, Stream};
    /// use ascend::{Device, DeviceBuf, PinnedHostBuf};
    /// let device = Device::new(0)?;
    /// let stream = Arc::new(Stream::new(&device)?);
    /// let staging = Ordered::new(PinnedHostBuf::from_slice(&device, &[2u32; 16])?);
    /// let tensor = Ordered::new(DeviceBuf::<u32>::zeroed(&device, 16)?);
    /// tensor.copy_from_host(&staging, &stream)?;
    /// assert_eq!(tensor.into_inner()?.to_vec()?, [2; 16]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn copy_from_host<T: Pod>(&self, src: &Ordered<PinnedHostBuf<T>>, stream: &Arc<Stream>) -> Result<()> {
        let (to, from) = (self.storage(), src.storage());
        let bytes = byte_len::<T>("aclrtMemcpyAsync", from.len())?;
        same_len("aclrtMemcpyAsync", to.byte_len(), bytes)?;
        let device = to.device_ptr().cast_mut();
        ordered_copy(stream, self, src, || {
            // SAFETY: both hold `bytes` bytes; neither is released or touched
            // by the host before its tracks prove this copy finished, and the
            // device side is owned by this `Ordered` (`DeviceStorageMut`).
            unsafe {
                stream.enqueue_copy(
                    device,
                    from.raw_pointer().cast_const().cast(),
                    bytes,
                    sys::ACL_MEMCPY_HOST_TO_DEVICE,
                )
            }
        })
    }

    /// Queues on `stream` a copy of the device memory `src` into this one
    /// (device to device).
    ///
    /// # Errors
    ///
    /// As [`Ordered::copy_from_host`].
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use ascend::stream::{Ordered, Stream};
    /// use ascend::{Device, DeviceBuf, PinnedHostBuf};
    /// let device = Device::new(0)?;
    /// let stream = Arc::new(Stream::new(&device)?);
    /// let a = Ordered::new(DeviceBuf::from_slice(&device, &[7u8; 8])?);
    /// let b = Ordered::new(DeviceBuf::<u8>::zeroed(&device, 8)?);
    /// b.copy_from_device(&a, &stream)?;
    /// assert_eq!(b.into_inner()?.to_vec()?, [7; 8]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn copy_from_device<S: DeviceStorage>(&self, src: &Ordered<S>, stream: &Arc<Stream>) -> Result<()> {
        let (to, from) = (self.storage(), src.storage());
        let bytes = from.byte_len();
        same_len("aclrtMemcpyAsync", to.byte_len(), bytes)?;
        let device = to.device_ptr().cast_mut();
        ordered_copy(stream, self, src, || {
            // SAFETY: as in `copy_from_host`.
            unsafe { stream.enqueue_copy(device, from.device_ptr(), bytes, sys::ACL_MEMCPY_DEVICE_TO_DEVICE) }
        })
    }

    /// Queues on `stream` setting every byte to `value`
    /// (`aclrtMemsetAsync`).
    ///
    /// # Errors
    ///
    /// The runtime's code (nothing is queued then).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use ascend::stream::{Ordered, Stream};
    /// use ascend::{Device, DeviceBuf, PinnedHostBuf};
    /// let device = Device::new(0)?;
    /// let stream = Arc::new(Stream::new(&device)?);
    /// let buf = Ordered::new(DeviceBuf::<u16>::zeroed(&device, 4)?);
    /// buf.fill_bytes(0xFF, &stream)?;
    /// assert_eq!(buf.into_inner()?.to_vec()?, [0xFFFF; 4]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn fill_bytes(&self, value: u8, stream: &Arc<Stream>) -> Result<()> {
        let to = self.storage();
        let bytes = to.byte_len();
        let mut tracks = self.tracks();
        tracks.order(stream, true)?;
        if bytes > 0 {
            stream.device().make_current()?;
            // SAFETY: device memory of `bytes` bytes owned by this `Ordered`,
            // not released before its tracks prove this memset finished.
            check("aclrtMemsetAsync", unsafe {
                sys::aclrtMemsetAsync(
                    to.device_ptr().cast_mut(),
                    bytes,
                    i32::from(value),
                    bytes,
                    stream.as_raw(),
                )
            })?;
        }
        tracks.note(stream, true);
        Ok(())
    }
}

impl<T: Pod> Ordered<PinnedHostBuf<T>> {
    /// Queues on `stream` a copy of the device memory `src` into this
    /// pinned buffer (device to host); read it with [`Ordered::get_mut`],
    /// which waits for the copy.
    ///
    /// # Errors
    ///
    /// As [`Ordered::copy_from_host`].
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use ascend::stream::{Ordered, Stream};
    /// use ascend::{Device, DeviceBuf, PinnedHostBuf};
    /// let device = Device::new(0)?;
    /// let stream = Arc::new(Stream::new(&device)?);
    /// let tensor = Ordered::new(DeviceBuf::from_slice(&device, &[4i32; 8])?);
    /// let mut out = Ordered::new(PinnedHostBuf::<i32>::zeroed(&device, 8)?);
    /// out.copy_from_device(&tensor, &stream)?;
    /// assert_eq!(&out.get_mut()?[..], [4; 8]); // `get_mut` waits for the copy
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn copy_from_device<S: DeviceStorage>(&self, src: &Ordered<S>, stream: &Arc<Stream>) -> Result<()> {
        let (to, from) = (self.storage(), src.storage());
        let bytes = byte_len::<T>("aclrtMemcpyAsync", to.len())?;
        same_len("aclrtMemcpyAsync", bytes, from.byte_len())?;
        // The buffer's own pointer (not one derived from a shared slice):
        // the device writes through it, and the host cannot read the buffer
        // while the tracks hold it (`get_mut` waits first).
        let host = to.raw_pointer().cast::<c_void>();
        ordered_copy(stream, self, src, || {
            // SAFETY: as in `copy_from_host`.
            unsafe { stream.enqueue_copy(host, from.device_ptr(), bytes, sys::ACL_MEMCPY_DEVICE_TO_HOST) }
        })
    }
}

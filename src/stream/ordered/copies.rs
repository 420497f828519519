//! The asynchronous operations on [`Ordered`] buffers.

use super::Ordered;
use super::tracks::Tracks;
use crate::error::{Result, check};
use crate::memory::{DeviceBuf, PinnedHostBuf};
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

impl<T: Pod> Ordered<DeviceBuf<T>> {
    /// Queues on `stream` a copy of the pinned buffer `src` into this
    /// buffer (`aclrtMemcpyAsync`, host to device), after the uses of
    /// either on other streams that it conflicts with.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) for
    /// different lengths; the runtime's code (nothing is queued then).
    pub fn copy_from_host(&self, src: &Ordered<PinnedHostBuf<T>>, stream: &Arc<Stream>) -> Result<()> {
        let (to, from) = (self.storage(), src.storage());
        same_len("aclrtMemcpyAsync", to.len(), from.len())?;
        let bytes = byte_len::<T>("aclrtMemcpyAsync", to.len())?;
        ordered_copy(stream, self, src, || {
            // SAFETY: both hold `bytes` bytes; neither is released or touched
            // by the host before its tracks prove this copy finished.
            unsafe { stream.enqueue_copy(to.as_raw(), from.as_ptr().cast(), bytes, sys::ACL_MEMCPY_HOST_TO_DEVICE) }
        })
    }

    /// Queues on `stream` a copy of the device buffer `src` into this one
    /// (device to device).
    ///
    /// # Errors
    ///
    /// As [`Ordered::copy_from_host`].
    pub fn copy_from_device(&self, src: &Ordered<DeviceBuf<T>>, stream: &Arc<Stream>) -> Result<()> {
        let (to, from) = (self.storage(), src.storage());
        same_len("aclrtMemcpyAsync", to.len(), from.len())?;
        let bytes = byte_len::<T>("aclrtMemcpyAsync", to.len())?;
        ordered_copy(stream, self, src, || {
            // SAFETY: as in `copy_from_host`.
            unsafe {
                stream.enqueue_copy(
                    to.as_raw(),
                    from.as_raw().cast_const(),
                    bytes,
                    sys::ACL_MEMCPY_DEVICE_TO_DEVICE,
                )
            }
        })
    }

    /// Queues on `stream` setting every byte to `value`
    /// (`aclrtMemsetAsync`).
    ///
    /// # Errors
    ///
    /// The runtime's code (nothing is queued then).
    pub fn fill_bytes(&self, value: u8, stream: &Arc<Stream>) -> Result<()> {
        let to = self.storage();
        let bytes = byte_len::<T>("aclrtMemsetAsync", to.len())?;
        let mut tracks = self.tracks();
        tracks.order(stream, true)?;
        if bytes > 0 {
            stream.device().make_current()?;
            // SAFETY: device memory of `bytes` bytes, not released before its
            // tracks prove this memset finished.
            check("aclrtMemsetAsync", unsafe {
                sys::aclrtMemsetAsync(to.as_raw(), bytes, i32::from(value), bytes, stream.as_raw())
            })?;
        }
        tracks.note(stream, true);
        Ok(())
    }
}

impl<T: Pod> Ordered<PinnedHostBuf<T>> {
    /// Queues on `stream` a copy of the device buffer `src` into this
    /// pinned buffer (device to host); read it with
    /// [`Ordered::get_mut`], which waits for the copy.
    ///
    /// # Errors
    ///
    /// As [`Ordered::copy_from_host`].
    pub fn copy_from_device(&self, src: &Ordered<DeviceBuf<T>>, stream: &Arc<Stream>) -> Result<()> {
        let (to, from) = (self.storage(), src.storage());
        same_len("aclrtMemcpyAsync", to.len(), from.len())?;
        let bytes = byte_len::<T>("aclrtMemcpyAsync", to.len())?;
        // The buffer's own pointer (not one derived from a shared slice):
        // the device writes through it, and the host cannot read the buffer
        // while the tracks hold it (`get_mut` waits first).
        let host = to.raw_pointer().cast::<c_void>();
        ordered_copy(stream, self, src, || {
            // SAFETY: as in `copy_from_host`.
            unsafe { stream.enqueue_copy(host, from.as_raw().cast_const(), bytes, sys::ACL_MEMCPY_DEVICE_TO_HOST) }
        })
    }
}

//! The asynchronous copies and memsets of [`OrderedView`]s, and the
//! [`Ordered`] methods that apply them to the whole memory.

use super::Ordered;
use super::in_flight::InFlight;
use super::lanes::{Lanes, Locked};
use super::view::{AsView, OrderedView};
use crate::error::{Call, Error, Result, check};
use crate::memory::CacheOp;
use crate::memory::transfer;
use crate::memory::{DeviceStorage, DeviceStorageMut, PinnedHostBuf};
use crate::stream::Stream;
use crate::stream::lengths::same_bytes;
use ascend_sys as sys;
use bytemuck::Pod;
use std::ffi::c_void;
use std::ops::Range;
use std::sync::Arc;

/// The lanes of a write of `to` in `dst` and a read of `from` in `src`,
/// locked (two owners in address order, so that two threads copying both
/// ways cannot deadlock) once no use in flight on either side conflicts
/// with them. `None` for the source when it is the destination's owner. A
/// lane is waited for alone, with every other unlocked, so a landing use
/// (which locks one lane at a time) never waits for this thread.
fn lock_pair_clear<'a, D, S>(
    dst: &'a Ordered<D>,
    to: &Range<usize>,
    src: &'a Ordered<S>,
    from: &Range<usize>,
) -> (Locked<'a>, Option<Locked<'a>>) {
    let (dst_lanes, src_lanes): (&Lanes, &Lanes) = (&dst.lanes, &src.lanes);
    if std::ptr::eq(dst_lanes, src_lanes) {
        return (dst_lanes.lock_clear(&[(to, true), (from, false)]), None);
    }
    let (dst_uses, src_uses): (&[_], &[_]) = (&[(to, true)], &[(from, false)]);
    loop {
        let (dst_locked, src_locked) = if (dst_lanes as *const Lanes) < (src_lanes as *const Lanes) {
            let first = Locked::lock(dst_lanes, dst_uses);
            (first, Locked::lock(src_lanes, src_uses))
        } else {
            let second = Locked::lock(src_lanes, src_uses);
            (Locked::lock(dst_lanes, dst_uses), second)
        };
        if let Some(index) = dst_locked.blocked(dst_uses) {
            drop((dst_locked, src_locked));
            dst_lanes.wait_for_lane(index, dst_uses);
        } else if let Some(index) = src_locked.blocked(src_uses) {
            drop((dst_locked, src_locked));
            src_lanes.wait_for_lane(index, src_uses);
        } else {
            return (dst_locked, Some(src_locked));
        }
    }
}

fn overlaps(a: &Range<usize>, b: &Range<usize>) -> bool {
    a.start < b.end && b.start < a.end
}

/// Orders a copy on `stream` after the conflicting uses of both sides,
/// queues it with `queue` outside the locks (its ranges in flight), and
/// notes it. The two views may be of one owner when they do not overlap.
fn ordered_copy<'a, D, S>(
    call: Call,
    stream: &'a Arc<Stream>,
    dst: OrderedView<'a, D>,
    src: OrderedView<'a, S>,
    queue: impl FnOnce() -> Result<()>,
) -> Result<()> {
    let (to, from) = (dst.range(), src.range());
    let (dst_owner, src_owner) = (dst.owner(), src.owner());
    // Refused before any lock or wait: the runtime's copies do not overlap.
    let same_owner = std::ptr::eq::<Lanes>(&*dst_owner.lanes, &*src_owner.lanes);
    if same_owner && overlaps(&to, &from) {
        return Err(Error::invalid(
            call,
            format!("the source bytes {from:?} overlap the destination bytes {to:?} of the same memory"),
        ));
    }
    // Ended after the flights below have landed.
    let _entered = (dst_owner.enter()?, src_owner.enter()?);
    let flights = {
        let (mut dst_locked, mut src_locked) = lock_pair_clear(dst_owner, &to, src_owner, &from);
        dst_locked.order(stream, &to, true)?;
        let src_side = src_locked.as_mut().unwrap_or(&mut dst_locked);
        src_side.order(stream, &from, false)?;
        let read = InFlight::take_off(src_side, from, false, Some(stream));
        (InFlight::take_off(&mut dst_locked, to, true, Some(stream)), read)
    };
    // The locks are free: copies of other ranges are queued meanwhile.
    let queued = queue();
    if queued.is_err() {
        let (write, read) = flights;
        write.not_queued();
        read.not_queued();
    }
    queued
}

/// The element count of `bytes` bytes of `T` (a 2-D copy's side).
fn elements_of<T>(bytes: usize) -> usize {
    bytes / size_of::<T>().max(1)
}

/// A copy of `src` into `dst` of equal byte lengths, their addresses
/// `to` and `from`, queued on `stream` in order (`aclrtMemcpyAsync` of
/// `kind`).
///
/// # Safety
///
/// `to` and `from` are the addresses of `dst` and `src` (device or pinned
/// host memory as `kind` says), and `dst` may be written: its owner holds
/// it exclusively (`DeviceStorageMut`, or a pinned buffer).
unsafe fn copy_1d<D, S>(
    call: Call,
    stream: &Arc<Stream>,
    (dst, to): (OrderedView<'_, D>, *mut c_void),
    (src, from): (OrderedView<'_, S>, *const c_void),
    kind: sys::aclrtMemcpyKind,
) -> Result<()> {
    let bytes = dst.byte_len();
    same_bytes(call, bytes, src.byte_len())?;
    if bytes == 0 {
        return Ok(());
    }
    ordered_copy(call, stream, dst, src, || {
        // SAFETY: both views hold `bytes` bytes; neither is released or
        // touched by the host before its owner's tracks prove this copy
        // finished, and the destination may be written (the caller's
        // contract).
        unsafe { stream.enqueue_copy(to, from, bytes, kind) }
    })
}

impl<D: DeviceStorageMut> OrderedView<'_, D> {
    /// The device address of the view, for writing (the owner holds the
    /// storage exclusively: `DeviceStorageMut`).
    fn device_ptr_for_write(&self) -> *mut c_void {
        self.device_ptr().cast_mut()
    }

    /// Queues on `stream` a copy of the pinned memory `src` (a buffer or a
    /// view of one) into this view (`aclrtMemcpyAsync`, host to device),
    /// after the uses of overlapping bytes on other streams.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when the byte lengths differ (take a
    /// view of the longer side); the runtime's code (nothing is queued
    /// then).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use ascend::stream::{Ordered, Stream};
    /// use ascend::{Device, DeviceBuf, PinnedHostBuf};
    /// let device = Device::new(0)?;
    /// let stream = Arc::new(Stream::new(&device)?);
    /// let cache = Ordered::new(DeviceBuf::<u16>::zeroed(&device, 8)?);
    /// let page = Ordered::new(PinnedHostBuf::from_slice(&device, &[7u16, 8, 9, 10])?);
    /// cache.elements::<u16>(2..4)?.copy_from_host(page.slice(1..3)?, &stream)?;
    /// assert_eq!(cache.view().to_vec::<u16>()?, [0, 0, 8, 9, 0, 0, 0, 0]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn copy_from_host<T: Pod>(&self, src: impl AsView<PinnedHostBuf<T>>, stream: &Arc<Stream>) -> Result<()> {
        let src = src.as_view();
        // SAFETY: the views' own addresses; the device side is owned by its
        // `Ordered` (`DeviceStorageMut`).
        unsafe {
            copy_1d(
                Call::new("Ordered::copy_from_host", "aclrtMemcpyAsync"),
                stream,
                (*self, self.device_ptr_for_write()),
                (src, src.host_ptr().cast_const().cast()),
                sys::ACL_MEMCPY_HOST_TO_DEVICE,
            )
        }
    }

    /// Queues on `stream` a copy of the device memory `src` (an owner or a
    /// view; a view of this view's owner too, when the two do not overlap)
    /// into this view (device to device).
    ///
    /// # Errors
    ///
    /// As [`OrderedView::copy_from_host`], and [`Error::InvalidArgument`]
    /// when `src` overlaps this view.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use ascend::stream::{Ordered, Stream};
    /// use ascend::{Device, DeviceBuf};
    /// let device = Device::new(0)?;
    /// let stream = Arc::new(Stream::new(&device)?);
    /// let buf = Ordered::new(DeviceBuf::from_slice(&device, &[1u8, 2, 3, 4, 0, 0, 0, 0])?);
    /// buf.bytes(4..)?.copy_from_device(buf.bytes(..4)?, &stream)?; // within one buffer
    /// assert_eq!(buf.view().to_vec::<u8>()?, [1, 2, 3, 4, 1, 2, 3, 4]);
    /// assert!(buf.bytes(2..6)?.copy_from_device(buf.bytes(..4)?, &stream).is_err());
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn copy_from_device<S: DeviceStorage>(&self, src: impl AsView<S>, stream: &Arc<Stream>) -> Result<()> {
        let src = src.as_view();
        // SAFETY: as in `copy_from_host`.
        unsafe {
            copy_1d(
                Call::new("Ordered::copy_from_device", "aclrtMemcpyAsync"),
                stream,
                (*self, self.device_ptr_for_write()),
                (src, src.device_ptr()),
                sys::ACL_MEMCPY_DEVICE_TO_DEVICE,
            )
        }
    }

    /// Queues on `stream` setting every byte of the view to `value`
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
    /// use ascend::{Device, DeviceBuf};
    /// let device = Device::new(0)?;
    /// let stream = Arc::new(Stream::new(&device)?);
    /// let buf = Ordered::new(DeviceBuf::<u16>::zeroed(&device, 4)?);
    /// buf.elements::<u16>(1..3)?.fill_bytes(0xFF, &stream)?;
    /// assert_eq!(buf.view().to_vec::<u16>()?, [0, 0xFFFF, 0xFFFF, 0]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtMemsetAsync")]
    pub fn fill_bytes(&self, value: u8, stream: &Arc<Stream>) -> Result<()> {
        let bytes = self.byte_len();
        if bytes == 0 {
            return Ok(());
        }
        self.queue_write(stream, || {
            // SAFETY: device memory of `bytes` bytes owned by the view's
            // `Ordered`, not released before its tracks prove this memset
            // finished (the flight notes it when it lands).
            check("aclrtMemsetAsync", unsafe {
                sys::aclrtMemsetAsync(
                    self.device_ptr_for_write(),
                    bytes,
                    i32::from(value),
                    bytes,
                    stream.as_raw(),
                )
            })
        })
    }

    /// Queues on `stream` setting every 32-bit element of the view to
    /// `value`, in the device's byte order (`aclrtMemsetD32Async`).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] if the view does not start on a 4-byte
    /// boundary or its byte length is not a multiple of 4; otherwise the
    /// runtime's code. Nothing is queued then.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use ascend::stream::{Ordered, Stream};
    /// use ascend::{Device, DeviceBuf};
    /// let device = Device::new(0)?;
    /// let stream = Arc::new(Stream::new(&device)?);
    /// let buf = Ordered::new(DeviceBuf::<u32>::zeroed(&device, 4)?);
    /// buf.elements::<u32>(1..3)?.fill_u32(0xDEAD_BEEF, &stream)?;
    /// assert_eq!(buf.view().to_vec::<u32>()?, [0, 0xDEAD_BEEF, 0xDEAD_BEEF, 0]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtMemsetD32Async")]
    pub fn fill_u32(&self, value: u32, stream: &Arc<Stream>) -> Result<()> {
        let bytes = self.byte_len();
        let call = Call::new("OrderedView::fill_u32", "aclrtMemsetD32Async");
        let count = transfer::words(call, self.device_ptr_for_write(), bytes)?;
        if count == 0 {
            return Ok(());
        }
        self.queue_write(stream, || {
            // SAFETY: device memory of `bytes` bytes owned by the view's
            // `Ordered`, not released before its tracks prove this memset
            // finished (the flight notes it when it lands).
            check("aclrtMemsetD32Async", unsafe {
                sys::aclrtMemsetD32Async(self.device_ptr_for_write(), bytes, value, count, stream.as_raw())
            })
        })
    }

    /// Orders a write of the whole view on `stream` after the uses it
    /// conflicts with, marks it in flight, and queues it with `enqueue`
    /// (on the stream's device); a write that fails to queue is taken off
    /// again.
    fn queue_write(&self, stream: &Arc<Stream>, enqueue: impl FnOnce() -> Result<()>) -> Result<()> {
        let range = self.range();
        let _entered = self.owner().enter()?;
        let flight = {
            let mut locked = self.owner().tracks_clear(&range, true);
            locked.order(stream, &range, true)?;
            InFlight::take_off(&mut locked, range, true, Some(stream))
        };
        let queued = stream.device().make_current().and_then(|()| enqueue());
        if queued.is_err() {
            flight.not_queued();
        }
        queued
    }

    /// Queues on `stream` the cache maintenance operation `op` on the
    /// view's bytes (`aclrtCmoAsync`). It is ordered like any other use of
    /// the range: [`CacheOp::Invalidate`] as a write, the other operations
    /// as reads, after the conflicting uses on other streams. An empty view
    /// does nothing.
    ///
    /// # Errors
    ///
    /// The runtime's code; nothing is queued then.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use ascend::memory::CacheOp;
    /// use ascend::stream::{Ordered, Stream};
    /// use ascend::{Device, DeviceBuf};
    /// let device = Device::new(0)?;
    /// let stream = Arc::new(Stream::new(&device)?);
    /// let buf = Ordered::new(DeviceBuf::<u32>::zeroed(&device, 1024)?);
    /// buf.elements::<u32>(..256)?.fill_u32(7, &stream)?;
    /// buf.elements::<u32>(..256)?.cache(CacheOp::Writeback, &stream)?; // after the fill
    /// assert_eq!(buf.view().to_vec::<u32>()?[..256], [7; 256]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtCmoAsync")]
    pub fn cache(&self, op: CacheOp, stream: &Arc<Stream>) -> Result<()> {
        let bytes = self.byte_len();
        if bytes == 0 {
            return Ok(());
        }
        let write = op.is_write();
        let range = self.range();
        let _entered = self.owner().enter()?;
        let flight = {
            let mut locked = self.owner().tracks_clear(&range, write);
            locked.order(stream, &range, write)?;
            InFlight::take_off(&mut locked, range, write, Some(stream))
        };
        let queued = stream.device().make_current().and_then(|()| {
            // SAFETY: device memory of `bytes` bytes owned by the view's
            // `Ordered`, not released before its tracks prove this
            // operation finished (the flight notes it when it lands).
            check("aclrtCmoAsync", unsafe {
                sys::aclrtCmoAsync(self.device_ptr_for_write(), bytes, op.as_raw(), stream.as_raw())
            })
        });
        if queued.is_err() {
            flight.not_queued();
        }
        queued
    }

    /// Queues on `stream` a 2-D copy of the rows of `shape` (in elements
    /// of `T`) from the pinned memory `src` into this view
    /// (`aclrtMemcpy2dAsync`, host to device). The rows' whole extent on
    /// each side is ordered as one range.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when the shape does not fit either side;
    /// the runtime's code (nothing is queued then).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use ascend::stream::{Copy2d, Ordered, Stream};
    /// use ascend::{Device, DeviceBuf, PinnedHostBuf};
    /// let device = Device::new(0)?;
    /// let stream = Arc::new(Stream::new(&device)?);
    /// let image = Ordered::new(PinnedHostBuf::from_slice(&device, &(0..16u8).collect::<Vec<_>>())?);
    /// let left = Ordered::new(DeviceBuf::<u8>::zeroed(&device, 8)?);
    /// left.view().copy_from_host_2d(&image, Copy2d::new(2, 4).with_src_pitch(4), &stream)?;
    /// assert_eq!(left.view().to_vec::<u8>()?, [0, 1, 4, 5, 8, 9, 12, 13]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn copy_from_host_2d<T: Pod>(
        &self,
        src: impl AsView<PinnedHostBuf<T>>,
        shape: super::super::Copy2d,
        stream: &Arc<Stream>,
    ) -> Result<()> {
        const CALL: Call = Call::new("Ordered::copy_from_host_2d", "aclrtMemcpy2dAsync");
        let src = src.as_view();
        let Some(rows) = shape.checked_bytes::<T>(CALL, src.len(), elements_of::<T>(self.byte_len()))? else {
            return Ok(());
        };
        let (device, host) = (self.device_ptr_for_write(), src.host_ptr());
        ordered_copy(CALL, stream, *self, src, || {
            // SAFETY: both sides hold the rows (`checked_bytes`); as in
            // `copy_from_host`.
            unsafe { stream.enqueue_copy_2d(device, host.cast_const().cast(), rows, sys::ACL_MEMCPY_HOST_TO_DEVICE) }
        })
    }

    /// Queues on `stream` a 2-D copy of the rows of `shape` (in elements
    /// of `T`) from the device memory `src` into this view
    /// (`aclrtMemcpy2dAsync`, device to device).
    ///
    /// # Errors
    ///
    /// As [`OrderedView::copy_from_host_2d`], and
    /// [`Error::InvalidArgument`] when `src` overlaps this view.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use ascend::{Device, DeviceBuf, stream::{Copy2d, Ordered, Stream}};
    /// let device = Device::new(0)?;
    /// let stream = Arc::new(Stream::new(&device)?);
    /// let matrix = Ordered::new(DeviceBuf::from_slice(&device, &[1u32, 2, 3, 4, 5, 6])?); // 2 rows of 3
    /// let corner = Ordered::new(DeviceBuf::<u32>::zeroed(&device, 4)?);
    /// let shape = Copy2d::new(2, 2).with_src_pitch(3); // the left 2 columns
    /// corner.view().copy_from_device_2d::<u32, _>(&matrix, shape, &stream)?;
    /// assert_eq!(corner.view().to_vec::<u32>()?, [1, 2, 4, 5]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn copy_from_device_2d<T: Pod, S: DeviceStorage>(
        &self,
        src: impl AsView<S>,
        shape: super::super::Copy2d,
        stream: &Arc<Stream>,
    ) -> Result<()> {
        const CALL: Call = Call::new("Ordered::copy_from_device_2d", "aclrtMemcpy2dAsync");
        let src = src.as_view();
        let Some(rows) = shape.checked_bytes::<T>(
            CALL,
            elements_of::<T>(src.byte_len()),
            elements_of::<T>(self.byte_len()),
        )?
        else {
            return Ok(());
        };
        let (to, from) = (self.device_ptr_for_write(), src.device_ptr());
        ordered_copy(CALL, stream, *self, src, || {
            // SAFETY: as in `copy_from_host_2d`.
            unsafe { stream.enqueue_copy_2d(to, from, rows, sys::ACL_MEMCPY_DEVICE_TO_DEVICE) }
        })
    }
}

impl<T: Pod> OrderedView<'_, PinnedHostBuf<T>> {
    /// Queues on `stream` a copy of the device memory `src` into this
    /// pinned view (device to host); read it with
    /// [`OrderedView::with_host`] or [`Ordered::get_mut`], which wait for
    /// the copy.
    ///
    /// # Errors
    ///
    /// As [`OrderedView::copy_from_host`].
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use ascend::stream::{Ordered, Stream};
    /// use ascend::{Device, DeviceBuf, PinnedHostBuf};
    /// let device = Device::new(0)?;
    /// let stream = Arc::new(Stream::new(&device)?);
    /// let tensor = Ordered::new(DeviceBuf::from_slice(&device, &[1i32, 2, 3, 4])?);
    /// let out = Ordered::new(PinnedHostBuf::<i32>::zeroed(&device, 2)?);
    /// out.view().copy_from_device(tensor.elements::<i32>(2..)?, &stream)?;
    /// assert_eq!(out.view().with_host(|values| values.to_vec())?, [3, 4]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn copy_from_device<S: DeviceStorage>(&self, src: impl AsView<S>, stream: &Arc<Stream>) -> Result<()> {
        let src = src.as_view();
        // SAFETY: the buffer's own pointer (not one derived from a shared
        // slice): the device writes through it, and the host cannot touch
        // these bytes while the tracks hold them.
        unsafe {
            copy_1d(
                Call::new("Ordered::copy_from_device", "aclrtMemcpyAsync"),
                stream,
                (*self, self.host_ptr().cast()),
                (src, src.device_ptr()),
                sys::ACL_MEMCPY_DEVICE_TO_HOST,
            )
        }
    }

    /// Queues on `stream` a 2-D copy of the rows of `shape` from the
    /// device memory `src` into this pinned view (`aclrtMemcpy2dAsync`,
    /// device to host).
    ///
    /// # Errors
    ///
    /// As [`OrderedView::copy_from_host_2d`].
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use ascend::{Device, DeviceBuf, PinnedHostBuf, stream::{Copy2d, Ordered, Stream}};
    /// let device = Device::new(0)?;
    /// let stream = Arc::new(Stream::new(&device)?);
    /// let packed = Ordered::new(DeviceBuf::from_slice(&device, &[1u8, 2, 3, 4])?); // 2 rows of 2
    /// let padded = Ordered::new(PinnedHostBuf::<u8>::zeroed(&device, 6)?); // rows 4 apart
    /// padded.view().copy_from_device_2d(&packed, Copy2d::new(2, 2).with_dst_pitch(4), &stream)?;
    /// assert_eq!(padded.view().with_host(|rows| rows.to_vec())?, [1, 2, 0, 0, 3, 4]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn copy_from_device_2d<S: DeviceStorage>(
        &self,
        src: impl AsView<S>,
        shape: super::super::Copy2d,
        stream: &Arc<Stream>,
    ) -> Result<()> {
        const CALL: Call = Call::new("Ordered::copy_from_device_2d", "aclrtMemcpy2dAsync");
        let src = src.as_view();
        let Some(rows) = shape.checked_bytes::<T>(CALL, elements_of::<T>(src.byte_len()), self.len())? else {
            return Ok(());
        };
        let (host, from) = (self.host_ptr(), src.device_ptr());
        ordered_copy(CALL, stream, *self, src, || {
            // SAFETY: as in `copy_from_host_2d`.
            unsafe { stream.enqueue_copy_2d(host.cast(), from, rows, sys::ACL_MEMCPY_DEVICE_TO_HOST) }
        })
    }
}

impl<D: DeviceStorageMut> Ordered<D> {
    /// Queues on `stream` a copy of the pinned memory `src` into the whole
    /// device memory (`aclrtMemcpyAsync`, host to device): the
    /// [`OrderedView::copy_from_host`] of [`Ordered::view`]. The device side
    /// is a [`DeviceBuf`](crate::DeviceBuf) or any owned
    /// [`DeviceStorageMut`] (an owned mapping, a segment block, a pool
    /// block, a framework's own block).
    ///
    /// # Errors
    ///
    /// As [`OrderedView::copy_from_host`].
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
    pub fn copy_from_host<T: Pod>(&self, src: impl AsView<PinnedHostBuf<T>>, stream: &Arc<Stream>) -> Result<()> {
        self.view().copy_from_host(src, stream)
    }

    /// Queues on `stream` a copy of the device memory `src` into the whole
    /// device memory (device to device): the
    /// [`OrderedView::copy_from_device`] of [`Ordered::view`].
    ///
    /// # Errors
    ///
    /// As [`OrderedView::copy_from_device`].
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
    pub fn copy_from_device<S: DeviceStorage>(&self, src: impl AsView<S>, stream: &Arc<Stream>) -> Result<()> {
        self.view().copy_from_device(src, stream)
    }

    /// Queues on `stream` setting every byte to `value`
    /// (`aclrtMemsetAsync`): the [`OrderedView::fill_bytes`] of
    /// [`Ordered::view`].
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
    #[doc(alias = "aclrtMemsetAsync")]
    pub fn fill_bytes(&self, value: u8, stream: &Arc<Stream>) -> Result<()> {
        self.view().fill_bytes(value, stream)
    }

    /// Queues on `stream` the cache maintenance operation `op` on the whole
    /// buffer (`aclrtCmoAsync`): the [`OrderedView::cache`] of
    /// [`Ordered::view`].
    ///
    /// # Errors
    ///
    /// As [`OrderedView::cache`].
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use ascend::memory::CacheOp;
    /// use ascend::stream::{Ordered, Stream};
    /// use ascend::{Device, DeviceBuf};
    /// let device = Device::new(0)?;
    /// let stream = Arc::new(Stream::new(&device)?);
    /// let buf = Ordered::new(DeviceBuf::<u32>::zeroed(&device, 4)?);
    /// buf.cache(CacheOp::Prefetch, &stream)?;
    /// buf.fill_u32(1, &stream)?;
    /// buf.cache(CacheOp::Flush, &stream)?;
    /// assert_eq!(buf.into_inner()?.to_vec()?, [1; 4]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtCmoAsync")]
    pub fn cache(&self, op: CacheOp, stream: &Arc<Stream>) -> Result<()> {
        self.view().cache(op, stream)
    }

    /// Queues on `stream` setting every 32-bit element to `value`
    /// (`aclrtMemsetD32Async`): the [`OrderedView::fill_u32`] of
    /// [`Ordered::view`].
    ///
    /// # Errors
    ///
    /// As [`OrderedView::fill_u32`].
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use ascend::stream::{Ordered, Stream};
    /// use ascend::{Device, DeviceBuf};
    /// let device = Device::new(0)?;
    /// let stream = Arc::new(Stream::new(&device)?);
    /// let buf = Ordered::new(DeviceBuf::<u32>::zeroed(&device, 4)?);
    /// buf.fill_u32(0xDEAD_BEEF, &stream)?;
    /// assert_eq!(buf.into_inner()?.to_vec()?, [0xDEAD_BEEF; 4]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtMemsetD32Async")]
    pub fn fill_u32(&self, value: u32, stream: &Arc<Stream>) -> Result<()> {
        self.view().fill_u32(value, stream)
    }
}

impl<T: Pod> Ordered<PinnedHostBuf<T>> {
    /// Queues on `stream` a copy of the device memory `src` into the whole
    /// pinned buffer (device to host): the
    /// [`OrderedView::copy_from_device`] of [`Ordered::view`]. Read it with
    /// [`Ordered::get_mut`] or [`OrderedView::with_host`], which wait for
    /// the copy.
    ///
    /// # Errors
    ///
    /// As [`OrderedView::copy_from_host`].
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
    pub fn copy_from_device<S: DeviceStorage>(&self, src: impl AsView<S>, stream: &Arc<Stream>) -> Result<()> {
        self.view().copy_from_device(src, stream)
    }
}

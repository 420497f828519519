//! [`Stream::scope`] and [`AsyncScope`]: asynchronous work that borrows its
//! buffers and is finished before the borrows end.

use super::copy2d::{ByteRows, Copy2d};
use super::event::Event;
use super::held::{ScopedDevice, ScopedHost};
use super::lengths::{byte_len, same_len};
use super::sides::{DeviceDest, DeviceSource, HostDest, HostSource};
use super::stream::Stream;
use crate::Call;
use crate::error::{Result, check};
use crate::memory::CacheOp;
use ascend_sys as sys;
use bytemuck::Pod;
use std::ffi::c_void;
use std::fmt;
use std::marker::PhantomData;

/// The handle a [`Stream::scope`] closure receives to queue asynchronous
/// work on the stream.
///
/// Every method borrows the buffers it names for `'scope`, which lasts until
/// the scope has synchronised the stream: a buffer handed to a transfer
/// cannot be dropped, freed, moved, read or written by the host until then
/// (shared borrows for what the device reads, exclusive ones for what it
/// writes), and a buffer created inside the closure cannot be used at all.
/// Both lifetimes are invariant, as in [`std::thread::Scope`], so `'scope`
/// cannot be shortened to fit a shorter borrow.
///
/// A buffer named directly in a transfer stays borrowed until the scope
/// ends, so a destination can be named once; for several transfers that
/// write the same buffer, [`AsyncScope::hold_device`] /
/// [`AsyncScope::hold_host`] borrow it once and return a copyable handle
/// ([`ScopedDevice`], [`ScopedHost`]) that cannot leave the scope. Work
/// queued on one stream runs in order, so such transfers see each other's
/// results.
///
/// Lengths (and 2-D shapes) are checked before anything is queued:
/// [`Error::InvalidArgument`](crate::Error::InvalidArgument) and nothing
/// queued on a mismatch.
///
/// ```
/// use ascend::{Device, DeviceBuf, stream::Stream};
/// let device = Device::new(0)?;
/// let stream = Stream::new(&device)?;
/// let input = vec![1u32, 2, 3, 4];
/// let mut on_device = DeviceBuf::<u32>::zeroed(&device, 4)?;
/// let mut output = vec![0u32; 4];
/// // `s` is the `&AsyncScope`: each transfer borrows its buffers until `scope` returns.
/// stream.scope(|s| {
///     let held = s.hold_device(&mut on_device);
///     s.copy_to_device(&input, held)?;
///     s.copy_to_host(held, &mut output)
/// })?;
/// assert_eq!(output, input);
/// # Ok::<(), ascend::Error>(())
/// ```
///
/// **Threads:** `AsyncScope` is `Send` and `Sync`: like `std::thread::Scope`,
/// it is used by reference, from any thread of the scope.
pub struct AsyncScope<'scope, 'env: 'scope> {
    stream: &'env Stream,
    _scope: PhantomData<&'scope mut &'scope ()>,
    _env: PhantomData<&'env mut &'env ()>,
}

/// Proves the stream's work finished when dropped unless defused: the path
/// taken when the closure panics (aborting if it cannot be proven, see
/// [`Stream::complete_or_abort`]).
struct SyncOnUnwind<'a> {
    stream: &'a Stream,
    armed: bool,
}

impl SyncOnUnwind<'_> {
    /// Proves the work finished now (the normal path), returning the first
    /// synchronisation's result.
    fn finish(mut self) -> Result<()> {
        self.armed = false;
        self.stream.complete_or_abort("Stream::scope")
    }
}

impl Drop for SyncOnUnwind<'_> {
    fn drop(&mut self) {
        if self.armed
            && let Err(error) = self.stream.complete_or_abort("Stream::scope (unwinding from a panic)")
        {
            log::warn!("AsyncScope: synchronising after a panic: {error}");
        }
    }
}

impl Stream {
    /// Runs `f` with an [`AsyncScope`] to queue work on this stream, then
    /// synchronises the stream before returning, also when `f` fails or
    /// panics (like [`std::thread::scope`]). Buffers borrowed by the queued
    /// work are therefore untouchable by the host until the work has run,
    /// and usable again as soon as `scope` returns.
    ///
    /// ```
    /// use ascend::{Device, DeviceBuf, PinnedHostBuf, stream::Stream};
    /// let device = Device::new(0)?;
    /// let stream = Stream::new(&device)?;
    /// let input = PinnedHostBuf::from_slice(&device, &[1.0f32, 2.0, 3.0, 4.0])?;
    /// let mut output = PinnedHostBuf::<f32>::zeroed(&device, 4)?;
    /// let mut on_device = DeviceBuf::<f32>::zeroed(&device, 4)?;
    /// stream.scope(|s| {
    ///     // Written by several transfers: the scope holds it once.
    ///     let on_device = s.hold_device(&mut on_device);
    ///     s.copy_to_device(&input, on_device)?;
    ///     s.copy_to_host(on_device, &mut output)?;
    ///     s.fill_bytes(on_device, 0)?;
    ///     Ok(())
    /// })?;
    /// assert_eq!(&output[..], &input[..]); // synchronised: the data is there
    /// assert_eq!(on_device.to_vec()?, [0.0; 4]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    ///
    /// Touching a buffer while the scope may still use it does not compile:
    ///
    /// ```compile_fail,E0502
    /// # use ascend::{Device, DeviceBuf, PinnedHostBuf, stream::Stream};
    /// # let device = Device::new(0)?;
    /// # let stream = Stream::new(&device)?;
    /// # let on_device = DeviceBuf::from_slice(&device, &[1u8; 4])?;
    /// let mut output = PinnedHostBuf::<u8>::zeroed(&device, 4)?;
    /// stream.scope(|s| {
    ///     s.copy_to_host(&on_device, &mut output)?;
    ///     println!("{}", output[0]); // the copy may still be writing it
    ///     Ok(())
    /// })?;
    /// # Ok::<(), ascend::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// The error `f` returns (a synchronisation failure is then logged), or
    /// else the synchronisation's error (e.g. a queued task that failed).
    /// Either way the queued work has finished when `scope` returns.
    ///
    /// # Aborts
    ///
    /// A failed synchronisation is retried on the stream and then on its
    /// device. If none succeeds, the queued work may still be running, and
    /// ending the borrows would let it write memory the host frees or
    /// reuses: the process aborts with a message on standard error (and the
    /// `log` facade) naming the stream, its device and every error. A
    /// scope cannot fail its join, as with [`std::thread::scope`].
    #[doc(alias = "aclrtSynchronizeStream")]
    pub fn scope<'env, F, R>(&'env self, f: F) -> Result<R>
    where
        F: for<'scope> FnOnce(&'scope AsyncScope<'scope, 'env>) -> Result<R>,
    {
        let scope = AsyncScope {
            stream: self,
            _scope: PhantomData,
            _env: PhantomData,
        };
        let guard = SyncOnUnwind {
            stream: self,
            armed: true,
        };
        let outcome = f(&scope);
        let synced = guard.finish();
        match (outcome, synced) {
            (Ok(value), Ok(())) => Ok(value),
            (Ok(_), Err(error)) => Err(error),
            (Err(error), synced) => {
                if let Err(sync_error) = synced {
                    log::warn!("AsyncScope: synchronising after a failed closure: {sync_error}");
                }
                Err(error)
            }
        }
    }
}

impl<'scope, 'env> AsyncScope<'scope, 'env> {
    /// The stream the work is queued on.
    ///
    /// ```
    /// use ascend::{Device, stream::Stream};
    /// let device = Device::new(0)?;
    /// let stream = Stream::new(&device)?;
    /// let device_id = stream.scope(|s| {
    ///     assert_eq!(s.stream().as_raw(), stream.as_raw());
    ///     Ok(s.stream().device().id())
    /// })?;
    /// assert_eq!(device_id, 0);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn stream(&self) -> &'env Stream {
        self.stream
    }

    /// Holds `buffer` (device memory) exclusively until the scope ends and
    /// returns a copyable handle to it, for several transfers that write it
    /// (a destination named directly stays borrowed until the end too, so
    /// it can be named only once).
    ///
    /// ```
    /// use ascend::{Device, DeviceBuf, stream::Stream};
    /// let device = Device::new(0)?;
    /// let stream = Stream::new(&device)?;
    /// let mut on_device = DeviceBuf::<u8>::zeroed(&device, 6)?;
    /// stream.scope(|s| {
    ///     let held = s.hold_device(&mut on_device); // copyable, named three times
    ///     s.fill_bytes(held, 0xAA)?;
    ///     s.copy_to_device(&[1u8, 2], held.slice(..2)?)?;
    ///     s.fill_bytes(held.slice(4..)?, 0)
    /// })?;
    /// assert_eq!(on_device.to_vec()?, [1, 2, 0xAA, 0xAA, 0, 0]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn hold_device<T: Pod>(&self, buffer: impl DeviceDest<'scope, T>) -> ScopedDevice<'scope, T> {
        let (address, len) = buffer.device_write();
        ScopedDevice::new(address, len)
    }

    /// Holds `buffer` (host memory) exclusively until the scope ends and
    /// returns a copyable handle to it, for several transfers that write or
    /// read it in stream order.
    ///
    /// ```
    /// use ascend::{Device, DeviceBuf, PinnedHostBuf, stream::Stream};
    /// let device = Device::new(0)?;
    /// let stream = Stream::new(&device)?;
    /// let on_device = DeviceBuf::from_slice(&device, &[5i16; 4])?;
    /// let mut bounce = PinnedHostBuf::<i16>::zeroed(&device, 4)?;
    /// let mut copy = DeviceBuf::<i16>::zeroed(&device, 4)?;
    /// stream.scope(|s| {
    ///     let bounce = s.hold_host(&mut bounce);
    ///     s.copy_to_host(&on_device, bounce)?; // device -> host ...
    ///     s.copy_to_device(bounce, &mut copy) // ... -> device, in order
    /// })?;
    /// assert_eq!(copy.to_vec()?, [5; 4]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn hold_host<T: Pod>(&self, buffer: impl HostDest<'scope, T>) -> ScopedHost<'scope, T> {
        let (pointer, len) = buffer.host_write();
        ScopedHost::new(pointer, len)
    }

    /// Queues a copy of `src` (host) into `dst` (device)
    /// (`aclrtMemcpyAsync`, host to device). The lengths must be equal.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) on a length
    /// mismatch; the runtime's code.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, DeviceBuf, Error, PinnedHostBuf, stream::Stream};
    /// let device = Device::new(0)?;
    /// let stream = Stream::new(&device)?;
    /// let host = PinnedHostBuf::from_slice(&device, &[7i32; 8])?;
    /// let mut on_device = DeviceBuf::<i32>::zeroed(&device, 8)?;
    /// let mut too_short = DeviceBuf::<i32>::zeroed(&device, 4)?;
    /// stream.scope(|s| {
    ///     s.copy_to_device(&host, &mut on_device)?;
    ///     let mismatch = s.copy_to_device(&host, &mut too_short); // 8 elements into 4
    ///     assert!(matches!(mismatch, Err(Error::InvalidArgument { .. })));
    ///     Ok(())
    /// })?;
    /// assert_eq!(on_device.to_vec()?, [7; 8]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtMemcpyAsync")]
    pub fn copy_to_device<T: Pod>(
        &self,
        src: impl HostSource<'scope, T>,
        dst: impl DeviceDest<'scope, T>,
    ) -> Result<()> {
        let ((src, src_len), (dst, dst_len)) = (src.host_read(), dst.device_write());
        let call = Call::new("AsyncScope::copy_to_device", "aclrtMemcpyAsync");
        same_len(call, dst_len, src_len)?;
        let bytes = byte_len::<T>(call, src_len)?;
        self.memcpy(dst, src.cast(), bytes, sys::ACL_MEMCPY_HOST_TO_DEVICE)
    }

    /// Queues a copy of `src` (device) into `dst` (host)
    /// (`aclrtMemcpyAsync`, device to host). The lengths must be equal.
    ///
    /// # Errors
    ///
    /// As [`AsyncScope::copy_to_device`].
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, DeviceBuf, stream::Stream};
    /// let device = Device::new(0)?;
    /// let stream = Stream::new(&device)?;
    /// let on_device = DeviceBuf::from_slice(&device, &[1.5f64, -2.0, 8.25])?;
    /// let mut out = [0.0f64; 3]; // pageable host memory works too
    /// stream.scope(|s| s.copy_to_host(&on_device, &mut out))?;
    /// assert_eq!(out, [1.5, -2.0, 8.25]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtMemcpyAsync")]
    pub fn copy_to_host<T: Pod>(&self, src: impl DeviceSource<'scope, T>, dst: impl HostDest<'scope, T>) -> Result<()> {
        let ((src, src_len), (dst, dst_len)) = (src.device_read(), dst.host_write());
        let call = Call::new("AsyncScope::copy_to_host", "aclrtMemcpyAsync");
        same_len(call, dst_len, src_len)?;
        let bytes = byte_len::<T>(call, src_len)?;
        self.memcpy(dst.cast(), src, bytes, sys::ACL_MEMCPY_DEVICE_TO_HOST)
    }

    /// Queues a copy between device memory (`aclrtMemcpyAsync`, device to
    /// device). The lengths must be equal; across devices the runtime needs
    /// peer access.
    ///
    /// # Errors
    ///
    /// As [`AsyncScope::copy_to_device`].
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, DeviceBuf, stream::Stream};
    /// let device = Device::new(0)?;
    /// let stream = Stream::new(&device)?;
    /// let src = DeviceBuf::from_slice(&device, &[1u16, 2, 3, 4])?;
    /// let mut dst = DeviceBuf::<u16>::zeroed(&device, 2)?;
    /// stream.scope(|s| s.copy_on_device(src.slice(2..)?, &mut dst))?; // the last two
    /// assert_eq!(dst.to_vec()?, [3, 4]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtMemcpyAsync")]
    pub fn copy_on_device<T: Pod>(
        &self,
        src: impl DeviceSource<'scope, T>,
        dst: impl DeviceDest<'scope, T>,
    ) -> Result<()> {
        let ((src, src_len), (dst, dst_len)) = (src.device_read(), dst.device_write());
        let call = Call::new("AsyncScope::copy_on_device", "aclrtMemcpyAsync");
        same_len(call, dst_len, src_len)?;
        let bytes = byte_len::<T>(call, src_len)?;
        self.memcpy(dst, src, bytes, sys::ACL_MEMCPY_DEVICE_TO_DEVICE)
    }

    /// Queues setting every byte of `dst` to `value` (`aclrtMemsetAsync`).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) if the byte
    /// size overflows; the runtime's code.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, DeviceBuf, stream::Stream};
    /// let device = Device::new(0)?;
    /// let stream = Stream::new(&device)?;
    /// let mut on_device = DeviceBuf::<u32>::zeroed(&device, 4)?;
    /// stream.scope(|s| s.fill_bytes(on_device.slice_mut(1..3)?, 0xFF))?; // every byte
    /// assert_eq!(on_device.to_vec()?, [0, u32::MAX, u32::MAX, 0]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtMemsetAsync")]
    pub fn fill_bytes<T: Pod>(&self, dst: impl DeviceDest<'scope, T>, value: u8) -> Result<()> {
        let (dst, len) = dst.device_write();
        let bytes = byte_len::<T>(Call::new("AsyncScope::fill_bytes", "aclrtMemsetAsync"), len)?;
        if bytes == 0 {
            return Ok(());
        }
        self.stream.device().make_current()?;
        // SAFETY: `dst` is device memory of `bytes` bytes, exclusively
        // borrowed until the scope has synchronised.
        check("aclrtMemsetAsync", unsafe {
            sys::aclrtMemsetAsync(dst, bytes, i32::from(value), bytes, self.stream.as_raw())
        })
    }

    /// Queues the cache maintenance operation `op` on the bytes of `src`
    /// (`aclrtCmoAsync`): a prefetch, writeback or flush, which change no
    /// byte the device sees and so borrow `src` shared, as a read, until the
    /// scope ends. An invalidation may discard data, a write: it goes
    /// through [`AsyncScope::invalidate`]. An empty range does nothing.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) for
    /// [`CacheOp::Invalidate`] or if the byte size overflows (nothing is
    /// queued then); the runtime's code.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::memory::CacheOp;
    /// use ascend::{Device, DeviceBuf, stream::Stream};
    /// let device = Device::new(0)?;
    /// let stream = Stream::new(&device)?;
    /// let on_device = DeviceBuf::from_slice(&device, &[7u32; 4])?;
    /// stream.scope(|s| {
    ///     s.cache(&on_device, CacheOp::Prefetch)?;
    ///     s.cache(&on_device, CacheOp::Writeback)
    /// })?;
    /// assert_eq!(on_device.to_vec()?, [7; 4]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtCmoAsync")]
    pub fn cache<T: Pod>(&self, src: impl DeviceSource<'scope, T>, op: CacheOp) -> Result<()> {
        let call = Call::new("AsyncScope::cache", "aclrtCmoAsync");
        if op.is_write() {
            return Err(crate::Error::invalid(
                call,
                "an invalidation is a write: use AsyncScope::invalidate",
            ));
        }
        let (src, len) = src.device_read();
        self.queue_cache::<T>(call, src.cast_mut(), len, op)
    }

    /// Queues an invalidation of the cached bytes of `dst`
    /// (`aclrtCmoAsync`, [`CacheOp::Invalidate`]); it may discard data not
    /// yet written back, so `dst` is borrowed exclusively until the scope
    /// ends. An empty range does nothing.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) if the byte
    /// size overflows; the runtime's code.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, DeviceBuf, stream::Stream};
    /// let device = Device::new(0)?;
    /// let stream = Stream::new(&device)?;
    /// let mut on_device = DeviceBuf::<u32>::zeroed(&device, 4)?;
    /// stream.scope(|s| {
    ///     let (low, high) = on_device.split_at_mut(2)?;
    ///     s.fill_bytes(low, 0xFF)?;
    ///     s.invalidate(high) // queued after the memset
    /// })?;
    /// assert_eq!(on_device.to_vec()?, [u32::MAX, u32::MAX, 0, 0]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtCmoAsync")]
    pub fn invalidate<T: Pod>(&self, dst: impl DeviceDest<'scope, T>) -> Result<()> {
        let (dst, len) = dst.device_write();
        self.queue_cache::<T>(
            Call::new("AsyncScope::invalidate", "aclrtCmoAsync"),
            dst.cast(),
            len,
            CacheOp::Invalidate,
        )
    }

    fn queue_cache<T: Pod>(&self, call: Call, address: *mut c_void, len: usize, op: CacheOp) -> Result<()> {
        let bytes = byte_len::<T>(call, len)?;
        if bytes == 0 {
            return Ok(());
        }
        self.stream.device().make_current()?;
        // SAFETY: `address` is device memory of `bytes` bytes, borrowed
        // (shared for reads, exclusively for an invalidation) until the
        // scope has synchronised.
        check("aclrtCmoAsync", unsafe {
            sys::aclrtCmoAsync(address, bytes, op.as_raw(), self.stream.as_raw())
        })
    }

    /// Queues a record of `event` (`aclrtRecordEvent`): it is reached once
    /// the work queued before it has run.
    ///
    /// # Errors
    ///
    /// The runtime's code.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, DeviceBuf, stream::{Event, Stream}};
    /// let device = Device::new(0)?;
    /// let stream = Stream::new(&device)?;
    /// let copied = Event::new(&device)?;
    /// let mut on_device = DeviceBuf::<u8>::zeroed(&device, 16)?;
    /// stream.scope(|s| {
    ///     s.copy_to_device(&[3u8; 16], &mut on_device)?;
    ///     s.record(&copied) // reached once the copy has run
    /// })?;
    /// assert!(copied.query()?); // the scope synchronised the stream
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtRecordEvent")]
    pub fn record(&self, event: &'scope Event) -> Result<()> {
        event.record(self.stream)
    }

    /// Makes the work queued after this wait for `event`'s latest record
    /// (`aclrtStreamWaitEvent`).
    ///
    /// # Errors
    ///
    /// As [`Stream::wait_event`].
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, DeviceBuf, stream::{Event, Stream}};
    /// let device = Device::new(0)?;
    /// let (producer, consumer) = (Stream::new(&device)?, Stream::new(&device)?);
    /// let written = Event::new(&device)?;
    /// let mut on_device = DeviceBuf::<u8>::zeroed(&device, 4)?;
    /// let mut out = [0u8; 4];
    /// producer.scope(|s| {
    ///     s.fill_bytes(&mut on_device, 9)?;
    ///     s.record(&written)
    /// })?;
    /// consumer.scope(|s| {
    ///     s.wait_event(&written)?; // the read below runs after the memset
    ///     s.copy_to_host(&on_device, &mut out)
    /// })?;
    /// assert_eq!(out, [9; 4]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtStreamWaitEvent")]
    pub fn wait_event(&self, event: &'scope Event) -> Result<()> {
        self.stream.wait_event(event)
    }

    /// Queues a 2-D copy of the rows of `shape` from `src` (host) into `dst`
    /// (device) (`aclrtMemcpy2dAsync`).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) when the
    /// shape does not fit either side; the runtime's code.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, DeviceBuf, Error, stream::{Copy2d, Stream}};
    /// let device = Device::new(0)?;
    /// let stream = Stream::new(&device)?;
    /// let image: Vec<u8> = (0..12).collect(); // 3 rows of 4
    /// let mut right_half = DeviceBuf::<u8>::zeroed(&device, 6)?;
    /// let mut too_small = DeviceBuf::<u8>::zeroed(&device, 4)?;
    /// let shape = Copy2d::new(2, 3).with_src_pitch(4); // 3 rows of 2, rows 4 apart in the source
    /// stream.scope(|s| {
    ///     let refused = s.copy_to_device_2d(&image[2..], &mut too_small, shape); // needs 6
    ///     assert!(matches!(refused, Err(Error::InvalidArgument { .. })));
    ///     s.copy_to_device_2d(&image[2..], &mut right_half, shape)
    /// })?;
    /// assert_eq!(right_half.to_vec()?, [2, 3, 6, 7, 10, 11]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtMemcpy2dAsync")]
    pub fn copy_to_device_2d<T: Pod>(
        &self,
        src: impl HostSource<'scope, T>,
        dst: impl DeviceDest<'scope, T>,
        shape: Copy2d,
    ) -> Result<()> {
        let ((src, src_len), (dst, dst_len)) = (src.host_read(), dst.device_write());
        let Some(rows) = shape.checked_bytes::<T>(
            Call::new("AsyncScope::copy_to_device_2d", "aclrtMemcpy2dAsync"),
            src_len,
            dst_len,
        )?
        else {
            return Ok(());
        };
        self.memcpy_2d(dst, src.cast(), rows, sys::ACL_MEMCPY_HOST_TO_DEVICE)
    }

    /// Queues a 2-D copy of the rows of `shape` from `src` (device) into
    /// `dst` (host) (`aclrtMemcpy2dAsync`).
    ///
    /// # Errors
    ///
    /// As [`AsyncScope::copy_to_device_2d`].
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, DeviceBuf, stream::{Copy2d, Stream}};
    /// let device = Device::new(0)?;
    /// let stream = Stream::new(&device)?;
    /// let packed = DeviceBuf::from_slice(&device, &[1u32, 2, 3, 4, 5, 6])?; // 3 rows of 2
    /// let mut padded = vec![0u32; 8]; // rows 3 apart
    /// stream.scope(|s| s.copy_to_host_2d(&packed, &mut padded, Copy2d::new(2, 3).with_dst_pitch(3)))?;
    /// assert_eq!(padded, [1, 2, 0, 3, 4, 0, 5, 6]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtMemcpy2dAsync")]
    pub fn copy_to_host_2d<T: Pod>(
        &self,
        src: impl DeviceSource<'scope, T>,
        dst: impl HostDest<'scope, T>,
        shape: Copy2d,
    ) -> Result<()> {
        let ((src, src_len), (dst, dst_len)) = (src.device_read(), dst.host_write());
        let Some(rows) = shape.checked_bytes::<T>(
            Call::new("AsyncScope::copy_to_host_2d", "aclrtMemcpy2dAsync"),
            src_len,
            dst_len,
        )?
        else {
            return Ok(());
        };
        self.memcpy_2d(dst.cast(), src, rows, sys::ACL_MEMCPY_DEVICE_TO_HOST)
    }

    /// Queues a 2-D copy of the rows of `shape` between device memory
    /// (`aclrtMemcpy2dAsync`, device to device).
    ///
    /// # Errors
    ///
    /// As [`AsyncScope::copy_to_device_2d`].
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, DeviceBuf, stream::{Copy2d, Stream}};
    /// let device = Device::new(0)?;
    /// let stream = Stream::new(&device)?;
    /// let matrix = DeviceBuf::from_slice(&device, &[1i8, 2, 3, 4, 5, 6, 7, 8, 9])?; // 3 x 3
    /// let mut first_column = DeviceBuf::<i8>::zeroed(&device, 3)?;
    /// let column = Copy2d::new(1, 3).with_src_pitch(3); // 3 rows of 1 element
    /// stream.scope(|s| s.copy_on_device_2d(&matrix, &mut first_column, column))?;
    /// assert_eq!(first_column.to_vec()?, [1, 4, 7]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtMemcpy2dAsync")]
    pub fn copy_on_device_2d<T: Pod>(
        &self,
        src: impl DeviceSource<'scope, T>,
        dst: impl DeviceDest<'scope, T>,
        shape: Copy2d,
    ) -> Result<()> {
        let ((src, src_len), (dst, dst_len)) = (src.device_read(), dst.device_write());
        let Some(rows) = shape.checked_bytes::<T>(
            Call::new("AsyncScope::copy_on_device_2d", "aclrtMemcpy2dAsync"),
            src_len,
            dst_len,
        )?
        else {
            return Ok(());
        };
        self.memcpy_2d(dst, src, rows, sys::ACL_MEMCPY_DEVICE_TO_DEVICE)
    }

    /// `aclrtMemcpyAsync` of `bytes` bytes on the scope's stream.
    fn memcpy(&self, dst: *mut c_void, src: *const c_void, bytes: usize, kind: sys::aclrtMemcpyKind) -> Result<()> {
        // SAFETY: both ranges hold `bytes` bytes (lengths checked by the
        // caller) and are borrowed for `'scope` — shared for the source,
        // exclusive for the destination — so they stay allocated and
        // untouched by the host until the scope has synchronised.
        unsafe { self.stream.enqueue_copy(dst, src, bytes, kind) }
    }

    /// `aclrtMemcpy2dAsync` on the scope's stream.
    fn memcpy_2d(
        &self,
        dst: *mut c_void,
        src: *const c_void,
        rows: ByteRows,
        kind: sys::aclrtMemcpyKind,
    ) -> Result<()> {
        // SAFETY: both sides hold the rows (checked by `Copy2d::checked_bytes`)
        // and are borrowed for `'scope`, as in `memcpy`.
        unsafe { self.stream.enqueue_copy_2d(dst, src, rows, kind) }
    }
}

impl fmt::Debug for AsyncScope<'_, '_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AsyncScope").field("stream", self.stream).finish()
    }
}

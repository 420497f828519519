//! [`Stream`]: an ordered queue of device work (`aclrtStream`).

use super::event::Event;
use super::flags::{StreamFlags, StreamPriority};
use super::value_ops::ValueHolds;
use crate::Device;
use crate::error::{Call, Error, Result, check};
use ascend_sys as sys;
use std::ffi::c_void;
use std::fmt;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::Duration;

/// [`Stream::stop_state`]: the stream is in [`FailureMode::Stop`] (set
/// through [`Stream::set_failure_mode`]).
///
/// [`FailureMode::Stop`]: super::FailureMode::Stop
pub(crate) const STOP_MODE: u8 = 1;
/// [`Stream::stop_state`]: a synchronisation of the stream in stop mode
/// reported an error (a failed task): the stream skips its later work.
pub(crate) const STOPPED: u8 = 2;

/// A stream of one device (`aclrtCreateStream` / `aclrtDestroyStream`):
/// work queued on it runs in order, asynchronously to the host.
///
/// Work is queued through [`Stream::scope`], which borrows the buffers it
/// uses and synchronises before they are released, or through an owner
/// that remembers its queued uses ([`Ordered`](super::Ordered)).
/// Dropping the stream destroys it (the runtime first lets its queued work
/// finish; a failure is logged); [`Stream::destroy`] reports the error, and
/// [`Stream::destroy_force`] drops the queued work instead of waiting. A
/// stream with a queued value wait ([`Stream::wait_value`]) is given
/// [`Stream::VALUE_WAIT_LIMIT`] to finish, then destroyed by force, so that
/// a wait nobody satisfies cannot hold the dropping thread forever.
///
/// `Stream` is `Send` and `Sync`: the handle is an opaque token that the
/// runtime accepts from any thread, it serialises concurrent submissions to
/// one stream itself, and every method first makes the stream's device
/// current on the calling thread. No host memory is reachable through a
/// `Stream` alone: every queued task holds its buffers through a scope or
/// an owned transfer.
///
/// ```
/// use ascend::{Device, DeviceBuf, PinnedHostBuf, stream::Stream};
/// let device = Device::new(0)?;
/// let stream = Stream::new(&device)?;
/// let host = PinnedHostBuf::from_slice(&device, &[1u32, 2, 3])?;
/// let mut on_device = DeviceBuf::<u32>::zeroed(&device, 3)?;
/// stream.scope(|s| s.copy_to_device(&host, &mut on_device))?;
/// assert_eq!(on_device.to_vec()?, [1, 2, 3]);
/// stream.destroy()?;
/// # Ok::<(), ascend::Error>(())
/// ```
///
/// **Threads:** `Stream` is `Send` and `Sync`: share one between threads with
/// `Arc<Stream>`; the runtime orders the work queued from each.
///
/// **Guide:** [Concepts: when the runtime fails](crate::guide::concepts) (what
/// a failed synchronisation does to borrowed and owned buffers).
pub struct Stream {
    /// The handle; `None` once destroyed.
    pub(super) handle: Option<NonNull<c_void>>,
    device: Device,
    /// Flags used by value work queued since the last proven
    /// synchronisation ([`Stream::wait_value`], [`Stream::write_value`]).
    values: ValueHolds,
    /// [`STOP_MODE`] and [`STOPPED`]: what the crate knows of the stream's
    /// failure mode, for its own cross-stream ordering (one load there).
    stop: AtomicU8,
}

// SAFETY: the handle is an opaque token of the runtime, usable from any
// thread; every call through it first makes `device` current on the calling
// thread. Buffers used by queued work are held by the scope or the owned
// transfer that queued it; the flags of value work are `Arc`s of `Send +
// Sync` device memory behind a mutex.
unsafe impl Send for Stream {}
// SAFETY: every method takes `&self` to submit or wait, which the runtime
// allows concurrently on one stream (it serialises submissions); no state
// of the `Stream` itself changes except in `destroy`/`drop`, which take it
// by value or `&mut`, and the failure-mode flags, an atomic.
unsafe impl Sync for Stream {}

impl Stream {
    /// Creates a stream on `device` with the default configuration
    /// (`aclrtCreateStream`).
    ///
    /// # Errors
    ///
    /// The runtime's code (e.g. out of stream resources).
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, DeviceBuf, PinnedHostBuf, Stream};
    /// let device = Device::new(0)?;
    /// let stream = Stream::new(&device)?;
    /// let host = PinnedHostBuf::from_slice(&device, &[3u32; 64])?;
    /// let mut on_device = DeviceBuf::<u32>::zeroed(&device, 64)?;
    /// stream.scope(|s| s.copy_to_device(&host, &mut on_device))?;
    /// assert_eq!(on_device.to_vec()?, [3; 64]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtCreateStream")]
    pub fn new(device: &Device) -> Result<Self> {
        device.make_current()?;
        let mut raw = std::ptr::null_mut();
        // SAFETY: `raw` is a valid out-pointer for the call.
        check("aclrtCreateStream", unsafe { sys::aclrtCreateStream(&mut raw) })?;
        Self::from_created(Call::new("Stream::new", "aclrtCreateStream"), raw, device)
    }

    /// Creates a stream on `device` with a priority and flags
    /// (`aclrtCreateStreamWithConfig`).
    ///
    /// ```
    /// use ascend::{Device, stream::{Stream, StreamFlags, StreamPriority}};
    /// let device = Device::new(0)?;
    /// let stream = Stream::with_config(&device, StreamPriority::new(2)?, StreamFlags::FAST_LAUNCH)?;
    /// stream.synchronize()?;
    /// # Ok::<(), ascend::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// The runtime's code: `ACL_ERROR_RT_PARAM_INVALID` for
    /// [`StreamFlags::DEVICE_USE_ONLY`] combined with other flags, and on
    /// the software device `ACL_ERROR_RT_FEATURE_NOT_SUPPORT` for the model,
    /// AI CPU and device-only flags.
    #[doc(alias = "aclrtCreateStreamWithConfig")]
    pub fn with_config(device: &Device, priority: StreamPriority, flags: StreamFlags) -> Result<Self> {
        device.make_current()?;
        let mut raw = std::ptr::null_mut();
        // SAFETY: `raw` is a valid out-pointer for the call.
        check("aclrtCreateStreamWithConfig", unsafe {
            sys::aclrtCreateStreamWithConfig(&mut raw, u32::from(priority.get()), flags.bits())
        })?;
        Self::from_created(
            Call::new("Stream::with_config", "aclrtCreateStreamWithConfig"),
            raw,
            device,
        )
    }

    fn from_created(call: Call, raw: sys::aclrtStream, device: &Device) -> Result<Self> {
        let handle = NonNull::new(raw).ok_or_else(|| Error::invalid(call, "the runtime returned a NULL stream"))?;
        Ok(Self {
            handle: Some(handle),
            device: device.clone(),
            values: ValueHolds::default(),
            stop: AtomicU8::new(0),
        })
    }

    /// A `Stream` over a handle someone else owns; it must be cleared with
    /// [`Stream::forget_handle`] before it drops ([`BorrowedStream`]).
    ///
    /// [`BorrowedStream`]: super::BorrowedStream
    pub(super) fn lent(handle: NonNull<c_void>, device: &Device) -> Self {
        Self {
            handle: Some(handle),
            device: device.clone(),
            values: ValueHolds::default(),
            stop: AtomicU8::new(0),
        }
    }

    /// Lets go of the handle without destroying it.
    pub(super) fn forget_handle(&mut self) {
        self.handle = None;
    }

    /// The flags kept alive for queued value work.
    pub(super) fn values(&self) -> &ValueHolds {
        &self.values
    }

    /// The device the stream belongs to.
    ///
    /// ```
    /// use ascend::{Device, DeviceBuf, stream::Stream};
    /// let device = Device::new(1)?;
    /// let stream = Stream::new(&device)?;
    /// assert_eq!(stream.device().id(), 1);
    /// // Buffers for the stream's work come from the same device.
    /// let on_device = DeviceBuf::from_slice(stream.device(), &[2u8; 4])?;
    /// assert_eq!(on_device.device().id(), stream.device().id());
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// The raw handle, for `ascend-sys` calls. It must not be destroyed, and
    /// work queued on it through raw calls is outside this crate's
    /// guarantees.
    ///
    /// ```
    /// use ascend::{Device, stream::Stream};
    /// let device = Device::new(0)?;
    /// let stream = Stream::new(&device)?;
    /// let raw = stream.as_raw();
    /// assert!(!raw.is_null());
    /// // SAFETY: `raw` is live for as long as `stream`, and nothing is queued on it.
    /// let code = unsafe { ascend_sys::aclrtSynchronizeStream(raw) };
    /// ascend::check("aclrtSynchronizeStream", code)?;
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn as_raw(&self) -> sys::aclrtStream {
        self.handle.map_or(std::ptr::null_mut(), NonNull::as_ptr)
    }

    /// Waits until all work queued on the stream has run
    /// (`aclrtSynchronizeStream`).
    ///
    /// # Errors
    ///
    /// The runtime's code, including the failure of a queued task (reported
    /// once, by the first synchronisation after it).
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, Stream};
    /// let device = Device::new(0)?;
    /// let stream = Stream::new(&device)?;
    /// stream.synchronize()?; // nothing queued: returns at once
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtSynchronizeStream")]
    pub fn synchronize(&self) -> Result<()> {
        self.device.make_current()?;
        let covered = self.values.mark();
        // SAFETY: the handle is live (owned by `self`).
        check("aclrtSynchronizeStream", unsafe {
            sys::aclrtSynchronizeStream(self.as_raw())
        })
        .inspect_err(|error| self.note_sync_error(error))?;
        self.values.release(covered);
        Ok(())
    }

    /// Waits at most `timeout` for the queued work
    /// (`aclrtSynchronizeStreamWithTimeout`). The timeout is rounded up to
    /// whole milliseconds, at least one.
    ///
    /// ```
    /// use std::time::Duration;
    /// let stream = ascend::stream::Stream::new(&ascend::Device::new(0)?)?;
    /// stream.synchronize_timeout(Duration::from_millis(100))?; // nothing queued
    /// # Ok::<(), ascend::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for a timeout above `i32::MAX`
    /// milliseconds (use [`Stream::synchronize`] to wait without a limit);
    /// `ACL_ERROR_RT_STREAM_SYNC_TIMEOUT` when the work did not finish in
    /// time; the runtime's other codes as for [`Stream::synchronize`].
    #[doc(alias = "aclrtSynchronizeStreamWithTimeout")]
    pub fn synchronize_timeout(&self, timeout: Duration) -> Result<()> {
        let millis = timeout.as_nanos().div_ceil(1_000_000).max(1).try_into().map_err(|_| {
            Error::invalid(
                Call::new("Stream::synchronize_timeout", "aclrtSynchronizeStreamWithTimeout"),
                format!("timeout {timeout:?} is above i32::MAX milliseconds"),
            )
        })?;
        self.device.make_current()?;
        let covered = self.values.mark();
        // SAFETY: the handle is live (owned by `self`).
        check("aclrtSynchronizeStreamWithTimeout", unsafe {
            sys::aclrtSynchronizeStreamWithTimeout(self.as_raw(), millis)
        })
        .inspect_err(|error| self.note_sync_error(error))?;
        self.values.release(covered);
        Ok(())
    }

    /// Whether the stream is in [`FailureMode::Stop`] and a synchronisation
    /// of it reported an error since (a failed task): the stream skips its
    /// later work, and the crate no longer orders work on other streams
    /// after it ([`Error::StreamStopped`]; see [`FailureMode`]). Only the
    /// mode set through [`Stream::set_failure_mode`] on this value counts.
    ///
    /// [`FailureMode`]: super::FailureMode
    /// [`FailureMode::Stop`]: super::FailureMode::Stop
    ///
    /// ```
    /// use ascend::{Device, Stream, stream::FailureMode};
    /// let device = Device::new(0)?;
    /// let stream = Stream::new(&device)?;
    /// stream.set_failure_mode(FailureMode::Stop)?;
    /// stream.synchronize()?; // nothing failed
    /// assert!(!stream.is_stopped());
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn is_stopped(&self) -> bool {
        self.stop_state() & STOPPED != 0
    }

    /// [`STOP_MODE`] and [`STOPPED`]: 0 for a stream in
    /// [`FailureMode::Continue`](super::FailureMode::Continue) (one load).
    #[inline]
    pub(crate) fn stop_state(&self) -> u8 {
        self.stop.load(Ordering::Acquire)
    }

    /// Notes that the stream is in stop mode (after the runtime accepted it).
    pub(super) fn note_stop_mode(&self) {
        self.stop.fetch_or(STOP_MODE, Ordering::AcqRel);
    }

    /// A synchronisation of the stream failed: in stop mode, unless it only
    /// timed out, a task failed and the stream has stopped.
    fn note_sync_error(&self, error: &Error) {
        if self.stop_state() & STOP_MODE != 0 && error.code() != Some(crate::ErrorCode::RT_STREAM_SYNC_TIMEOUT) {
            let before = self.stop.fetch_or(STOPPED, Ordering::AcqRel);
            if before & STOPPED != 0 {
                return;
            }
            log::warn!(
                "stream {:?} is in FailureMode::Stop and reported an error ({error}): work on other streams is no \
                 longer ordered after it",
                self.as_raw()
            );
        }
    }

    /// [`Error::StreamStopped`] for this stream; `failure` is the error of
    /// the synchronisation that found out, if this call is what did.
    pub(crate) fn stopped_error(&self, failure: Option<Error>) -> Error {
        Error::StreamStopped {
            stream: self.as_raw() as usize,
            failure: failure.map(Box::new),
        }
    }

    /// Whether every task queued on the stream has finished, without waiting
    /// (`aclrtStreamQuery`). Unlike [`Stream::synchronize`], a query does
    /// not report (nor clear) the failure of a queued task: the next
    /// synchronisation does.
    ///
    /// # Errors
    ///
    /// The runtime's code.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, Stream};
    /// let device = Device::new(0)?;
    /// let stream = Stream::new(&device)?;
    /// assert!(stream.query()?); // nothing queued
    /// stream.synchronize()?;
    /// assert!(stream.query()?);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtStreamQuery")]
    pub fn query(&self) -> Result<bool> {
        self.device.make_current()?;
        let mut status = sys::ACL_STREAM_STATUS_NOT_READY;
        // SAFETY: the handle is live (owned by `self`); `status` is a valid
        // out-pointer.
        check("aclrtStreamQuery", unsafe {
            sys::aclrtStreamQuery(self.as_raw(), &mut status)
        })?;
        Ok(status == sys::ACL_STREAM_STATUS_COMPLETE)
    }

    /// The stream's ID (`aclrtStreamGetId`): the runtime's number for it,
    /// unique among the live streams of the process.
    ///
    /// # Errors
    ///
    /// The runtime's code.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, Stream};
    /// let device = Device::new(0)?;
    /// let (first, second) = (Stream::new(&device)?, Stream::new(&device)?);
    /// assert_ne!(first.id()?, second.id()?);
    /// assert_eq!(first.id()?, first.id()?);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtStreamGetId")]
    pub fn id(&self) -> Result<i32> {
        self.device.make_current()?;
        let mut id = 0_i32;
        // SAFETY: the handle is live (owned by `self`); `id` is a valid
        // out-pointer.
        check("aclrtStreamGetId", unsafe {
            sys::aclrtStreamGetId(self.as_raw(), &mut id)
        })?;
        Ok(id)
    }

    /// The stream's priority (`aclrtStreamGetPriority`): the one given to
    /// [`Stream::with_config`], [`StreamPriority::HIGHEST`] for
    /// [`Stream::new`].
    ///
    /// # Errors
    ///
    /// The runtime's code; [`Error::InvalidArgument`] if it reports a level
    /// above 7.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, stream::{Stream, StreamFlags, StreamPriority}};
    /// let device = Device::new(0)?;
    /// let stream = Stream::with_config(&device, StreamPriority::new(3)?, StreamFlags::empty())?;
    /// assert_eq!(stream.priority()?, StreamPriority::new(3)?);
    /// assert_eq!(Stream::new(&device)?.priority()?, StreamPriority::HIGHEST);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtStreamGetPriority")]
    pub fn priority(&self) -> Result<StreamPriority> {
        self.device.make_current()?;
        let mut priority = 0_u32;
        // SAFETY: the handle is live (owned by `self`); `priority` is a valid
        // out-pointer.
        check("aclrtStreamGetPriority", unsafe {
            sys::aclrtStreamGetPriority(self.as_raw(), &mut priority)
        })?;
        let level = u8::try_from(priority).map_err(|_| {
            Error::invalid(
                Call::new("Stream::priority", "aclrtStreamGetPriority"),
                format!("the runtime reported priority {priority}, outside 0 to 7"),
            )
        })?;
        StreamPriority::new(level)
    }

    /// The stream's flags (`aclrtStreamGetFlags`): those given to
    /// [`Stream::with_config`] that the runtime keeps, empty for
    /// [`Stream::new`].
    ///
    /// # Errors
    ///
    /// The runtime's code.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, stream::{Stream, StreamFlags, StreamPriority}};
    /// let device = Device::new(0)?;
    /// let stream = Stream::with_config(&device, StreamPriority::HIGHEST, StreamFlags::FAST_LAUNCH)?;
    /// assert_eq!(stream.flags()?, StreamFlags::FAST_LAUNCH);
    /// assert!(Stream::new(&device)?.flags()?.is_empty());
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtStreamGetFlags")]
    pub fn flags(&self) -> Result<StreamFlags> {
        self.device.make_current()?;
        let mut flags = 0_u32;
        // SAFETY: the handle is live (owned by `self`); `flags` is a valid
        // out-pointer.
        check("aclrtStreamGetFlags", unsafe {
            sys::aclrtStreamGetFlags(self.as_raw(), &mut flags)
        })?;
        Ok(StreamFlags::from_bits_retain(flags))
    }

    /// Makes the stream's later work wait until `event`'s latest record (at
    /// the time of this call) is reached (`aclrtStreamWaitEvent`). The host
    /// does not wait.
    ///
    /// # Errors
    ///
    /// The runtime's code: an event without [`EventFlags::SYNC`]
    /// (see [`Event::with_flags`]) cannot be waited for, and an event never
    /// recorded is refused unless it has that flag.
    ///
    /// [`EventFlags::SYNC`]: crate::stream::EventFlags::SYNC
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, Event, Stream};
    /// let device = Device::new(0)?;
    /// let (first, second) = (Stream::new(&device)?, Stream::new(&device)?);
    /// let event = Event::new(&device)?;
    /// event.record(&first)?;
    /// second.wait_event(&event)?; // work queued on `second` from now on runs after `first`'s
    /// second.synchronize()?;
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtStreamWaitEvent")]
    pub fn wait_event(&self, event: &Event) -> Result<()> {
        self.device.make_current()?;
        // SAFETY: both handles are live (owned by `self` and `event`).
        check("aclrtStreamWaitEvent", unsafe {
            sys::aclrtStreamWaitEvent(self.as_raw(), event.as_raw())
        })
    }

    /// Like [`Stream::wait_event`], but the stream gives up waiting `timeout`
    /// after it started to (`aclrtStreamWaitEventWithTimeout`): the wait
    /// then fails on the stream, the later work runs, and the next
    /// synchronisation reports `ACL_ERROR_RT_WAIT_TIMEOUT`. The runtime
    /// counts whole seconds: the timeout is rounded up, at least one. The
    /// host does not wait.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for a timeout above `i32::MAX` seconds
    /// (use [`Stream::wait_event`] to wait without a limit); the runtime's
    /// other codes as for [`Stream::wait_event`].
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, Event, Stream};
    /// use std::time::Duration;
    /// let device = Device::new(0)?;
    /// let (first, second) = (Stream::new(&device)?, Stream::new(&device)?);
    /// let event = Event::new(&device)?;
    /// event.record(&first)?;
    /// second.wait_event_timeout(&event, Duration::from_secs(10))?;
    /// second.synchronize()?; // `first`'s work was done well within 10 s
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtStreamWaitEventWithTimeout")]
    pub fn wait_event_timeout(&self, event: &Event, timeout: Duration) -> Result<()> {
        let seconds = timeout
            .as_nanos()
            .div_ceil(1_000_000_000)
            .max(1)
            .try_into()
            .map_err(|_| {
                Error::invalid(
                    Call::new("Stream::wait_event_timeout", "aclrtStreamWaitEventWithTimeout"),
                    format!("timeout {timeout:?} is above i32::MAX seconds"),
                )
            })?;
        self.device.make_current()?;
        // SAFETY: both handles are live (owned by `self` and `event`).
        check("aclrtStreamWaitEventWithTimeout", unsafe {
            sys::aclrtStreamWaitEventWithTimeout(self.as_raw(), event.as_raw(), seconds)
        })
    }

    /// `aclrtMemcpyAsync` of `bytes` bytes on this stream, with its device
    /// current; nothing for `bytes == 0`.
    ///
    /// # Safety
    ///
    /// `src` and `dst` must hold `bytes` bytes of the memory `kind` names,
    /// and stay allocated and untouched by the host until the stream has
    /// been synchronised.
    pub(crate) unsafe fn enqueue_copy(
        &self,
        dst: *mut c_void,
        src: *const c_void,
        bytes: usize,
        kind: sys::aclrtMemcpyKind,
    ) -> Result<()> {
        if bytes == 0 {
            return Ok(());
        }
        self.device.make_current()?;
        // SAFETY: forwarded contract; the handle is live.
        check("aclrtMemcpyAsync", unsafe {
            sys::aclrtMemcpyAsync(dst, bytes, src, bytes, kind, self.as_raw())
        })
    }

    /// `aclrtMemcpy2dAsync` of `rows` on this stream, with its device
    /// current.
    ///
    /// # Safety
    ///
    /// `src` and `dst` must hold the rows (checked by
    /// `Copy2d::checked_bytes`) of the memory `kind` names, and stay
    /// allocated and untouched by the host until the stream has been
    /// synchronised.
    pub(crate) unsafe fn enqueue_copy_2d(
        &self,
        dst: *mut c_void,
        src: *const c_void,
        rows: crate::stream::copy2d::ByteRows,
        kind: sys::aclrtMemcpyKind,
    ) -> Result<()> {
        self.device.make_current()?;
        // SAFETY: forwarded contract; the handle is live.
        check("aclrtMemcpy2dAsync", unsafe {
            sys::aclrtMemcpy2dAsync(
                dst,
                rows.dst_pitch,
                src,
                rows.src_pitch,
                rows.width,
                rows.height,
                kind,
                self.as_raw(),
            )
        })
    }
}

impl fmt::Debug for Stream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Stream")
            .field("handle", &self.as_raw())
            .field("device", &self.device.id())
            .finish()
    }
}

//! [`Event`]: a marker in a stream's work (`aclrtEvent`).

use super::device_handle::destroy_once;
use super::flags::EventFlags;
use super::stream::Stream;
use crate::Device;
use crate::error::{Call, Error, Result, check};
use ascend_sys as sys;
use std::ffi::c_void;
use std::fmt;
use std::ptr::NonNull;
use std::time::Duration;

/// An event (`aclrtCreateEvent` / `aclrtDestroyEvent`): recorded on a
/// stream, it is reached when the work queued before the record has run.
/// Other streams can wait for it ([`Stream::wait_event`]), the host can wait
/// for it or poll it, and two reached events give the time between them.
///
/// Dropping the event destroys it (a failure is logged);
/// [`Event::destroy`] reports the error. `Event` is `Send` and `Sync` for
/// the same reasons as [`Stream`]: an opaque handle, usable from any
/// thread, with the device made current before each call.
///
/// ```
/// use ascend::{Device, stream::{Event, Stream}};
/// let device = Device::new(0)?;
/// let stream = Stream::new(&device)?;
/// let (start, end) = (Event::new(&device)?, Event::new(&device)?);
/// start.record(&stream)?;
/// end.record(&stream)?;
/// end.synchronize()?;
/// assert!(end.query()?);
/// assert!(end.elapsed_ms_since(&start)? >= 0.0);
/// # Ok::<(), ascend::Error>(())
/// ```
///
/// **Threads:** `Event` is `Send` and `Sync`: record it on one thread and wait
/// for it on another.
///
/// **Guide:** [Concepts](crate::guide::concepts).
pub struct Event {
    /// The handle; `None` once destroyed.
    handle: Option<NonNull<c_void>>,
    device: Device,
}

// SAFETY: the handle is an opaque token of the runtime, usable from any
// thread; every call first makes `device` current on the calling thread.
unsafe impl Send for Event {}
// SAFETY: record, wait and query through `&self` may run concurrently (the
// runtime serialises them); destruction takes the event by value or `&mut`.
unsafe impl Sync for Event {}

impl Event {
    /// Creates an event on `device` with the runtime's default flags
    /// (`aclrtCreateEvent`: streams can wait for it, records are
    /// time-stamped).
    ///
    /// # Errors
    ///
    /// The runtime's code.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, Event, Stream};
    /// let device = Device::new(0)?;
    /// let stream = Stream::new(&device)?;
    /// let (start, end) = (Event::new(&device)?, Event::new(&device)?);
    /// start.record(&stream)?;
    /// end.record(&stream)?;
    /// end.synchronize()?;
    /// assert!(end.query()?);
    /// let _took = end.elapsed_since(&start)?;
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtCreateEvent")]
    pub fn new(device: &Device) -> Result<Self> {
        device.make_current()?;
        let mut raw = std::ptr::null_mut();
        // SAFETY: `raw` is a valid out-pointer for the call.
        check("aclrtCreateEvent", unsafe { sys::aclrtCreateEvent(&mut raw) })?;
        Self::from_created(Call::new("Event::new", "aclrtCreateEvent"), raw, device)
    }

    /// Creates an event on `device` with explicit flags
    /// (`aclrtCreateEventWithFlag`).
    ///
    /// ```
    /// use ascend::{Device, stream::{Event, EventFlags}};
    /// let device = Device::new(0)?;
    /// let event = Event::with_flags(&device, EventFlags::SYNC | EventFlags::TIME_LINE)?;
    /// event.synchronize()?; // never recorded: returns at once
    /// # Ok::<(), ascend::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// The runtime's code: `ACL_ERROR_RT_PARAM_INVALID` for no flag, or for
    /// a flag that must stand alone combined with others.
    #[doc(alias = "aclrtCreateEventWithFlag")]
    pub fn with_flags(device: &Device, flags: EventFlags) -> Result<Self> {
        device.make_current()?;
        let mut raw = std::ptr::null_mut();
        // SAFETY: `raw` is a valid out-pointer for the call.
        check("aclrtCreateEventWithFlag", unsafe {
            sys::aclrtCreateEventWithFlag(&mut raw, flags.bits())
        })?;
        Self::from_created(Call::new("Event::with_flags", "aclrtCreateEventWithFlag"), raw, device)
    }

    /// Creates an "Ex" event (`aclrtCreateEventExWithFlag`): before its
    /// first record it counts as complete, and waiting on it is a no-op
    /// until then (where a classic event would be "not ready").
    ///
    /// # Errors
    ///
    /// As [`Event::with_flags`].
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::Device;
    /// use ascend::stream::{Event, EventFlags, Stream};
    /// let device = Device::new(0)?;
    /// let stream = Stream::new(&device)?;
    /// let event = Event::with_flags_ex(&device, EventFlags::SYNC)?;
    /// stream.wait_event(&event)?; // never recorded: waiting on it is a no-op
    /// event.record(&stream)?;
    /// event.synchronize()?;
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtCreateEventExWithFlag")]
    pub fn with_flags_ex(device: &Device, flags: EventFlags) -> Result<Self> {
        device.make_current()?;
        let mut raw = std::ptr::null_mut();
        // SAFETY: `raw` is a valid out-pointer for the call.
        check("aclrtCreateEventExWithFlag", unsafe {
            sys::aclrtCreateEventExWithFlag(&mut raw, flags.bits())
        })?;
        Self::from_created(
            Call::new("Event::with_flags_ex", "aclrtCreateEventExWithFlag"),
            raw,
            device,
        )
    }

    pub(super) fn from_created(call: Call, raw: sys::aclrtEvent, device: &Device) -> Result<Self> {
        let handle = NonNull::new(raw).ok_or_else(|| Error::invalid(call, "the runtime returned a NULL event"))?;
        Ok(Self {
            handle: Some(handle),
            device: device.clone(),
        })
    }

    /// An `Event` over a handle someone else owns; it must be cleared with
    /// [`Event::forget_handle`] before it drops ([`BorrowedEvent`]).
    ///
    /// [`BorrowedEvent`]: super::BorrowedEvent
    pub(super) fn lent(handle: NonNull<c_void>, device: &Device) -> Self {
        Self {
            handle: Some(handle),
            device: device.clone(),
        }
    }

    /// Lets go of the handle without destroying it.
    pub(super) fn forget_handle(&mut self) {
        self.handle = None;
    }

    /// The device the event was created on.
    ///
    /// ```
    /// use ascend::{Device, stream::Event};
    /// let event = Event::new(&Device::new(1)?)?;
    /// assert_eq!(event.device().id(), 1);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// The raw handle, for `ascend-sys` calls. It must not be destroyed.
    ///
    /// ```
    /// use ascend::{Device, stream::{Event, Stream}};
    /// let device = Device::new(0)?;
    /// let (stream, event) = (Stream::new(&device)?, Event::new(&device)?);
    /// // SAFETY: both handles are live while `stream` and `event` are.
    /// let code = unsafe { ascend_sys::aclrtRecordEvent(event.as_raw(), stream.as_raw()) };
    /// ascend::check("aclrtRecordEvent", code)?;
    /// event.synchronize()?;
    /// assert!(event.query()?); // the raw record is the event's latest
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn as_raw(&self) -> sys::aclrtEvent {
        self.handle.map_or(std::ptr::null_mut(), NonNull::as_ptr)
    }

    /// Records the event on `stream` (`aclrtRecordEvent`): it is reached
    /// once the work queued on `stream` before it has run. From now on the
    /// event stands for this record.
    ///
    /// # Errors
    ///
    /// The runtime's code.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, Event, Stream};
    /// let device = Device::new(0)?;
    /// let stream = Stream::new(&device)?;
    /// let event = Event::new(&device)?;
    /// event.record(&stream)?;
    /// event.synchronize()?; // the work queued before the record has run
    /// assert!(event.query()?);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtRecordEvent")]
    pub fn record(&self, stream: &Stream) -> Result<()> {
        stream.device().make_current()?;
        // SAFETY: both handles are live (owned by `self` and `stream`).
        check("aclrtRecordEvent", unsafe {
            sys::aclrtRecordEvent(self.as_raw(), stream.as_raw())
        })
    }

    /// Blocks until the latest record is reached (`aclrtSynchronizeEvent`);
    /// returns at once for an event never recorded.
    ///
    /// # Errors
    ///
    /// The runtime's code.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, DeviceBuf, PinnedHostBuf, stream::{Event, Stream}};
    /// let device = Device::new(0)?;
    /// let stream = Stream::new(&device)?;
    /// let done = Event::new(&device)?;
    /// let host = PinnedHostBuf::from_slice(&device, &[6u8; 32])?;
    /// let mut on_device = DeviceBuf::<u8>::zeroed(&device, 32)?;
    /// stream.scope(|s| {
    ///     s.copy_to_device(&host, &mut on_device)?;
    ///     done.record(&stream)?;
    ///     done.synchronize()?; // the host waits for the upload, not for the whole stream
    ///     assert!(done.query()?);
    ///     Ok(())
    /// })?;
    /// assert_eq!(on_device.to_vec()?, [6; 32]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtSynchronizeEvent")]
    pub fn synchronize(&self) -> Result<()> {
        self.device.make_current()?;
        // SAFETY: the handle is live.
        check("aclrtSynchronizeEvent", unsafe {
            sys::aclrtSynchronizeEvent(self.as_raw())
        })
    }

    /// Waits at most `timeout` for the latest record
    /// (`aclrtSynchronizeEventWithTimeout`); returns at once for an event
    /// never recorded. The timeout is rounded up to whole milliseconds, at
    /// least one.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for a timeout above `i32::MAX`
    /// milliseconds (use [`Event::synchronize`] to wait without a limit);
    /// `ACL_ERROR_RT_EVENT_SYNC_TIMEOUT` when the record was not reached in
    /// time; the runtime's other codes as for [`Event::synchronize`].
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, stream::{Event, Stream}};
    /// use std::time::Duration;
    /// let device = Device::new(0)?;
    /// let stream = Stream::new(&device)?;
    /// let event = Event::new(&device)?;
    /// event.record(&stream)?;
    /// event.synchronize_timeout(Duration::from_secs(10))?;
    /// assert!(event.query()?);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtSynchronizeEventWithTimeout")]
    pub fn synchronize_timeout(&self, timeout: Duration) -> Result<()> {
        let millis = timeout.as_nanos().div_ceil(1_000_000).max(1).try_into().map_err(|_| {
            Error::invalid(
                Call::new("Event::synchronize_timeout", "aclrtSynchronizeEventWithTimeout"),
                format!("timeout {timeout:?} is above i32::MAX milliseconds"),
            )
        })?;
        self.device.make_current()?;
        // SAFETY: the handle is live.
        check("aclrtSynchronizeEventWithTimeout", unsafe {
            sys::aclrtSynchronizeEventWithTimeout(self.as_raw(), millis)
        })
    }

    /// Resets the event on `stream` (`aclrtResetEvent`): once `stream`
    /// reaches the reset, the event counts as never recorded (a query says
    /// not complete; a stream waiting for an event with
    /// [`EventFlags::SYNC`] waits for its next record). The host does not
    /// wait. Make sure the streams that wait for the latest record have
    /// reached their wait first (the runtime's rule).
    ///
    /// [`EventFlags::SYNC`]: crate::stream::EventFlags::SYNC
    ///
    /// # Errors
    ///
    /// The runtime's code: events without [`EventFlags::SYNC`], and events
    /// made with `aclrtCreateEventExWithFlag`, cannot be reset
    /// (`ACL_ERROR_RT_FEATURE_NOT_SUPPORT`); a stream of another device is
    /// refused.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, stream::{Event, EventFlags, Stream}};
    /// let device = Device::new(0)?;
    /// let stream = Stream::new(&device)?;
    /// let event = Event::with_flags(&device, EventFlags::SYNC)?;
    /// event.record(&stream)?;
    /// stream.synchronize()?;
    /// assert!(event.query()?);
    /// event.reset(&stream)?;
    /// stream.synchronize()?; // the stream reached the reset
    /// assert!(!event.query()?);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtResetEvent")]
    pub fn reset(&self, stream: &Stream) -> Result<()> {
        stream.device().make_current()?;
        // SAFETY: both handles are live (owned by `self` and `stream`).
        check("aclrtResetEvent", unsafe {
            sys::aclrtResetEvent(self.as_raw(), stream.as_raw())
        })
    }

    /// Whether the latest record has been reached, without waiting
    /// (`aclrtQueryEventStatus`). An event never recorded is not complete.
    ///
    /// # Errors
    ///
    /// The runtime's code.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, stream::{Event, Stream}};
    /// let device = Device::new(0)?;
    /// let stream = Stream::new(&device)?;
    /// let event = Event::new(&device)?;
    /// assert!(!event.query()?); // never recorded
    /// event.record(&stream)?;
    /// stream.synchronize()?;
    /// assert!(event.query()?);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtQueryEventStatus")]
    pub fn query(&self) -> Result<bool> {
        self.device.make_current()?;
        let mut status = sys::ACL_EVENT_RECORDED_STATUS_NOT_READY;
        // SAFETY: the handle is live; `status` is a valid out-pointer.
        check("aclrtQueryEventStatus", unsafe {
            sys::aclrtQueryEventStatus(self.as_raw(), &mut status)
        })?;
        Ok(status == sys::ACL_EVENT_RECORDED_STATUS_COMPLETE)
    }

    /// Whether every stream wait for this event queued so far
    /// ([`Stream::wait_event`], [`Stream::wait_event_timeout`]) has passed,
    /// without waiting (`aclrtQueryEventWaitStatus`). `true` when no stream
    /// waits for it, and always for an event without [`EventFlags::SYNC`]
    /// (no stream can wait for it). Useful before recording the event again
    /// for another round: a wait still queued would see the new record.
    ///
    /// [`EventFlags::SYNC`]: crate::stream::EventFlags::SYNC
    ///
    /// # Errors
    ///
    /// The runtime's code: an event of [`Event::with_flags_ex`], or an
    /// external or IPC event, is `ACL_ERROR_RT_FEATURE_NOT_SUPPORT`
    /// ([`crate::Error::Unsupported`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, stream::{Event, Stream}};
    /// let device = Device::new(0)?;
    /// let (first, second) = (Stream::new(&device)?, Stream::new(&device)?);
    /// let event = Event::new(&device)?;
    /// assert!(event.waits_passed()?); // nobody waits for it
    /// event.record(&first)?;
    /// second.wait_event(&event)?;
    /// second.synchronize()?;
    /// assert!(event.waits_passed()?);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtQueryEventWaitStatus")]
    pub fn waits_passed(&self) -> Result<bool> {
        self.device.make_current()?;
        let mut status = sys::ACL_EVENT_WAIT_STATUS_NOT_READY;
        // SAFETY: the handle is live; `status` is a valid out-pointer.
        check("aclrtQueryEventWaitStatus", unsafe {
            sys::aclrtQueryEventWaitStatus(self.as_raw(), &mut status)
        })?;
        Ok(status == sys::ACL_EVENT_WAIT_STATUS_COMPLETE)
    }

    /// The time of the latest record, in microseconds of the device's system
    /// counter (`aclrtEventGetTimestamp`); only differences between two
    /// timestamps of one device mean something.
    ///
    /// # Errors
    ///
    /// The runtime's code: the event never recorded
    /// (`ACL_ERROR_RT_INTERNAL_ERROR`), its record not reached yet
    /// (`ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID`; synchronise first), an
    /// external or IPC event (`ACL_ERROR_RT_FEATURE_NOT_SUPPORT`).
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, stream::{Event, Stream}};
    /// let device = Device::new(0)?;
    /// let stream = Stream::new(&device)?;
    /// let (first, second) = (Event::new(&device)?, Event::new(&device)?);
    /// assert!(first.timestamp().is_err()); // never recorded
    /// first.record(&stream)?;
    /// second.record(&stream)?;
    /// stream.synchronize()?;
    /// assert!(second.timestamp()? >= first.timestamp()?);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtEventGetTimestamp")]
    pub fn timestamp(&self) -> Result<u64> {
        self.device.make_current()?;
        let mut micros = 0_u64;
        // SAFETY: the handle is live; `micros` is a valid out-pointer.
        check("aclrtEventGetTimestamp", unsafe {
            sys::aclrtEventGetTimestamp(self.as_raw(), &mut micros)
        })?;
        Ok(micros)
    }

    /// Milliseconds from `start`'s latest record to this event's
    /// (`aclrtEventElapsedTime`); negative when this one was reached first.
    ///
    /// # Errors
    ///
    /// The runtime's code: either event never recorded, or a record not
    /// reached yet (`ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID`; synchronise
    /// first).
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, stream::{Event, Stream}};
    /// let device = Device::new(0)?;
    /// let stream = Stream::new(&device)?;
    /// let (start, end) = (Event::new(&device)?, Event::new(&device)?);
    /// assert!(end.elapsed_ms_since(&start).is_err()); // neither recorded yet
    /// start.record(&stream)?;
    /// end.record(&stream)?;
    /// end.synchronize()?;
    /// assert!(end.elapsed_ms_since(&start)? >= 0.0);
    /// assert!(start.elapsed_ms_since(&end)? <= 0.0); // reached first: not positive
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtEventElapsedTime")]
    pub fn elapsed_ms_since(&self, start: &Event) -> Result<f32> {
        self.device.make_current()?;
        let mut millis = 0.0f32;
        // SAFETY: both handles are live; `millis` is a valid out-pointer.
        check("aclrtEventElapsedTime", unsafe {
            sys::aclrtEventElapsedTime(&mut millis, start.as_raw(), self.as_raw())
        })?;
        Ok(millis)
    }

    /// The time from `start`'s latest record to this event's, as a
    /// [`Duration`].
    ///
    /// # Errors
    ///
    /// As [`Event::elapsed_ms_since`], and [`Error::InvalidArgument`] when
    /// this event was reached before `start` (a negative time).
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, Event, Stream};
    /// let device = Device::new(0)?;
    /// let stream = Stream::new(&device)?;
    /// let (start, end) = (Event::new(&device)?, Event::new(&device)?);
    /// start.record(&stream)?;
    /// end.record(&stream)?;
    /// end.synchronize()?;
    /// println!("the stream ran between the records in {:?}", end.elapsed_since(&start)?);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtEventElapsedTime")]
    pub fn elapsed_since(&self, start: &Event) -> Result<Duration> {
        let millis = self.elapsed_ms_since(start)?;
        Duration::try_from_secs_f32(millis / 1000.0).map_err(|_| {
            Error::invalid(
                Call::new("Event::elapsed_since", "aclrtEventElapsedTime"),
                format!("{millis} ms: the end event was reached before the start event"),
            )
        })
    }

    /// Destroys the event now (`aclrtDestroyEvent`), reporting a failure.
    /// Records still queued complete harmlessly.
    ///
    /// # Errors
    ///
    /// The runtime's code; the handle is not used again either way.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, stream::{Event, Stream}};
    /// let device = Device::new(0)?;
    /// let stream = Stream::new(&device)?;
    /// let event = Event::new(&device)?;
    /// event.record(&stream)?;
    /// let live = ascend_sys::soft::live().events; // the software device's count
    /// event.destroy()?; // the queued record completes harmlessly
    /// assert_eq!(ascend_sys::soft::live().events, live - 1);
    /// stream.synchronize()?;
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtDestroyEvent")]
    pub fn destroy(mut self) -> Result<()> {
        self.release()
    }

    fn release(&mut self) -> Result<()> {
        // SAFETY: the handle came from `aclrtCreateEvent*`.
        unsafe {
            destroy_once(
                &mut self.handle,
                &self.device,
                "aclrtDestroyEvent",
                sys::aclrtDestroyEvent,
            )
        }
    }
}

impl Drop for Event {
    fn drop(&mut self) {
        if let Err(error) = self.release() {
            log::warn!("Event drop: {error}");
        }
    }
}

impl fmt::Debug for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Event")
            .field("handle", &self.as_raw())
            .field("device", &self.device.id())
            .finish()
    }
}

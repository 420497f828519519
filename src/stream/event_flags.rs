//! The event calls of issue 41: [`RecordMode`] and [`Event::record_with`]
//! (`aclrtRecordEventWithFlag`), [`WaitMode`] and [`Stream::wait_event_with`]
//! (`aclrtStreamWaitEventWithFlag`), [`Event::id`] (`aclrtGetEventId`) and
//! [`Event::available`] (`aclrtGetEventAvailNum`).

use super::{Event, Stream};
use crate::Device;
use crate::error::{Call, Error, Result, check};
use ascend_sys as sys;
use std::time::Duration;

/// How [`Event::record_with`] records (`ACL_EVENT_RECORD_*`).
///
/// ```
/// use ascend::{Device, Stream};
/// use ascend::stream::{Event, RecordMode};
/// let device = Device::new(0)?;
/// let stream = Stream::new(&device)?;
/// let event = Event::new(&device)?;
/// event.record_with(&stream, RecordMode::Default)?; // as `record`
/// // External records belong to graph capture; outside one they are refused.
/// assert!(event.record_with(&stream, RecordMode::External).is_err());
/// stream.synchronize()?;
/// # Ok::<(), ascend::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum RecordMode {
    /// An ordinary record, as [`Event::record`] (`ACL_EVENT_RECORD_DEFAULT`).
    #[default]
    Default,
    /// A record visible outside a graph being captured from the stream
    /// (`ACL_EVENT_RECORD_EXTERNAL`); outside a capture the runtime
    /// refuses it (`ACL_ERROR_RT_STREAM_NOT_CAPTURED`).
    External,
}

/// How [`Stream::wait_event_with`] waits (`ACL_EVENT_WAIT_*`).
///
/// ```
/// use ascend::{Device, Stream};
/// use ascend::stream::{Event, WaitMode};
/// let device = Device::new(0)?;
/// let (first, second) = (Stream::new(&device)?, Stream::new(&device)?);
/// let event = Event::new(&device)?;
/// event.record(&first)?;
/// second.wait_event_with(&event, None, WaitMode::Default)?; // as `wait_event`
/// second.synchronize()?;
/// # Ok::<(), ascend::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum WaitMode {
    /// An ordinary wait, as [`Stream::wait_event_timeout`]
    /// (`ACL_EVENT_WAIT_DEFAULT`).
    #[default]
    Default,
    /// A graph being captured from the stream waits for an event outside it
    /// (`ACL_EVENT_WAIT_EXTERNAL`, no timeout); outside a capture the
    /// runtime refuses it (`ACL_ERROR_RT_STREAM_NOT_CAPTURED`).
    External,
}

impl Event {
    /// Records the event on `stream` as `mode` says
    /// (`aclrtRecordEventWithFlag`); [`RecordMode::Default`] is
    /// [`Event::record`].
    ///
    /// # Errors
    ///
    /// The runtime's code: [`RecordMode::External`] on a stream that is not
    /// being captured is refused.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, Event, RecordMode, Stream};
    /// let device = Device::new(0)?;
    /// let stream = Stream::new(&device)?;
    /// let event = Event::new(&device)?;
    /// event.record_with(&stream, RecordMode::Default)?;
    /// event.synchronize()?;
    /// assert!(event.record_with(&stream, RecordMode::External).is_err()); // no capture
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtRecordEventWithFlag")]
    pub fn record_with(&self, stream: &Stream, mode: RecordMode) -> Result<()> {
        let flag = match mode {
            RecordMode::Default => sys::ACL_EVENT_RECORD_DEFAULT,
            RecordMode::External => sys::ACL_EVENT_RECORD_EXTERNAL,
        };
        stream.device().make_current()?;
        // SAFETY: both handles are live (owned by `self` and `stream`).
        check("aclrtRecordEventWithFlag", unsafe {
            sys::aclrtRecordEventWithFlag(self.as_raw(), stream.as_raw(), flag)
        })
    }

    /// The runtime's id of this event (`aclrtGetEventId`). The software
    /// device numbers its streams and events in the order the process
    /// created them, never reusing a number.
    ///
    /// # Errors
    ///
    /// The runtime's code (`ACL_EVENT_IPC` events have no id).
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, Event};
    /// let device = Device::new(0)?;
    /// let (a, b) = (Event::new(&device)?, Event::new(&device)?);
    /// assert_ne!(a.id()?, b.id()?);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtGetEventId")]
    pub fn id(&self) -> Result<u32> {
        self.device().make_current()?;
        let mut id = 0_u32;
        // SAFETY: the handle is live (owned by `self`); `id` is a valid
        // out-pointer.
        check("aclrtGetEventId", unsafe {
            sys::aclrtGetEventId(self.as_raw(), &mut id)
        })?;
        Ok(id)
    }

    /// How many more events `device` can have (`aclrtGetEventAvailNum`):
    /// 65,536 at once on the Atlas A2 and A3 series, less those alive.
    ///
    /// # Errors
    ///
    /// The runtime's code.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, Event};
    /// let device = Device::new(0)?;
    /// let before = Event::available(&device)?;
    /// let _event = Event::new(&device)?;
    /// assert_eq!(Event::available(&device)?, before - 1);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtGetEventAvailNum")]
    pub fn available(device: &Device) -> Result<u32> {
        device.make_current()?;
        let mut count = 0_u32;
        // SAFETY: `count` is a valid out-pointer.
        check("aclrtGetEventAvailNum", unsafe {
            sys::aclrtGetEventAvailNum(&mut count)
        })?;
        Ok(count)
    }
}

impl Stream {
    /// Makes the work queued on this stream from now on wait for `event`'s
    /// latest record, as `mode` says (`aclrtStreamWaitEventWithFlag`).
    /// With a `timeout`, the stream gives up waiting that long after it
    /// started to (whole seconds, rounded up): the wait then fails on the
    /// stream, as for [`Stream::wait_event_timeout`]. `None` waits without
    /// a limit. The host does not wait.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for a timeout above `u32::MAX` seconds, or
    /// any timeout with [`WaitMode::External`]; the runtime's code
    /// otherwise ([`WaitMode::External`] on a stream that is not being
    /// captured is refused).
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, Event, Stream, WaitMode};
    /// use std::time::Duration;
    /// let device = Device::new(0)?;
    /// let (first, second) = (Stream::new(&device)?, Stream::new(&device)?);
    /// let event = Event::new(&device)?;
    /// event.record(&first)?;
    /// second.wait_event_with(&event, Some(Duration::from_secs(10)), WaitMode::Default)?;
    /// second.synchronize()?;
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtStreamWaitEventWithFlag")]
    pub fn wait_event_with(&self, event: &Event, timeout: Option<Duration>, mode: WaitMode) -> Result<()> {
        let refuse = |reason: String| {
            Error::invalid(
                Call::new("Stream::wait_event_with", "aclrtStreamWaitEventWithFlag"),
                reason,
            )
        };
        let seconds = match timeout {
            None => 0,
            Some(_) if mode == WaitMode::External => {
                return Err(refuse("WaitMode::External waits without a timeout".to_owned()));
            }
            Some(timeout) => timeout
                .as_nanos()
                .div_ceil(1_000_000_000)
                .max(1)
                .try_into()
                .map_err(|_| refuse(format!("timeout {timeout:?} is above u32::MAX seconds")))?,
        };
        let flag = match mode {
            WaitMode::Default => sys::ACL_EVENT_WAIT_DEFAULT,
            WaitMode::External => sys::ACL_EVENT_WAIT_EXTERNAL,
        };
        self.device().make_current()?;
        // SAFETY: both handles are live (owned by `self` and `event`).
        check("aclrtStreamWaitEventWithFlag", unsafe {
            sys::aclrtStreamWaitEventWithFlag(self.as_raw(), event.as_raw(), seconds, flag)
        })
    }
}

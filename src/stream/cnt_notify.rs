//! [`CntNotify`]: a 32-bit counter streams record into and wait on
//! (`aclrtCntNotify`).

use super::device_handle::destroy_once;
use super::notify::whole_seconds;
use super::stream::Stream;
use crate::Device;
use crate::error::{Call, Error, Result, check};
use ascend_sys as sys;
use std::ffi::c_void;
use std::fmt;
use std::ptr::NonNull;
use std::time::Duration;

/// How a record changes a [`CntNotify`]'s counter (`aclrtCntNotifyRecordMode`).
///
/// ```
/// use ascend::{Device, Stream, stream::{CntCondition, CntNotify, CntRecord}};
/// let device = Device::new(0)?;
/// let stream = Stream::new(&device)?;
/// let count = CntNotify::new(&device)?;
/// count.record(&stream, CntRecord::Set(0b0011))?;
/// count.record(&stream, CntRecord::Or(0b0100))?;
/// count.wait(&stream, CntCondition::AllBits(0b0111), false, None)?;
/// stream.synchronize()?;
/// # Ok::<(), ascend::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CntRecord {
    /// counter = value.
    Set(u32),
    /// counter += value (wrapping).
    Add(u32),
    /// counter |= value.
    Or(u32),
    /// counter &= value.
    And(u32),
}

/// What a wait on a [`CntNotify`] waits for (`aclrtCntNotifyWaitMode`).
///
/// ```
/// use ascend::{Device, Stream, stream::{CntCondition, CntNotify, CntRecord}};
/// let device = Device::new(0)?;
/// let stream = Stream::new(&device)?;
/// let count = CntNotify::new(&device)?;
/// count.wait(&stream, CntCondition::Less(1), false, None)?; // 0 < 1 from the start
/// stream.synchronize()?;
/// # Ok::<(), ascend::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CntCondition {
    /// counter < value.
    Less(u32),
    /// counter == value.
    Equal(u32),
    /// counter > value.
    Greater(u32),
    /// counter >= value.
    AtLeast(u32),
    /// (counter & value) == value.
    AllBits(u32),
}

/// A count notify (`aclrtCntNotifyCreate` / `aclrtCntNotifyDestroy`): a
/// 32-bit counter, 0 at creation, that records on streams set, add to, OR
/// or AND ([`CntNotify::record`]), and that waits on other streams compare
/// ([`CntNotify::wait`]): several producers can each add one and a consumer
/// wait for all of them. (On hardware, only recent chips have count
/// notifies; others refuse them with `ACL_ERROR_RT_FEATURE_NOT_SUPPORT`.)
///
/// Dropping it destroys it (a failure is logged); [`CntNotify::destroy`]
/// reports the error.
///
/// ```
/// use ascend::{Device, Stream, stream::{CntCondition, CntNotify, CntRecord}};
/// let device = Device::new(0)?;
/// let producers = [Stream::new(&device)?, Stream::new(&device)?];
/// let consumer = Stream::new(&device)?;
/// let done = CntNotify::new(&device)?;
/// for producer in &producers {
///     done.record(producer, CntRecord::Add(1))?; // after each producer's work
/// }
/// done.wait(&consumer, CntCondition::AtLeast(2), true, None)?; // both, then clear
/// consumer.synchronize()?;
/// # Ok::<(), ascend::Error>(())
/// ```
///
/// **Dropping** destroys it at once, as an [`Event`](super::Event) is: a
/// wait or record on it that a stream has queued but not reached loses its
/// ordering (the software device ends such a wait and records the misuse).
/// Keep it alive until the streams have passed it. No memory is freed on
/// its account, so this loses an order, never soundness.
///
/// **Threads:** `CntNotify` is `Send` and `Sync`, like [`Notify`](super::Notify).
pub struct CntNotify {
    /// The handle; `None` once destroyed.
    handle: Option<NonNull<c_void>>,
    device: Device,
}

// SAFETY: the handle is an opaque token of the runtime, usable from any
// thread; every call first makes `device` current on the calling thread.
unsafe impl Send for CntNotify {}
// SAFETY: record, wait and the getters through `&self` may run
// concurrently (the runtime serialises them); destruction takes the count
// notify by value or `&mut`.
unsafe impl Sync for CntNotify {}

impl CntNotify {
    /// Creates a count notify on `device` (`aclrtCntNotifyCreate`).
    ///
    /// # Errors
    ///
    /// The runtime's code (`ACL_ERROR_RT_FEATURE_NOT_SUPPORT` on chips
    /// without count notifies).
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, stream::CntNotify};
    /// let count = CntNotify::new(&Device::new(0)?)?;
    /// assert_eq!(count.device().id(), 0);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtCntNotifyCreate")]
    pub fn new(device: &Device) -> Result<Self> {
        device.make_current()?;
        let mut raw = std::ptr::null_mut();
        // SAFETY: `raw` is a valid out-pointer; the flag is reserved (0).
        check("aclrtCntNotifyCreate", unsafe {
            sys::aclrtCntNotifyCreate(&mut raw, 0)
        })?;
        let call = Call::new("CntNotify::new", "aclrtCntNotifyCreate");
        let handle =
            NonNull::new(raw).ok_or_else(|| Error::invalid(call, "the runtime returned a NULL count notify"))?;
        Ok(Self {
            handle: Some(handle),
            device: device.clone(),
        })
    }

    /// The device the count notify was created on.
    ///
    /// ```
    /// use ascend::{Device, stream::CntNotify};
    /// assert_eq!(CntNotify::new(&Device::new(1)?)?.device().id(), 1);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// The raw handle, for `ascend-sys` calls. It must not be destroyed.
    ///
    /// ```
    /// use ascend::{Device, Stream, stream::CntNotify};
    /// let device = Device::new(0)?;
    /// let (stream, count) = (Stream::new(&device)?, CntNotify::new(&device)?);
    /// // SAFETY: both handles are live while `stream` and `count` are.
    /// let code = unsafe { ascend_sys::aclrtCntNotifyReset(count.as_raw(), stream.as_raw()) };
    /// ascend::check("aclrtCntNotifyReset", code)?;
    /// stream.synchronize()?;
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn as_raw(&self) -> sys::aclrtCntNotify {
        self.handle.map_or(std::ptr::null_mut(), NonNull::as_ptr)
    }

    /// Queues on `stream` a task that changes the counter
    /// (`aclrtCntNotifyRecord`), once the work queued before it has run.
    ///
    /// # Errors
    ///
    /// The runtime's code.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, Stream, stream::{CntCondition, CntNotify, CntRecord}};
    /// let device = Device::new(0)?;
    /// let stream = Stream::new(&device)?;
    /// let count = CntNotify::new(&device)?;
    /// count.record(&stream, CntRecord::Add(5))?;
    /// count.record(&stream, CntRecord::And(4))?;
    /// count.wait(&stream, CntCondition::Equal(4), false, None)?;
    /// stream.synchronize()?;
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtCntNotifyRecord")]
    pub fn record(&self, stream: &Stream, record: CntRecord) -> Result<()> {
        let (mode, value) = match record {
            CntRecord::Set(value) => (sys::ACL_RT_CNT_NOTIFY_RECORD_SET_VALUE_MODE, value),
            CntRecord::Add(value) => (sys::ACL_RT_CNT_NOTIFY_RECORD_ADD_MODE, value),
            CntRecord::Or(value) => (sys::ACL_RT_CNT_NOTIFY_RECORD_BIT_OR_MODE, value),
            CntRecord::And(value) => (sys::ACL_RT_CNT_NOTIFY_RECORD_BIT_AND_MODE, value),
        };
        let mut info = sys::aclrtCntNotifyRecordInfo { mode, value };
        stream.device().make_current()?;
        // SAFETY: both handles are live; `info` is valid for the call.
        check("aclrtCntNotifyRecord", unsafe {
            sys::aclrtCntNotifyRecord(self.as_raw(), stream.as_raw(), &mut info)
        })
    }

    /// Queues on `stream` a wait until `condition` holds
    /// (`aclrtCntNotifyWaitWithTimeout`); with `clear`, the counter is set
    /// to 0 when the wait ends. With a `timeout` (whole seconds, rounded up,
    /// at least one), the wait fails on the stream once it passes and the
    /// next synchronisation reports `ACL_ERROR_RT_WAIT_TIMEOUT`; `None`
    /// waits without limit. The host does not wait.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for a timeout of `u32::MAX` seconds or
    /// more; the runtime's code.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, Stream, stream::{CntCondition, CntNotify, CntRecord}};
    /// use std::time::Duration;
    /// let device = Device::new(0)?;
    /// let (first, second) = (Stream::new(&device)?, Stream::new(&device)?);
    /// let count = CntNotify::new(&device)?;
    /// count.record(&first, CntRecord::Set(3))?;
    /// count.wait(&second, CntCondition::Greater(2), true, Some(Duration::from_secs(10)))?;
    /// second.synchronize()?;
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtCntNotifyWaitWithTimeout")]
    pub fn wait(&self, stream: &Stream, condition: CntCondition, clear: bool, timeout: Option<Duration>) -> Result<()> {
        let (mode, value) = match condition {
            CntCondition::Less(value) => (sys::ACL_RT_CNT_NOTIFY_WAIT_LESS_MODE, value),
            CntCondition::Equal(value) => (sys::ACL_RT_CNT_NOTIFY_WAIT_EQUAL_MODE, value),
            CntCondition::Greater(value) => (sys::ACL_RT_CNT_NOTIFY_WAIT_BIGGER_MODE, value),
            CntCondition::AtLeast(value) => (sys::ACL_RT_CNT_NOTIFY_WAIT_BIGGER_OR_EQUAL_MODE, value),
            CntCondition::AllBits(value) => (sys::ACL_RT_CNT_NOTIFY_WAIT_EQUAL_WITH_BITMASK_MODE, value),
        };
        let timeout = whole_seconds(Call::new("CntNotify::wait", "aclrtCntNotifyWaitWithTimeout"), timeout)?;
        let mut info = sys::aclrtCntNotifyWaitInfo {
            mode,
            value,
            timeout,
            isClear: clear,
            rsv: [0; 3],
        };
        stream.device().make_current()?;
        // SAFETY: both handles are live; `info` is valid for the call.
        check("aclrtCntNotifyWaitWithTimeout", unsafe {
            sys::aclrtCntNotifyWaitWithTimeout(self.as_raw(), stream.as_raw(), &mut info)
        })
    }

    /// Queues on `stream` a task that sets the counter to 0
    /// (`aclrtCntNotifyReset`).
    ///
    /// # Errors
    ///
    /// The runtime's code.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, Stream, stream::{CntCondition, CntNotify, CntRecord}};
    /// let device = Device::new(0)?;
    /// let stream = Stream::new(&device)?;
    /// let count = CntNotify::new(&device)?;
    /// count.record(&stream, CntRecord::Set(7))?;
    /// count.reset(&stream)?;
    /// count.wait(&stream, CntCondition::Equal(0), false, None)?;
    /// stream.synchronize()?;
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtCntNotifyReset")]
    pub fn reset(&self, stream: &Stream) -> Result<()> {
        stream.device().make_current()?;
        // SAFETY: both handles are live (owned by `self` and `stream`).
        check("aclrtCntNotifyReset", unsafe {
            sys::aclrtCntNotifyReset(self.as_raw(), stream.as_raw())
        })
    }

    /// The count notify's id (`aclrtCntNotifyGetId`).
    ///
    /// # Errors
    ///
    /// The runtime's code.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, stream::CntNotify};
    /// let device = Device::new(0)?;
    /// let (a, b) = (CntNotify::new(&device)?, CntNotify::new(&device)?);
    /// assert_ne!(a.id()?, b.id()?);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtCntNotifyGetId")]
    pub fn id(&self) -> Result<u32> {
        self.device.make_current()?;
        let mut id = 0;
        // SAFETY: the handle is live; `id` is a valid out-pointer.
        check("aclrtCntNotifyGetId", unsafe {
            sys::aclrtCntNotifyGetId(self.as_raw(), &mut id)
        })?;
        Ok(id)
    }

    /// Destroys the count notify now, reporting the error (dropping it
    /// logs one instead).
    ///
    /// # Errors
    ///
    /// The runtime's code.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, stream::CntNotify};
    /// CntNotify::new(&Device::new(0)?)?.destroy()?;
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtCntNotifyDestroy")]
    pub fn destroy(mut self) -> Result<()> {
        self.release()
    }

    fn release(&mut self) -> Result<()> {
        // SAFETY: the handle came from `aclrtCntNotifyCreate`.
        unsafe {
            destroy_once(
                &mut self.handle,
                &self.device,
                "aclrtCntNotifyDestroy",
                sys::aclrtCntNotifyDestroy,
            )
        }
    }
}

impl Drop for CntNotify {
    fn drop(&mut self) {
        if let Err(error) = self.release() {
            log::warn!("CntNotify drop: {error}");
        }
    }
}

impl fmt::Debug for CntNotify {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CntNotify")
            .field("handle", &self.as_raw())
            .field("device", &self.device.id())
            .finish()
    }
}

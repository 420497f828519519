//! [`Notify`]: a one-bit signal between streams (`aclrtNotify`).

use super::device_handle::destroy_once;
use super::stream::Stream;
use crate::Device;
use crate::error::{Call, Error, Result, check};
use ascend_sys as sys;
use std::ffi::c_void;
use std::fmt;
use std::ptr::NonNull;
use std::time::Duration;

/// A notify (`aclrtCreateNotify` / `aclrtDestroyNotify`): one stream sets
/// it ([`Notify::record`]), another waits until it is set and clears it
/// ([`Notify::wait_and_reset`]), so the waiting stream's later work runs
/// after the recording stream's earlier work. Unlike an
/// [`Event`](super::Event), a notify is a bit, not a history: one record
/// releases one wait, and a second record before the wait is lost.
/// Notifies can be shared with other processes
/// ([`Notify::export`], [`Notify::import`]).
///
/// Dropping the notify destroys it (a failure is logged);
/// [`Notify::destroy`] reports the error.
///
/// ```
/// use ascend::{Device, Stream, stream::Notify};
/// let device = Device::new(0)?;
/// let (producer, consumer) = (Stream::new(&device)?, Stream::new(&device)?);
/// let ready = Notify::new(&device)?;
/// ready.record(&producer)?; // after the producer's earlier work
/// ready.wait_and_reset(&consumer, None)?; // the consumer's later work waits for it
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
/// **Threads:** `Notify` is `Send` and `Sync`: an opaque handle, usable from
/// any thread, with the device made current before each call.
pub struct Notify {
    /// The handle; `None` once destroyed.
    handle: Option<NonNull<c_void>>,
    device: Device,
}

// SAFETY: the handle is an opaque token of the runtime, usable from any
// thread; every call first makes `device` current on the calling thread.
unsafe impl Send for Notify {}
// SAFETY: record, wait and the getters through `&self` may run
// concurrently (the runtime serialises them); destruction takes the notify
// by value or `&mut`.
unsafe impl Sync for Notify {}

/// A timeout as the runtime's whole seconds (`None`: no limit, 0), rounded
/// up, at least one.
pub(super) fn whole_seconds(call: Call, timeout: Option<Duration>) -> Result<u32> {
    let Some(timeout) = timeout else {
        return Ok(0);
    };
    let seconds = timeout.as_nanos().div_ceil(1_000_000_000).max(1);
    u32::try_from(seconds)
        .ok()
        .filter(|&seconds| seconds < u32::MAX)
        .ok_or_else(|| Error::invalid(call, format!("timeout {timeout:?} is above u32::MAX - 1 seconds")))
}

impl Notify {
    /// Creates a notify on `device` (`aclrtCreateNotify`, `ACL_NOTIFY_DEFAULT`).
    ///
    /// # Errors
    ///
    /// The runtime's code (`ACL_ERROR_RT_NO_NOTIFY_RESOURCE` when the
    /// device has no notify left).
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, stream::Notify};
    /// let device = Device::new(0)?;
    /// let notify = Notify::new(&device)?;
    /// assert_eq!(notify.device().id(), 0);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtCreateNotify")]
    pub fn new(device: &Device) -> Result<Self> {
        device.make_current()?;
        let mut raw = std::ptr::null_mut();
        // SAFETY: `raw` is a valid out-pointer.
        check("aclrtCreateNotify", unsafe {
            sys::aclrtCreateNotify(&mut raw, sys::ACL_NOTIFY_DEFAULT)
        })?;
        Self::from_created(Call::new("Notify::new", "aclrtCreateNotify"), raw, device)
    }

    pub(super) fn from_created(call: Call, raw: sys::aclrtNotify, device: &Device) -> Result<Self> {
        let handle = NonNull::new(raw).ok_or_else(|| Error::invalid(call, "the runtime returned a NULL notify"))?;
        Ok(Self {
            handle: Some(handle),
            device: device.clone(),
        })
    }

    /// The device the notify was created (or imported) on.
    ///
    /// ```
    /// use ascend::{Device, stream::Notify};
    /// let notify = Notify::new(&Device::new(1)?)?;
    /// assert_eq!(notify.device().id(), 1);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// The raw handle, for `ascend-sys` calls. It must not be destroyed.
    ///
    /// ```
    /// use ascend::{Device, Stream, stream::Notify};
    /// let device = Device::new(0)?;
    /// let (stream, notify) = (Stream::new(&device)?, Notify::new(&device)?);
    /// // SAFETY: both handles are live while `stream` and `notify` are.
    /// let code = unsafe { ascend_sys::aclrtRecordNotify(notify.as_raw(), stream.as_raw()) };
    /// ascend::check("aclrtRecordNotify", code)?;
    /// notify.wait_and_reset(&stream, None)?; // released by the raw record
    /// stream.synchronize()?;
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn as_raw(&self) -> sys::aclrtNotify {
        self.handle.map_or(std::ptr::null_mut(), NonNull::as_ptr)
    }

    /// Queues on `stream` a task that sets the notify (`aclrtRecordNotify`):
    /// it runs once the work queued on `stream` before it has run.
    ///
    /// # Errors
    ///
    /// The runtime's code (a stream of another device, for one).
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, Stream, stream::Notify};
    /// let device = Device::new(0)?;
    /// let (first, second) = (Stream::new(&device)?, Stream::new(&device)?);
    /// let notify = Notify::new(&device)?;
    /// notify.record(&first)?;
    /// notify.wait_and_reset(&second, None)?;
    /// second.synchronize()?; // so `first`'s record has run
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtRecordNotify")]
    pub fn record(&self, stream: &Stream) -> Result<()> {
        stream.device().make_current()?;
        // SAFETY: both handles are live (owned by `self` and `stream`).
        check("aclrtRecordNotify", unsafe {
            sys::aclrtRecordNotify(self.as_raw(), stream.as_raw())
        })
    }

    /// Queues on `stream` a wait until the notify is set, which then clears
    /// it (`aclrtWaitAndResetNotify`): `stream`'s later work runs after the
    /// record that set it. With a `timeout` (whole seconds, rounded up, at
    /// least one; counted from when the stream starts waiting), the wait
    /// fails on the stream once it passes and the next synchronisation
    /// reports `ACL_ERROR_RT_WAIT_TIMEOUT`; `None` waits without limit. The
    /// host does not wait.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for a timeout of `u32::MAX` seconds or
    /// more; the runtime's code.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, Stream, stream::Notify};
    /// use std::time::Duration;
    /// let device = Device::new(0)?;
    /// let (first, second) = (Stream::new(&device)?, Stream::new(&device)?);
    /// let notify = Notify::new(&device)?;
    /// notify.record(&first)?;
    /// notify.wait_and_reset(&second, Some(Duration::from_secs(10)))?;
    /// second.synchronize()?; // released well within 10 s
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtWaitAndResetNotify")]
    pub fn wait_and_reset(&self, stream: &Stream, timeout: Option<Duration>) -> Result<()> {
        let seconds = whole_seconds(Call::new("Notify::wait_and_reset", "aclrtWaitAndResetNotify"), timeout)?;
        stream.device().make_current()?;
        // SAFETY: both handles are live (owned by `self` and `stream`).
        check("aclrtWaitAndResetNotify", unsafe {
            sys::aclrtWaitAndResetNotify(self.as_raw(), stream.as_raw(), seconds)
        })
    }

    /// The notify's id (`aclrtGetNotifyId`); an imported notify has its
    /// exporter's id.
    ///
    /// # Errors
    ///
    /// The runtime's code.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, stream::Notify};
    /// let device = Device::new(0)?;
    /// let (a, b) = (Notify::new(&device)?, Notify::new(&device)?);
    /// assert_ne!(a.id()?, b.id()?);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtGetNotifyId")]
    pub fn id(&self) -> Result<u32> {
        self.device.make_current()?;
        let mut id = 0;
        // SAFETY: the handle is live; `id` is a valid out-pointer.
        check("aclrtGetNotifyId", unsafe {
            sys::aclrtGetNotifyId(self.as_raw(), &mut id)
        })?;
        Ok(id)
    }

    /// Clears every notify of `notifies` now, from the host
    /// (`aclrtNotifyBatchReset`; not ordered on any stream), in order,
    /// stopping at the first failure. They must belong to one device.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for an empty list or notifies of several
    /// devices; the runtime's code.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, Stream, stream::Notify};
    /// let device = Device::new(0)?;
    /// let stream = Stream::new(&device)?;
    /// let (a, b) = (Notify::new(&device)?, Notify::new(&device)?);
    /// a.record(&stream)?;
    /// stream.synchronize()?;
    /// Notify::reset_all(&[&a, &b])?; // `a`'s record is forgotten
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtNotifyBatchReset")]
    pub fn reset_all(notifies: &[&Notify]) -> Result<()> {
        let call = Call::new("Notify::reset_all", "aclrtNotifyBatchReset");
        let Some(first) = notifies.first() else {
            return Err(Error::invalid(call, "no notify to reset"));
        };
        if notifies.iter().any(|notify| notify.device.id() != first.device.id()) {
            return Err(Error::invalid(call, "the notifies belong to several devices"));
        }
        let mut raw: Vec<sys::aclrtNotify> = notifies.iter().map(|notify| notify.as_raw()).collect();
        first.device.make_current()?;
        // SAFETY: `raw` holds `len` live handles (owned by the notifies).
        check("aclrtNotifyBatchReset", unsafe {
            sys::aclrtNotifyBatchReset(raw.as_mut_ptr(), raw.len())
        })
    }

    /// Destroys the notify now, reporting the error (dropping it logs one
    /// instead).
    ///
    /// # Errors
    ///
    /// The runtime's code.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, stream::Notify};
    /// let notify = Notify::new(&Device::new(0)?)?;
    /// notify.destroy()?;
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtDestroyNotify")]
    pub fn destroy(mut self) -> Result<()> {
        self.release()
    }

    fn release(&mut self) -> Result<()> {
        // SAFETY: the handle came from `aclrtCreateNotify` or
        // `aclrtNotifyImportByKey`.
        unsafe {
            destroy_once(
                &mut self.handle,
                &self.device,
                "aclrtDestroyNotify",
                sys::aclrtDestroyNotify,
            )
        }
    }
}

impl Drop for Notify {
    fn drop(&mut self) {
        if let Err(error) = self.release() {
            log::warn!("Notify drop: {error}");
        }
    }
}

impl fmt::Debug for Notify {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Notify")
            .field("handle", &self.as_raw())
            .field("device", &self.device.id())
            .finish()
    }
}

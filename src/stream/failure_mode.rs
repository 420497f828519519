//! [`FailureMode`]: what a stream does after one of its tasks fails
//! (`aclrtSetStreamFailureMode`).

use super::stream::Stream;
use crate::error::{Result, check};
use ascend_sys as sys;

/// What a stream does with its later tasks once one of its tasks fails
/// (`ACL_CONTINUE_ON_FAILURE` / `ACL_STOP_ON_FAILURE`). Either way the
/// failure is reported by the next synchronisation of the stream.
///
/// ```
/// use ascend::Device;
/// use ascend::stream::{FailureMode, Stream};
/// let device = Device::new(0)?;
/// let stream = Stream::new(&device)?;
/// stream.set_failure_mode(FailureMode::Stop)?; // later tasks stop after a failure
/// assert!(stream.set_failure_mode(FailureMode::Continue).is_err()); // no way back
/// assert_eq!(FailureMode::default(), FailureMode::Continue);
/// # Ok::<(), ascend::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum FailureMode {
    /// The later tasks still run (every stream's mode at creation).
    #[default]
    Continue,
    /// The later tasks do not run. On the software device they are skipped
    /// until a synchronisation reports the failure; a record skipped so
    /// never completes, and a wait for it (another stream's, or the host's)
    /// never ends, as on hardware.
    ///
    /// **What the crate does with a stream in stop mode.** The stream
    /// remembers the mode set through [`Stream::set_failure_mode`], and
    /// that a synchronisation of it reported an error since (a failed task:
    /// [`Stream::is_stopped`]). The crate's own cross-stream ordering
    /// ([`Ordered`](crate::stream::Ordered) memory and the pools built on
    /// it) never makes another stream wait for an event recorded on a
    /// stream in stop mode, since a failure queued before the record would
    /// skip it and the wait would never end:
    /// - while no failure is known, it waits on the host for the stream's
    ///   queued work instead (a synchronisation; so ordering after a stream
    ///   in stop mode blocks the calling thread until that stream is idle).
    ///   If that synchronisation reports a failure, the stream is stopped;
    /// - work to be ordered after a stopped stream is refused with
    ///   [`Error::StreamStopped`](crate::Error::StreamStopped), naming the
    ///   stream (with the failure, when this call is what learned of it).
    ///   Nothing is queued; host access still works;
    /// - host waits (`Ordered::wait`, `get_mut`, the drop, a pool's trim)
    ///   synchronise the stream, which reports the failure rather than
    ///   waiting for skipped work; memory whose work cannot be proven
    ///   finished is leaked with a log line, never freed;
    /// - a [`RuntimePool`](crate::pool::RuntimePool) block whose free
    ///   cannot be ordered after a stopped stream is leaked, logged.
    ///
    /// Modes set outside this API (raw `ascend_sys` calls, a borrowed
    /// stream) are unknown to the crate; so are events the program itself
    /// records on a stream in stop mode and waits for. Set the mode before
    /// queueing work on the stream: records queued while it was in
    /// [`FailureMode::Continue`] are not covered.
    Stop,
}

impl FailureMode {
    /// The runtime's value (`ACL_CONTINUE_ON_FAILURE`, `ACL_STOP_ON_FAILURE`),
    /// for a raw `aclrtSetStreamFailureMode`.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{stream::FailureMode, sys};
    /// assert_eq!(FailureMode::Continue.to_raw(), u64::from(sys::ACL_CONTINUE_ON_FAILURE));
    /// assert_eq!(FailureMode::Stop.to_raw(), u64::from(sys::ACL_STOP_ON_FAILURE));
    /// ```
    pub fn to_raw(self) -> u64 {
        u64::from(match self {
            FailureMode::Continue => sys::ACL_CONTINUE_ON_FAILURE,
            FailureMode::Stop => sys::ACL_STOP_ON_FAILURE,
        })
    }
}

impl Stream {
    /// Sets what the stream does after one of its tasks fails
    /// (`aclrtSetStreamFailureMode`). Setting the current mode again
    /// succeeds; a stream in [`FailureMode::Stop`] cannot go back to
    /// [`FailureMode::Continue`]. What the crate does with a stream in stop
    /// mode: see [`FailureMode::Stop`].
    ///
    /// # Errors
    ///
    /// The runtime's code: [`FailureMode::Stop`] back to
    /// [`FailureMode::Continue`] is `ACL_ERROR_RT_FEATURE_NOT_SUPPORT`
    /// ([`crate::Error::Unsupported`]); so is any change on a device or
    /// runtime without the feature.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, Stream, stream::FailureMode};
    /// let device = Device::new(0)?;
    /// let stream = Stream::new(&device)?;
    /// stream.set_failure_mode(FailureMode::Stop)?;
    /// stream.set_failure_mode(FailureMode::Stop)?; // unchanged: fine
    /// assert!(stream.set_failure_mode(FailureMode::Continue).is_err());
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtSetStreamFailureMode")]
    pub fn set_failure_mode(&self, mode: FailureMode) -> Result<()> {
        self.device().make_current()?;
        // SAFETY: the handle is live (owned by `self`); `mode` is a value.
        check("aclrtSetStreamFailureMode", unsafe {
            sys::aclrtSetStreamFailureMode(self.as_raw(), mode.to_raw())
        })?;
        if mode == FailureMode::Stop {
            self.note_stop_mode();
        }
        Ok(())
    }
}

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
    /// never completes.
    Stop,
}

impl FailureMode {
    /// The runtime's value (`ACL_CONTINUE_ON_FAILURE`, `ACL_STOP_ON_FAILURE`).
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
    /// [`FailureMode::Continue`].
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
    pub fn set_failure_mode(&self, mode: FailureMode) -> Result<()> {
        self.device().make_current()?;
        // SAFETY: the handle is live (owned by `self`); `mode` is a value.
        check("aclrtSetStreamFailureMode", unsafe {
            sys::aclrtSetStreamFailureMode(self.as_raw(), mode.to_raw())
        })
    }
}

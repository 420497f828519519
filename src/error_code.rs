//! [`ErrorCode`]: an `aclError` value with its C name.

use crate::error_code_names::CODE_NAMES;
use ascend_sys as sys;
use std::fmt;

/// An AscendCL status code (`aclError`), as returned by the runtime.
///
/// Every code the reference defines has a name ([`ErrorCode::name`]); a code
/// this crate does not know is kept as its number. The most commonly matched
/// codes are associated constants.
///
/// ```
/// use ascend::ErrorCode;
/// assert_eq!(ErrorCode::RT_PARAM_INVALID.name(), Some("ACL_ERROR_RT_PARAM_INVALID"));
/// assert_eq!(ErrorCode(123_456).name(), None);
/// assert_eq!(ErrorCode::RT_CONTEXT_NULL.to_string(), "ACL_ERROR_RT_CONTEXT_NULL (107002)");
/// ```
///
/// The constants can be matched on, e.g. to tell a bad device id from
/// other failures:
///
/// ```
/// use ascend::{Device, ErrorCode};
/// fn open(id: i32) -> Result<Option<Device>, ascend::Error> {
///     match Device::new(id) {
///         Ok(device) => Ok(Some(device)),
///         Err(error) => match error.code() {
///             Some(ErrorCode::RT_INVALID_DEVICEID) => Ok(None), // no such device
///             _ => Err(error),
///         },
///     }
/// }
/// assert!(open(0)?.is_some());
/// assert!(open(Device::count()? as i32)?.is_none());
/// # Ok::<(), ascend::Error>(())
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ErrorCode(pub sys::aclError);

impl ErrorCode {
    /// `ACL_ERROR_INVALID_PARAM` (100000): an argument the ACL layer refused.
    pub const INVALID_PARAM: Self = Self(sys::ACL_ERROR_INVALID_PARAM);
    /// `ACL_ERROR_REPEAT_INITIALIZE` (100002).
    pub const REPEAT_INITIALIZE: Self = Self(sys::ACL_ERROR_REPEAT_INITIALIZE);
    /// `ACL_ERROR_REPEAT_FINALIZE` (100037).
    pub const REPEAT_FINALIZE: Self = Self(sys::ACL_ERROR_REPEAT_FINALIZE);
    /// `ACL_ERROR_API_NOT_SUPPORT` (200001).
    pub const API_NOT_SUPPORT: Self = Self(sys::ACL_ERROR_API_NOT_SUPPORT);
    /// `ACL_ERROR_RT_PARAM_INVALID` (107000): an argument the runtime refused.
    pub const RT_PARAM_INVALID: Self = Self(sys::ACL_ERROR_RT_PARAM_INVALID);
    /// `ACL_ERROR_RT_INVALID_DEVICEID` (107001).
    pub const RT_INVALID_DEVICEID: Self = Self(sys::ACL_ERROR_RT_INVALID_DEVICEID);
    /// `ACL_ERROR_RT_CONTEXT_NULL` (107002): no current device on the thread.
    pub const RT_CONTEXT_NULL: Self = Self(sys::ACL_ERROR_RT_CONTEXT_NULL);
    /// `ACL_ERROR_RT_FEATURE_NOT_SUPPORT` (207000).
    pub const RT_FEATURE_NOT_SUPPORT: Self = Self(sys::ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
    /// `ACL_ERROR_RT_MEMORY_ALLOCATION` (207001): out of memory.
    pub const RT_MEMORY_ALLOCATION: Self = Self(sys::ACL_ERROR_RT_MEMORY_ALLOCATION);
    /// `ACL_ERROR_RT_STREAM_SYNC_TIMEOUT` (507046): a stream synchronisation
    /// with a timeout found work still unfinished.
    pub const RT_STREAM_SYNC_TIMEOUT: Self = Self(sys::ACL_ERROR_RT_STREAM_SYNC_TIMEOUT);
    /// `ACL_ERROR_RT_EVENT_SYNC_TIMEOUT` (507047): an event synchronisation
    /// with a timeout found the record not reached.
    pub const RT_EVENT_SYNC_TIMEOUT: Self = Self(sys::ACL_ERROR_RT_EVENT_SYNC_TIMEOUT);
    /// `ACL_ERROR_RT_WAIT_TIMEOUT` (107019): on the software device, a
    /// stream's wait for an event with a timeout gave up
    /// ([`Stream::wait_event_timeout`](crate::stream::Stream::wait_event_timeout)).
    pub const RT_WAIT_TIMEOUT: Self = Self(sys::ACL_ERROR_RT_WAIT_TIMEOUT);
    /// `ACL_ERROR_RT_NO_DEVICE` (207004).
    pub const RT_NO_DEVICE: Self = Self(sys::ACL_ERROR_RT_NO_DEVICE);
    /// `ACL_ERROR_RT_INTERNAL_ERROR` (507000): among others, a runtime
    /// memory pool ([`RuntimePool`](crate::pool::RuntimePool)) at its
    /// `max_size`, or unknown to the runtime.
    pub const RT_INTERNAL_ERROR: Self = Self(sys::ACL_ERROR_RT_INTERNAL_ERROR);

    /// The C name of this code, or `None` for a code this crate does not know.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, ErrorCode};
    /// let code = Device::new(-1).unwrap_err().code().expect("a runtime error");
    /// assert_eq!(code.name(), Some("ACL_ERROR_RT_INVALID_DEVICEID"));
    /// assert_eq!(ErrorCode(0).name(), Some("ACL_SUCCESS"));
    /// assert_eq!(ErrorCode(-42).name(), None); // kept as its number
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn name(self) -> Option<&'static str> {
        CODE_NAMES
            .binary_search_by_key(&self.0, |&(code, _)| code)
            .ok()
            .map(|index| CODE_NAMES[index].1)
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(name) => write!(f, "{name} ({})", self.0),
            None => write!(f, "unknown AscendCL error ({})", self.0),
        }
    }
}

impl fmt::Debug for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_sorted_and_unique_so_lookup_finds_every_name() {
        assert!(CODE_NAMES.windows(2).all(|pair| pair[0].0 < pair[1].0));
        for &(code, name) in CODE_NAMES {
            assert_eq!(ErrorCode(code).name(), Some(name));
        }
        assert_eq!(ErrorCode(0).name(), Some("ACL_SUCCESS"));
    }
}

//! [`Error`], [`Result`] and the one function that turns `aclError` into them.

pub(crate) use crate::ErrorCode;
use ascend_sys as sys;
use std::ffi::CStr;

/// Everything that can go wrong in this crate.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An AscendCL call returned an error code.
    #[error("{api} failed: {code}{}", message.as_deref().map(|m| format!(": {m}")).unwrap_or_default())]
    Acl {
        /// The C function that failed.
        api: &'static str,
        /// The code it returned.
        code: ErrorCode,
        /// The runtime's own explanation (`aclGetRecentErrMsg`), if any.
        message: Option<String>,
    },
    /// The loaded AscendCL library does not export this function (an older
    /// CANN or driver). Other functions keep working.
    #[error("{api} is not supported by the loaded AscendCL library (the symbol is missing)")]
    Unsupported {
        /// The missing function.
        api: &'static str,
    },
    /// No backend is available (see [`crate::backend`]).
    #[error(transparent)]
    Backend(#[from] sys::BackendError),
    /// An argument was refused in Rust, before any call.
    #[error("{api}: {reason}")]
    InvalidArgument {
        /// The operation refused.
        api: &'static str,
        /// What is wrong.
        reason: String,
    },
}

impl Error {
    /// The AscendCL code, for errors that carry one.
    pub fn code(&self) -> Option<ErrorCode> {
        match self {
            Error::Acl { code, .. } => Some(*code),
            Error::Unsupported { .. } => Some(ErrorCode::RT_FEATURE_NOT_SUPPORT),
            _ => None,
        }
    }

    pub(crate) fn invalid(api: &'static str, reason: impl Into<String>) -> Self {
        Error::InvalidArgument {
            api,
            reason: reason.into(),
        }
    }
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Turns the return code of `api` into a `Result`, attaching the runtime's
/// recent error message to a failure.
pub(crate) fn check(api: &'static str, code: sys::aclError) -> Result<()> {
    if code == sys::ACL_SUCCESS {
        return Ok(());
    }
    if code == sys::ACL_ERROR_RT_FEATURE_NOT_SUPPORT && sys::missing_symbol() == Some(api) {
        return Err(Error::Unsupported { api });
    }
    Err(Error::Acl {
        api,
        code: ErrorCode(code),
        message: recent_message(),
    })
}

/// `aclGetRecentErrMsg` as an owned string.
fn recent_message() -> Option<String> {
    // SAFETY: no arguments; the result is NULL or a C string valid until the
    // next AscendCL call on this thread, and it is copied at once.
    let text = unsafe { sys::aclGetRecentErrMsg() };
    if text.is_null() {
        return None;
    }
    // SAFETY: non-NULL, NUL-terminated, valid until the next call (above).
    let text = unsafe { CStr::from_ptr(text) }.to_string_lossy().trim().to_string();
    (!text.is_empty()).then_some(text)
}

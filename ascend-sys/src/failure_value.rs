//! What a bound function returns when it fails without running: the
//! [`FailureValue`] of each return type, and [`missing_symbol`].
//!
//! Below both the routing layer (`dispatch.rs`: a symbol the loaded library
//! lacks, no backend at all) and the software device (`soft::check::fault_injection`: an
//! injected fault, which may imitate a missing symbol), which both use it.

use crate::types::{ACL_ERROR_RT_FEATURE_NOT_SUPPORT, ACL_ERROR_RT_NO_DEVICE, aclError};
use core::ffi::{c_char, c_void};

/// What a function returns when it cannot run at all.
///
/// Functions returning `aclError` return a code; the few returning a pointer
/// (`aclGetRecentErrMsg`, `aclrtGetSocName`, `aclrtAllocatorCreateDesc`)
/// return NULL, which is their documented failure value.
pub(crate) trait FailureValue: Sized {
    /// The value for a symbol the loaded library does not export.
    fn feature_not_supported() -> Self;
    /// The value when no backend is available (hardware requested, no library).
    fn no_backend() -> Self;
    /// For `aclGetRecentErrMsg` only: the message this crate itself recorded
    /// on this thread (a missing symbol), which takes precedence over the
    /// library's own.
    fn pending_message() -> Option<Self> {
        None
    }
    /// The value for an injected fault with `code` (NULL for pointers).
    fn injected(code: aclError) -> Self;
}

impl FailureValue for aclError {
    fn feature_not_supported() -> Self {
        ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    }
    fn no_backend() -> Self {
        ACL_ERROR_RT_NO_DEVICE
    }
    fn injected(code: aclError) -> Self {
        code
    }
}

impl FailureValue for *const c_char {
    fn feature_not_supported() -> Self {
        core::ptr::null()
    }
    fn no_backend() -> Self {
        core::ptr::null()
    }
    fn injected(_: aclError) -> Self {
        core::ptr::null()
    }
    fn pending_message() -> Option<Self> {
        crate::error_msg::pending_ptr()
    }
}

impl FailureValue for *mut c_void {
    fn feature_not_supported() -> Self {
        core::ptr::null_mut()
    }
    fn no_backend() -> Self {
        core::ptr::null_mut()
    }
    fn injected(_: aclError) -> Self {
        core::ptr::null_mut()
    }
}

/// The result of calling `api` when the loaded library lacks its symbol
/// (or a fault injected on the software device pretends it does).
#[cold]
pub(crate) fn missing_symbol<R: FailureValue>(api: &'static str) -> R {
    crate::error_msg::set(format!(
        "{api}: the loaded AscendCL library does not export the symbol `{api}` \
         (this CANN version or driver does not support it)"
    ));
    crate::error_msg::set_missing_symbol(api);
    R::feature_not_supported()
}

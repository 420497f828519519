//! [`FailureValue`]: what a bound function returns when it fails without
//! reaching an implementation. Below both the routing (`dispatch`) and the
//! software fabric (`soft`), which both answer with it.

use crate::types::*;

/// What a bound function returns when it fails without reaching the library.
pub(crate) trait FailureValue: Sized {
    /// The value for a failure with `code` (this crate's
    /// `MEMFABRIC_SYS_NOT_SUPPORTED` or `MEMFABRIC_SYS_NO_BACKEND`).
    fn failure(code: i32) -> Self;
}

impl FailureValue for i32 {
    fn failure(code: i32) -> Self {
        code
    }
}

/// `UINT32_MAX`: the library's own failure value of its `uint32_t` returns
/// (rank ids); `smem_get_abi_version` returns it too, which no release is.
impl FailureValue for u32 {
    fn failure(_: i32) -> Self {
        u32::MAX
    }
}

/// 0 bytes.
impl FailureValue for u64 {
    fn failure(_: i32) -> Self {
        0
    }
}

impl FailureValue for *mut c_void {
    fn failure(_: i32) -> Self {
        core::ptr::null_mut()
    }
}

impl FailureValue for *const c_char {
    fn failure(_: i32) -> Self {
        core::ptr::null()
    }
}

impl FailureValue for () {
    fn failure(_: i32) -> Self {}
}

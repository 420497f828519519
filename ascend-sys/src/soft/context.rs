//! The calling thread's current device (its current context).

use super::fail::{SoftResult, fail};
use crate::types::ACL_ERROR_RT_CONTEXT_NULL;
use std::cell::Cell;

thread_local! {
    static CURRENT: Cell<Option<i32>> = const { Cell::new(None) };
}

/// This thread's current device, if `aclrtSetDevice` was called on it.
pub(crate) fn current() -> Option<i32> {
    CURRENT.try_with(Cell::get).ok().flatten()
}

/// This thread's current device, or `ACL_ERROR_RT_CONTEXT_NULL` — the code
/// every call that needs a context returns without one.
pub(crate) fn require() -> SoftResult<i32> {
    match current() {
        Some(device) => Ok(device),
        None => fail(
            ACL_ERROR_RT_CONTEXT_NULL,
            "no current context on this thread: call aclrtSetDevice first",
        ),
    }
}

/// Makes `device` (or nothing) this thread's current device.
pub(crate) fn set(device: Option<i32>) {
    let _ = CURRENT.try_with(|current| current.set(device));
}

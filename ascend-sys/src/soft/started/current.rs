//! The calling thread's current device: which device (and which context
//! on it) `aclrtSetDevice`, `aclrtCreateContext` or `aclrtSetCurrentContext`
//! made current on this thread.
//!
//! Every family reads it here, below the families, rather than from the
//! contexts family (`context.rs`), which keeps the table of context
//! handles and sets what is current. It is thread-local state: no lock,
//! so it has no place in [`crate::soft::core::lock_order`].

use crate::soft::core::soft_result::{SoftResult, fail};
use crate::types::ACL_ERROR_RT_CONTEXT_NULL;
use std::cell::Cell;

thread_local! {
    static CURRENT: Cell<Option<i32>> = const { Cell::new(None) };
    /// The handle of this thread's current context when it is a created
    /// context; 0 when it is the current device's primary context.
    static CREATED: Cell<usize> = const { Cell::new(0) };
}

/// This thread's current device, if `aclrtSetDevice` was called on it.
pub(crate) fn device() -> Option<i32> {
    CURRENT.try_with(Cell::get).ok().flatten()
}

/// This thread's current device, or `ACL_ERROR_RT_CONTEXT_NULL` — the code
/// every call that needs a context returns without one.
pub(crate) fn require() -> SoftResult<i32> {
    match device() {
        Some(device) => Ok(device),
        None => fail(
            ACL_ERROR_RT_CONTEXT_NULL,
            "no current context on this thread: call aclrtSetDevice first",
        ),
    }
}

/// Makes `device`'s primary context (or nothing) this thread's current
/// context.
pub(crate) fn set(device: Option<i32>) {
    let _ = CURRENT.try_with(|current| current.set(device));
    let _ = CREATED.try_with(|created| created.set(0));
}

/// Makes the created context `handle` on `device` this thread's current
/// context.
pub(crate) fn set_created(device: i32, handle: usize) {
    let _ = CURRENT.try_with(|current| current.set(Some(device)));
    let _ = CREATED.try_with(|created| created.set(handle));
}

/// The handle of this thread's current context when it is a created
/// context; 0 when it is a primary context (or there is none).
pub(crate) fn created_handle() -> usize {
    CREATED.try_with(Cell::get).unwrap_or(0)
}

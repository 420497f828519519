//! How the software device reports a broken rule: a code and a message.

use crate::types::aclError;
use std::cell::Cell;

thread_local! {
    /// The code of the most recent failure on this thread, for
    /// `aclrtGetLastError` / `aclrtPeekAtLastError` (0 when none).
    static LAST_ERROR: Cell<aclError> = const { Cell::new(crate::types::ACL_SUCCESS) };
}

/// A failed call: the code the real runtime returns for the broken rule,
/// and a message naming the argument and the rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Failure {
    pub(crate) code: aclError,
    pub(crate) message: String,
}

/// The result type of the software device's internals.
pub(crate) type SoftResult<T = ()> = Result<T, Failure>;

/// Builds a failure; `message` should name the argument and the rule.
pub(crate) fn fail<T>(code: aclError, message: impl Into<String>) -> SoftResult<T> {
    Err(Failure {
        code,
        message: message.into(),
    })
}

/// Turns the outcome of `api` into its C return code, recording the message
/// of a failure for `aclGetRecentErrMsg` and its code for
/// `aclrtGetLastError`.
#[inline]
pub(crate) fn finish(api: &'static str, outcome: SoftResult) -> aclError {
    match outcome {
        Ok(()) => crate::types::ACL_SUCCESS,
        Err(failure) => failed(api, failure),
    }
}

/// [`finish`] of a failure (out of line: the success is the common case).
#[cold]
#[inline(never)]
fn failed(api: &'static str, failure: Failure) -> aclError {
    crate::error_msg::set(format!("{api}: {} (error {})", failure.message, failure.code));
    let _ = LAST_ERROR.try_with(|last| last.set(failure.code));
    failure.code
}

/// The code of the most recent failure recorded by [`finish`] on this
/// thread (`ACL_SUCCESS` when none); `clear` forgets it
/// (`aclrtGetLastError`), otherwise it stays (`aclrtPeekAtLastError`).
pub(crate) fn last_error(clear: bool) -> aclError {
    LAST_ERROR
        .try_with(|last| {
            if clear {
                last.replace(crate::types::ACL_SUCCESS)
            } else {
                last.get()
            }
        })
        .unwrap_or(crate::types::ACL_SUCCESS)
}

//! How the software device reports a broken rule: a code and a message.

use crate::types::aclError;

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
/// of a failure for `aclGetRecentErrMsg`.
pub(crate) fn finish(api: &'static str, outcome: SoftResult) -> aclError {
    match outcome {
        Ok(()) => crate::types::ACL_SUCCESS,
        Err(failure) => {
            crate::error_msg::set(format!("{api}: {} (error {})", failure.message, failure.code));
            failure.code
        }
    }
}

//! The typed error every layer of the software fabric returns: the C code
//! the entry point reports, and the message `smem_get_last_err_msg` gives.

use std::fmt;

/// A failure of the software fabric: a MemFabric error code and a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SoftError {
    /// The code (one of MemFabric's `SMEM_*` codes, or this crate's).
    pub(crate) code: i32,
    /// What went wrong, for the last error message.
    pub(crate) message: String,
}

impl fmt::Display for SoftError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (code {})", self.message, self.code)
    }
}

/// The result of a software-fabric operation.
pub(crate) type SoftResult<T = ()> = Result<T, SoftError>;

/// An error with `code` and `message`.
pub(crate) fn fail<T>(code: i32, message: impl Into<String>) -> SoftResult<T> {
    Err(SoftError {
        code,
        message: message.into(),
    })
}

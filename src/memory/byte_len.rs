//! Element counts to byte counts, checked.

use crate::error::{Call, Error, Result};

/// `len * size_of::<T>()`, or an argument error naming `call` on overflow.
pub(crate) fn byte_len<T>(call: Call, len: usize) -> Result<usize> {
    len.checked_mul(size_of::<T>()).ok_or_else(|| {
        Error::invalid(
            call,
            format!("{len} elements of {} bytes overflow usize", size_of::<T>()),
        )
    })
}

/// Fails unless the two lengths match.
pub(crate) fn same_len(call: Call, ours: usize, theirs: usize) -> Result<()> {
    if ours == theirs {
        Ok(())
    } else {
        Err(Error::invalid(
            call,
            format!("length mismatch: the buffer has {ours} elements, the other side {theirs}"),
        ))
    }
}

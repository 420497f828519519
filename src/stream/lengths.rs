//! Length checks shared by the stream transfers.

use crate::error::{Error, Result};

/// Fails unless the destination and source hold the same number of
/// elements.
pub(crate) fn same_len(api: &'static str, dst: usize, src: usize) -> Result<()> {
    if dst == src {
        Ok(())
    } else {
        Err(Error::invalid(
            api,
            format!("length mismatch: the destination has {dst} elements, the source {src}"),
        ))
    }
}

/// Fails unless the destination and source hold the same number of bytes.
pub(crate) fn same_bytes(api: &'static str, dst: usize, src: usize) -> Result<()> {
    if dst == src {
        Ok(())
    } else {
        Err(Error::invalid(
            api,
            format!("length mismatch: the destination has {dst} bytes, the source {src}"),
        ))
    }
}

/// `len * size_of::<T>()`, or an argument error naming `api` on overflow.
pub(crate) fn byte_len<T>(api: &'static str, len: usize) -> Result<usize> {
    len.checked_mul(size_of::<T>()).ok_or_else(|| {
        Error::invalid(
            api,
            format!("{len} elements of {} bytes overflow usize", size_of::<T>()),
        )
    })
}

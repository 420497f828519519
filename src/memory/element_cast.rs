//! The checks behind every reinterpretation of device bytes as another
//! element type: whole elements, an aligned address, no zero-sized types.

use super::byte_len::byte_len;
use crate::error::{Call, Error, Result};
use std::any::type_name;

/// The number of `U`s in `bytes` bytes at the device address `address`.
///
/// # Errors
///
/// [`Error::InvalidArgument`] naming `call` when `U` is zero-sized, when
/// `bytes` is not a whole number of `U`s, or when `address` is not aligned
/// for `U`.
pub(crate) fn elements_of<U>(call: Call, bytes: usize, address: usize) -> Result<usize> {
    let (size, align) = (size_of::<U>(), align_of::<U>());
    if size == 0 {
        return Err(Error::invalid(
            call,
            format!(
                "{} is zero-sized: device bytes cannot be viewed as it",
                type_name::<U>()
            ),
        ));
    }
    if !bytes.is_multiple_of(size) {
        return Err(Error::invalid(
            call,
            format!(
                "{bytes} bytes are not a whole number of {size}-byte {}",
                type_name::<U>()
            ),
        ));
    }
    if !address.is_multiple_of(align) {
        return Err(Error::invalid(
            call,
            format!(
                "address {address:#x} is not aligned to the {align} bytes {} needs",
                type_name::<U>()
            ),
        ));
    }
    Ok(bytes / size)
}

/// The number of `U`s in `len` `T`s at `address`: [`elements_of`] of their
/// bytes, and `T` must not be zero-sized either.
///
/// # Errors
///
/// As [`elements_of`], and [`Error::InvalidArgument`] when `T` is
/// zero-sized or the byte size overflows.
pub(crate) fn cast_len<T, U>(call: Call, len: usize, address: usize) -> Result<usize> {
    if size_of::<T>() == 0 {
        return Err(Error::invalid(
            call,
            format!(
                "{} is zero-sized: it has no bytes to view as another type",
                type_name::<T>()
            ),
        ));
    }
    elements_of::<U>(call, byte_len::<T>(call, len)?, address)
}

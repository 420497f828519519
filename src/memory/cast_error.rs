//! [`CastError`]: a refused [`DeviceBuf::cast`] that gives the buffer back.

use super::DeviceBuf;
use crate::error::Error;
use bytemuck::Pod;
use std::fmt;

/// Why [`DeviceBuf::cast`] refused, with the buffer it was given, unchanged:
/// a refused cast never loses or frees memory by itself.
///
/// Take the buffer back with [`CastError::into_buffer`]. `?` converts it
/// into the crate's [`Error`] (the buffer is then dropped, which frees it).
///
/// ```
/// use ascend::{Device, DeviceBuf, Error};
/// let device = Device::new(0)?;
/// let bytes = DeviceBuf::from_slice(&device, &[1u8, 2, 3])?;
/// let refused = bytes.cast::<u16>().unwrap_err(); // 3 bytes: no whole u16s
/// assert!(matches!(refused.error(), Error::InvalidArgument { .. }));
/// let bytes = refused.into_buffer();
/// assert_eq!(bytes.to_vec()?, [1, 2, 3]);
/// # Ok::<(), ascend::Error>(())
/// ```
pub struct CastError<T> {
    pub(super) error: Error,
    pub(super) buffer: DeviceBuf<T>,
}

impl<T: Pod> CastError<T> {
    /// Why the cast was refused ([`Error::InvalidArgument`]).
    pub fn error(&self) -> &Error {
        &self.error
    }

    /// The buffer, as it was before the cast.
    pub fn into_buffer(self) -> DeviceBuf<T> {
        self.buffer
    }

    /// The reason and the buffer.
    pub fn into_parts(self) -> (Error, DeviceBuf<T>) {
        (self.error, self.buffer)
    }
}

impl<T: Pod> From<CastError<T>> for Error {
    /// The reason; the buffer is dropped (and so freed).
    fn from(refused: CastError<T>) -> Self {
        refused.error
    }
}

impl<T: Pod> fmt::Display for CastError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.error.fmt(f)
    }
}

impl<T: Pod> fmt::Debug for CastError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CastError")
            .field("error", &self.error)
            .field("buffer", &self.buffer)
            .finish()
    }
}

impl<T: Pod> std::error::Error for CastError<T> {}

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
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, DeviceBuf, Error};
    /// let device = Device::new(0)?;
    /// let bytes = DeviceBuf::<u8>::zeroed(&device, 6)?;
    /// let refused = bytes.cast::<u32>().unwrap_err(); // 6 bytes: not whole u32s
    /// let Error::InvalidArgument { reason, .. } = refused.error() else {
    ///     panic!("a refused cast is an InvalidArgument");
    /// };
    /// println!("{reason}");
    /// assert_eq!(refused.into_buffer().len(), 6);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn error(&self) -> &Error {
        &self.error
    }

    /// The buffer, as it was before the cast.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, DeviceBuf};
    /// let device = Device::new(0)?;
    /// let bytes = DeviceBuf::from_slice(&device, &[1u8, 2, 3, 4, 5])?;
    /// // Try a wide view first; fall back to the bytes as they were.
    /// let bytes = match bytes.cast::<u32>() {
    ///     Ok(words) => words.cast::<u8>()?,
    ///     Err(refused) => refused.into_buffer(),
    /// };
    /// assert_eq!(bytes.to_vec()?, [1, 2, 3, 4, 5]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn into_buffer(self) -> DeviceBuf<T> {
        self.buffer
    }

    /// The reason and the buffer.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, DeviceBuf, Error};
    /// let device = Device::new(0)?;
    /// let halves = DeviceBuf::from_slice(&device, &[7u16; 3])?;
    /// let (error, halves) = halves.cast::<u64>().unwrap_err().into_parts();
    /// assert!(matches!(error, Error::InvalidArgument { .. }));
    /// assert_eq!(halves.to_vec()?, [7; 3]); // unchanged
    /// # Ok::<(), ascend::Error>(())
    /// ```
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

//! [`DeviceBuf::cast`]: the same allocation as another element type.

use super::DeviceBuf;
use crate::Call;
use crate::memory::cast_error::CastError;
use crate::memory::element_cast::cast_len;
use bytemuck::Pod;
use std::marker::PhantomData;

impl<T: Pod> DeviceBuf<T> {
    /// The same memory as elements of `U`, without copying: the buffer's
    /// bytes must be a whole number of `U`s, at an address aligned for `U`.
    /// The result owns (and will free) the allocation.
    ///
    /// ```
    /// use ascend::{Device, DeviceBuf};
    /// let device = Device::new(0)?;
    /// let words = DeviceBuf::from_slice(&device, &[1u32, 2])?;
    /// let bytes = words.cast::<u8>()?;
    /// assert_eq!(bytes.len(), 8);
    /// assert_eq!(bytes.to_vec()?, bytemuck::cast_slice::<u32, u8>(&[1, 2]));
    /// let words = bytes.cast::<u32>()?;
    /// assert_eq!(words.to_vec()?, [1, 2]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// A [`CastError`] holding the unchanged buffer and an
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) when `T` or
    /// `U` is zero-sized, when the byte length is not a multiple of
    /// `size_of::<U>()`, or when the address is not aligned for `U`.
    pub fn cast<U: Pod>(mut self) -> Result<DeviceBuf<U>, CastError<T>> {
        match cast_len::<T, U>(Call::rust("DeviceBuf::cast"), self.len, self.as_raw() as usize) {
            Ok(len) => Ok(DeviceBuf {
                // Taken: dropping `self` below frees nothing.
                address: self.address.take(),
                len,
                device: self.device.clone(),
                _elements: PhantomData,
            }),
            Err(error) => Err(CastError { error, buffer: self }),
        }
    }
}

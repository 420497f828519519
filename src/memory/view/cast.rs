//! [`DeviceSlice::cast`] and [`DeviceSliceMut::cast`]: the same bytes as
//! another element type.

use super::{DeviceSlice, DeviceSliceMut};
use crate::Call;
use crate::error::Result;
use crate::memory::element_cast::cast_len;
use bytemuck::Pod;
use std::marker::PhantomData;

impl<'a, T: Pod> DeviceSlice<'a, T> {
    /// The same bytes as elements of `U`, for the same lifetime: they must
    /// be a whole number of `U`s, at an address aligned for `U`.
    ///
    /// ```
    /// use ascend::{Device, DeviceBuf};
    /// let device = Device::new(0)?;
    /// let buf = DeviceBuf::from_slice(&device, &[1u16, 2, 3, 4])?;
    /// let pairs = buf.as_slice().cast::<u32>()?;
    /// assert_eq!(pairs.len(), 2);
    /// assert!(buf.as_slice().slice(1..)?.cast::<u32>().is_err()); // 6 bytes, misaligned
    /// # Ok::<(), ascend::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) when `T`
    /// or `U` is zero-sized, when the byte length is not a multiple of
    /// `size_of::<U>()`, or when the address is not aligned for `U`.
    pub fn cast<U: Pod>(self) -> Result<DeviceSlice<'a, U>> {
        let len = cast_len::<T, U>(Call::rust("DeviceSlice::cast"), self.len, self.address)?;
        Ok(DeviceSlice {
            address: self.address,
            len,
            device: self.device,
            _elements: PhantomData,
        })
    }
}

impl<'a, T: Pod> DeviceSliceMut<'a, T> {
    /// The same bytes as elements of `U`, exclusively, for the same
    /// lifetime (the view is consumed).
    ///
    /// ```
    /// use ascend::{Device, DeviceBuf};
    /// let device = Device::new(0)?;
    /// let mut buf = DeviceBuf::<u8>::zeroed(&device, 8)?;
    /// buf.as_mut_slice().cast::<u32>()?.write_from_host(&[u32::MAX, 0])?;
    /// assert_eq!(buf.to_vec()?, [255, 255, 255, 255, 0, 0, 0, 0]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`DeviceSlice::cast`].
    pub fn cast<U: Pod>(self) -> Result<DeviceSliceMut<'a, U>> {
        let len = cast_len::<T, U>(Call::rust("DeviceSliceMut::cast"), self.len, self.address)?;
        Ok(DeviceSliceMut {
            address: self.address,
            len,
            device: self.device,
            _elements: PhantomData,
        })
    }
}

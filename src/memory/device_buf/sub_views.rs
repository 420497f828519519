//! Views of part of a [`DeviceBuf`]: [`DeviceBuf::slice`],
//! [`DeviceBuf::slice_mut`] and [`DeviceBuf::split_at_mut`].

use super::DeviceBuf;
use crate::error::{Call, Result};
use crate::memory::{DeviceSlice, DeviceSliceMut};
use bytemuck::Pod;
use std::ops::RangeBounds;

impl<T: Pod> DeviceBuf<T> {
    /// A shared view of the elements in `range`.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) when
    /// `range` is out of bounds.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, DeviceBuf};
    /// let device = Device::new(0)?;
    /// let buf = DeviceBuf::from_slice(&device, &[1u8, 2, 3, 4, 5])?;
    /// assert_eq!(buf.slice(1..=2)?.to_vec()?, [2, 3]);
    /// assert!(buf.slice(4..6).is_err()); // out of bounds
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn slice(&self, range: impl RangeBounds<usize>) -> Result<DeviceSlice<'_, T>> {
        self.as_slice().slice_for(Call::rust("DeviceBuf::slice"), range)
    }

    /// An exclusive view of the elements in `range`.
    ///
    /// ```
    /// use ascend::{Device, DeviceBuf};
    /// let device = Device::new(0)?;
    /// let mut buf = DeviceBuf::<i32>::zeroed(&device, 4)?;
    /// buf.slice_mut(2..)?.write_from_host(&[-1, -2])?;
    /// assert_eq!(buf.slice(1..)?.to_vec()?, [0, -1, -2]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`DeviceBuf::slice`].
    pub fn slice_mut(&mut self, range: impl RangeBounds<usize>) -> Result<DeviceSliceMut<'_, T>> {
        self.as_mut_slice()
            .into_slice_mut_for(Call::rust("DeviceBuf::slice_mut"), range)
    }

    /// Exclusive views of the elements before `mid` and of those from `mid`
    /// on, usable at the same time.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) when `mid`
    /// is greater than the length.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, DeviceBuf};
    /// let device = Device::new(0)?;
    /// let mut buf = DeviceBuf::<u8>::zeroed(&device, 4)?;
    /// let (mut low, mut high) = buf.split_at_mut(2)?;
    /// low.fill_bytes(1)?;
    /// high.write_from_host(&[2, 3])?;
    /// assert_eq!(buf.to_vec()?, [1, 1, 2, 3]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn split_at_mut(&mut self, mid: usize) -> Result<(DeviceSliceMut<'_, T>, DeviceSliceMut<'_, T>)> {
        self.as_mut_slice()
            .split_at_mut_for(Call::rust("DeviceBuf::split_at_mut"), mid)
    }
}

//! Consuming sub-views: [`DeviceSlice::split_at`],
//! [`DeviceSliceMut::split_at_mut`], [`DeviceSliceMut::into_slice_mut`] and
//! [`DeviceSliceMut::into_shared`] keep the original view's lifetime, so the
//! parts can be stored or returned where the original could.

use super::{DeviceSlice, DeviceSliceMut, sub_range};
use crate::error::{Call, Error, Result};
use bytemuck::Pod;
use std::marker::PhantomData;
use std::ops::RangeBounds;

/// The start of the second part of a split at `mid`, checked.
fn split_point(call: Call, len: usize, mid: usize) -> Result<usize> {
    if mid > len {
        return Err(Error::invalid(
            call,
            format!("split point {mid} is past the end of a view of {len} elements"),
        ));
    }
    Ok(mid)
}

impl<'a, T: Pod> DeviceSlice<'a, T> {
    /// The elements before `mid` and those from `mid` on, as two views of
    /// the same lifetime.
    ///
    /// ```
    /// use ascend::{Device, DeviceBuf};
    /// let device = Device::new(0)?;
    /// let buf = DeviceBuf::from_slice(&device, &[1u8, 2, 3, 4, 5])?;
    /// let (head, tail) = buf.as_slice().split_at(2)?;
    /// assert_eq!((head.to_vec()?, tail.to_vec()?), (vec![1, 2], vec![3, 4, 5]));
    /// assert!(buf.as_slice().split_at(6).is_err());
    /// # Ok::<(), ascend::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when `mid` is greater than the length.
    pub fn split_at(self, mid: usize) -> Result<(DeviceSlice<'a, T>, DeviceSlice<'a, T>)> {
        let mid = split_point(Call::rust("DeviceSlice::split_at"), self.len, mid)?;
        let tail = DeviceSlice {
            address: self.address + mid * size_of::<T>(),
            len: self.len - mid,
            device: self.device,
            _elements: PhantomData,
        };
        let head = DeviceSlice { len: mid, ..self };
        Ok((head, tail))
    }
}

impl<'a, T: Pod> DeviceSliceMut<'a, T> {
    /// The elements before `mid` and those from `mid` on, as two exclusive
    /// views of the same lifetime (the view is consumed, so each part is
    /// the only view of its elements).
    ///
    /// ```
    /// use ascend::{Device, DeviceBuf};
    /// let device = Device::new(0)?;
    /// let mut buf = DeviceBuf::<u16>::zeroed(&device, 6)?;
    /// let (mut head, mut tail) = buf.as_mut_slice().split_at_mut(2)?;
    /// head.fill_bytes(0xff)?;
    /// tail.write_from_host(&[7, 8, 9, 10])?;
    /// assert_eq!(buf.to_vec()?, [0xffff, 0xffff, 7, 8, 9, 10]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when `mid` is greater than the length.
    pub fn split_at_mut(self, mid: usize) -> Result<(DeviceSliceMut<'a, T>, DeviceSliceMut<'a, T>)> {
        self.split_at_mut_for(Call::rust("DeviceSliceMut::split_at_mut"), mid)
    }

    /// [`DeviceSliceMut::split_at_mut`] for the public method `call`.
    pub(crate) fn split_at_mut_for(
        self,
        call: Call,
        mid: usize,
    ) -> Result<(DeviceSliceMut<'a, T>, DeviceSliceMut<'a, T>)> {
        let mid = split_point(call, self.len, mid)?;
        let tail = DeviceSliceMut {
            address: self.address + mid * size_of::<T>(),
            len: self.len - mid,
            device: self.device,
            _elements: PhantomData,
        };
        let head = DeviceSliceMut { len: mid, ..self };
        Ok((head, tail))
    }

    /// The elements in `range`, as an exclusive view of the same lifetime
    /// (the consuming form of [`DeviceSliceMut::slice_mut`], which only
    /// reborrows).
    ///
    /// ```
    /// use ascend::{Device, DeviceBuf};
    /// let device = Device::new(0)?;
    /// let mut buf = DeviceBuf::<u8>::zeroed(&device, 4)?;
    /// let mut middle = buf.as_mut_slice().into_slice_mut(1..3)?;
    /// middle.write_from_host(&[5, 6])?;
    /// assert_eq!(buf.to_vec()?, [0, 5, 6, 0]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when `range` is out of bounds.
    pub fn into_slice_mut(self, range: impl RangeBounds<usize>) -> Result<DeviceSliceMut<'a, T>> {
        self.into_slice_mut_for(Call::rust("DeviceSliceMut::into_slice_mut"), range)
    }

    /// [`DeviceSliceMut::into_slice_mut`] for the public method `call`.
    pub(crate) fn into_slice_mut_for(
        self,
        call: Call,
        range: impl RangeBounds<usize>,
    ) -> Result<DeviceSliceMut<'a, T>> {
        let (start, len) = sub_range(call, self.len, range)?;
        Ok(DeviceSliceMut {
            address: self.address + start * size_of::<T>(),
            len,
            device: self.device,
            _elements: PhantomData,
        })
    }

    /// The same elements as a shared view of the same lifetime (the
    /// consuming form of [`DeviceSliceMut::as_slice`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, DeviceBuf};
    /// let device = Device::new(0)?;
    /// let mut buf = DeviceBuf::from_slice(&device, &[1u8, 2, 3])?;
    /// let mut view = buf.as_mut_slice();
    /// view.fill_bytes(4)?;
    /// let shared = view.into_shared();
    /// assert_eq!(shared.to_vec()?, [4, 4, 4]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn into_shared(self) -> DeviceSlice<'a, T> {
        DeviceSlice {
            address: self.address,
            len: self.len,
            device: self.device,
            _elements: PhantomData,
        }
    }
}

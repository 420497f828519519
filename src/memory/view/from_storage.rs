//! [`DeviceSlice::from_storage`] and [`DeviceSliceMut::from_storage`]:
//! typed views of any [`DeviceStorage`], for the copies views offer and for
//! the transfers of a stream scope.

use super::{DeviceSlice, DeviceSliceMut};
use crate::Call;
use crate::error::Result;
use crate::memory::element_cast::elements_of;
use crate::memory::storage::{DeviceStorage, DeviceStorageMut};
use bytemuck::Pod;
use std::marker::PhantomData;

impl<'a, T: Pod> DeviceSlice<'a, T> {
    /// A shared view of `storage`'s bytes as elements of `T`, borrowing
    /// it: they must be a whole number of `T`s at an address aligned for
    /// `T`.
    ///
    /// ```
    /// use ascend::{Device, DeviceBuf, DeviceSlice};
    /// let device = Device::new(0)?;
    /// let buf = DeviceBuf::from_slice(&device, &[1u8, 0, 2, 0])?;
    /// let halves = DeviceSlice::<u16>::from_storage(&buf)?;
    /// assert_eq!(halves.to_vec()?, [u16::from_ne_bytes([1, 0]), u16::from_ne_bytes([2, 0])]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) when `T`
    /// is zero-sized, when the byte length is not a multiple of
    /// `size_of::<T>()`, or when the address is not aligned for `T`.
    pub fn from_storage<S: DeviceStorage + ?Sized>(storage: &'a S) -> Result<Self> {
        let address = storage.device_ptr() as usize;
        let len = elements_of::<T>(Call::rust("DeviceSlice::from_storage"), storage.byte_len(), address)?;
        // Sound by the `DeviceStorage` contract: the range is live device
        // memory of `storage.device()` and nothing writes it while `storage`
        // is borrowed shared, which it is for `'a`.
        Ok(Self {
            address,
            len,
            device: storage.device(),
            _elements: PhantomData,
        })
    }
}

impl<'a, T: Pod> DeviceSliceMut<'a, T> {
    /// An exclusive view of `storage`'s bytes as elements of `T`, borrowing
    /// it exclusively: they must be a whole number of `T`s at an address
    /// aligned for `T`.
    ///
    /// # Errors
    ///
    /// As [`DeviceSlice::from_storage`].
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, DeviceBuf, DeviceSliceMut};
    /// let device = Device::new(0)?;
    /// let mut buf = DeviceBuf::<u8>::zeroed(&device, 8)?;
    /// let mut words = DeviceSliceMut::<u32>::from_storage(&mut buf)?;
    /// words.write_from_host(&[u32::MAX, 0])?;
    /// assert_eq!(buf.to_vec()?, [0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn from_storage<S: DeviceStorageMut + ?Sized>(storage: &'a mut S) -> Result<Self> {
        let address = storage.device_ptr_mut() as usize;
        let storage: &'a S = storage;
        let len = elements_of::<T>(Call::rust("DeviceSliceMut::from_storage"), storage.byte_len(), address)?;
        // Sound by the `DeviceStorageMut` contract: nothing else reaches the
        // range while `storage` is borrowed exclusively, which it is for
        // `'a` (the shared reborrow above only lends the device).
        Ok(Self {
            address,
            len,
            device: storage.device(),
            _elements: PhantomData,
        })
    }
}

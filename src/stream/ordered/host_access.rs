//! Host access to a shared [`Ordered`] owner or a view of it, through
//! `&self`: each waits for the queued work it conflicts with, then
//! touches the bytes while its range is in flight, which keeps
//! conflicting work off them and lets work on other bytes go on.

use super::Ordered;
use super::gate::Entered;
use super::in_flight::InFlight;
use super::tracks::{Settled, WHOLE};
use super::view::OrderedView;
use crate::error::{Call, Error, Result};
use crate::memory::{DeviceStorage, DeviceStorageMut, PinnedHostBuf, transfer};
use crate::stream::lengths::same_bytes;
use ascend_sys as sys;
use bytemuck::Pod;

/// What a settle proved, as a result: the first task error reported, or
/// the error of work that cannot be proven finished.
fn proven(settled: Settled) -> Result<()> {
    match settled {
        Settled::Proven(reported) => reported,
        Settled::Unproven(error) => Err(error),
    }
}

impl<S> Ordered<S> {
    /// Blocks until every queued use of the memory has finished, through a
    /// shared reference (an `Arc` held by several tensors or threads).
    ///
    /// # Errors
    ///
    /// The first error a queued task reported (the work is over). When the
    /// work cannot be proven finished, that error; the uses stay noted, so
    /// host access and the drop keep waiting for them (the drop leaks).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use ascend::stream::{Ordered, Stream};
    /// use ascend::{Device, DeviceBuf};
    /// let device = Device::new(0)?;
    /// let stream = Arc::new(Stream::new(&device)?);
    /// let shared = Arc::new(Ordered::new(DeviceBuf::<u8>::zeroed(&device, 64)?));
    /// shared.fill_bytes(3, &stream)?;
    /// shared.wait()?;
    /// assert!(!shared.is_busy());
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn wait(&self) -> Result<()> {
        proven(self.tracks_clear(&WHOLE, true).settle("Ordered::wait"))
    }
}

/// A host access under way: in flight in the owner's lanes, and entered
/// in its gate (fields dropped in this order: the flight lands, then the
/// use ends).
struct HostAccess<'a> {
    _flight: InFlight<'a>,
    _entered: Entered<'a>,
}

impl<'a, S> OrderedView<'a, S> {
    /// Starts a host access to the view's bytes (a write if `write`):
    /// enters the owner's gate, waits for the conflicting uses in flight
    /// and proves the conflicting queued work finished, then marks the
    /// access in flight until the returned value is dropped, so that no
    /// conflicting use starts meanwhile while uses of other bytes go on.
    fn host_access(&self, call: Call, write: bool) -> Result<HostAccess<'a>> {
        let owner = self.owner();
        let entered = owner.enter()?;
        let mut locked = owner.tracks_clear(&self.range(), write);
        proven(locked.settle_for(call.method, &self.range(), write))?;
        Ok(HostAccess {
            _flight: InFlight::take_off(&mut locked, self.range(), write, None),
            _entered: entered,
        })
    }
}

/// Fails unless `bytes` is a whole number of `T`s.
fn whole_elements<T>(call: Call, bytes: usize) -> Result<usize> {
    let size = size_of::<T>().max(1);
    if bytes.is_multiple_of(size) {
        Ok(bytes / size)
    } else {
        Err(Error::invalid(
            call,
            format!("{bytes} bytes are not a whole number of {size}-byte elements"),
        ))
    }
}

impl<S: DeviceStorage> OrderedView<'_, S> {
    /// Copies the view's bytes into `dst`, synchronously
    /// (`aclrtMemcpy`, device to host), after the queued writes of these
    /// bytes have finished; reads queued on them may go on meanwhile.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when `dst` is not the view's length; a
    /// queued task's error, or that of work that cannot be proven finished
    /// (nothing is read then); the runtime's code.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use ascend::stream::{Ordered, Stream};
    /// use ascend::{Device, DeviceBuf};
    /// let device = Device::new(0)?;
    /// let stream = Arc::new(Stream::new(&device)?);
    /// let shared = Arc::new(Ordered::new(DeviceBuf::<u32>::zeroed(&device, 4)?));
    /// shared.elements::<u32>(1..2)?.fill_bytes(1, &stream)?;
    /// let mut two = [9u32; 2];
    /// shared.elements::<u32>(..2)?.read_to_host(&mut two)?;
    /// assert_eq!(two, [0, 0x0101_0101]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn read_to_host<T: Pod>(&self, dst: &mut [T]) -> Result<()> {
        const API: Call = Call::rust("OrderedView::read_to_host");
        same_bytes(API, size_of_val(dst), self.byte_len())?;
        if self.byte_len() == 0 {
            return Ok(());
        }
        let _reading = self.host_access(API, false)?;
        transfer::copy(
            self.owner().storage().device(),
            dst.as_mut_ptr().cast(),
            self.device_ptr(),
            self.byte_len(),
            sys::ACL_MEMCPY_DEVICE_TO_HOST,
        )
    }

    /// The view's bytes as elements of `T`, read as
    /// [`OrderedView::read_to_host`] does.
    ///
    /// # Errors
    ///
    /// As [`OrderedView::read_to_host`], and [`Error::InvalidArgument`]
    /// when the view is not a whole number of `T`s.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use ascend::{Device, DeviceBuf, Error, stream::{Ordered, Stream}};
    /// let device = Device::new(0)?;
    /// let stream = Arc::new(Stream::new(&device)?);
    /// let storage = Ordered::new(DeviceBuf::<u16>::zeroed(&device, 3)?);
    /// storage.fill_bytes(1, &stream)?;
    /// assert_eq!(storage.view().to_vec::<u16>()?, [0x0101; 3]); // waits for the fill
    /// assert_eq!(storage.view().to_vec::<u8>()?, [1; 6]); // any element type
    /// assert!(matches!(storage.view().to_vec::<u32>(), Err(Error::InvalidArgument { .. }))); // 6 bytes
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn to_vec<T: Pod>(&self) -> Result<Vec<T>> {
        let len = whole_elements::<T>(Call::rust("OrderedView::to_vec"), self.byte_len())?;
        let mut values = vec![T::zeroed(); len];
        self.read_to_host(&mut values)?;
        Ok(values)
    }
}

impl<D: DeviceStorageMut> OrderedView<'_, D> {
    /// Copies `src` into the view, synchronously (`aclrtMemcpy`, host to
    /// device), after every queued use of these bytes has finished.
    ///
    /// # Errors
    ///
    /// As [`OrderedView::read_to_host`] (nothing is written on an error
    /// before the copy).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use ascend::stream::Ordered;
    /// use ascend::{Device, DeviceBuf};
    /// let device = Device::new(0)?;
    /// let shared = Arc::new(Ordered::new(DeviceBuf::<u8>::zeroed(&device, 4)?));
    /// shared.bytes(2..)?.write_from_host(&[5u8, 6])?;
    /// assert_eq!(shared.view().to_vec::<u8>()?, [0, 0, 5, 6]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn write_from_host<T: Pod>(&self, src: &[T]) -> Result<()> {
        const API: Call = Call::rust("OrderedView::write_from_host");
        same_bytes(API, self.byte_len(), size_of_val(src))?;
        if self.byte_len() == 0 {
            return Ok(());
        }
        let _writing = self.host_access(API, true)?;
        transfer::copy(
            self.owner().storage().device(),
            self.device_ptr().cast_mut(),
            src.as_ptr().cast(),
            self.byte_len(),
            sys::ACL_MEMCPY_HOST_TO_DEVICE,
        )
    }
}

impl<T: Pod> OrderedView<'_, PinnedHostBuf<T>> {
    /// Runs `read` on the view's elements, after the queued writes of them
    /// (copies from the device) have finished. Until `read` returns, a use
    /// that writes these elements waits, while uses of other bytes (and
    /// reads of these) go on; so `read` must not write these elements
    /// through the same owner (it would wait for itself).
    ///
    /// # Errors
    ///
    /// A queued task's error, or that of work that cannot be proven
    /// finished (`read` is not run then).
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::stream::Ordered;
    /// use ascend::{Device, PinnedHostBuf};
    /// let device = Device::new(0)?;
    /// let staging = Ordered::new(PinnedHostBuf::from_slice(&device, &[1u8, 2, 3, 4])?);
    /// let sum = staging.slice(1..3)?.with_host(|values| values.iter().sum::<u8>())?;
    /// assert_eq!(sum, 5);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn with_host<R>(&self, read: impl FnOnce(&[T]) -> R) -> Result<R> {
        let _reading = self.host_access(Call::rust("OrderedView::with_host"), false)?;
        // SAFETY: the view's elements lie in the owner's pinned buffer
        // (checked when the view was made, aligned as `T`s); no queued work
        // writes them (settled by `host_access`) and none can be queued, nor
        // a host write start, while this read is in flight; the host
        // reaches them only through such accesses or through
        // `&mut Ordered`, which cannot exist beside `&self`.
        let values = unsafe { std::slice::from_raw_parts(self.host_ptr().cast_const(), self.len()) };
        sys::soft::sanitize_host_access(
            "OrderedView::with_host",
            values.as_ptr().cast(),
            size_of_val(values),
            false,
        );
        Ok(read(values))
    }

    /// Runs `write` on the view's elements, after every queued use of them
    /// has finished. Until `write` returns, every use of these elements
    /// waits, while uses of other bytes go on (`write` must not use these
    /// elements through the same owner: it would wait for itself).
    /// The way to refill one part of a shared staging buffer while copies
    /// of its other parts are queued.
    ///
    /// # Errors
    ///
    /// As [`OrderedView::with_host`].
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use ascend::stream::Ordered;
    /// use ascend::{Device, PinnedHostBuf};
    /// let device = Device::new(0)?;
    /// let staging = Arc::new(Ordered::new(PinnedHostBuf::<u16>::zeroed(&device, 4)?));
    /// staging.slice(2..)?.with_host_mut(|values| values.fill(7))?;
    /// assert_eq!(staging.view().with_host(|values| values.to_vec())?, [0, 0, 7, 7]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn with_host_mut<R>(&self, write: impl FnOnce(&mut [T]) -> R) -> Result<R> {
        let _writing = self.host_access(Call::rust("OrderedView::with_host_mut"), true)?;
        // SAFETY: as in `with_host`, and no queued work reads the elements
        // either (`host_access` waited for every use of them), and no other
        // use of them starts while this write is in flight: this is the
        // only reference.
        let values = unsafe { std::slice::from_raw_parts_mut(self.host_ptr(), self.len()) };
        sys::soft::sanitize_host_access(
            "OrderedView::with_host_mut",
            values.as_ptr().cast(),
            size_of_val(values),
            true,
        );
        Ok(write(values))
    }
}

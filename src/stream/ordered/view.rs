//! [`OrderedView`] and [`OwnedView`]: byte or element ranges of an
//! [`Ordered`] owner's memory, used on any stream like the whole.

use super::Ordered;
use crate::error::{Call, Result};
use crate::memory::{DeviceStorage, PinnedHostBuf};
use crate::stream::lengths::{byte_len, checked_range};
use bytemuck::Pod;
use std::fmt;
use std::ops::{Range, RangeBounds};
use std::sync::Arc;

mod sealed {
    /// Keeps [`OrderedMemory`](super::OrderedMemory) to this crate's kinds.
    pub trait Memory {}
    /// Keeps [`AsView`](super::AsView) to this crate's types.
    pub trait View {}
}

/// The memory an [`Ordered`] can order: device memory (every
/// [`DeviceStorage`]) and pinned host memory ([`PinnedHostBuf`]). Sealed:
/// it only names the two kinds the views work with.
///
/// ```
/// use ascend::{Device, DeviceBuf, PinnedHostBuf, stream::{Ordered, OrderedMemory}};
/// // A helper for both kinds names the bound `Ordered::new` asks for.
/// fn ordered<S: OrderedMemory>(storage: S) -> Ordered<S> {
///     Ordered::new(storage)
/// }
/// let device = Device::new(0)?;
/// let on_device = ordered(DeviceBuf::<u16>::zeroed(&device, 4)?);
/// let pinned = ordered(PinnedHostBuf::<u16>::zeroed(&device, 4)?);
/// assert_eq!(on_device.view().byte_len(), pinned.view().byte_len());
/// # Ok::<(), ascend::Error>(())
/// ```
pub trait OrderedMemory: sealed::Memory {
    /// The size of the memory in bytes.
    ///
    /// ```
    /// use ascend::{Device, DeviceBuf, PinnedHostBuf, stream::OrderedMemory};
    /// let device = Device::new(0)?;
    /// assert_eq!(DeviceBuf::<u32>::zeroed(&device, 5)?.memory_len(), 20);
    /// assert_eq!(PinnedHostBuf::<u32>::zeroed(&device, 5)?.memory_len(), 20);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    fn memory_len(&self) -> usize;
}

impl<S: DeviceStorage> sealed::Memory for S {}

impl<S: DeviceStorage> OrderedMemory for S {
    fn memory_len(&self) -> usize {
        self.byte_len()
    }
}

impl<T: Pod> sealed::Memory for PinnedHostBuf<T> {}

impl<T: Pod> OrderedMemory for PinnedHostBuf<T> {
    fn memory_len(&self) -> usize {
        // The allocation holds these bytes, so the product fits.
        self.len() * size_of::<T>()
    }
}

/// A range of an [`Ordered`] owner's memory: a sub-range of a tensor's
/// storage, one page of a KV cache, the part of a staging buffer that a
/// step fills. It is the source or destination of every stream-ordered
/// copy and memset, on any stream, with the owner's guarantees: later
/// uses of overlapping bytes, host access to them, and the owner's drop,
/// free or reuse wait for the view's work.
///
/// Made by [`Ordered::view`] (the whole memory), [`Ordered::bytes`] (a
/// byte range of device memory), [`Ordered::elements`] (an element range
/// of device memory) and [`Ordered::slice`] (an element range of a
/// pinned buffer), and by the same methods of a view (ranges within it).
/// It borrows the owner; [`OwnedView`] holds it in an `Arc` instead.
///
/// **Tracking:** per range. The owner keeps, until a host wait proves
/// them finished, one entry per (byte range, stream, read or write) of
/// the work queued on it, with touching ranges of one stream and kind
/// joined. Memory of 2 MiB or more is tracked in lanes, each with its own
/// lock: up to 16 lanes of a power of two bytes, at least 1 MiB (a 64 MiB
/// storage has 16 lanes of 4 MiB). An operation locks the lanes its bytes
/// touch (usually one), scans their entries (a few comparisons each) to
/// queue its waits, marks its range in flight, and queues its work (or
/// does its host copy) with the locks released. So operations on disjoint
/// ranges from several threads run at once, and those in different lanes
/// never share a lock; one whose range conflicts with an operation in
/// flight waits for it to be queued first. Work on disjoint ranges never
/// waits for each other; overlapping work on two streams is ordered by an
/// event. Above 32 entries in a lane, the entries of each stream and kind
/// are joined into one range that covers them: more waiting, never less.
///
/// ```
/// use std::sync::Arc;
/// use ascend::stream::{Ordered, Stream};
/// use ascend::{Device, DeviceBuf, PinnedHostBuf};
/// let device = Device::new(0)?;
/// let stream = Arc::new(Stream::new(&device)?);
/// let storage = Ordered::new(DeviceBuf::<f32>::zeroed(&device, 1024)?);
/// let row = Ordered::new(PinnedHostBuf::from_slice(&device, &[1.5f32; 128])?);
/// // Write elements 256..384 of the storage, and nothing else.
/// storage.elements::<f32>(256..384)?.copy_from_host(&row, &stream)?;
/// let all: Vec<f32> = storage.view().to_vec()?; // waits for the copy
/// assert_eq!(all[255], 0.0);
/// assert_eq!(&all[256..384], &[1.5; 128][..]);
/// assert_eq!(all[384], 0.0);
/// # Ok::<(), ascend::Error>(())
/// ```
pub struct OrderedView<'a, S> {
    owner: &'a Ordered<S>,
    /// Bytes from the start of the owner's memory.
    start: usize,
    /// Bytes.
    len: usize,
}

impl<S> Clone for OrderedView<'_, S> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<S> Copy for OrderedView<'_, S> {}

/// `range` in elements of `T` as bytes, or an argument error naming `call`.
fn element_bytes<T>(call: Call, range: Range<usize>) -> Result<Range<usize>> {
    Ok(byte_len::<T>(call, range.start)?..byte_len::<T>(call, range.end)?)
}

impl<'a, S> OrderedView<'a, S> {
    /// The view of `start..start + len` (bytes, checked by the caller).
    pub(super) fn new(owner: &'a Ordered<S>, start: usize, len: usize) -> Self {
        Self { owner, start, len }
    }

    /// The owner whose memory this is a range of.
    ///
    /// ```
    /// use ascend::{Device, DeviceBuf, stream::Ordered};
    /// let device = Device::new(0)?;
    /// let storage = Ordered::new(DeviceBuf::<u8>::zeroed(&device, 16)?);
    /// let page = storage.bytes(8..12)?;
    /// assert!(std::ptr::eq(page.owner(), &storage));
    /// assert_eq!(page.owner().byte_len(), 16); // the whole, not the page
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn owner(&self) -> &'a Ordered<S> {
        self.owner
    }

    /// Where the view starts, in bytes from the start of the owner's
    /// memory.
    ///
    /// ```
    /// use ascend::{Device, DeviceBuf, stream::Ordered};
    /// let device = Device::new(0)?;
    /// let storage = Ordered::new(DeviceBuf::<u32>::zeroed(&device, 16)?);
    /// assert_eq!(storage.elements::<u32>(4..)?.byte_offset(), 16);
    /// // Offsets of sub-views count from the owner's start, not the view's.
    /// assert_eq!(storage.bytes(16..)?.bytes(4..)?.byte_offset(), 20);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn byte_offset(&self) -> usize {
        self.start
    }

    /// The size of the view in bytes.
    ///
    /// ```
    /// use ascend::{Device, PinnedHostBuf, stream::Ordered};
    /// let device = Device::new(0)?;
    /// let staging = Ordered::new(PinnedHostBuf::<u64>::zeroed(&device, 8)?);
    /// assert_eq!(staging.view().byte_len(), 64);
    /// assert_eq!(staging.slice(2..5)?.byte_len(), 24);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn byte_len(&self) -> usize {
        self.len
    }

    /// The view's bytes within the owner's memory.
    pub(super) fn range(&self) -> Range<usize> {
        self.start..self.start + self.len
    }

    /// The sub-view of `range`, in bytes from this view's start.
    fn within(&self, range: Range<usize>) -> Self {
        Self::new(self.owner, self.start + range.start, range.len())
    }
}

impl<'a, S: DeviceStorage> OrderedView<'a, S> {
    /// The view of `range`, in bytes from this view's start.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) when the range is not within the view.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::stream::Ordered;
    /// use ascend::{Device, DeviceBuf};
    /// let device = Device::new(0)?;
    /// let storage = Ordered::new(DeviceBuf::<u8>::zeroed(&device, 64)?);
    /// let half = storage.bytes(32..)?;
    /// let quarter = half.bytes(..16)?;
    /// assert_eq!((quarter.byte_offset(), quarter.byte_len()), (32, 16));
    /// assert!(half.bytes(..33).is_err());
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn bytes(&self, range: impl RangeBounds<usize>) -> Result<Self> {
        self.bytes_for(Call::rust("OrderedView::bytes"), range)
    }

    /// [`OrderedView::bytes`] for the public method `call`.
    pub(crate) fn bytes_for(&self, call: Call, range: impl RangeBounds<usize>) -> Result<Self> {
        Ok(self.within(checked_range(call, self.len, "bytes", range)?))
    }

    /// The view of elements `range` of `T`, counted from this view's
    /// start (which need not be a multiple of `size_of::<T>()`: device
    /// addresses have no alignment rule here).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) when the range is not within the view or
    /// overflows.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, DeviceBuf, Error, stream::Ordered};
    /// let device = Device::new(0)?;
    /// let storage = Ordered::new(DeviceBuf::from_slice(&device, &[0u8, 1, 2, 3, 4, 5, 6, 7, 8])?);
    /// let odd = storage.bytes(1..)?; // starts at byte 1
    /// assert_eq!(odd.elements::<u16>(1..3)?.to_vec::<u8>()?, [3, 4, 5, 6]);
    /// assert!(matches!(odd.elements::<u32>(..3), Err(Error::InvalidArgument { .. }))); // 8 bytes hold 2
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn elements<T: Pod>(&self, range: impl RangeBounds<usize>) -> Result<Self> {
        self.elements_for::<T>(Call::rust("OrderedView::elements"), range)
    }

    /// [`OrderedView::elements`] for the public method `call`.
    pub(crate) fn elements_for<T: Pod>(&self, call: Call, range: impl RangeBounds<usize>) -> Result<Self> {
        let range = checked_range(call, self.len / size_of::<T>().max(1), "elements", range)?;
        Ok(self.within(element_bytes::<T>(call, range)?))
    }

    /// The device address of the view's first byte (for identification
    /// and for [`OrderedView::record_stream`] work).
    ///
    /// ```
    /// use ascend::{Device, DeviceBuf, stream::Ordered};
    /// let device = Device::new(0)?;
    /// let storage = Ordered::new(DeviceBuf::<u8>::zeroed(&device, 64)?);
    /// let page = storage.bytes(32..)?;
    /// assert_eq!(page.device_ptr(), storage.device_ptr().wrapping_byte_add(32));
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn device_ptr(&self) -> *const std::ffi::c_void {
        self.owner
            .storage()
            .device_ptr()
            .cast::<u8>()
            .wrapping_add(self.start)
            .cast()
    }

    /// [`Ordered::record_stream`] for the view's bytes only: queues on
    /// `stream` the waits for the uses of these bytes on other streams,
    /// then notes `stream` as a possible writer of them, for work queued
    /// by other means (a kernel writing this part of a tensor).
    ///
    /// # Errors
    ///
    /// The runtime's code of an event record or wait (nothing is noted).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use ascend::stream::{Ordered, Stream};
    /// use ascend::{Device, DeviceBuf};
    /// let device = Device::new(0)?;
    /// let (a, b) = (Arc::new(Stream::new(&device)?), Arc::new(Stream::new(&device)?));
    /// let buf = Ordered::new(DeviceBuf::<u8>::zeroed(&device, 64)?);
    /// buf.bytes(..32)?.fill_bytes(1, &a)?;
    /// buf.bytes(32..)?.record_stream(&b)?; // no wait: other bytes
    /// // ... a kernel on `b` writes buf.bytes(32..)?.device_ptr() ...
    /// buf.wait()?; // both streams
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn record_stream(&self, stream: &Arc<crate::stream::Stream>) -> Result<()> {
        if self.len == 0 {
            return Ok(());
        }
        let _entered = self.owner.enter()?;
        let mut locked = self.owner.tracks_clear(&self.range(), true);
        locked.order(stream, &self.range(), true)?;
        locked.add_writer(stream, &self.range());
        Ok(())
    }
}

impl<'a, T: Pod> OrderedView<'a, PinnedHostBuf<T>> {
    /// The view of elements `range`, counted from this view's start.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) when the range is not within the view.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::stream::Ordered;
    /// use ascend::{Device, PinnedHostBuf};
    /// let device = Device::new(0)?;
    /// let staging = Ordered::new(PinnedHostBuf::<u32>::zeroed(&device, 16)?);
    /// let tail = staging.slice(8..)?.slice(4..)?;
    /// assert_eq!((tail.len(), tail.byte_offset()), (4, 48));
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn slice(&self, range: impl RangeBounds<usize>) -> Result<Self> {
        self.slice_for(Call::rust("OrderedView::slice"), range)
    }

    /// [`OrderedView::slice`] for the public method `call`.
    pub(crate) fn slice_for(&self, call: Call, range: impl RangeBounds<usize>) -> Result<Self> {
        let range = checked_range(call, self.len(), "elements", range)?;
        Ok(self.within(element_bytes::<T>(call, range)?))
    }

    /// Elements in the view.
    ///
    /// ```
    /// use ascend::{Device, PinnedHostBuf, stream::Ordered};
    /// let device = Device::new(0)?;
    /// let staging = Ordered::new(PinnedHostBuf::<f32>::zeroed(&device, 10)?);
    /// assert_eq!(staging.view().len(), 10);
    /// assert_eq!(staging.slice(3..)?.len(), 7);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn len(&self) -> usize {
        self.len / size_of::<T>().max(1)
    }

    /// Whether the view has no elements.
    ///
    /// ```
    /// use ascend::{Device, PinnedHostBuf, stream::Ordered};
    /// let device = Device::new(0)?;
    /// let staging = Ordered::new(PinnedHostBuf::<f32>::zeroed(&device, 4)?);
    /// assert!(!staging.view().is_empty());
    /// assert!(staging.slice(4..)?.is_empty());
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The host address of the view's first element.
    pub(super) fn host_ptr(&self) -> *mut T {
        self.owner
            .storage()
            .raw_pointer()
            .cast::<u8>()
            .wrapping_add(self.start)
            .cast()
    }
}

impl<S: OrderedMemory> Ordered<S> {
    /// The view of the whole memory.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::stream::Ordered;
    /// use ascend::{Device, DeviceBuf};
    /// let device = Device::new(0)?;
    /// let storage = Ordered::new(DeviceBuf::from_slice(&device, &[1u16, 2, 3])?);
    /// assert_eq!(storage.view().byte_len(), 6);
    /// assert_eq!(storage.view().to_vec::<u16>()?, [1, 2, 3]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn view(&self) -> OrderedView<'_, S> {
        OrderedView::new(self, 0, self.storage().memory_len())
    }
}

impl<S: DeviceStorage> Ordered<S> {
    /// The view of the bytes `range` of the device memory.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) when the range is not within the memory.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use ascend::stream::{Ordered, Stream};
    /// use ascend::{Device, DeviceBuf};
    /// let device = Device::new(0)?;
    /// let stream = Arc::new(Stream::new(&device)?);
    /// let storage = Ordered::new(DeviceBuf::<u8>::zeroed(&device, 8)?);
    /// storage.bytes(2..4)?.fill_bytes(9, &stream)?;
    /// assert_eq!(storage.view().to_vec::<u8>()?, [0, 0, 9, 9, 0, 0, 0, 0]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn bytes(&self, range: impl RangeBounds<usize>) -> Result<OrderedView<'_, S>> {
        self.view().bytes_for(Call::rust("Ordered::bytes"), range)
    }

    /// The view of elements `range` of `T` of the device memory (bytes
    /// `range.start * size_of::<T>()..range.end * size_of::<T>()`).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) when the range is not within the memory
    /// or overflows.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use ascend::{Device, DeviceBuf, stream::{Ordered, Stream}};
    /// let device = Device::new(0)?;
    /// let stream = Arc::new(Stream::new(&device)?);
    /// let storage = Ordered::new(DeviceBuf::<u32>::zeroed(&device, 4)?);
    /// let middle = storage.elements::<u32>(1..3)?;
    /// assert_eq!((middle.byte_offset(), middle.byte_len()), (4, 8));
    /// middle.fill_bytes(0xFF, &stream)?;
    /// assert_eq!(storage.view().to_vec::<u32>()?, [0, u32::MAX, u32::MAX, 0]);
    /// assert!(storage.elements::<u32>(3..5).is_err());
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn elements<T: Pod>(&self, range: impl RangeBounds<usize>) -> Result<OrderedView<'_, S>> {
        self.view().elements_for::<T>(Call::rust("Ordered::elements"), range)
    }
}

impl<T: Pod> Ordered<PinnedHostBuf<T>> {
    /// The view of elements `range` of the pinned buffer.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) when the range is not within the buffer.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use ascend::{Device, DeviceBuf, PinnedHostBuf, stream::{Ordered, Stream}};
    /// let device = Device::new(0)?;
    /// let stream = Arc::new(Stream::new(&device)?);
    /// let staging = Ordered::new(PinnedHostBuf::from_slice(&device, &[1i16, 2, 3, 4, 5, 6])?);
    /// let tensor = Ordered::new(DeviceBuf::<i16>::zeroed(&device, 2)?);
    /// tensor.copy_from_host(staging.slice(4..)?, &stream)?; // the last two
    /// assert_eq!(tensor.view().to_vec::<i16>()?, [5, 6]);
    /// assert!(staging.slice(..7).is_err());
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn slice(&self, range: impl RangeBounds<usize>) -> Result<OrderedView<'_, PinnedHostBuf<T>>> {
        self.view().slice_for(Call::rust("Ordered::slice"), range)
    }
}

impl<S> fmt::Debug for OrderedView<'_, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OrderedView")
            .field("byte_offset", &self.start)
            .field("byte_len", &self.len)
            .finish_non_exhaustive()
    }
}

/// An [`OrderedView`] that holds its owner in an `Arc` instead of
/// borrowing it: `'static`, `Send` and `Sync` when the memory is, for a
/// framework's tensor that keeps a range of a shared storage. Use it
/// through [`OwnedView::view`], or pass it wherever a view is taken.
///
/// ```
/// use std::sync::Arc;
/// use ascend::stream::{Ordered, OwnedView, Stream};
/// use ascend::{Device, DeviceBuf};
/// let device = Device::new(0)?;
/// let stream = Arc::new(Stream::new(&device)?);
/// let storage = Arc::new(Ordered::new(DeviceBuf::<u8>::zeroed(&device, 16)?));
/// let tail = OwnedView::whole(Arc::clone(&storage)).bytes(8..)?;
/// std::thread::spawn(move || tail.view().fill_bytes(1, &stream)).join().unwrap()?;
/// assert_eq!(storage.view().to_vec::<u8>()?, [[0; 8], [1; 8]].concat());
/// # Ok::<(), ascend::Error>(())
/// ```
pub struct OwnedView<S> {
    owner: Arc<Ordered<S>>,
    start: usize,
    len: usize,
}

impl<S> Clone for OwnedView<S> {
    fn clone(&self) -> Self {
        Self {
            owner: Arc::clone(&self.owner),
            start: self.start,
            len: self.len,
        }
    }
}

impl<S: OrderedMemory> OwnedView<S> {
    /// The view of the whole memory of `owner`.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use ascend::{Device, DeviceBuf, stream::{Ordered, OwnedView}};
    /// let device = Device::new(0)?;
    /// let storage = Arc::new(Ordered::new(DeviceBuf::<u8>::zeroed(&device, 32)?));
    /// let whole = OwnedView::whole(Arc::clone(&storage));
    /// assert_eq!((whole.view().byte_offset(), whole.view().byte_len()), (0, 32));
    /// assert_eq!(Arc::strong_count(&storage), 2); // the view holds the owner
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn whole(owner: Arc<Ordered<S>>) -> Self {
        let len = owner.storage().memory_len();
        Self { owner, start: 0, len }
    }
}

impl<S> OwnedView<S> {
    /// The borrowed view of the same range.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use ascend::{Device, DeviceBuf, stream::{Ordered, OwnedView}};
    /// let device = Device::new(0)?;
    /// let storage = Arc::new(Ordered::new(DeviceBuf::from_slice(&device, &[1u8, 2, 3, 4])?));
    /// let tail = OwnedView::whole(storage).bytes(2..)?;
    /// let borrowed = tail.view(); // for the methods of `OrderedView`
    /// assert_eq!(borrowed.byte_offset(), 2);
    /// assert_eq!(borrowed.to_vec::<u8>()?, [3, 4]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn view(&self) -> OrderedView<'_, S> {
        OrderedView::new(&self.owner, self.start, self.len)
    }

    /// The owner.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use ascend::{Device, DeviceBuf, stream::{Ordered, OwnedView}};
    /// let device = Device::new(0)?;
    /// let storage = Arc::new(Ordered::new(DeviceBuf::<u8>::zeroed(&device, 8)?));
    /// let page = OwnedView::whole(Arc::clone(&storage)).bytes(4..)?;
    /// assert!(Arc::ptr_eq(page.owner(), &storage));
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn owner(&self) -> &Arc<Ordered<S>> {
        &self.owner
    }

    /// The owned view of the range `view` (a view of this one's owner).
    fn of(&self, view: OrderedView<'_, S>) -> Self {
        Self {
            owner: Arc::clone(&self.owner),
            start: view.start,
            len: view.len,
        }
    }
}

impl<S: DeviceStorage> OwnedView<S> {
    /// [`OrderedView::bytes`], owned.
    ///
    /// # Errors
    ///
    /// As [`OrderedView::bytes`].
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use ascend::{Device, DeviceBuf, stream::{Ordered, OwnedView, Stream}};
    /// let device = Device::new(0)?;
    /// let stream = Arc::new(Stream::new(&device)?);
    /// let storage = Arc::new(Ordered::new(DeviceBuf::<u8>::zeroed(&device, 8)?));
    /// let head: OwnedView<_> = OwnedView::whole(Arc::clone(&storage)).bytes(..3)?; // 'static
    /// head.view().fill_bytes(1, &stream)?;
    /// assert_eq!(storage.view().to_vec::<u8>()?, [1, 1, 1, 0, 0, 0, 0, 0]);
    /// assert!(head.bytes(..4).is_err()); // within the view only
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn bytes(&self, range: impl RangeBounds<usize>) -> Result<Self> {
        Ok(self.of(self.view().bytes_for(Call::rust("OwnedView::bytes"), range)?))
    }

    /// [`OrderedView::elements`], owned.
    ///
    /// # Errors
    ///
    /// As [`OrderedView::elements`].
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use ascend::{Device, DeviceBuf, stream::{Ordered, OwnedView}};
    /// let device = Device::new(0)?;
    /// let storage = Arc::new(Ordered::new(DeviceBuf::from_slice(&device, &[10u32, 11, 12, 13])?));
    /// let rows: Vec<OwnedView<_>> = (0..2)
    ///     .map(|row| OwnedView::whole(Arc::clone(&storage)).elements::<u32>(row * 2..row * 2 + 2))
    ///     .collect::<Result<_, _>>()?;
    /// assert_eq!(rows[1].view().to_vec::<u32>()?, [12, 13]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn elements<T: Pod>(&self, range: impl RangeBounds<usize>) -> Result<Self> {
        Ok(self.of(self
            .view()
            .elements_for::<T>(Call::rust("OwnedView::elements"), range)?))
    }
}

impl<T: Pod> OwnedView<PinnedHostBuf<T>> {
    /// [`OrderedView::slice`], owned.
    ///
    /// # Errors
    ///
    /// As [`OrderedView::slice`].
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use ascend::{Device, PinnedHostBuf, stream::{Ordered, OwnedView}};
    /// let device = Device::new(0)?;
    /// let staging = Arc::new(Ordered::new(PinnedHostBuf::from_slice(&device, &[1u8, 2, 3, 4])?));
    /// let back = OwnedView::whole(staging).slice(2..)?;
    /// assert_eq!(back.view().with_host(|values| values.to_vec())?, [3, 4]);
    /// assert!(back.slice(..3).is_err());
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn slice(&self, range: impl RangeBounds<usize>) -> Result<Self> {
        Ok(self.of(self.view().slice_for(Call::rust("OwnedView::slice"), range)?))
    }
}

impl<S> fmt::Debug for OwnedView<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OwnedView")
            .field("byte_offset", &self.start)
            .field("byte_len", &self.len)
            .finish_non_exhaustive()
    }
}

/// What a stream-ordered operation takes as a source: an [`Ordered`]
/// owner (its whole memory), an `Arc` of one, an [`OrderedView`] or an
/// [`OwnedView`], or a reference to any of them. Sealed.
///
/// ```
/// use std::sync::Arc;
/// use ascend::{Device, DeviceBuf, PinnedHostBuf, stream::{Ordered, OwnedView, Stream}};
/// let device = Device::new(0)?;
/// let stream = Arc::new(Stream::new(&device)?);
/// let staging = Arc::new(Ordered::new(PinnedHostBuf::from_slice(&device, &[1u8, 2, 3, 4])?));
/// let tensor = Ordered::new(DeviceBuf::<u8>::zeroed(&device, 4)?);
/// tensor.copy_from_host(&staging, &stream)?; // a reference to an `Arc<Ordered<_>>`
/// tensor.bytes(..2)?.copy_from_host(staging.slice(2..)?, &stream)?; // an `OrderedView`
/// tensor.bytes(2..)?.copy_from_host(OwnedView::whole(staging).slice(..2)?, &stream)?; // an `OwnedView`
/// assert_eq!(tensor.view().to_vec::<u8>()?, [3, 4, 1, 2]);
/// # Ok::<(), ascend::Error>(())
/// ```
pub trait AsView<S>: sealed::View {
    /// The range this value stands for.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use ascend::{Device, DeviceBuf, stream::{AsView, Ordered, OwnedView}};
    /// let device = Device::new(0)?;
    /// let storage = Arc::new(Ordered::new(DeviceBuf::<u8>::zeroed(&device, 16)?));
    /// let page = OwnedView::whole(Arc::clone(&storage)).bytes(4..8)?;
    /// let (whole, part) = (storage.as_view(), page.as_view());
    /// assert_eq!((whole.byte_offset(), whole.byte_len()), (0, 16));
    /// assert_eq!((part.byte_offset(), part.byte_len()), (4, 4));
    /// # Ok::<(), ascend::Error>(())
    /// ```
    fn as_view(&self) -> OrderedView<'_, S>;
}

impl<S> sealed::View for Ordered<S> {}
impl<S: OrderedMemory> AsView<S> for Ordered<S> {
    fn as_view(&self) -> OrderedView<'_, S> {
        self.view()
    }
}

impl<S> sealed::View for Arc<Ordered<S>> {}
impl<S: OrderedMemory> AsView<S> for Arc<Ordered<S>> {
    fn as_view(&self) -> OrderedView<'_, S> {
        self.view()
    }
}

impl<S> sealed::View for OrderedView<'_, S> {}
impl<S> AsView<S> for OrderedView<'_, S> {
    fn as_view(&self) -> OrderedView<'_, S> {
        *self
    }
}

impl<S> sealed::View for OwnedView<S> {}
impl<S> AsView<S> for OwnedView<S> {
    fn as_view(&self) -> OrderedView<'_, S> {
        self.view()
    }
}

impl<A: sealed::View + ?Sized> sealed::View for &A {}
impl<S, A: AsView<S> + ?Sized> AsView<S> for &A {
    fn as_view(&self) -> OrderedView<'_, S> {
        (**self).as_view()
    }
}

//! [`Ordered`]: long-lived buffers used by asynchronous work on any stream,
//! with no scope.

mod batch;
mod carried;
mod copies;
mod gate;
mod host_access;
mod in_flight;
mod lanes;
mod tracks;
mod view;

use crate::error::Result;
use crate::memory::PinnedHostBuf;
pub(crate) use carried::{Carried, Carrier};
use gate::Entered;
pub(crate) use gate::UseGate;
use lanes::Lanes;
use std::fmt;
use std::mem::ManuallyDrop;
pub(crate) use tracks::{Settled, Tracks, WHOLE, complete_all, wait_for};
pub use view::{AsView, OrderedMemory, OrderedView, OwnedView};

/// An owner of memory whose asynchronous uses on any stream are ordered at
/// run time: device memory (a [`DeviceBuf`](crate::DeviceBuf), an
/// [`OwnedMapping`](crate::vmm::OwnedMapping), a
/// [`SegmentBlock`](crate::vmm::SegmentBlock), or any owned
/// [`DeviceStorageMut`](crate::memory::DeviceStorageMut)) or a
/// [`PinnedHostBuf`](crate::PinnedHostBuf). Share it through an `Arc`: every queued
/// operation takes `&Ordered`, and the streams it is used on as
/// `&Arc<Stream>` (they are kept alive as long as they may use the memory).
///
/// A scope keeps every buffer borrowed until its stream is synchronised,
/// which suits code that can be stack-scoped. A framework keeps its buffers
/// in structures (`Arc`s, caches, tensors) and queues work on several
/// streams. `Ordered<S>` wraps such an owner and keeps the order at run
/// time instead:
///
/// - it remembers which streams may still use the memory: the last stream
///   that wrote it and the streams that read it since;
/// - work queued on another stream first waits for the conflicting uses (an
///   event recorded on their stream, waited for by the new one); a
///   single-stream program never creates an event;
/// - host access ([`Ordered::get_mut`], [`Ordered::wait`], and the host
///   reads and writes of a view), taking the owner back
///   ([`Ordered::into_inner`]) and dropping it wait for the uses they
///   conflict with first.
///
/// Work on part of the memory goes through a view ([`Ordered::bytes`],
/// [`Ordered::elements`], [`Ordered::slice`]; [`OrderedView`] says what
/// the tracking per range costs): work on disjoint views never waits for
/// each other, on any stream or thread.
///
/// `Ordered<S>` is not itself a [`DeviceStorage`](crate::memory::DeviceStorage):
/// that trait promises that nothing writes the memory while it is borrowed
/// shared, and an `Ordered` is written through `&self` by the work it
/// queues. Its views take the storage's place: every copy and memset, and
/// host reads and writes ([`OrderedView::read_to_host`],
/// [`OrderedView::write_from_host`], [`OrderedView::with_host`]), which
/// wait for the conflicting work first.
///
/// Failure model: as everywhere in this crate, memory is never released
/// while work that uses it may be queued. When waiting cannot prove that a
/// use finished (its stream and the device fail to synchronise), the memory
/// is kept: `get_mut` and `into_inner` return the error and drop leaks it.
/// The owner of a [`DevicePool`](crate::pool::DevicePool) block is closed
/// while its tag sleeps: every use of it (a queued operation, a host read
/// or write, `record_stream`) fails with
/// [`Error::PoolAsleep`](crate::Error::PoolAsleep) then, and a sleep waits
/// for the uses under way before it copies the block.
///
/// ```
/// use std::sync::Arc;
/// use ascend::stream::{Ordered, Stream};
/// use ascend::{Device, DeviceBuf, PinnedHostBuf};
/// let device = Device::new(0)?;
/// let (upload, compute) = (Arc::new(Stream::new(&device)?), Arc::new(Stream::new(&device)?));
/// let staging = Ordered::new(PinnedHostBuf::from_slice(&device, &[5u32; 256])?);
/// let tensor = Arc::new(Ordered::new(DeviceBuf::<u32>::zeroed(&device, 256)?));
/// let copy = Arc::new(Ordered::new(DeviceBuf::<u32>::zeroed(&device, 256)?));
/// tensor.copy_from_host(&staging, &upload)?;
/// copy.copy_from_device(&tensor, &compute)?; // waits for the upload first
/// let copy = Arc::into_inner(copy).expect("one owner").into_inner()?;
/// assert_eq!(copy.to_vec()?, [5; 256]);
/// # Ok::<(), ascend::Error>(())
/// ```
///
/// **Threads:** `Ordered<S>` is `Send` when `S` is `Send` and `Sync` when `S`
/// is `Sync` (every device storage of this crate is both), so an
/// `Arc<Ordered<S>>` can be shared between threads.
///
/// **Guide:** [Concepts: owned forms](crate::guide::concepts).
pub struct Ordered<S> {
    // The fields are dropped by hand, by `Drop` or `into_inner`: a pool's
    // recycling drop then ends in its call to the pool, with no drop glue
    // after it.
    storage: ManuallyDrop<S>,
    /// The uses that may be queued, per range of the memory.
    lanes: ManuallyDrop<Lanes>,
    /// Where the owner and its uses go when this value is dropped, instead
    /// of waiting for them (a pool's stream-ordered free).
    recycle: ManuallyDrop<Option<Recycle<S>>>,
}

/// Takes an owner with the uses that may still be queued on it: a plain
/// function when the owner knows where it goes (a pool block holds its
/// pool), a reference to the pool's state that the owner carries
/// otherwise ([`Carried`]); a pool hit costs no reference count either
/// way.
///
/// The tracks it gets have the ranges of this owner's uses. A recycler
/// that keeps them with memory it may cut, join or hand out again widens
/// them first ([`Tracks::widen`]), where it already tells busy memory
/// from idle: the pool hit's drop then costs no test for it.
pub(crate) enum Recycle<S> {
    /// A function of the owner alone.
    Owner(fn(S, Tracks)),
    /// The pool's state, by the reference this owner carries (one word).
    Carried(Carried<S>),
    /// A function of the owner, and the gate that every use of its
    /// memory enters first (a device pool's block: the gate of its tag,
    /// closed while the tag sleeps).
    Gated {
        /// Where the dropped owner goes, with its uses.
        give_back: fn(S, Tracks),
        /// The gate of the owner's memory.
        gate: fn(&S) -> &UseGate,
    },
    /// A typed view of a byte owner handed out by a pool whose owners are
    /// bytes (a [`PinnedPool`](crate::pool::PinnedPool)'s typed buffer):
    /// turned back into bytes, it goes back as [`Recycle::Carried`] does.
    CarriedBytes {
        /// The pool's state, by the reference this owner carries.
        carried: Carried<PinnedHostBuf<u8>>,
        /// The owner as the bytes it was made from.
        into_bytes: fn(S) -> PinnedHostBuf<u8>,
    },
}

impl<S> Recycle<S> {
    #[inline]
    fn call(self, storage: S, tracks: Tracks) {
        match self {
            Self::Owner(function) => function(storage, tracks),
            Self::Gated { give_back, .. } => give_back(storage, tracks),
            Self::Carried(carried) => carried.give_back(storage, tracks),
            Self::CarriedBytes { carried, into_bytes } => Self::give_back_bytes(carried, into_bytes, storage, tracks),
        }
    }

    /// [`Recycle::CarriedBytes`]'s call, out of line: its two calls in a
    /// row made every inlined drop save registers for the second, the
    /// pool hit's included.
    #[inline(never)]
    fn give_back_bytes(
        carried: Carried<PinnedHostBuf<u8>>,
        into_bytes: fn(S) -> PinnedHostBuf<u8>,
        storage: S,
        tracks: Tracks,
    ) {
        carried.give_back(into_bytes(storage), tracks);
    }
}

impl<S> Ordered<S> {
    /// Wraps `storage`, which no queued work uses yet.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use ascend::stream::{Ordered, Stream};
    /// use ascend::{Device, DeviceBuf, PinnedHostBuf};
    /// let device = Device::new(0)?;
    /// let stream = Arc::new(Stream::new(&device)?);
    /// let buf = Arc::new(Ordered::new(DeviceBuf::<u8>::zeroed(&device, 64)?));
    /// buf.fill_bytes(1, &stream)?;
    /// // Taking the buffer back waits for the work queued on it.
    /// let buf = Arc::into_inner(buf).expect("one owner").into_inner()?;
    /// assert_eq!(buf.to_vec()?, [1; 64]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn new(storage: S) -> Self
    where
        S: OrderedMemory,
    {
        let len = storage.memory_len();
        Self {
            storage: ManuallyDrop::new(storage),
            lanes: ManuallyDrop::new(Lanes::new(len, Tracks::default())),
            recycle: ManuallyDrop::new(None),
        }
    }

    /// Wraps `storage` of `len` bytes that queued work may still use as
    /// `tracks` say; dropping the value hands both to `recycle` without
    /// waiting (the caller keeps them apart from the host and from release
    /// until the uses are proven finished).
    #[inline]
    pub(crate) fn recycled(storage: S, len: usize, tracks: Tracks, recycle: Recycle<S>) -> Self {
        Self {
            storage: ManuallyDrop::new(storage),
            lanes: ManuallyDrop::new(Lanes::new(len, tracks)),
            recycle: ManuallyDrop::new(Some(recycle)),
        }
    }

    pub(crate) fn storage(&self) -> &S {
        &self.storage
    }

    /// Starts a use of the memory: through its gate when it has one
    /// ([`Recycle::Gated`]), which refuses it while the memory's pool
    /// tag sleeps; the use ends when the value returned is dropped, after
    /// the use has landed.
    ///
    /// # Errors
    ///
    /// [`Error::PoolAsleep`](crate::Error::PoolAsleep) when the gate is
    /// closed.
    #[inline]
    pub(super) fn enter(&self) -> Result<Entered<'_>> {
        match &*self.recycle {
            Some(Recycle::Gated { gate, .. }) => gate(&self.storage).enter(),
            _ => Ok(Entered::ungated()),
        }
    }

    /// Whether queued work may still use the memory.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use ascend::{Device, DeviceBuf, stream::{Ordered, Stream}};
    /// let device = Device::new(0)?;
    /// let stream = Arc::new(Stream::new(&device)?);
    /// let buf = Ordered::new(DeviceBuf::<u8>::zeroed(&device, 32)?);
    /// assert!(!buf.is_busy()); // nothing queued yet
    /// buf.fill_bytes(7, &stream)?;
    /// assert!(buf.is_busy()); // until a host wait proves the fill finished
    /// buf.wait()?;
    /// assert!(!buf.is_busy());
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn is_busy(&self) -> bool {
        self.lanes.is_busy()
    }

    /// Waits for every queued use, then gives host access to the owner
    /// (to read or refill a pinned buffer, or to use a device buffer
    /// synchronously).
    ///
    /// # Errors
    ///
    /// The first error a queued task reported (the work is over; call again
    /// for access). When the work cannot be proven finished, that error,
    /// and every later call fails too: the memory is never handed out.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use ascend::stream::{Ordered, Stream};
    /// use ascend::{Device, DeviceBuf, PinnedHostBuf};
    /// let device = Device::new(0)?;
    /// let stream = Arc::new(Stream::new(&device)?);
    /// let tensor = Ordered::new(DeviceBuf::from_slice(&device, &[3u8; 8])?);
    /// let mut host = Ordered::new(PinnedHostBuf::<u8>::zeroed(&device, 8)?);
    /// host.copy_from_device(&tensor, &stream)?;
    /// let values = host.get_mut()?; // waits for the copy first
    /// values[0] = 0;
    /// assert_eq!(&values[..], [0, 3, 3, 3, 3, 3, 3, 3]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn get_mut(&mut self) -> Result<&mut S> {
        match self.lanes.settle_mut("Ordered::get_mut") {
            Settled::Proven(reported) => reported?,
            Settled::Unproven(error) => return Err(error),
        }
        Ok(&mut self.storage)
    }

    /// Waits for every queued use, then gives the owner back.
    ///
    /// # Errors
    ///
    /// The first error a queued task reported (the owner is dropped: its
    /// work is over). When the work cannot be proven finished, that error,
    /// and the owner is leaked, never freed.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use ascend::stream::{Ordered, Stream};
    /// use ascend::{Device, DeviceBuf, PinnedHostBuf};
    /// let device = Device::new(0)?;
    /// let stream = Arc::new(Stream::new(&device)?);
    /// let buf = Ordered::new(DeviceBuf::<u32>::zeroed(&device, 4)?);
    /// buf.fill_bytes(0x11, &stream)?;
    /// let buf: DeviceBuf<u32> = buf.into_inner()?; // waits for the fill
    /// assert_eq!(buf.to_vec()?, [0x1111_1111; 4]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn into_inner(mut self) -> Result<S> {
        let settled = self.lanes.settle_mut("Ordered::into_inner");
        match settled {
            Settled::Proven(reported) => {
                // Never dropped, even if dropping a field below unwinds.
                let mut this = ManuallyDrop::new(self);
                // SAFETY: each field is taken once, and `this` is never
                // dropped, so `Drop` does not touch them again.
                let (storage, lanes, recycle) = unsafe {
                    (
                        ManuallyDrop::take(&mut this.storage),
                        ManuallyDrop::take(&mut this.lanes),
                        ManuallyDrop::take(&mut this.recycle),
                    )
                };
                drop((lanes, recycle));
                reported.map(|()| storage)
            }
            Settled::Unproven(error) => {
                // Leaked, with the streams that may still use it.
                std::mem::forget(self);
                Err(error)
            }
        }
    }
}

impl<S: crate::memory::DeviceStorage> Ordered<S> {
    /// Prepares the memory for work queued on `stream` by other means
    /// than this type's methods (an operator library's kernels, raw
    /// `ascend_sys` calls): queues on `stream` the waits for the uses on
    /// other streams, then notes `stream` as a possible writer, so that
    /// every later use elsewhere, host access and the drop wait for it. The
    /// `record_stream` of torch_npu, with the wait included.
    ///
    /// Call it before queueing that work; the address is
    /// [`Ordered::device_ptr`].
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
    /// buf.fill_bytes(1, &a)?;
    /// buf.record_stream(&b)?; // b waits for the fill; b's work is now tracked
    /// // ... a kernel on `b` writes buf.device_ptr() ...
    /// let buf = buf.into_inner()?; // waits for both streams
    /// # drop(buf);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn record_stream(&self, stream: &std::sync::Arc<crate::stream::Stream>) -> Result<()> {
        self.view().record_stream(stream)
    }

    /// The device address of the memory (for identification; the bytes
    /// are reached only through the ordered operations).
    ///
    /// ```
    /// use ascend::{Device, DeviceBuf, stream::Ordered};
    /// let device = Device::new(0)?;
    /// let buf = DeviceBuf::<u32>::zeroed(&device, 8)?;
    /// let address = buf.as_raw().cast_const();
    /// let ordered = Ordered::new(buf);
    /// assert_eq!(ordered.device_ptr(), address); // the same memory, not a copy
    /// assert_eq!(ordered.elements::<u32>(2..)?.device_ptr(), address.wrapping_byte_add(8));
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn device_ptr(&self) -> *const std::ffi::c_void {
        self.storage.device_ptr()
    }

    /// The size of the memory in bytes.
    ///
    /// ```
    /// use ascend::{Device, DeviceBuf, stream::Ordered};
    /// let device = Device::new(0)?;
    /// let ordered = Ordered::new(DeviceBuf::<f64>::zeroed(&device, 10)?);
    /// assert_eq!(ordered.byte_len(), 80);
    /// assert_eq!(ordered.byte_len(), ordered.view().byte_len());
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn byte_len(&self) -> usize {
        self.storage.byte_len()
    }
}

impl<T: bytemuck::Pod> Ordered<crate::PinnedHostBuf<T>> {
    /// Elements of the pinned buffer.
    ///
    /// ```
    /// use ascend::{Device, PinnedHostBuf, stream::Ordered};
    /// let device = Device::new(0)?;
    /// let staging = Ordered::new(PinnedHostBuf::<u16>::zeroed(&device, 12)?);
    /// assert_eq!(staging.len(), 12);
    /// assert_eq!(staging.view().byte_len(), 24);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn len(&self) -> usize {
        self.storage.len()
    }

    /// Whether the pinned buffer is empty.
    ///
    /// ```
    /// use ascend::{Device, PinnedHostBuf, stream::Ordered};
    /// let device = Device::new(0)?;
    /// assert!(Ordered::new(PinnedHostBuf::<u8>::zeroed(&device, 0)?).is_empty());
    /// assert!(!Ordered::new(PinnedHostBuf::<u8>::zeroed(&device, 1)?).is_empty());
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.storage.is_empty()
    }

    /// Elements allocated for the pinned buffer
    /// ([`PinnedHostBuf::capacity`](crate::PinnedHostBuf::capacity): a
    /// pinned pool's bucket size; the views and copies cover
    /// [`Ordered::len`] only).
    ///
    /// ```
    /// use ascend::pool::PinnedPool;
    /// let pool = PinnedPool::new(&ascend::Device::new(0)?);
    /// let staging = pool.alloc(3000)?; // an `Ordered<PinnedHostBuf<u8>>`
    /// assert_eq!((staging.len(), staging.capacity()), (3000, 4096));
    /// assert_eq!(staging.view().byte_len(), 3000); // views cover the length
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn capacity(&self) -> usize {
        self.storage.capacity()
    }

    /// The host address of the buffer (for identification; the host reads
    /// it through [`Ordered::get_mut`], which waits for queued copies).
    ///
    /// ```
    /// use ascend::{Device, PinnedHostBuf, stream::Ordered};
    /// let device = Device::new(0)?;
    /// let host = PinnedHostBuf::from_slice(&device, &[1u32, 2])?;
    /// let address = host.as_ptr();
    /// let mut staging = Ordered::new(host);
    /// assert_eq!(staging.host_ptr(), address);
    /// let through_get_mut = staging.get_mut()?.as_ptr();
    /// assert_eq!(through_get_mut, staging.host_ptr());
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn host_ptr(&self) -> *const T {
        self.storage.raw_pointer().cast_const()
    }
}

impl<S> Drop for Ordered<S> {
    /// Inlined so that a pool's recycling drop costs one call: the common
    /// case of a pool (a function of the owner or a carried reference,
    /// one lane) calls nothing else, so it saves no registers; the rest is
    /// out of line.
    #[inline]
    fn drop(&mut self) {
        if self.recycle.is_some() && self.lanes.is_one() {
            // SAFETY: each taken once, here (`into_inner` forgets `self`);
            // nothing uses them after.
            let (storage, lanes, recycle) = unsafe {
                (
                    ManuallyDrop::take(&mut self.storage),
                    ManuallyDrop::take(&mut self.lanes),
                    ManuallyDrop::take(&mut self.recycle),
                )
            };
            if let Some(recycle) = recycle {
                // The ranges are this owner's: the recycler widens them
                // where it keeps busy memory (see `Recycle`).
                recycle.call(storage, lanes.into_tracks());
            }
        } else {
            self.drop_slowly();
        }
    }
}

impl<S> Ordered<S> {
    /// The drop past the common case of a pool: a recycler with many
    /// lanes, or no recycler.
    #[inline(never)]
    fn drop_slowly(&mut self) {
        // SAFETY: taken once, here (the drop's one call; `into_inner`
        // forgets `self`).
        match unsafe { ManuallyDrop::take(&mut self.recycle) } {
            Some(recycle) => {
                // SAFETY: each taken once, here; nothing uses them after.
                let (storage, lanes) = unsafe {
                    (
                        ManuallyDrop::take(&mut self.storage),
                        ManuallyDrop::take(&mut self.lanes),
                    )
                };
                let tracks = lanes.into_tracks();
                // The ranges are this owner's: the recycler widens them
                // where it keeps busy memory (see `Recycle`).
                recycle.call(storage, tracks);
            }
            None => self.drop_after_its_uses(),
        }
    }
}

impl<S> Ordered<S> {
    /// The drop of an owner that no pool takes back: waits for every use,
    /// then drops the owner, or leaks it when the uses cannot be proven
    /// finished.
    #[inline(never)]
    fn drop_after_its_uses(&mut self) {
        // SAFETY: taken once (the drop's one call); nothing uses it after.
        // A local from here, so it is dropped on every path, unwinding too.
        let lanes = unsafe { ManuallyDrop::take(&mut self.lanes) };
        let mut tracks = lanes.into_tracks();
        match tracks.settle("Ordered drop") {
            Settled::Proven(reported) => {
                if let Err(error) = reported {
                    log::warn!("Ordered drop: {error}");
                }
                // SAFETY: dropped once (the drop's one call); nothing uses
                // it after.
                unsafe { ManuallyDrop::drop(&mut self.storage) };
            }
            // Leaked: queued work may still use it.
            Settled::Unproven(_) => {}
        }
        // `recycle` is `None`: nothing to drop.
    }
}

impl<S: fmt::Debug> fmt::Debug for Ordered<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Ordered")
            .field("busy", &self.is_busy())
            .finish_non_exhaustive()
    }
}

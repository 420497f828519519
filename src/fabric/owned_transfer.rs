//! [`OwnedTransfer`]: asynchronous copies of an [`OwnedMember`] that own
//! the registrations whose memory they touch until `smem_bm_wait` has
//! proven them finished; [`TransferQueue`] queues them.

use super::copy::{Submit, checked_pair, copy_batch_raw, copy_raw};
use super::handle;
use super::registration::Raw;
use super::{
    CopyTo, DeviceRead, DeviceWrite, FabricError, HostRead, HostWrite, OwnedMember, OwnedRegisteredDevice,
    OwnedRegisteredHost, Side,
};
use crate::memory::DeviceStorageMut;
use bytemuck::Pod;
use std::cell::Cell;
use std::fmt;
use std::marker::PhantomData;
use std::ops::RangeBounds;
use std::sync::Arc;
use std::thread::ThreadId;

mod sealed {
    use super::{Raw, Side};

    /// What a transfer needs of a registration it holds.
    pub trait Held {
        /// Its source side.
        type Read<'a>: Side;
        /// Its destination side.
        type Write<'a>: Side;

        /// All its registered bytes, as a side.
        fn registered(&self) -> Raw;

        /// `raw` (inside its registered bytes) as a source side.
        fn read_side<'a>(raw: Raw) -> Self::Read<'a>;

        /// `raw` (inside its registered bytes) as a destination side.
        fn write_side<'a>(raw: Raw) -> Self::Write<'a>;
    }
}

/// An owned registration ([`OwnedRegisteredDevice`] or
/// [`OwnedRegisteredHost`]) that an [`OwnedTransfer`] can hold while its
/// asynchronous copies run. Sealed.
///
/// ```
/// use ascend::fabric::{OwnedRegisteredDevice, OwnedRegisteredHost, OwnedRegistration};
/// fn holdable<R: OwnedRegistration>() {}
/// holdable::<OwnedRegisteredHost<u8>>();
/// holdable::<OwnedRegisteredDevice<ascend::DeviceBuf<f32>>>();
/// ```
pub trait OwnedRegistration: sealed::Held + Send + Sync + 'static {}

impl<S: DeviceStorageMut + Send + Sync + 'static> sealed::Held for OwnedRegisteredDevice<S> {
    type Read<'a> = DeviceRead<'a>;
    type Write<'a> = DeviceWrite<'a>;

    fn registered(&self) -> Raw {
        self.read().raw
    }

    fn read_side<'a>(raw: Raw) -> DeviceRead<'a> {
        DeviceRead::new(raw)
    }

    fn write_side<'a>(raw: Raw) -> DeviceWrite<'a> {
        DeviceWrite::new(raw)
    }
}

impl<S: DeviceStorageMut + Send + Sync + 'static> OwnedRegistration for OwnedRegisteredDevice<S> {}

impl<T: Pod> sealed::Held for OwnedRegisteredHost<T> {
    type Read<'a> = HostRead<'a>;
    type Write<'a> = HostWrite<'a>;

    fn registered(&self) -> Raw {
        self.read().raw
    }

    fn read_side<'a>(raw: Raw) -> HostRead<'a> {
        HostRead::new(raw)
    }

    fn write_side<'a>(raw: Raw) -> HostWrite<'a> {
        HostWrite::new(raw)
    }
}

impl<T: Pod> OwnedRegistration for OwnedRegisteredHost<T> {}

/// Asynchronous copies (`ASYNC_COPY_FLAG`) of one [`OwnedMember`], and the
/// registrations whose memory they read or write, owned by the transfer
/// until [`wait`](Self::wait) (`smem_bm_wait`) has proven the copies
/// finished: the owned form of [`Member::scope`](super::Member::scope), for
/// an engine that queues copies now and collects them later, on any
/// thread. It holds the member in an `Arc`, so the rank stays joined.
///
/// Each registration goes in by value with [`hold`](Self::hold), whose
/// closure queues the copies that use it on a [`TransferQueue`]; a local
/// side the transfer does not hold is refused there, so no queued copy can
/// reach memory that someone else may free meanwhile. `wait` gives the
/// registrations back, in the order they went in.
///
/// **Failure model:** dropping a transfer that was not waited for waits
/// first. If that wait fails, the copies cannot be proven finished: the
/// held registrations are leaked (logged through `log`) — their buffers
/// are never unregistered or freed, and their `Arc` of the member keeps
/// the rank joined and the pool alive — instead of freeing memory a copy
/// may still write. [`wait`](Self::wait) returns a failure with the
/// transfer ([`TransferWaitError`]), to try again or drop.
///
/// **One thread per round of copies.** MemFabric queues a thread's
/// asynchronous copies on that thread's own stream, and `smem_bm_wait`
/// synchronises the calling thread's stream only (MemFabric's source,
/// `hybm_data_op_sdma.cpp`). So the copies a transfer queued are waited
/// for on the thread that queued them: while copies are pending, a
/// [`TransferQueue`] refuses copies from another thread, [`wait`](Self::wait)
/// on another thread returns [`TransferWaitError`] (the transfer back, to
/// wait on the right thread), and a drop on another thread leaks the held
/// registrations (logged) instead of freeing memory a copy may still use.
/// Once waited for, the transfer may move to another thread and start a
/// new round there. The wait runs in the pool's turn
/// ([`OwnedPool`](super::OwnedPool)).
///
/// **Threads:** `OwnedTransfer` is `Send`, `Sync` and `'static` (see
/// above for which thread waits).
///
/// ```
/// # use std::sync::Arc;
/// # use ascend::fabric::*;
/// # let store = StoreUrl::tcp(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?);
/// # sys::select_backend(sys::BackendRequest::Software)?; // doctests run on the software fabric
/// # let device = ascend::Device::new(0)?;
/// # let bm = Arc::new(BigMemory::init(&store, 1, &device, &BmConfig::default())?);
/// # let options = PoolOptions::new(Transport::SDMA).hbm(2 << 20).dram(2 << 20);
/// # let pool = Arc::new(OwnedPool::create(Arc::clone(&bm), 1, &options)?);
/// # let member = Arc::new(pool.join()?);
/// let kv = member.register_device(ascend::DeviceBuf::from_slice(&device, &[9u8; 4096])?)?;
/// let back = member.register_host(ascend::PinnedHostBuf::<u8>::zeroed(&device, 4096)?)?;
/// let mut offload = member.transfer();
/// // A worker thread queues the copies and waits for them; the buffers
/// // go with the transfer.
/// let worker = Arc::clone(&member);
/// let kv = std::thread::spawn(move || {
///     let (hbm, dram) = (worker.peer_hbm(0)?.slice(..4096)?, worker.peer_dram(0)?.slice(..4096)?);
///     offload.hold(kv, |kv, queue| {
///         queue.copy(kv.read(), hbm)?; // L2G, queued
///         queue.copy(kv.read(), dram) // L2GH, queued
///     })?;
///     offload.wait().map_err(FabricError::from) // on the thread that queued them
/// })
/// .join()
/// .expect("no panic")?;
/// let dram = member.peer_dram(0)?.slice(..4096)?;
/// let mut fetch = member.transfer();
/// fetch.hold(back, |mut back, queue| queue.copy(dram, back.write()))?; // GH2H
/// let back = fetch.wait()?.pop().expect("the one it held");
/// assert_eq!(back.as_slice(), &[9u8; 4096][..]);
/// # drop(kv);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct OwnedTransfer<R: OwnedRegistration> {
    member: Arc<OwnedMember>,
    held: Vec<R>,
    /// The thread whose copies may be pending since the last successful
    /// wait (`smem_bm_wait` finishes the calling thread's copies only).
    queued_on: Option<ThreadId>,
}

impl OwnedMember {
    /// An empty [`OwnedTransfer`] of this member: registrations of type `R`
    /// go in with their asynchronous copies, and come back when they are
    /// finished.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use ascend::fabric::*;
    /// # let store = StoreUrl::tcp(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?);
    /// # sys::select_backend(sys::BackendRequest::Software)?; // doctests run on the software fabric
    /// # let device = ascend::Device::new(0)?;
    /// # let bm = Arc::new(BigMemory::init(&store, 1, &device, &BmConfig::default())?);
    /// # let options = PoolOptions::new(Transport::SDMA).hbm(2 << 20).dram(2 << 20);
    /// # let pool = Arc::new(OwnedPool::create(Arc::clone(&bm), 1, &options)?);
    /// # let member = Arc::new(pool.join()?);
    /// let transfer = member.transfer::<OwnedRegisteredHost<u8>>();
    /// assert!(transfer.is_empty());
    /// assert!(transfer.wait()?.is_empty()); // nothing queued: nothing called
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn transfer<R: OwnedRegistration>(self: &Arc<Self>) -> OwnedTransfer<R> {
        OwnedTransfer {
            member: Arc::clone(self),
            held: Vec::new(),
            queued_on: None,
        }
    }
}

impl<R: OwnedRegistration> OwnedTransfer<R> {
    /// Takes `registration` (held until the copies are waited for) and runs
    /// `queue` with its copy sides ([`HeldSides`]: no access to its bytes,
    /// which a queued copy may be writing) and a [`TransferQueue`], which
    /// queues asynchronous copies whose local sides lie in the
    /// registrations this transfer holds.
    ///
    /// The registration is held from this call on, whatever it returns (a
    /// copy may have been queued before `queue` failed); it comes back from
    /// [`wait`](Self::wait).
    ///
    /// # Errors
    ///
    /// `queue`'s error: as [`OwnedMember::copy`] for each copy, and
    /// [`FabricError::InvalidArgument`] for a local side this transfer does
    /// not hold, or for a copy while copies queued on another thread are
    /// not waited for.
    ///
    /// # Examples
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use ascend::fabric::*;
    /// # let store = StoreUrl::tcp(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?);
    /// # sys::select_backend(sys::BackendRequest::Software)?; // doctests run on the software fabric
    /// # let device = ascend::Device::new(0)?;
    /// # let bm = Arc::new(BigMemory::init(&store, 1, &device, &BmConfig::default())?);
    /// # let options = PoolOptions::new(Transport::SDMA).hbm(2 << 20).dram(2 << 20);
    /// # let pool = Arc::new(OwnedPool::create(Arc::clone(&bm), 1, &options)?);
    /// # let member = Arc::new(pool.join()?);
    /// let a = member.register_host(ascend::PinnedHostBuf::from_slice(&device, &[1u8; 64])?)?;
    /// let b = member.register_host(ascend::PinnedHostBuf::<u8>::zeroed(&device, 64)?)?;
    /// let dram = member.peer_dram(0)?;
    /// let mut transfer = member.transfer();
    /// transfer.hold(a, |a, queue| queue.copy(a.read(), dram.slice(..64)?))?; // H2GH
    /// transfer.hold(b, |mut b, queue| queue.copy(dram.slice(..64)?, b.write()))?; // GH2H
    /// assert_eq!(transfer.wait()?.len(), 2); // both back
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn hold<F>(&mut self, registration: R, queue: F) -> Result<(), FabricError>
    where
        F: FnOnce(HeldSides<'_, R>, &TransferQueue<'_>) -> Result<(), FabricError>,
    {
        let sides = HeldSides {
            raw: sealed::Held::registered(&registration),
            _held: PhantomData,
        };
        self.held.push(registration);
        let queue_of = TransferQueue {
            member: &self.member,
            held: self.held.iter().map(sealed::Held::registered).collect(),
            // The transfer's own field: a copy marks it before it is queued,
            // so a panic in `queue` cannot lose the mark.
            queued_on: Cell::from_mut(&mut self.queued_on),
        };
        queue(sides, &queue_of)
    }

    /// The number of registrations held.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use ascend::fabric::*;
    /// # let store = StoreUrl::tcp(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?);
    /// # sys::select_backend(sys::BackendRequest::Software)?; // doctests run on the software fabric
    /// # let device = ascend::Device::new(0)?;
    /// # let bm = Arc::new(BigMemory::init(&store, 1, &device, &BmConfig::default())?);
    /// # let options = PoolOptions::new(Transport::SDMA).hbm(2 << 20).dram(2 << 20);
    /// # let pool = Arc::new(OwnedPool::create(Arc::clone(&bm), 1, &options)?);
    /// # let member = Arc::new(pool.join()?);
    /// let mut transfer = member.transfer();
    /// let staging = member.register_host(ascend::PinnedHostBuf::<u8>::zeroed(&device, 64)?)?;
    /// transfer.hold(staging, |_, _| Ok(()))?;
    /// assert_eq!(transfer.len(), 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn len(&self) -> usize {
        self.held.len()
    }

    /// Whether it holds no registration.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use ascend::fabric::*;
    /// # let store = StoreUrl::tcp(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?);
    /// # sys::select_backend(sys::BackendRequest::Software)?; // doctests run on the software fabric
    /// # let device = ascend::Device::new(0)?;
    /// # let bm = Arc::new(BigMemory::init(&store, 1, &device, &BmConfig::default())?);
    /// # let options = PoolOptions::new(Transport::SDMA).hbm(2 << 20).dram(2 << 20);
    /// # let pool = Arc::new(OwnedPool::create(Arc::clone(&bm), 1, &options)?);
    /// # let member = Arc::new(pool.join()?);
    /// assert!(member.transfer::<OwnedRegisteredHost<u8>>().is_empty());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.held.is_empty()
    }

    /// The member whose copies these are.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use ascend::fabric::*;
    /// # let store = StoreUrl::tcp(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?);
    /// # sys::select_backend(sys::BackendRequest::Software)?; // doctests run on the software fabric
    /// # let device = ascend::Device::new(0)?;
    /// # let bm = Arc::new(BigMemory::init(&store, 1, &device, &BmConfig::default())?);
    /// # let options = PoolOptions::new(Transport::SDMA).hbm(2 << 20).dram(2 << 20);
    /// # let pool = Arc::new(OwnedPool::create(Arc::clone(&bm), 1, &options)?);
    /// # let member = Arc::new(pool.join()?);
    /// assert!(Arc::ptr_eq(member.transfer::<OwnedRegisteredHost<u8>>().member(), &member));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn member(&self) -> &Arc<OwnedMember> {
        &self.member
    }

    /// Waits for the copies (`smem_bm_wait`, nothing when none was queued)
    /// and gives the registrations back, in the order they went in.
    ///
    /// # Errors
    ///
    /// [`TransferWaitError`]: the wait's error, and this transfer, still
    /// holding its registrations: wait again, or drop it (which waits once
    /// more and leaks them if that fails too). Its error is
    /// [`FabricError::InvalidArgument`], with nothing called, when the
    /// pending copies were queued on another thread: wait there.
    ///
    /// # Examples
    ///
    /// See [`OwnedTransfer`].
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use ascend::fabric::*;
    /// # let store = StoreUrl::tcp(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?);
    /// # sys::select_backend(sys::BackendRequest::Software)?; // doctests run on the software fabric
    /// # let device = ascend::Device::new(0)?;
    /// # let bm = Arc::new(BigMemory::init(&store, 1, &device, &BmConfig::default())?);
    /// # let options = PoolOptions::new(Transport::SDMA).hbm(2 << 20).dram(2 << 20);
    /// # let pool = Arc::new(OwnedPool::create(Arc::clone(&bm), 1, &options)?);
    /// # let member = Arc::new(pool.join()?);
    /// let staging = member.register_host(ascend::PinnedHostBuf::from_slice(&device, &[6u8; 64])?)?;
    /// let mut transfer = member.transfer();
    /// transfer.hold(staging, |s, queue| queue.copy(s.read(), member.peer_hbm(0)?.slice(..64)?))?;
    /// let staging = transfer.wait()?.pop().expect("held");
    /// assert_eq!(staging.into_inner()?[0], 6);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[doc(alias = "smem_bm_wait")]
    pub fn wait(mut self) -> Result<Vec<R>, TransferWaitError<R>> {
        match self.wait_now() {
            Ok(()) => Ok(std::mem::take(&mut self.held)),
            Err(error) => Err(TransferWaitError { transfer: self, error }),
        }
    }

    fn wait_now(&mut self) -> Result<(), FabricError> {
        let Some(queued_on) = self.queued_on else {
            return Ok(());
        };
        other_thread("OwnedTransfer::wait", queued_on)?;
        self.member.call(handle::wait)?;
        self.queued_on = None;
        Ok(())
    }
}

impl<R: OwnedRegistration> fmt::Debug for OwnedTransfer<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OwnedTransfer")
            .field("member", &self.member)
            .field("held", &self.held.len())
            .field("queued_on", &self.queued_on)
            .finish()
    }
}

impl<R: OwnedRegistration> Drop for OwnedTransfer<R> {
    fn drop(&mut self) {
        if let Err(error) = self.wait_now() {
            log::error!(
                "OwnedTransfer on pool {} (rank {}): waiting for its copies failed ({error}); they cannot be \
                 proven finished, so its {} registrations are leaked, not unregistered or freed (the rank stays \
                 joined)",
                self.member.pool().id(),
                self.member.rank(),
                self.held.len()
            );
            for registration in self.held.drain(..) {
                std::mem::forget(registration);
            }
        }
    }
}

/// A failed [`OwnedTransfer::wait`]: the error, and the transfer, still
/// holding its registrations.
///
/// ```
/// use ascend::fabric::sys::{self, soft};
/// # use std::sync::Arc;
/// # use ascend::fabric::*;
/// # let store = StoreUrl::tcp(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?);
/// # sys::select_backend(sys::BackendRequest::Software)?; // doctests run on the software fabric
/// # let device = ascend::Device::new(0)?;
/// # let bm = Arc::new(BigMemory::init(&store, 1, &device, &BmConfig::default())?);
/// # let options = PoolOptions::new(Transport::SDMA).hbm(2 << 20).dram(2 << 20);
/// # let pool = Arc::new(OwnedPool::create(Arc::clone(&bm), 1, &options)?);
/// # let member = Arc::new(pool.join()?);
/// let staging = member.register_host(ascend::PinnedHostBuf::from_slice(&device, &[2u8; 64])?)?;
/// let mut transfer = member.transfer();
/// transfer.hold(staging, |s, queue| queue.copy(s.read(), member.peer_dram(0)?.slice(..64)?))?;
/// soft::inject_fault("smem_bm_wait", 1, soft::Fault::Fail(sys::SMEM_TIMEOUT))?;
/// let Err(TransferWaitError { transfer, error }) = transfer.wait() else {
///     panic!("the injected fault fails the wait");
/// };
/// assert_eq!(error.code(), Some(sys::SMEM_TIMEOUT));
/// assert_eq!(transfer.wait()?.len(), 1); // the second wait works: the buffer back
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct TransferWaitError<R: OwnedRegistration> {
    /// The transfer, still holding its registrations.
    pub transfer: OwnedTransfer<R>,
    /// What `smem_bm_wait` returned.
    pub error: FabricError,
}

impl<R: OwnedRegistration> fmt::Debug for TransferWaitError<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TransferWaitError")
            .field("transfer", &self.transfer)
            .field("error", &self.error)
            .finish()
    }
}

impl<R: OwnedRegistration> fmt::Display for TransferWaitError<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "waiting for a transfer's copies failed; the transfer is given back: {}",
            self.error
        )
    }
}

impl<R: OwnedRegistration> std::error::Error for TransferWaitError<R> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.error)
    }
}

impl<R: OwnedRegistration> From<TransferWaitError<R>> for FabricError {
    fn from(failed: TransferWaitError<R>) -> Self {
        failed.error
    }
}

/// The copy sides of a registration an [`OwnedTransfer`] has just taken,
/// inside [`OwnedTransfer::hold`]: the same sides the registration hands
/// out ([`DeviceRead`]/[`DeviceWrite`] or [`HostRead`]/[`HostWrite`]), but
/// not its bytes, which a copy queued meanwhile may be writing.
///
/// ```
/// # use std::sync::Arc;
/// # use ascend::fabric::*;
/// # let store = StoreUrl::tcp(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?);
/// # sys::select_backend(sys::BackendRequest::Software)?; // doctests run on the software fabric
/// # let device = ascend::Device::new(0)?;
/// # let bm = Arc::new(BigMemory::init(&store, 1, &device, &BmConfig::default())?);
/// # let options = PoolOptions::new(Transport::SDMA).hbm(2 << 20).dram(2 << 20);
/// # let pool = Arc::new(OwnedPool::create(Arc::clone(&bm), 1, &options)?);
/// # let member = Arc::new(pool.join()?);
/// let staging = member.register_host(ascend::PinnedHostBuf::<u8>::zeroed(&device, 8192)?)?;
/// let dram = member.peer_dram(0)?;
/// let mut transfer = member.transfer();
/// transfer.hold(staging, |mut sides, queue| {
///     assert_eq!((sides.len(), sides.is_empty()), (8192, false));
///     queue.copy(dram.slice(..4096)?, sides.slice_mut(..4096)?)?; // GH2H
///     queue.copy(sides.slice(4096..)?, dram.slice(4096..8192)?) // H2GH
/// })?;
/// transfer.wait()?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct HeldSides<'h, R: OwnedRegistration> {
    raw: Raw,
    _held: PhantomData<&'h mut R>,
}

impl<R: OwnedRegistration> HeldSides<'_, R> {
    /// The registered bytes.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use ascend::fabric::*;
    /// # let store = StoreUrl::tcp(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?);
    /// # sys::select_backend(sys::BackendRequest::Software)?; // doctests run on the software fabric
    /// # let device = ascend::Device::new(0)?;
    /// # let bm = Arc::new(BigMemory::init(&store, 1, &device, &BmConfig::default())?);
    /// # let options = PoolOptions::new(Transport::SDMA).hbm(2 << 20).dram(2 << 20);
    /// # let pool = Arc::new(OwnedPool::create(Arc::clone(&bm), 1, &options)?);
    /// # let member = Arc::new(pool.join()?);
    /// let staging = member.register_host(ascend::PinnedHostBuf::<u8>::zeroed(&device, 64)?)?;
    /// member.transfer().hold(staging, |sides, _| Ok(assert_eq!(sides.len(), 64)))?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn len(&self) -> usize {
        self.raw.len
    }

    /// Always false: an empty buffer is not registered.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use ascend::fabric::*;
    /// # let store = StoreUrl::tcp(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?);
    /// # sys::select_backend(sys::BackendRequest::Software)?; // doctests run on the software fabric
    /// # let device = ascend::Device::new(0)?;
    /// # let bm = Arc::new(BigMemory::init(&store, 1, &device, &BmConfig::default())?);
    /// # let options = PoolOptions::new(Transport::SDMA).hbm(2 << 20).dram(2 << 20);
    /// # let pool = Arc::new(OwnedPool::create(Arc::clone(&bm), 1, &options)?);
    /// # let member = Arc::new(pool.join()?);
    /// let staging = member.register_host(ascend::PinnedHostBuf::<u8>::zeroed(&device, 64)?)?;
    /// member.transfer().hold(staging, |sides, _| Ok(assert!(!sides.is_empty())))?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.raw.len == 0
    }

    /// The whole buffer as the source of a copy.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use ascend::fabric::*;
    /// # let store = StoreUrl::tcp(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?);
    /// # sys::select_backend(sys::BackendRequest::Software)?; // doctests run on the software fabric
    /// # let device = ascend::Device::new(0)?;
    /// # let bm = Arc::new(BigMemory::init(&store, 1, &device, &BmConfig::default())?);
    /// # let options = PoolOptions::new(Transport::SDMA).hbm(2 << 20).dram(2 << 20);
    /// # let pool = Arc::new(OwnedPool::create(Arc::clone(&bm), 1, &options)?);
    /// # let member = Arc::new(pool.join()?);
    /// let kv = member.register_device(ascend::DeviceBuf::from_slice(&device, &[1u8; 64])?)?;
    /// let mut transfer = member.transfer();
    /// transfer.hold(kv, |kv, queue| queue.copy(kv.read(), member.peer_hbm(0)?.slice(..64)?))?; // L2G
    /// transfer.wait()?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn read(&self) -> R::Read<'_> {
        R::read_side(self.raw)
    }

    /// The whole buffer as the destination of a copy.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use ascend::fabric::*;
    /// # let store = StoreUrl::tcp(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?);
    /// # sys::select_backend(sys::BackendRequest::Software)?; // doctests run on the software fabric
    /// # let device = ascend::Device::new(0)?;
    /// # let bm = Arc::new(BigMemory::init(&store, 1, &device, &BmConfig::default())?);
    /// # let options = PoolOptions::new(Transport::SDMA).hbm(2 << 20).dram(2 << 20);
    /// # let pool = Arc::new(OwnedPool::create(Arc::clone(&bm), 1, &options)?);
    /// # let member = Arc::new(pool.join()?);
    /// let kv = member.register_device(ascend::DeviceBuf::<u8>::zeroed(&device, 64)?)?;
    /// let mut transfer = member.transfer();
    /// transfer.hold(kv, |mut kv, queue| queue.copy(member.peer_hbm(0)?.slice(..64)?, kv.write()))?; // G2L
    /// transfer.wait()?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn write(&mut self) -> R::Write<'_> {
        R::write_side(self.raw)
    }

    /// Bytes `range` as the source of a copy.
    ///
    /// # Errors
    ///
    /// [`FabricError::InvalidArgument`] for a range past the end.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use ascend::fabric::*;
    /// # let store = StoreUrl::tcp(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?);
    /// # sys::select_backend(sys::BackendRequest::Software)?; // doctests run on the software fabric
    /// # let device = ascend::Device::new(0)?;
    /// # let bm = Arc::new(BigMemory::init(&store, 1, &device, &BmConfig::default())?);
    /// # let options = PoolOptions::new(Transport::SDMA).hbm(2 << 20).dram(2 << 20);
    /// # let pool = Arc::new(OwnedPool::create(Arc::clone(&bm), 1, &options)?);
    /// # let member = Arc::new(pool.join()?);
    /// let staging = member.register_host(ascend::PinnedHostBuf::<u8>::zeroed(&device, 64)?)?;
    /// member.transfer().hold(staging, |sides, _| {
    ///     assert_eq!(sides.slice(..8)?.len(), 8);
    ///     assert!(sides.slice(..65).is_err());
    ///     Ok(())
    /// })?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn slice(&self, range: impl RangeBounds<usize>) -> Result<R::Read<'_>, FabricError> {
        Ok(R::read_side(self.raw.slice("HeldSides::slice", range)?))
    }

    /// Bytes `range` as the destination of a copy.
    ///
    /// # Errors
    ///
    /// [`FabricError::InvalidArgument`] for a range past the end.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use ascend::fabric::*;
    /// # let store = StoreUrl::tcp(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?);
    /// # sys::select_backend(sys::BackendRequest::Software)?; // doctests run on the software fabric
    /// # let device = ascend::Device::new(0)?;
    /// # let bm = Arc::new(BigMemory::init(&store, 1, &device, &BmConfig::default())?);
    /// # let options = PoolOptions::new(Transport::SDMA).hbm(2 << 20).dram(2 << 20);
    /// # let pool = Arc::new(OwnedPool::create(Arc::clone(&bm), 1, &options)?);
    /// # let member = Arc::new(pool.join()?);
    /// let staging = member.register_host(ascend::PinnedHostBuf::<u8>::zeroed(&device, 64)?)?;
    /// member.transfer().hold(staging, |mut sides, _| Ok(assert_eq!(sides.slice_mut(8..)?.len(), 56)))?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn slice_mut(&mut self, range: impl RangeBounds<usize>) -> Result<R::Write<'_>, FabricError> {
        Ok(R::write_side(self.raw.slice("HeldSides::slice_mut", range)?))
    }
}

impl<R: OwnedRegistration> fmt::Debug for HeldSides<'_, R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HeldSides")
            .field("address", &format_args!("{:#x}", self.raw.address))
            .field("len", &self.raw.len)
            .finish()
    }
}

/// Queues the asynchronous copies of an [`OwnedTransfer`], inside
/// [`OwnedTransfer::hold`]: each local side must lie in a registration the
/// transfer holds (global ranges are free), so that it stays owned until
/// the copies are waited for.
///
/// ```
/// # use std::sync::Arc;
/// # use ascend::fabric::*;
/// # let store = StoreUrl::tcp(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?);
/// # sys::select_backend(sys::BackendRequest::Software)?; // doctests run on the software fabric
/// # let device = ascend::Device::new(0)?;
/// # let bm = Arc::new(BigMemory::init(&store, 1, &device, &BmConfig::default())?);
/// # let options = PoolOptions::new(Transport::SDMA).hbm(2 << 20).dram(2 << 20);
/// # let pool = Arc::new(OwnedPool::create(Arc::clone(&bm), 1, &options)?);
/// # let member = Arc::new(pool.join()?);
/// let staging = member.register_host(ascend::PinnedHostBuf::<u8>::zeroed(&device, 128)?)?;
/// let other = member.register_host(ascend::PinnedHostBuf::<u8>::zeroed(&device, 128)?)?;
/// let dram = member.peer_dram(0)?.slice(..128)?;
/// let mut transfer = member.transfer();
/// let refused = transfer.hold(staging, |_, queue| queue.copy(other.read(), dram));
/// assert!(matches!(refused, Err(FabricError::InvalidArgument { .. }))); // `other` is not held
/// # drop(transfer);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct TransferQueue<'t> {
    member: &'t OwnedMember,
    /// The registered bytes of every registration the transfer holds.
    held: Vec<Raw>,
    /// The transfer's thread of pending copies.
    queued_on: &'t Cell<Option<ThreadId>>,
}

/// Refuses `method` on this thread when copies are pending on `queued_on`.
fn other_thread(method: &'static str, queued_on: ThreadId) -> Result<(), FabricError> {
    let here = std::thread::current().id();
    if here == queued_on {
        return Ok(());
    }
    Err(FabricError::InvalidArgument {
        method,
        reason: format!(
            "copies queued on thread {queued_on:?} are not waited for, and smem_bm_wait on thread {here:?} \
             would not wait for them (MemFabric waits for the calling thread's copies only): wait on {queued_on:?}"
        ),
    })
}

impl TransferQueue<'_> {
    /// Marks the transfer's copies as pending on this thread, refusing when
    /// another thread's are.
    fn mark_queued(&self, method: &'static str) -> Result<(), FabricError> {
        if let Some(queued_on) = self.queued_on.get() {
            other_thread(method, queued_on)?;
        }
        self.queued_on.set(Some(std::thread::current().id()));
        Ok(())
    }

    /// Refuses a local side outside the held registrations.
    fn check_held(&self, method: &'static str, side: &impl Side, raw: Raw) -> Result<(), FabricError> {
        if !super::copy::is_local(side) || self.held.iter().any(|held| raw.within(held)) {
            return Ok(());
        }
        Err(FabricError::InvalidArgument {
            method,
            reason: format!(
                "a local side ({} bytes at {:#x}) of a registration this transfer does not hold",
                raw.len, raw.address
            ),
        })
    }

    /// Queues a copy of `src` to `dst` (`smem_bm_copy` with
    /// `ASYNC_COPY_FLAG`); the copy type from the sides' types
    /// ([`CopyTo`]). Zero bytes: nothing is called.
    ///
    /// # Errors
    ///
    /// As [`OwnedMember::copy`]; [`FabricError::InvalidArgument`] for a
    /// local side of a registration the transfer does not hold.
    ///
    /// # Examples
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use ascend::fabric::*;
    /// # let store = StoreUrl::tcp(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?);
    /// # sys::select_backend(sys::BackendRequest::Software)?; // doctests run on the software fabric
    /// # let device = ascend::Device::new(0)?;
    /// # let bm = Arc::new(BigMemory::init(&store, 1, &device, &BmConfig::default())?);
    /// # let options = PoolOptions::new(Transport::SDMA).hbm(2 << 20).dram(2 << 20);
    /// # let pool = Arc::new(OwnedPool::create(Arc::clone(&bm), 1, &options)?);
    /// # let member = Arc::new(pool.join()?);
    /// let kv = member.register_device(ascend::DeviceBuf::from_slice(&device, &[3u8; 256])?)?;
    /// let hbm = member.peer_hbm(0)?.slice(..256)?;
    /// let mut transfer = member.transfer();
    /// transfer.hold(kv, |kv, queue| queue.copy(kv.read(), hbm))?; // L2G, queued
    /// transfer.wait()?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[doc(alias = "smem_bm_copy")]
    pub fn copy<S: CopyTo<D>, D: Side>(&self, src: S, dst: D) -> Result<(), FabricError> {
        const METHOD: &str = "TransferQueue::copy";
        let pair = checked_pair(self.member.pool_key(), METHOD, &src, &dst)?;
        self.check_held(METHOD, &src, pair.0)?;
        self.check_held(METHOD, &dst, pair.1)?;
        self.mark_queued(METHOD)?;
        self.member.call(|raw| copy_raw(raw, pair, S::COPY_TYPE, Submit::ASYNC))
    }

    /// Queues a batch of copies of one direction (`smem_bm_copy_batch` with
    /// `ASYNC_COPY_FLAG`). An empty batch calls nothing.
    ///
    /// # Errors
    ///
    /// As [`OwnedMember::copy_batch`]; [`FabricError::InvalidArgument`] for
    /// a local side of a registration the transfer does not hold.
    ///
    /// # Examples
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use ascend::fabric::*;
    /// # let store = StoreUrl::tcp(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?);
    /// # sys::select_backend(sys::BackendRequest::Software)?; // doctests run on the software fabric
    /// # let device = ascend::Device::new(0)?;
    /// # let bm = Arc::new(BigMemory::init(&store, 1, &device, &BmConfig::default())?);
    /// # let options = PoolOptions::new(Transport::SDMA).hbm(2 << 20).dram(2 << 20);
    /// # let pool = Arc::new(OwnedPool::create(Arc::clone(&bm), 1, &options)?);
    /// # let member = Arc::new(pool.join()?);
    /// let kv = member.register_device(ascend::DeviceBuf::from_slice(&device, &[3u8; 8192])?)?;
    /// let dram = member.peer_dram(0)?;
    /// let mut transfer = member.transfer();
    /// transfer.hold(kv, |kv, queue| {
    ///     let (head, tail) = kv.read().split_at(4096)?;
    ///     queue.copy_batch(&[(head, dram.slice(..4096)?), (tail, dram.slice(65536..69632)?)]) // L2GH
    /// })?;
    /// transfer.wait()?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[doc(alias = "smem_bm_copy_batch")]
    pub fn copy_batch<S: CopyTo<D>, D: Side>(&self, pairs: &[(S, D)]) -> Result<(), FabricError> {
        const METHOD: &str = "TransferQueue::copy_batch";
        let key = self.member.pool_key();
        let mut checked = Vec::with_capacity(pairs.len());
        for (src, dst) in pairs {
            let pair = checked_pair(key, METHOD, src, dst)?;
            self.check_held(METHOD, src, pair.0)?;
            self.check_held(METHOD, dst, pair.1)?;
            checked.push(pair);
        }
        self.mark_queued(METHOD)?;
        self.member
            .call(|raw| copy_batch_raw(raw, METHOD, checked.into_iter().map(Ok), S::COPY_TYPE, Submit::ASYNC))
    }
}

impl fmt::Debug for TransferQueue<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TransferQueue")
            .field("member", self.member)
            .field("held", &self.held.len())
            .finish()
    }
}

const _: () = {
    const fn owned<T: Send + Sync + 'static>() {}
    owned::<OwnedTransfer<OwnedRegisteredHost<u8>>>();
    owned::<OwnedTransfer<OwnedRegisteredDevice<crate::DeviceBuf<u8>>>>();
    owned::<OwnedTransfer<OwnedRegisteredDevice<crate::pool::PoolBlock>>>();
};

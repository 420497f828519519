//! [`OwnedMember`]: this rank joined to an [`OwnedPool`], owning a share of
//! it (`smem_bm_join` … `smem_bm_leave`), with its global ranges and
//! synchronous copies.

use super::copy::{Submit, checked_pair, copy_batch_raw, copy_raw};
use super::handle::{self, Handle};
use super::{CopyTo, Dram, FabricError, GlobalRange, Hbm, MemKind, OwnedPool, Side};
use std::fmt;
use std::sync::Arc;

/// This rank joined to an [`OwnedPool`] ([`OwnedPool::join`]): the owned
/// form of [`Member`](super::Member). It holds the pool in an [`Arc`] and
/// leaves it when dropped (`smem_bm_leave`; a failure is logged,
/// [`OwnedMember::leave`] returns it).
///
/// Wrap it in an `Arc` to register buffers
/// ([`OwnedMember::register_device`], [`OwnedMember::register_host`]) and
/// queue asynchronous copies ([`OwnedMember::transfer`]): each of them
/// holds that `Arc`, so this rank stays joined while any is alive.
///
/// **Threads:** `OwnedMember` is `Send`, `Sync` and `'static`; its calls
/// take turns on the pool's lock ([`OwnedPool`] says why).
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
/// let (hbm, dram) = (member.peer_hbm(0)?, member.peer_dram(0)?);
/// member.copy(hbm.slice(..4096)?, dram.slice(..4096)?)?; // G2G
/// assert_eq!((member.rank(), member.world_size(), member.pool().id()), (0, 1, 1));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct OwnedMember {
    pool: Arc<OwnedPool>,
    left: bool,
}

impl OwnedMember {
    pub(super) fn new(pool: Arc<OwnedPool>) -> Self {
        OwnedMember { pool, left: false }
    }

    /// The pool this member keeps alive.
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
    /// assert!(Arc::ptr_eq(member.pool(), &pool));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn pool(&self) -> &Arc<OwnedPool> {
        &self.pool
    }

    /// This rank.
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
    /// assert_eq!(member.rank(), bm.rank());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn rank(&self) -> u32 {
        self.pool.big_memory().rank()
    }

    /// The number of ranks.
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
    /// assert_eq!(member.world_size(), 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn world_size(&self) -> u32 {
        self.pool.big_memory().world_size()
    }

    /// Runs `call` with the handle, in the pool's turn.
    pub(super) fn call<T>(&self, call: impl FnOnce(Handle) -> Result<T, FabricError>) -> Result<T, FabricError> {
        self.pool.call(call)
    }

    /// The handle and the pool's id, as the copies check their sides.
    pub(super) fn pool_key(&self) -> (Handle, u32) {
        (Handle(self.pool.as_raw()), self.pool.id())
    }

    /// The HBM that `rank` contributes, as a global range, as
    /// [`Member::peer_hbm`](super::Member::peer_hbm) (it borrows this
    /// member).
    ///
    /// # Errors
    ///
    /// [`FabricError::InvalidArgument`] for a rank not below the world
    /// size or a pool without HBM; [`FabricError::Device`]; the library's
    /// error.
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
    /// assert_eq!(member.peer_hbm(0)?.len(), 2 << 20);
    /// assert!(member.peer_hbm(1).is_err()); // no rank 1 in a world of one
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[doc(alias = "smem_bm_ptr_by_mem_type")]
    pub fn peer_hbm(&self, rank: u32) -> Result<GlobalRange<'_, Hbm>, FabricError> {
        self.range(rank, self.pool.options().hbm_bytes(), "OwnedMember::peer_hbm")
    }

    /// The DRAM that `rank` contributes, as a global range, as
    /// [`Member::peer_dram`](super::Member::peer_dram) (it borrows this
    /// member).
    ///
    /// # Errors
    ///
    /// [`FabricError::InvalidArgument`] for a rank not below the world
    /// size or a pool without DRAM; [`FabricError::Device`]; the library's
    /// error.
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
    /// let dram = member.peer_dram(0)?;
    /// assert_ne!(dram.gva(), member.peer_hbm(0)?.gva()); // two address ranges
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[doc(alias = "smem_bm_ptr_by_mem_type")]
    pub fn peer_dram(&self, rank: u32) -> Result<GlobalRange<'_, Dram>, FabricError> {
        self.range(rank, self.pool.options().dram_bytes(), "OwnedMember::peer_dram")
    }

    fn range<K: MemKind>(
        &self,
        rank: u32,
        bytes: u64,
        method: &'static str,
    ) -> Result<GlobalRange<'_, K>, FabricError> {
        let pool = (self.pool.id(), self.world_size());
        let (gva, len) = self.call(|handle| handle::range::<K>(handle, pool, rank, bytes, method))?;
        Ok(GlobalRange::new(self.pool_key().0, gva, len, rank))
    }

    /// Copies `src` to `dst` and returns when the bytes are there
    /// (`smem_bm_copy`), as [`Member::copy`](super::Member::copy): the copy
    /// type from the sides' types ([`CopyTo`]), the sides those of this
    /// member's registrations ([`OwnedRegisteredDevice`](super::OwnedRegisteredDevice),
    /// [`OwnedRegisteredHost`](super::OwnedRegisteredHost)) and global
    /// ranges.
    ///
    /// # Errors
    ///
    /// [`FabricError::InvalidArgument`] when the lengths differ or a side
    /// belongs to another pool (nothing is called);
    /// [`FabricError::Device`]; the library's error.
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
    /// let kv = member.register_device(ascend::DeviceBuf::from_slice(&device, &[7u8; 4096])?)?;
    /// let dram = member.peer_dram(0)?.slice(..4096)?;
    /// member.copy(kv.read(), dram)?; // L2GH
    /// assert!(member.copy(kv.read(), dram.slice(..10)?).is_err()); // lengths differ
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[doc(alias = "smem_bm_copy")]
    pub fn copy<S: CopyTo<D>, D: Side>(&self, src: S, dst: D) -> Result<(), FabricError> {
        let pair = checked_pair(self.pool_key(), "OwnedMember::copy", &src, &dst)?;
        self.call(|handle| copy_raw(handle, pair, S::COPY_TYPE, Submit::NOW))
    }

    /// Copies each `(source, destination)` pair in one call
    /// (`smem_bm_copy_batch`) and returns when all bytes are there, as
    /// [`Member::copy_batch`](super::Member::copy_batch).
    ///
    /// # Errors
    ///
    /// [`FabricError::InvalidArgument`] for a pair whose lengths differ or a
    /// side of another pool (nothing is called); [`FabricError::Device`];
    /// the library's error (the batch may have partly happened).
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
    /// let staging = member.register_host(ascend::PinnedHostBuf::from_slice(&device, &[3u8; 8192])?)?;
    /// let dram = member.peer_dram(0)?;
    /// member.copy_batch(&[
    ///     (staging.slice(..4096)?, dram.slice(..4096)?),
    ///     (staging.slice(4096..)?, dram.slice(65536..69632)?),
    /// ])?; // H2GH, one call
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[doc(alias = "smem_bm_copy_batch")]
    pub fn copy_batch<S: CopyTo<D>, D: Side>(&self, pairs: &[(S, D)]) -> Result<(), FabricError> {
        const METHOD: &str = "OwnedMember::copy_batch";
        let key = self.pool_key();
        let checked: Vec<_> = pairs
            .iter()
            .map(|(src, dst)| checked_pair(key, METHOD, src, dst))
            .collect::<Result<_, _>>()?;
        self.call(|handle| copy_batch_raw(handle, METHOD, checked.into_iter().map(Ok), S::COPY_TYPE, Submit::NOW))
    }

    /// Leaves the pool now (`smem_bm_leave`), returning the library's
    /// error, which dropping the member only logs. To get the member out of
    /// its `Arc`, every registration and transfer of it must be gone
    /// ([`Arc::into_inner`]).
    ///
    /// # Errors
    ///
    /// [`FabricError::Device`] or the library's error; the member is gone
    /// either way.
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
    /// let member = Arc::into_inner(member).expect("no registration holds it");
    /// member.leave()?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[doc(alias = "smem_bm_leave")]
    pub fn leave(mut self) -> Result<(), FabricError> {
        self.left = true;
        self.leave_now()
    }

    fn leave_now(&self) -> Result<(), FabricError> {
        let (rank, id) = (self.rank(), self.pool.id());
        let mut called = false;
        let left = self.call(|handle| {
            called = true;
            // SAFETY: this rank joined the handle (this member); every
            // registration and transfer holds the member, so none is alive.
            unsafe { handle::leave(handle, rank, id) }
        });
        // Only a leave that was called ends the join (the device may not
        // have been made current, and then nothing was called).
        if called {
            self.pool.left();
        }
        left
    }
}

impl fmt::Debug for OwnedMember {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OwnedMember")
            .field("pool", &self.pool.id())
            .field("rank", &self.rank())
            .field("world_size", &self.world_size())
            .finish()
    }
}

impl Drop for OwnedMember {
    fn drop(&mut self) {
        if !self.left
            && let Err(error) = self.leave_now()
        {
            log::warn!("OwnedMember: leaving pool {}: {error}", self.pool.id());
        }
    }
}

const _: () = {
    const fn owned<T: Send + Sync + 'static>() {}
    owned::<OwnedMember>();
};

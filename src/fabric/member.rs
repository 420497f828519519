//! [`Member`]: this rank joined to a [`GlobalPool`] (`smem_bm_join` …
//! `smem_bm_leave`), and the [`GlobalRange`]s of every rank's memory.

use super::handle::{self, Handle};
use super::{FabricError, GlobalPool, sys};
use std::fmt;
use std::marker::PhantomData;
use std::ops::{Bound, RangeBounds};

/// This rank joined to a [`GlobalPool`]: it leaves the pool when dropped
/// (`smem_bm_leave`; a failure is logged, [`Member::leave`] returns it).
///
/// Through it: each rank's share of the pool ([`Member::peer_hbm`],
/// [`Member::peer_dram`]), the registration of local buffers
/// ([`Member::register_device`], [`Member::register_host`]) and the copies
/// ([`Member::copy`], [`Member::copy_batch`], [`Member::scope`]). All of
/// them borrow the member, so none outlives the membership.
///
/// **Threads:** neither `Send` nor `Sync`, as its pool.
///
/// ```
/// use ascend::fabric::{BigMemory, BmConfig, PoolOptions, StoreUrl, Transport};
/// # let store = StoreUrl::tcp(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?);
/// # ascend::fabric::sys::select_backend(ascend::fabric::sys::BackendRequest::Software)?; // doctests run on the software fabric
/// let bm = BigMemory::init(&store, 1, &ascend::Device::new(0)?, &BmConfig::default())?;
/// let pool = bm.create_pool(1, &PoolOptions::new(Transport::SDMA).hbm(2 << 20).dram(4 << 20))?;
/// let member = pool.join()?;
/// assert_eq!((member.rank(), member.world_size()), (0, 1));
/// assert_eq!(member.peer_hbm(0)?.len(), 2 << 20);
/// assert_eq!(member.peer_dram(0)?.len(), 4 << 20);
/// member.leave()?; // or drop it
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Member<'p> {
    pool: &'p GlobalPool<'p>,
    left: bool,
}

impl<'p> Member<'p> {
    pub(super) fn new(pool: &'p GlobalPool<'p>) -> Self {
        Member { pool, left: false }
    }

    /// The pool.
    ///
    /// ```
    /// # use ascend::fabric::{BigMemory, BmConfig, PoolOptions, StoreUrl, Transport};
    /// # let store = StoreUrl::tcp(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?);
    /// # ascend::fabric::sys::select_backend(ascend::fabric::sys::BackendRequest::Software)?; // doctests run on the software fabric
    /// # let bm = BigMemory::init(&store, 1, &ascend::Device::new(0)?, &BmConfig::default())?;
    /// let pool = bm.create_pool(9, &PoolOptions::new(Transport::SDMA).hbm(2 << 20))?;
    /// assert_eq!(pool.join()?.pool().id(), 9);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn pool(&self) -> &'p GlobalPool<'p> {
        self.pool
    }

    /// This rank.
    ///
    /// # Examples
    ///
    /// ```
    /// # use ascend::fabric::*;
    /// # let store = StoreUrl::tcp(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?);
    /// # sys::select_backend(sys::BackendRequest::Software)?; // doctests run on the software fabric
    /// # let device = ascend::Device::new(0)?;
    /// # let bm = BigMemory::init(&store, 1, &device, &BmConfig::default())?;
    /// # let pool = bm.create_pool(1, &PoolOptions::new(Transport::SDMA).hbm(2 << 20).dram(2 << 20))?;
    /// # let member = pool.join()?;
    /// assert_eq!(member.rank(), bm.rank());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn rank(&self) -> u32 {
        self.pool.big_memory().rank()
    }

    /// The number of ranks.
    ///
    /// # Examples
    ///
    /// ```
    /// # use ascend::fabric::*;
    /// # let store = StoreUrl::tcp(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?);
    /// # sys::select_backend(sys::BackendRequest::Software)?; // doctests run on the software fabric
    /// # let device = ascend::Device::new(0)?;
    /// # let bm = BigMemory::init(&store, 1, &device, &BmConfig::default())?;
    /// # let pool = bm.create_pool(1, &PoolOptions::new(Transport::SDMA).hbm(2 << 20).dram(2 << 20))?;
    /// # let member = pool.join()?;
    /// assert_eq!(member.world_size(), 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn world_size(&self) -> u32 {
        self.pool.big_memory().world_size()
    }

    pub(super) fn handle(&self) -> Handle {
        self.pool.handle()
    }

    /// The handle and the pool's id, as the copies check their sides.
    pub(super) fn pool_key(&self) -> (Handle, u32) {
        (self.handle(), self.pool.id())
    }

    /// The HBM that `rank` contributes, as a global (GVA) range
    /// (`smem_bm_ptr_by_mem_type(DEVICE)`); its length is this rank's HBM
    /// contribution, every rank contributing the same.
    ///
    /// # Errors
    ///
    /// [`FabricError::InvalidArgument`] for a rank not below the world
    /// size or a pool without HBM; the library's error when it gives no
    /// address.
    ///
    /// # Examples
    ///
    /// ```
    /// # use ascend::fabric::*;
    /// # let store = StoreUrl::tcp(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?);
    /// # sys::select_backend(sys::BackendRequest::Software)?; // doctests run on the software fabric
    /// # let device = ascend::Device::new(0)?;
    /// # let bm = BigMemory::init(&store, 1, &device, &BmConfig::default())?;
    /// # let pool = bm.create_pool(1, &PoolOptions::new(Transport::SDMA).hbm(2 << 20).dram(2 << 20))?;
    /// # let member = pool.join()?;
    /// let hbm = member.peer_hbm(0)?;
    /// assert_eq!((hbm.rank(), hbm.len()), (0, 2 << 20));
    /// assert!(member.peer_hbm(1).is_err()); // no rank 1 in a world of one
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[doc(alias = "smem_bm_ptr_by_mem_type")]
    pub fn peer_hbm(&self, rank: u32) -> Result<GlobalRange<'_, Hbm>, FabricError> {
        self.range(rank, self.pool.options().hbm_bytes(), "Member::peer_hbm")
    }

    /// The DRAM that `rank` contributes, as a global (GVA) range
    /// (`smem_bm_ptr_by_mem_type(HOST)`); its length is this rank's DRAM
    /// contribution, every rank contributing the same.
    ///
    /// # Errors
    ///
    /// [`FabricError::InvalidArgument`] for a rank not below the world
    /// size or a pool without DRAM; the library's error when it gives no
    /// address.
    ///
    /// # Examples
    ///
    /// ```
    /// # use ascend::fabric::*;
    /// # let store = StoreUrl::tcp(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?);
    /// # sys::select_backend(sys::BackendRequest::Software)?; // doctests run on the software fabric
    /// # let device = ascend::Device::new(0)?;
    /// # let bm = BigMemory::init(&store, 1, &device, &BmConfig::default())?;
    /// # let pool = bm.create_pool(1, &PoolOptions::new(Transport::SDMA).hbm(2 << 20).dram(2 << 20))?;
    /// # let member = pool.join()?;
    /// let dram = member.peer_dram(0)?;
    /// assert_eq!(dram.len(), 2 << 20);
    /// assert_ne!(dram.gva(), member.peer_hbm(0)?.gva()); // two address ranges
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[doc(alias = "smem_bm_ptr_by_mem_type")]
    pub fn peer_dram(&self, rank: u32) -> Result<GlobalRange<'_, Dram>, FabricError> {
        self.range(rank, self.pool.options().dram_bytes(), "Member::peer_dram")
    }

    fn range<K: MemKind>(
        &self,
        rank: u32,
        bytes: u64,
        method: &'static str,
    ) -> Result<GlobalRange<'_, K>, FabricError> {
        let pool = (self.pool.id(), self.world_size());
        let (gva, len) = handle::range::<K>(self.handle(), pool, rank, bytes, method)?;
        Ok(GlobalRange::new(self.handle(), gva, len, rank))
    }

    /// Leaves the pool now (`smem_bm_leave`), returning the library's
    /// error, which dropping the member only logs.
    ///
    /// # Errors
    ///
    /// The library's error; the member is gone either way.
    ///
    /// # Examples
    ///
    /// ```
    /// # use ascend::fabric::*;
    /// # let store = StoreUrl::tcp(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?);
    /// # sys::select_backend(sys::BackendRequest::Software)?; // doctests run on the software fabric
    /// # let device = ascend::Device::new(0)?;
    /// # let bm = BigMemory::init(&store, 1, &device, &BmConfig::default())?;
    /// # let pool = bm.create_pool(1, &PoolOptions::new(Transport::SDMA).hbm(2 << 20).dram(2 << 20))?;
    /// # let member = pool.join()?;
    /// member.leave()?; // the error, if any, instead of a log line
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[doc(alias = "smem_bm_leave")]
    pub fn leave(mut self) -> Result<(), FabricError> {
        self.left = true;
        self.leave_now()
    }

    fn leave_now(&self) -> Result<(), FabricError> {
        // SAFETY: this rank joined the handle (this member); every
        // registration and copy borrows the member, so none is alive.
        let left = unsafe { handle::leave(self.handle(), self.rank(), self.pool.id()) };
        self.pool.left();
        left
    }
}

impl fmt::Debug for Member<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Member")
            .field("pool", &self.pool.id())
            .field("rank", &self.rank())
            .field("world_size", &self.world_size())
            .finish()
    }
}

impl Drop for Member<'_> {
    fn drop(&mut self) {
        if !self.left
            && let Err(error) = self.leave_now()
        {
            log::warn!("Member: leaving pool {}: {error}", self.pool.id());
        }
    }
}

mod sealed {
    pub trait Sealed {}
}

/// The kind of memory of a global range: [`Hbm`] or [`Dram`]. Sealed.
///
/// ```
/// use ascend::fabric::{Dram, GlobalRange, MemKind};
/// fn describe<K: MemKind>(range: &GlobalRange<'_, K>) -> String {
///     format!("{} bytes of rank {}'s {}", range.len(), range.rank(), K::NAME)
/// }
/// ```
pub trait MemKind: sealed::Sealed + Copy + fmt::Debug {
    /// The `smem_bm_mem_type` of its global range.
    ///
    /// ```
    /// use ascend::fabric::{Hbm, MemKind, sys};
    /// assert_eq!(Hbm::MEM_TYPE, sys::SMEM_MEM_TYPE_DEVICE);
    /// ```
    const MEM_TYPE: sys::smem_bm_mem_type;
    /// "HBM" or "DRAM".
    ///
    /// ```
    /// use ascend::fabric::{Dram, MemKind};
    /// assert_eq!(Dram::NAME, "DRAM");
    /// ```
    const NAME: &'static str;
}

/// Device memory (HBM) in the global pool: [`GlobalRange<Hbm>`].
///
/// ```
/// use ascend::fabric::{Hbm, MemKind};
/// assert_eq!(Hbm::NAME, "HBM");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hbm;

/// Host memory (DRAM) in the global pool: [`GlobalRange<Dram>`].
///
/// ```
/// use ascend::fabric::{Dram, MemKind};
/// assert_eq!(Dram::NAME, "DRAM");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dram;

impl sealed::Sealed for Hbm {}
impl sealed::Sealed for Dram {}

impl MemKind for Hbm {
    const MEM_TYPE: sys::smem_bm_mem_type = sys::SMEM_MEM_TYPE_DEVICE;
    const NAME: &'static str = "HBM";
}

impl MemKind for Dram {
    const MEM_TYPE: sys::smem_bm_mem_type = sys::SMEM_MEM_TYPE_HOST;
    const NAME: &'static str = "DRAM";
}

/// Bytes of one rank's HBM or DRAM in the global pool, by global address
/// (GVA): a side of a copy ([`Member::copy`]). It borrows the [`Member`],
/// so it is not used after this rank left. A GVA is a number, never
/// dereferenced by this process; other ranks may write the same bytes at
/// any time (the pool is shared memory across processes).
///
/// ```
/// # use ascend::fabric::{BigMemory, BmConfig, PoolOptions, StoreUrl, Transport};
/// # let store = StoreUrl::tcp(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?);
/// # ascend::fabric::sys::select_backend(ascend::fabric::sys::BackendRequest::Software)?; // doctests run on the software fabric
/// # let bm = BigMemory::init(&store, 1, &ascend::Device::new(0)?, &BmConfig::default())?;
/// # let pool = bm.create_pool(1, &PoolOptions::new(Transport::SDMA).dram(2 << 20))?;
/// # let member = pool.join()?;
/// let whole = member.peer_dram(0)?;
/// let block = whole.slice(4096..8192)?;
/// assert_eq!((block.len(), block.rank()), (4096, 0));
/// assert_eq!(block.gva(), whole.gva() + 4096);
/// assert!(whole.slice(..(4 << 20)).is_err()); // past the end
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy)]
pub struct GlobalRange<'m, K: MemKind> {
    pub(super) handle: usize,
    gva: u64,
    len: usize,
    rank: u32,
    _member: PhantomData<(&'m Member<'m>, K)>,
}

impl<'m, K: MemKind> GlobalRange<'m, K> {
    /// `len` bytes of `rank`'s memory at `gva` in the pool of `handle`.
    pub(super) fn new(handle: Handle, gva: u64, len: usize, rank: u32) -> Self {
        GlobalRange {
            handle: handle.id(),
            gva,
            len,
            rank,
            _member: PhantomData,
        }
    }

    /// Bytes.
    ///
    /// # Examples
    ///
    /// ```
    /// # use ascend::fabric::*;
    /// # let store = StoreUrl::tcp(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?);
    /// # sys::select_backend(sys::BackendRequest::Software)?; // doctests run on the software fabric
    /// # let device = ascend::Device::new(0)?;
    /// # let bm = BigMemory::init(&store, 1, &device, &BmConfig::default())?;
    /// # let pool = bm.create_pool(1, &PoolOptions::new(Transport::SDMA).hbm(2 << 20).dram(2 << 20))?;
    /// # let member = pool.join()?;
    /// assert_eq!(member.peer_dram(0)?.slice(..100)?.len(), 100);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it has no bytes.
    ///
    /// ```
    /// # use ascend::fabric::{BigMemory, BmConfig, PoolOptions, StoreUrl, Transport};
    /// # let store = StoreUrl::tcp(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?);
    /// # ascend::fabric::sys::select_backend(ascend::fabric::sys::BackendRequest::Software)?; // doctests run on the software fabric
    /// # let bm = BigMemory::init(&store, 1, &ascend::Device::new(0)?, &BmConfig::default())?;
    /// # let pool = bm.create_pool(1, &PoolOptions::new(Transport::SDMA).hbm(2 << 20))?;
    /// # let member = pool.join()?;
    /// assert!(member.peer_hbm(0)?.slice(10..10)?.is_empty());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The rank whose memory it is.
    ///
    /// # Examples
    ///
    /// ```
    /// # use ascend::fabric::*;
    /// # let store = StoreUrl::tcp(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?);
    /// # sys::select_backend(sys::BackendRequest::Software)?; // doctests run on the software fabric
    /// # let device = ascend::Device::new(0)?;
    /// # let bm = BigMemory::init(&store, 1, &device, &BmConfig::default())?;
    /// # let pool = bm.create_pool(1, &PoolOptions::new(Transport::SDMA).hbm(2 << 20).dram(2 << 20))?;
    /// # let member = pool.join()?;
    /// assert_eq!(member.peer_hbm(0)?.rank(), 0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn rank(&self) -> u32 {
        self.rank
    }

    /// The global address of its first byte.
    ///
    /// # Examples
    ///
    /// ```
    /// # use ascend::fabric::*;
    /// # let store = StoreUrl::tcp(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?);
    /// # sys::select_backend(sys::BackendRequest::Software)?; // doctests run on the software fabric
    /// # let device = ascend::Device::new(0)?;
    /// # let bm = BigMemory::init(&store, 1, &device, &BmConfig::default())?;
    /// # let pool = bm.create_pool(1, &PoolOptions::new(Transport::SDMA).hbm(2 << 20).dram(2 << 20))?;
    /// # let member = pool.join()?;
    /// let hbm = member.peer_hbm(0)?;
    /// assert_eq!(hbm.slice(4096..)?.gva(), hbm.gva() + 4096);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn gva(&self) -> u64 {
        self.gva
    }

    /// The bytes `range` of it.
    ///
    /// # Errors
    ///
    /// [`FabricError::InvalidArgument`] for a range past its end or
    /// reversed.
    ///
    /// # Examples
    ///
    /// ```
    /// # use ascend::fabric::*;
    /// # let store = StoreUrl::tcp(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?);
    /// # sys::select_backend(sys::BackendRequest::Software)?; // doctests run on the software fabric
    /// # let device = ascend::Device::new(0)?;
    /// # let bm = BigMemory::init(&store, 1, &device, &BmConfig::default())?;
    /// # let pool = bm.create_pool(1, &PoolOptions::new(Transport::SDMA).hbm(2 << 20).dram(2 << 20))?;
    /// # let member = pool.join()?;
    /// let dram = member.peer_dram(0)?;
    /// assert_eq!(dram.slice(16..48)?.len(), 32);
    /// assert!(dram.slice(..(2 << 20) + 1).is_err()); // past its end
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn slice(&self, range: impl RangeBounds<usize>) -> Result<Self, FabricError> {
        let (start, end) = byte_range("GlobalRange::slice", self.len, range)?;
        Ok(GlobalRange {
            gva: self.gva + start as u64,
            len: end - start,
            ..*self
        })
    }
}

impl<K: MemKind> fmt::Debug for GlobalRange<'_, K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GlobalRange")
            .field("kind", &K::NAME)
            .field("rank", &self.rank)
            .field("gva", &format_args!("{:#x}", self.gva))
            .field("len", &self.len)
            .finish()
    }
}

/// `range` of `len` bytes as (start, end), checked.
pub(super) fn byte_range(
    method: &'static str,
    len: usize,
    range: impl RangeBounds<usize>,
) -> Result<(usize, usize), FabricError> {
    let start = match range.start_bound() {
        Bound::Included(&start) => Some(start),
        Bound::Excluded(&start) => start.checked_add(1),
        Bound::Unbounded => Some(0),
    };
    let end = match range.end_bound() {
        Bound::Included(&end) => end.checked_add(1),
        Bound::Excluded(&end) => Some(end),
        Bound::Unbounded => Some(len),
    };
    match (start, end) {
        (Some(start), Some(end)) if start <= end && end <= len => Ok((start, end)),
        _ => Err(FabricError::InvalidArgument {
            method,
            reason: format!("bytes {:?}..{:?} of {len}", range.start_bound(), range.end_bound()),
        }),
    }
}

//! [`GlobalPool`] (`smem_bm_create2` … `smem_bm_destroy`), [`PoolOptions`]
//! and [`Transport`].

use super::handle::{self, Handle};
use super::{BigMemory, FabricError, Member, sys};
use std::cell::Cell;
use std::fmt;
use std::marker::PhantomData;

bitflags::bitflags! {
    /// The transports a pool may move data over (`smem_bm_data_op_type`,
    /// bit flags; the values are MemFabric's ABI).
    ///
    /// Which ones work depends on the machine: SDMA and the device
    /// transports need Ascend NPUs; HBM cannot be pooled over host RDMA.
    /// The software fabric accepts any and moves bytes through shared
    /// memory and the software device.
    ///
    /// ```
    /// use ascend::fabric::Transport;
    /// let both = Transport::SDMA | Transport::HOST_SHM;
    /// assert_eq!(both.bits(), 0b10_0001);
    /// ```
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    pub struct Transport: u32 {
        /// System DMA inside a node or SuperPoD (`SMEMB_DATA_OP_SDMA`).
        const SDMA = sys::SMEMB_DATA_OP_SDMA;
        /// Host RDMA (RoCE) between hosts (`SMEMB_DATA_OP_HOST_RDMA`).
        const HOST_RDMA = sys::SMEMB_DATA_OP_HOST_RDMA;
        /// Host TCP (`SMEMB_DATA_OP_HOST_TCP`).
        const HOST_TCP = sys::SMEMB_DATA_OP_HOST_TCP;
        /// Device RDMA (`SMEMB_DATA_OP_DEVICE_RDMA`).
        const DEVICE_RDMA = sys::SMEMB_DATA_OP_DEVICE_RDMA;
        /// Host URMA (Kunpeng UB) (`SMEMB_DATA_OP_HOST_URMA`).
        const HOST_URMA = sys::SMEMB_DATA_OP_HOST_URMA;
        /// Host shared memory between ranks of one node
        /// (`SMEMB_DATA_OP_HOST_SHM`).
        const HOST_SHM = sys::SMEMB_DATA_OP_HOST_SHM;
        /// Device URMA (`SMEMB_DATA_OP_DEVICE_URMA`).
        const DEVICE_URMA = sys::SMEMB_DATA_OP_DEVICE_URMA;
        /// Device UB over Ethernet (`SMEMB_DATA_OP_DEVICE_UBOE`).
        const DEVICE_UBOE = sys::SMEMB_DATA_OP_DEVICE_UBOE;
    }
}

/// What this rank contributes to a [`GlobalPool`]: bytes of DRAM and of
/// HBM, the transports, and optionally the pool's largest total sizes.
/// Every rank of a pool must contribute the same sizes (the GVA layout
/// gives each rank a segment of one stride).
///
/// Checked by [`BigMemory::create_pool`] before any call: at least one
/// size above zero, a transport, maxima that hold every rank's share.
///
/// ```
/// use ascend::fabric::{PoolOptions, Transport};
/// let options = PoolOptions::new(Transport::SDMA).dram(64 << 20).hbm(32 << 20);
/// assert_eq!((options.dram_bytes(), options.hbm_bytes()), (64 << 20, 32 << 20));
/// assert_eq!(options.transport(), Transport::SDMA);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PoolOptions {
    transport: Transport,
    dram: u64,
    hbm: u64,
    max_dram: Option<u64>,
    max_hbm: Option<u64>,
}

impl PoolOptions {
    /// No memory yet, over `transport`.
    ///
    /// ```
    /// use ascend::fabric::{PoolOptions, Transport};
    /// let options = PoolOptions::new(Transport::HOST_SHM);
    /// assert_eq!((options.dram_bytes(), options.hbm_bytes()), (0, 0));
    /// ```
    pub fn new(transport: Transport) -> Self {
        PoolOptions {
            transport,
            dram: 0,
            hbm: 0,
            max_dram: None,
            max_hbm: None,
        }
    }

    /// This rank's DRAM contribution, bytes (`localDRAMSize`).
    ///
    /// ```
    /// # use ascend::fabric::{PoolOptions, Transport};
    /// assert_eq!(PoolOptions::new(Transport::SDMA).dram(4096).dram_bytes(), 4096);
    /// ```
    pub fn dram(mut self, bytes: u64) -> Self {
        self.dram = bytes;
        self
    }

    /// This rank's HBM contribution, bytes (`localHBMSize`).
    ///
    /// ```
    /// # use ascend::fabric::{PoolOptions, Transport};
    /// assert_eq!(PoolOptions::new(Transport::SDMA).hbm(4096).hbm_bytes(), 4096);
    /// ```
    pub fn hbm(mut self, bytes: u64) -> Self {
        self.hbm = bytes;
        self
    }

    /// The most DRAM all ranks together may contribute (`maxDramSize`);
    /// by default the world size × this rank's DRAM.
    ///
    /// ```
    /// # use ascend::fabric::{PoolOptions, Transport};
    /// let options = PoolOptions::new(Transport::SDMA).dram(1 << 20).max_dram(8 << 20);
    /// assert_eq!(options.max_dram_bytes(), Some(8 << 20));
    /// ```
    pub fn max_dram(mut self, bytes: u64) -> Self {
        self.max_dram = Some(bytes);
        self
    }

    /// The most HBM all ranks together may contribute (`maxHbmSize`); by
    /// default the world size × this rank's HBM.
    ///
    /// ```
    /// # use ascend::fabric::{PoolOptions, Transport};
    /// let options = PoolOptions::new(Transport::SDMA).hbm(1 << 20).max_hbm(8 << 20);
    /// assert_eq!(options.max_hbm_bytes(), Some(8 << 20));
    /// ```
    pub fn max_hbm(mut self, bytes: u64) -> Self {
        self.max_hbm = Some(bytes);
        self
    }

    /// This rank's DRAM contribution, bytes.
    ///
    /// ```
    /// # use ascend::fabric::{PoolOptions, Transport};
    /// assert_eq!(PoolOptions::new(Transport::SDMA).dram_bytes(), 0);
    /// ```
    pub fn dram_bytes(&self) -> u64 {
        self.dram
    }

    /// This rank's HBM contribution, bytes.
    ///
    /// ```
    /// # use ascend::fabric::{PoolOptions, Transport};
    /// assert_eq!(PoolOptions::new(Transport::SDMA).hbm_bytes(), 0);
    /// ```
    pub fn hbm_bytes(&self) -> u64 {
        self.hbm
    }

    /// The DRAM maximum, when set.
    ///
    /// ```
    /// # use ascend::fabric::{PoolOptions, Transport};
    /// assert_eq!(PoolOptions::new(Transport::SDMA).max_dram_bytes(), None);
    /// ```
    pub fn max_dram_bytes(&self) -> Option<u64> {
        self.max_dram
    }

    /// The HBM maximum, when set.
    ///
    /// ```
    /// # use ascend::fabric::{PoolOptions, Transport};
    /// assert_eq!(PoolOptions::new(Transport::SDMA).max_hbm_bytes(), None);
    /// ```
    pub fn max_hbm_bytes(&self) -> Option<u64> {
        self.max_hbm
    }

    /// The transports.
    ///
    /// ```
    /// # use ascend::fabric::{PoolOptions, Transport};
    /// assert_eq!(PoolOptions::new(Transport::HOST_TCP).transport(), Transport::HOST_TCP);
    /// ```
    pub fn transport(&self) -> Transport {
        self.transport
    }

    /// The checked C option for a world of `world_size` ranks.
    pub(super) fn to_raw(&self, world_size: u32) -> Result<sys::smem_bm_create_option_t, FabricError> {
        let refuse = |reason: String| FabricError::InvalidArgument {
            method: "BigMemory::create_pool",
            reason,
        };
        if self.transport.is_empty() {
            return Err(refuse("no transport".into()));
        }
        if self.dram == 0 && self.hbm == 0 {
            return Err(refuse("neither DRAM nor HBM: a rank contributes at least one".into()));
        }
        let total = |what: &str, local: u64, max: Option<u64>| {
            let all = local
                .checked_mul(u64::from(world_size))
                .ok_or_else(|| refuse(format!("{world_size} ranks of {local} bytes of {what} overflow")))?;
            match max {
                Some(max) if max < all => Err(refuse(format!(
                    "a {what} maximum of {max} bytes below the {all} bytes of {world_size} ranks of {local}"
                ))),
                Some(max) => Ok(max),
                None => Ok(all),
            }
        };
        let max_dram = total("DRAM", self.dram, self.max_dram)?;
        let max_hbm = total("HBM", self.hbm, self.max_hbm)?;
        // SAFETY: all-zero is a valid value of this plain C struct (numbers,
        // a bool, character arrays).
        let mut raw: sys::smem_bm_create_option_t = unsafe { std::mem::zeroed() };
        raw.maxDramSize = max_dram;
        raw.maxHbmSize = max_hbm;
        raw.localDRAMSize = self.dram;
        raw.localHBMSize = self.hbm;
        raw.dataOpType = self.transport.bits();
        Ok(raw)
    }
}

/// One global pool of the BM world (`smem_bm_create2`), destroyed when
/// dropped (`smem_bm_destroy`). It borrows its [`BigMemory`], so it cannot
/// outlive `smem_bm_uninit`; its [`Member`] borrows it, so it cannot be
/// destroyed while this rank is joined.
///
/// **Threads:** neither `Send` nor `Sync`: it stays on the thread that made
/// it (MemFabric's last error is per thread, and its device context is the
/// thread's).
///
/// ```
/// use ascend::fabric::{BigMemory, BmConfig, PoolOptions, StoreUrl, Transport};
/// # let port = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
/// let device = ascend::Device::new(0)?;
/// let store = StoreUrl::parse(&format!("tcp://127.0.0.1:{port}"))?;
/// # ascend::fabric::sys::select_backend(ascend::fabric::sys::BackendRequest::Software)?; // doctests run on the software fabric
/// let bm = BigMemory::init(&store, 1, &device, &BmConfig::default())?;
/// let pool = bm.create_pool(1, &PoolOptions::new(Transport::HOST_SHM).dram(2 << 20))?;
/// assert_eq!(pool.id(), 1);
/// let member = pool.join()?;
/// assert_eq!(member.peer_dram(0)?.len(), 2 << 20);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct GlobalPool<'bm> {
    bm: &'bm BigMemory,
    handle: Handle,
    id: u32,
    options: PoolOptions,
    joined: Cell<bool>,
    /// Keeps it on its thread (not `Send`), as the threads note says.
    _thread: PhantomData<*const ()>,
}

impl BigMemory {
    /// Creates the global pool `id`, to which this rank contributes what
    /// `options` says (`smem_bm_create2`). Every rank creates it with the
    /// same id and sizes, then [joins](GlobalPool::join) it.
    ///
    /// # Errors
    ///
    /// - [`FabricError::InvalidArgument`]: `options` refused (see
    ///   [`PoolOptions`]), or a pool `id` alive in this process (nothing is
    ///   called);
    /// - the library's error (from `smem_get_last_err_code`) when it
    ///   returns no handle.
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
    /// let options = PoolOptions::new(Transport::SDMA).hbm(2 << 20).dram(2 << 20);
    /// let other = bm.create_pool(2, &options)?; // another id: another pool
    /// assert_eq!(other.id(), 2);
    /// assert!(bm.create_pool(2, &options).is_err()); // that id is taken while `other` lives
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[doc(alias = "smem_bm_create2")]
    pub fn create_pool(&self, id: u32, options: &PoolOptions) -> Result<GlobalPool<'_>, FabricError> {
        let handle = handle::create(self, id, options)?;
        Ok(GlobalPool {
            bm: self,
            handle,
            id,
            options: options.clone(),
            joined: Cell::new(false),
            _thread: PhantomData,
        })
    }
}

impl<'bm> GlobalPool<'bm> {
    /// The pool's id.
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
    /// assert_eq!(pool.id(), 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn id(&self) -> u32 {
        self.id
    }

    /// What this rank contributes.
    ///
    /// ```
    /// # use ascend::fabric::{BigMemory, BmConfig, PoolOptions, StoreUrl, Transport};
    /// # let store = StoreUrl::tcp(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?);
    /// # ascend::fabric::sys::select_backend(ascend::fabric::sys::BackendRequest::Software)?; // doctests run on the software fabric
    /// # let bm = BigMemory::init(&store, 1, &ascend::Device::new(0)?, &BmConfig::default())?;
    /// let options = PoolOptions::new(Transport::SDMA).hbm(2 << 20);
    /// let pool = bm.create_pool(2, &options)?;
    /// assert_eq!(pool.options(), &options);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn options(&self) -> &PoolOptions {
        &self.options
    }

    /// The BM this pool belongs to.
    ///
    /// ```
    /// # use ascend::fabric::{BigMemory, BmConfig, PoolOptions, StoreUrl, Transport};
    /// # let store = StoreUrl::tcp(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?);
    /// # ascend::fabric::sys::select_backend(ascend::fabric::sys::BackendRequest::Software)?; // doctests run on the software fabric
    /// # let bm = BigMemory::init(&store, 1, &ascend::Device::new(0)?, &BmConfig::default())?;
    /// let pool = bm.create_pool(3, &PoolOptions::new(Transport::SDMA).hbm(2 << 20))?;
    /// assert_eq!(pool.big_memory().world_size(), 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn big_memory(&self) -> &'bm BigMemory {
        self.bm
    }

    /// Joins this rank to the pool (`smem_bm_join`); the [`Member`] leaves
    /// it when dropped. On the software fabric (and in MemFabric) a join
    /// waits until every rank of the world has created the pool.
    ///
    /// # Errors
    ///
    /// - [`FabricError::InvalidArgument`]: this rank has joined the pool
    ///   already (its `Member` is alive);
    /// - the library's error (a timeout when a rank never comes, for
    ///   example).
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
    /// assert_eq!(member.rank(), 0);
    /// drop(member); // leaves
    /// let again = pool.join()?; // and joins again
    /// assert_eq!(again.world_size(), 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[doc(alias = "smem_bm_join")]
    pub fn join(&self) -> Result<Member<'_>, FabricError> {
        if self.joined.replace(true) {
            return Err(FabricError::InvalidArgument {
                method: "GlobalPool::join",
                reason: format!("this rank has joined pool {} already", self.id),
            });
        }
        if let Err(error) = handle::join(self.handle, self.bm.rank(), self.id) {
            self.joined.set(false);
            return Err(error);
        }
        Ok(Member::new(self))
    }

    /// The raw handle, for what this module does not wrap (it stays owned
    /// by the pool: do not destroy it).
    ///
    /// ```
    /// # use ascend::fabric::{BigMemory, BmConfig, PoolOptions, StoreUrl, Transport};
    /// # let store = StoreUrl::tcp(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?);
    /// # ascend::fabric::sys::select_backend(ascend::fabric::sys::BackendRequest::Software)?; // doctests run on the software fabric
    /// # let bm = BigMemory::init(&store, 1, &ascend::Device::new(0)?, &BmConfig::default())?;
    /// let pool = bm.create_pool(4, &PoolOptions::new(Transport::SDMA).hbm(2 << 20))?;
    /// assert!(!pool.as_raw().is_null());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn as_raw(&self) -> sys::smem_bm_t {
        self.handle.0
    }

    pub(super) fn handle(&self) -> Handle {
        self.handle
    }

    /// Marks the pool left (its `Member` was dropped).
    pub(super) fn left(&self) {
        self.joined.set(false);
    }
}

impl fmt::Debug for GlobalPool<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GlobalPool")
            .field("id", &self.id)
            .field("handle", &self.handle)
            .field("options", &self.options)
            .field("joined", &self.joined.get())
            .finish()
    }
}

impl Drop for GlobalPool<'_> {
    fn drop(&mut self) {
        // SAFETY: this pool's handle, from `handle::create` with its BM and
        // id; its member, registrations and copies borrow the pool, so none
        // is alive now.
        unsafe { handle::destroy(self.bm, self.handle, self.id) };
    }
}

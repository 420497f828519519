//! [`BigMemory`]: this process's membership of a BM world
//! (`smem_bm_init` … `smem_bm_uninit`), one per process.

use super::{BmConfig, FabricError, StoreUrl, check, clear_last_error, sys};
use crate::Device;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

/// Whether a [`BigMemory`] is alive in this process.
static ALIVE: AtomicBool = AtomicBool::new(false);

/// This process in a BM world: `smem_bm_init` when made, `smem_bm_uninit`
/// when dropped. The BM's pools, members, registrations and copies borrow
/// it, so none outlives it.
///
/// MemFabric keeps one BM state per process, and a second `smem_bm_init`
/// returns OK without looking at its arguments (its source says
/// "initialized already"); so a second `BigMemory` while one is alive is
/// refused ([`FabricError::AlreadyInitialized`]) rather than silently
/// joined to the first world.
///
/// Before any call, the store URL's protection is checked
/// ([`StoreSecurity`](super::StoreSecurity)): a store on another host needs
/// TLS or an explicit opt-out.
///
/// **Threads:** `BigMemory` is `Send` and `Sync`.
///
/// ```
/// use ascend::Device;
/// use ascend::fabric::{BigMemory, BmConfig, FabricError, StoreUrl};
/// let device = Device::new(0)?;
/// # let port = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
/// let store = StoreUrl::parse(&format!("tcp://127.0.0.1:{port}"))?;
/// match BigMemory::init(&store, 1, &device, &BmConfig::default()) {
///     Ok(bm) => assert_eq!(bm.rank(), 0), // the only member
///     // No MemFabric here, or its data plane without an Ascend driver.
///     Err(FabricError::Load(_) | FabricError::DriverMissing { .. }) => {}
///     Err(other) => return Err(other.into()),
/// }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct BigMemory {
    /// Keeps the device retained while the BM uses it.
    device: Device,
    rank: u32,
    world_size: u32,
    /// The ids of the live pools ([`GlobalPool`](super::GlobalPool)s).
    pools: Mutex<Vec<u32>>,
}

impl BigMemory {
    /// Joins this process to the BM world of `world_size` ranks whose
    /// config store is `store`, on `device` (`smem_bm_init`).
    ///
    /// # Errors
    ///
    /// - [`FabricError::PlaintextStore`]: `store` is not on this host and
    ///   the configuration has no TLS (nothing is called);
    /// - [`FabricError::InvalidArgument`]: a world size outside 1 ..= 1024, a
    ///   rank not below it, a device id above 65535, a timeout of zero
    ///   seconds, or a TLS path too long (nothing is called);
    /// - [`FabricError::AlreadyInitialized`]: a `BigMemory` is alive in
    ///   this process;
    /// - [`FabricError::Load`] without a library,
    ///   [`FabricError::DriverMissing`] on a host without the Ascend driver
    ///   (MemFabric's data plane needs it), or the library's error.
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
    /// assert_eq!(bm.world_size(), 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn init(store: &StoreUrl, world_size: u32, device: &Device, config: &BmConfig) -> Result<Self, FabricError> {
        let refuse = |reason: String| FabricError::InvalidArgument {
            method: "BigMemory::init",
            reason,
        };
        config.store_security().check(store)?;
        if !(1..=sys::SMEM_WORLD_SIZE_MAX).contains(&world_size) {
            return Err(refuse(format!(
                "a world of {world_size} ranks; MemFabric takes 1 to {}",
                sys::SMEM_WORLD_SIZE_MAX
            )));
        }
        if let Some(rank) = config.rank().filter(|&rank| rank >= world_size) {
            return Err(refuse(format!("rank {rank} in a world of {world_size}")));
        }
        config.timeout_seconds()?;
        config.store_security().to_raw()?;
        let device_id = u16::try_from(device.id())
            .map_err(|_| refuse(format!("device {} (MemFabric takes 0 to 65535)", device.id())))?;
        if ALIVE.swap(true, Ordering::AcqRel) {
            return Err(FabricError::AlreadyInitialized { api: "smem_bm_init" });
        }
        match Self::start(store, world_size, device_id, config) {
            Ok(rank) => Ok(BigMemory {
                device: device.clone(),
                rank,
                world_size,
                pools: Mutex::new(Vec::new()),
            }),
            Err(error) => {
                ALIVE.store(false, Ordering::Release);
                Err(error)
            }
        }
    }

    /// `smem_init`, then `smem_bm_init`; the rank this process got.
    fn start(store: &StoreUrl, world_size: u32, device_id: u16, config: &BmConfig) -> Result<u32, FabricError> {
        super::init()?;
        let raw = config.to_raw()?;
        clear_last_error();
        // SAFETY: the URL is a NUL-terminated string and `raw` a complete
        // config, both alive for the call.
        check("smem_bm_init", unsafe {
            sys::smem_bm_init(store.as_c_str().as_ptr(), world_size, device_id, &raw)
        })?;
        // SAFETY: no arguments; the BM is initialised.
        let rank = unsafe { sys::smem_bm_get_rank_id() };
        if rank == u32::MAX {
            let error = FabricError::last("smem_bm_get_rank_id");
            // SAFETY: undoes the successful `smem_bm_init` above.
            unsafe { sys::smem_bm_uninit(0) };
            return Err(error);
        }
        Ok(rank)
    }

    /// This process's rank in the world.
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
    /// assert_eq!(bm.rank(), 0); // the only rank
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn rank(&self) -> u32 {
        self.rank
    }

    /// The number of ranks in the world.
    ///
    /// ```
    /// # use ascend::fabric::{BigMemory, BmConfig, StoreUrl};
    /// # let device = ascend::Device::new(0)?;
    /// # let store = StoreUrl::tcp(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?);
    /// if let Ok(bm) = BigMemory::init(&store, 1, &device, &BmConfig::default()) {
    ///     assert_eq!(bm.world_size(), 1);
    /// }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn world_size(&self) -> u32 {
        self.world_size
    }

    /// The device this process contributes HBM from.
    ///
    /// ```
    /// # use ascend::fabric::{BigMemory, BmConfig, StoreUrl};
    /// # let device = ascend::Device::new(0)?;
    /// # let store = StoreUrl::tcp(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?);
    /// if let Ok(bm) = BigMemory::init(&store, 1, &device, &BmConfig::default()) {
    ///     assert_eq!(bm.device(), &device);
    /// }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn device(&self) -> &Device {
        &self.device
    }
}

impl BigMemory {
    /// Records pool `id` as alive; false when it is already.
    pub(super) fn claim_pool(&self, id: u32) -> bool {
        let mut pools = self.pools.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if pools.contains(&id) {
            return false;
        }
        pools.push(id);
        true
    }

    /// Forgets pool `id` (destroyed, or its creation failed).
    pub(super) fn release_pool(&self, id: u32) {
        self.pools
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .retain(|&live| live != id);
    }
}

impl Drop for BigMemory {
    fn drop(&mut self) {
        // SAFETY: this value's `smem_bm_init` succeeded, and everything made
        // from it borrows it, so nothing of the world is in use now.
        unsafe { sys::smem_bm_uninit(0) };
        log::debug!("smem_bm_uninit: rank {} left the BM world", self.rank);
        ALIVE.store(false, Ordering::Release);
    }
}

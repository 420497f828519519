//! The process-wide BM world of `smem_bm_init`, and the standalone config
//! stores of `smem_create_config_store`.
//!
//! `smem_bm_init` starts the store inside this process when the config says
//! `startConfigStoreServer` and this process may be rank 0: its `rankId` is
//! 0, or it auto-ranks. Then the first process to bind the store's port
//! serves it (a bind that fails because the port is taken means another
//! process serves, and this one connects as a client), and with
//! auto-ranking the serving process is given rank 0, the others ranks in
//! the order they join.

use crate::soft::core::result::{SoftResult, fail};
use crate::soft::store::client::StoreClient;
use crate::soft::store::protocol::RankState;
use crate::soft::store::rank_page::RankPage;
use crate::soft::store::server::StoreServer;
use crate::types::*;
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

/// The world of this process after `smem_bm_init`.
#[derive(Debug)]
pub(crate) struct World {
    /// This process's rank.
    pub(crate) rank: u32,
    /// Ranks in the world.
    pub(crate) world_size: u32,
    /// The device of `smem_bm_init`.
    pub(crate) device: i32,
    /// `controlOperationTimeout`: joins and waits on peers.
    pub(crate) control_timeout: Duration,
    client: Mutex<Option<StoreClient>>,
    server: Mutex<Option<StoreServer>>,
    /// The store's page of rank states, when it shares one.
    ranks: Option<RankPage>,
}

static WORLD: Mutex<Option<Arc<World>>> = Mutex::new(None);
static RANK: AtomicU32 = AtomicU32::new(u32::MAX);
static STORES: Mutex<BTreeMap<SocketAddr, StoreServer>> = Mutex::new(BTreeMap::new());

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Seconds of a config timeout (0 is taken as 1 ms: fail at once).
fn seconds(value: u32) -> Duration {
    Duration::from_secs(u64::from(value)).max(Duration::from_millis(1))
}

/// The defaults `smem_bm_config_init` writes (measured on the real 1.3.0).
pub(crate) fn default_config() -> smem_bm_config_t {
    // SAFETY: the struct is plain data (integers, bools, byte arrays), for
    // which all-zero bytes are valid.
    let mut config: smem_bm_config_t = unsafe { std::mem::zeroed() };
    config.initTimeout = 120;
    config.createTimeout = 120;
    config.controlOperationTimeout = 900;
    config.startConfigStoreServer = true;
    config.startConfigStoreOnly = false;
    config.dynamicWorldSize = false;
    config.unifiedAddressSpace = true;
    config.autoRanking = true;
    config.rankId = 0xFFFF;
    config
}

/// `smem_bm_init` after reading its arguments. A second call returns OK
/// without looking at them, as the real library.
pub(crate) fn init(url: &str, world_size: u32, device: u16, config: &smem_bm_config_t) -> SoftResult {
    let mut world = lock(&WORLD);
    if world.is_some() {
        log::info!("smem bm initialized already");
        return Ok(());
    }
    let address = crate::soft::core::url::parse(url)?;
    if world_size == 0 || world_size > SMEM_WORLD_SIZE_MAX {
        return fail(SMEM_INVALID_PARAM, format!("worldSize {world_size} is not in 1..=1024"));
    }
    let rank = (!config.autoRanking).then_some(config.rankId);
    if let Some(rank) = rank.filter(|rank| *rank >= world_size) {
        return fail(
            SMEM_INVALID_PARAM,
            format!("rankId {rank} is not below worldSize {world_size}"),
        );
    }
    let may_serve = config.startConfigStoreServer && rank.is_none_or(|rank| rank == 0);
    let server = if may_serve && !lock(&STORES).contains_key(&address) {
        match StoreServer::start(address, Some(std::process::id())) {
            Ok(server) => Some(server),
            Err(error) => {
                log::debug!("not serving the config store ({error}); another process does");
                None
            }
        }
    } else {
        None
    };
    if config.startConfigStoreOnly {
        if let Some(server) = server {
            lock(&STORES).insert(address, server);
        }
        return Ok(());
    }
    let init_timeout = seconds(config.initTimeout);
    let mut client = StoreClient::connect(address, init_timeout)?;
    let rank = client.hello(world_size, rank)?;
    let ranks = client.rank_page()?;
    RANK.store(rank, Ordering::Release);
    log::info!("software fabric: rank {rank} of {world_size} on device {device}, store {address}");
    *world = Some(Arc::new(World {
        rank,
        world_size,
        device: i32::from(device),
        control_timeout: seconds(config.controlOperationTimeout),
        client: Mutex::new(Some(client)),
        server: Mutex::new(server),
        ranks,
    }));
    Ok(())
}

/// `smem_bm_uninit`: destroys every BM object, leaves the world, and stops
/// the store this process serves (its threads ended, its port free).
pub(crate) fn uninit() {
    let Some(world) = lock(&WORLD).take() else {
        return;
    };
    crate::soft::bm::handle::destroy_all();
    RANK.store(u32::MAX, Ordering::Release);
    if let Some(client) = lock(&world.client).take()
        && let Err(error) = client.leave()
    {
        log::warn!("leaving the config store failed: {error}");
    }
    if let Some(server) = lock(&world.server).take() {
        server.stop();
    }
}

/// The world, or `SMEM_NOT_INIT`.
pub(crate) fn current() -> SoftResult<Arc<World>> {
    match lock(&WORLD).as_ref() {
        Some(world) => Ok(Arc::clone(world)),
        None => fail(SMEM_NOT_INIT, "smem_bm_init has not been called"),
    }
}

/// This process's rank, `UINT32_MAX` before `smem_bm_init`.
pub(crate) fn rank_id() -> u32 {
    RANK.load(Ordering::Acquire)
}

impl World {
    /// What the store knows of `rank`: read from its shared page, or asked.
    pub(crate) fn rank_state(&self, rank: u32) -> SoftResult<RankState> {
        match &self.ranks {
            Some(page) => Ok(page.get(rank)),
            None => self.store(|store| store.rank_state(rank)),
        }
    }

    /// Runs `body` with the store connection.
    pub(crate) fn store<T>(&self, body: impl FnOnce(&mut StoreClient) -> SoftResult<T>) -> SoftResult<T> {
        match lock(&self.client).as_mut() {
            Some(client) => body(client),
            None => fail(SMEM_NOT_INIT, "the world was left (smem_bm_uninit)"),
        }
    }
}

/// `smem_create_config_store`: starts a standalone store; OK when this
/// process already serves one there.
pub(crate) fn create_store(url: &str) -> SoftResult {
    let address = crate::soft::core::url::parse(url)?;
    let mut stores = lock(&STORES);
    if stores.contains_key(&address) {
        return Ok(());
    }
    let server = StoreServer::start(address, None)?;
    stores.insert(address, server);
    Ok(())
}

/// `smem_destroy_config_store`: stops the standalone store at `url`, if
/// this process runs one there.
pub(crate) fn destroy_store(url: &str) -> SoftResult {
    let address = crate::soft::core::url::parse(url)?;
    let server = lock(&STORES).remove(&address);
    if let Some(server) = server {
        server.stop();
    }
    Ok(())
}

//! BM objects: `smem_bm_create` allocates this rank's segments and
//! publishes them; the handle given to C is a number looked up in a table,
//! so a stale or foreign handle is refused instead of dereferenced.

use super::peer::{self, Peer, SegmentInfo};
use super::world::{self, World};
use crate::soft::core::gva::{DEVICE_BASE, DEVICE_END, HOST_BASE, Range};
use crate::soft::core::result::{SoftResult, fail};
use crate::soft::memory::dram::DramMapping;
use crate::soft::memory::hbm::HbmSegment;
use crate::soft::store::protocol::RankState;
use crate::types::*;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// A BM object.
#[derive(Debug)]
pub(crate) struct Bm {
    /// The id given to create.
    pub(crate) id: u32,
    /// The world it belongs to.
    pub(crate) world: Arc<World>,
    /// The host (DRAM) GVA range.
    pub(crate) host: Range,
    /// The device (HBM) GVA range.
    pub(crate) device: Range,
    /// The sizes asked for: DRAM, HBM.
    pub(crate) local_sizes: (u64, u64),
    dram: Option<DramMapping>,
    hbm: Option<HbmSegment>,
    peers: Mutex<BTreeMap<u32, Arc<Peer>>>,
    registered: Mutex<BTreeMap<u64, u64>>,
    joined: AtomicBool,
}

static HANDLES: Mutex<BTreeMap<usize, Arc<Bm>>> = Mutex::new(BTreeMap::new());
static NEXT: AtomicUsize = AtomicUsize::new(1);
/// Handles are small multiples of this, never a real address.
const HANDLE_STEP: usize = 0x10;

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// `smem_bm_create2` after reading its arguments: the new handle.
pub(crate) fn create(id: u32, dram_size: u64, hbm_size: u64) -> SoftResult<smem_bm_t> {
    let world = world::current()?;
    if dram_size == 0 && hbm_size == 0 {
        return fail(SMEM_INVALID_PARAM, "localDRAMSize and localHBMSize are both 0");
    }
    let ranks = world.world_size;
    let (Some(host), Some(device)) = (
        Range::new(HOST_BASE, dram_size, ranks, DEVICE_BASE),
        Range::new(DEVICE_BASE, hbm_size, ranks, DEVICE_END),
    ) else {
        return fail(
            SMEM_INVALID_PARAM,
            format!("{ranks} ranks of {dram_size} bytes of DRAM or {hbm_size} of HBM do not fit the GVA space"),
        );
    };
    let too_big = |stride: u64| usize::try_from(stride).is_err();
    if too_big(host.stride) || too_big(device.stride) {
        return fail(SMEM_INVALID_PARAM, "a local size does not fit this process");
    }
    let dram = match host.stride {
        0 => None,
        stride => Some(DramMapping::create(stride as usize)?),
    };
    let hbm = match device.stride {
        0 => None,
        stride => Some(HbmSegment::create(world.device, stride as usize)?),
    };
    let info = SegmentInfo {
        pid: std::process::id(),
        dram_fd: dram.as_ref().map_or(0, DramMapping::raw_fd),
        dram_stride: host.stride,
        hbm_stride: device.stride,
        hbm_key: hbm.as_ref().map(|hbm| hbm.key().to_string()),
    };
    world.store(|store| store.put(&peer::key(id, world.rank), &info.value()))?;
    let bm = Arc::new(Bm {
        id,
        world,
        host,
        device,
        local_sizes: (dram_size, hbm_size),
        dram,
        hbm,
        peers: Mutex::new(BTreeMap::new()),
        registered: Mutex::new(BTreeMap::new()),
        joined: AtomicBool::new(false),
    });
    let number = NEXT.fetch_add(1, Ordering::Relaxed) * HANDLE_STEP;
    lock(&HANDLES).insert(number, bm);
    Ok(number as smem_bm_t)
}

/// The BM object behind `handle`, or `SMEM_INVALID_PARAM`.
pub(crate) fn get(handle: smem_bm_t) -> SoftResult<Arc<Bm>> {
    match lock(&HANDLES).get(&(handle as usize)) {
        Some(bm) => Ok(Arc::clone(bm)),
        None if handle.is_null() => fail(SMEM_INVALID_PARAM, "the handle is NULL"),
        None => fail(SMEM_INVALID_PARAM, format!("{handle:p} is not a live BM handle")),
    }
}

/// `smem_bm_destroy`: forgets the handle; the segments go when the last
/// copy using them ends.
pub(crate) fn destroy(handle: smem_bm_t) -> SoftResult {
    let Some(bm) = lock(&HANDLES).remove(&(handle as usize)) else {
        return fail(SMEM_INVALID_PARAM, format!("{handle:p} is not a live BM handle"));
    };
    if let Err(error) = bm.unpublish() {
        log::debug!("unpublishing BM {} failed: {error}", bm.id);
    }
    Ok(())
}

/// The live BM objects of this process, and the user memory registered
/// with them: (objects, registrations, registered bytes).
pub(crate) fn census() -> (usize, usize, u64) {
    let handles = lock(&HANDLES);
    let (mut registrations, mut bytes) = (0, 0);
    for bm in handles.values() {
        let registered = lock(&bm.registered);
        registrations += registered.len();
        bytes += registered.values().sum::<u64>();
    }
    (handles.len(), registrations, bytes)
}

/// Destroys every BM object (`smem_bm_uninit`).
pub(crate) fn destroy_all() {
    let all = std::mem::take(&mut *lock(&HANDLES));
    for bm in all.values() {
        let _ = bm.unpublish();
    }
}

impl Bm {
    fn unpublish(&self) -> SoftResult {
        self.world
            .store(|store| store.put(&peer::key(self.id, self.world.rank), "-"))
    }

    /// `smem_bm_join`: waits (up to the control timeout) until every rank
    /// of the world has published its segments for this BM.
    pub(crate) fn join(&self) -> SoftResult {
        let deadline = Instant::now() + self.world.control_timeout;
        for rank in 0..self.world.world_size {
            loop {
                let key = peer::key(self.id, rank);
                if self.world.store(|store| store.get(&key))?.is_some() {
                    break;
                }
                if Instant::now() >= deadline {
                    return fail(
                        SMEM_TIMEOUT,
                        format!(
                            "rank {rank} did not create BM {} within {:?}",
                            self.id, self.world.control_timeout
                        ),
                    );
                }
                std::thread::sleep(Duration::from_millis(10));
            }
        }
        self.joined.store(true, Ordering::Release);
        Ok(())
    }

    /// `smem_bm_leave`.
    pub(crate) fn leave(&self) -> SoftResult {
        self.joined.store(false, Ordering::Release);
        lock(&self.peers).clear();
        Ok(())
    }

    /// This rank's DRAM segment.
    pub(crate) fn local_dram(&self) -> Option<&DramMapping> {
        self.dram.as_ref()
    }

    /// This rank's HBM segment.
    pub(crate) fn local_hbm(&self) -> Option<&HbmSegment> {
        self.hbm.as_ref()
    }

    /// Rank `rank`'s segments as seen from here (opened on first use).
    ///
    /// A rank the store saw die (its connection closed without leaving) or
    /// leave the world (`smem_bm_uninit`) is waited for as a transport
    /// would wait for a peer that no longer answers: the call fails after
    /// the control timeout with hybm's `BM_TIMEOUT` (−7), the code the real
    /// library passes through from its core when a peer stops answering,
    /// and the mapping this rank had opened of it is dropped.
    pub(crate) fn peer(&self, rank: u32) -> SoftResult<Arc<Peer>> {
        let gone = match self.world.rank_state(rank)? {
            RankState::Dead => Some("died (its store connection closed)"),
            RankState::Left => Some("left the world"),
            RankState::Absent | RankState::Alive => None,
        };
        if let Some(how) = gone {
            // Its mapping, if this rank opened one, is not used again.
            lock(&self.peers).remove(&rank);
            std::thread::sleep(self.world.control_timeout);
            return fail(
                BM_TIMEOUT,
                format!("rank {rank} {how}; no answer within {:?}", self.world.control_timeout),
            );
        }
        if let Some(peer) = lock(&self.peers).get(&rank) {
            return Ok(Arc::clone(peer));
        }
        let key = peer::key(self.id, rank);
        let value = self.world.store(|store| store.get(&key))?;
        let Some(info) = value.as_deref().map(SegmentInfo::parse).transpose()?.flatten() else {
            return fail(
                SMEM_NOT_CONNECTED,
                format!(
                    "rank {rank} has no segments in BM {} (not created yet, or left)",
                    self.id
                ),
            );
        };
        let peer = Arc::new(Peer::open(
            &info,
            self.world.device,
            self.host.stride,
            self.device.stride,
        )?);
        lock(&self.peers).insert(rank, Arc::clone(&peer));
        Ok(peer)
    }

    /// `smem_bm_register_user_mem`.
    pub(crate) fn register(&self, address: u64, size: u64) -> SoftResult {
        if address == 0 || size == 0 {
            return fail(SMEM_INVALID_PARAM, "addr and size must not be 0");
        }
        let mut registered = lock(&self.registered);
        match registered.get(&address) {
            Some(&known) if known == size => Ok(()),
            Some(&known) => fail(
                SMEM_ERROR,
                format!("{address:#x} is registered already with {known} bytes, not {size}"),
            ),
            None => {
                registered.insert(address, size);
                Ok(())
            }
        }
    }

    /// The registration (start, size) that holds `size` bytes at `address`,
    /// if one does.
    pub(crate) fn registration_of(&self, address: u64, size: u64) -> Option<(u64, u64)> {
        let registered = lock(&self.registered);
        let (&start, &len) = registered.range(..=address).next_back()?;
        (address.checked_add(size)? <= start.checked_add(len)?).then_some((start, len))
    }

    /// `smem_bm_unregister_user_mem` (an unknown address is fine).
    pub(crate) fn unregister(&self, address: u64) {
        lock(&self.registered).remove(&address);
    }
}

//! The [`PinnedPool`](super::PinnedPool)'s state, which the pool and
//! every buffer it caches or hands out hold: its shards, counts and the
//! functions a buffer's give-back reaches ([`recycle`](super::recycle)).

use super::PinnedStats;
use super::shards::{Cached, CountsNow, SHARDS, Shard, SharedTotal, shard_of};
use crate::Device;
use crate::error::{Error, Result};
use crate::host_register::HostMallocConfig;
use crate::memory::PinnedHostBuf;
use crate::pool::per_thread::cache_slot::{CacheSlot, hold_all};
#[cfg(feature = "testing")]
use crate::pool::watch::Watch;
use crate::stream::{Carrier, Settled};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};

/// Set once `aclrtMallocHostWithCfg` was found missing: every later
/// allocation goes to `aclrtMallocHost` directly (torch_npu latches the
/// same way).
static WITH_CFG_MISSING: AtomicBool = AtomicBool::new(false);

/// The pool's state. Every buffer the pool caches or hands out holds one
/// strong count of it (the cached ones implicitly, the ones handed out
/// in their `Ordered`, as a [`Carried`](crate::stream::Carried) reference): made once when the
/// buffer is allocated, moved with it on every hit and give-back, let go
/// when the buffer is freed. So the state outlives the pool until its
/// last buffer is back, and a hit counts nothing. The pool's drop frees
/// the cached buffers (releasing their counts), which breaks the cycle of
/// a state holding itself through its cache.
#[repr(C)]
pub(super) struct Shared {
    /// First (`repr(C)`): a buffer's `Ordered` reaches the state by a
    /// pointer to it ([`recycle`](super::recycle)).
    pub(super) carrier: Carrier<PinnedHostBuf<u8>>,
    pub(super) device: Device,
    pub(super) config: HostMallocConfig,
    /// Buffers larger than this are freed when dropped instead of cached.
    pub(super) max_cached: AtomicUsize,
    /// Set when the `PinnedPool` is dropped: buffers that come back after
    /// it are freed (once their work is proven finished), not cached.
    pub(super) closed: AtomicBool,
    /// The cached buffers and the counts, by thread ([`shards`](super::shards)); a
    /// power of two of them.
    pub(super) shards: [Shard; SHARDS],
    /// The bytes handed out, with headroom, and its peak ([`shards`](super::shards)).
    pub(super) allocated: SharedTotal,
    /// Pinned bytes held (handed out and cached), with its peak: changed
    /// by new buffers and frees only, never by a hit.
    pub(super) reserved: Mutex<(usize, usize)>,
    /// The buffers handed out while a leak check of [`crate::testing`]
    /// watches, by address (nothing without the feature `testing`).
    #[cfg(feature = "testing")]
    pub(super) watch: Mutex<Watch<usize>>,
}

impl Shared {
    /// A cached buffer of `size` bytes for a request of `bytes`, from the
    /// calling thread's shard (its token `token`) when the thread owns it
    /// and no one else holds it, counted as a hit there; `None`
    /// otherwise, and the caller calls [`Shared::take_slowly`].
    #[inline(always)]
    pub(super) fn take_owned(&self, token: usize, size: usize, bytes: usize) -> Option<Cached> {
        let shard: *const Shard = &self.shards[shard_of(token)];
        // The buffer comes out through `found`, not in the hold's result:
        // an `Option` of it in a `Result` moved it a word off its
        // alignment, and the copies then read across stores the processor
        // cannot forward (docs/performance.md, "PinnedPool hit").
        let mut found: Option<Cached> = None;
        let hit = |state: &mut super::shards::ShardState, counts: &super::shards::Counts, ()| {
            found = state.hit(counts, &self.allocated, size, bytes);
        };
        // The owner's hold alone (one place calls `hit`, which is then
        // inlined); a shared shard's holds are `take_slowly`'s.
        // SAFETY: the shard lives in `self`, borrowed for the call.
        let _ = unsafe { CacheSlot::with_owned(shard, token, (), hit) };
        found
    }

    /// [`Shared::take_owned`] past an owner's hit of the caller's shard
    /// (not the owner, held by someone else, or a local miss): holds it (a
    /// shared shard, or waiting for whoever holds it), then steals from
    /// the others; counted as a hit in the caller's shard (so that a
    /// thread's headroom moves only with its own hits and frees).
    #[cold]
    #[inline(never)]
    pub(super) fn take_slowly(&self, token: usize, size: usize, bytes: usize) -> Option<Cached> {
        let mine = shard_of(token);
        {
            let mut held = self.shards[mine].hold(token);
            let (state, counts) = held.parts();
            if let Some(found) = state.hit(counts, &self.allocated, size, bytes) {
                return Some(found);
            }
        }
        self.steal(mine, size, bytes)
    }

    /// A cached buffer of `size` bytes from a shard other than `mine`,
    /// counted as a hit in `mine`; the rest of that shard's bucket of
    /// `size` moves to `mine` with it (so that a thread that allocates
    /// what another gives back steals once per batch). Holds every shard
    /// at once (one barrier for all: an owner's hold is not turned into
    /// a shared one, which would cost its hits a swap each), and only
    /// when another shard has cached bytes.
    #[cold]
    pub(super) fn steal(&self, mine: usize, size: usize, bytes: usize) -> Option<Cached> {
        let others_cache = self
            .shards
            .iter()
            .enumerate()
            .any(|(at, shard)| at != mine && shard.shared().cached_bytes() > 0);
        if !others_cache {
            return None;
        }
        let mut held = hold_all(&self.shards);
        let mut found = Vec::new();
        for (at, shard) in held.iter_mut().enumerate() {
            if at != mine {
                let (state, counts) = shard.parts();
                found = state.take_bucket(size);
                // The cached bytes move to `mine` with the buffers.
                counts.cached(-((size * found.len()) as isize));
                if !found.is_empty() {
                    break;
                }
            }
        }
        // `mine` is a shard's index (`shard_of`), and `held` has them all.
        let (state, counts) = held[mine].parts();
        counts.cached((size * found.len()) as isize);
        for cached in found {
            state.keep(cached);
        }
        state.hit(counts, &self.allocated, size, bytes)
    }

    /// Every cached buffer, taken out of every shard (held at once) and
    /// no longer counted as cached.
    pub(super) fn take_all_cached(&self) -> Vec<Cached> {
        let mut all = Vec::new();
        for mut held in hold_all(&self.shards) {
            let (state, counts) = held.parts();
            let taken = state.take_all();
            let bytes: usize = taken.iter().map(|(buffer, _)| buffer.capacity()).sum();
            counts.cached(-(bytes as isize));
            all.extend(taken);
        }
        all
    }

    /// A new buffer of `size` bytes for a request of `bytes`, counted as
    /// a miss in the caller's shard (its token `token`), and its bytes
    /// once the buffer exists: a failed allocation leaves the peaks alone.
    #[cold]
    pub(super) fn fresh_counted(&self, token: usize, size: usize, bytes: usize) -> Result<PinnedHostBuf<u8>> {
        let fresh = self.fresh(size);
        {
            let mut held = self.shards[shard_of(token)].hold(token);
            let (state, counts) = held.parts();
            counts.miss();
            if fresh.is_ok() {
                state.count_out(counts, &self.allocated, size, bytes);
            }
        }
        let buffer = fresh?;
        let mut reserved = self.reserved();
        reserved.0 += size;
        reserved.1 = reserved.1.max(reserved.0);
        Ok(buffer)
    }

    /// Counts `bytes` of pinned memory freed.
    pub(super) fn count_freed(&self, bytes: usize) {
        if bytes > 0 {
            let mut reserved = self.reserved();
            reserved.0 = reserved.0.saturating_sub(bytes);
        }
    }

    pub(super) fn reserved(&self) -> MutexGuard<'_, (usize, usize)> {
        self.reserved.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Notes a buffer handed out for a leak check's watch.
    #[inline]
    pub(super) fn watch_out(&self, address: usize, size: usize) {
        #[cfg(feature = "testing")]
        self.watch().handed_out(address, address, size, None);
        #[cfg(not(feature = "testing"))]
        let _ = (address, size);
    }

    /// Notes a buffer given back for a leak check's watch.
    #[inline]
    pub(super) fn watch_back(&self, address: usize) {
        #[cfg(feature = "testing")]
        self.watch().given_back(&address);
        #[cfg(not(feature = "testing"))]
        let _ = address;
    }

    #[cfg(feature = "testing")]
    pub(super) fn watch(&self) -> MutexGuard<'_, Watch<usize>> {
        self.watch.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The sums of the shards' counts, with the peaks.
    pub(super) fn stats(&self) -> PinnedStats {
        // Read without holding the shards (no barrier): a snapshot of
        // counts read one after another.
        let mut sum = CountsNow::default();
        for shard in &self.shards {
            shard.shared().add_to(&mut sum);
        }
        let allocated = sum.allocated.max(0).unsigned_abs();
        let cached_bytes = sum.cached_bytes.max(0).unsigned_abs();
        let reserved_peak = self.reserved().1;
        PinnedStats {
            allocated,
            requested: sum.requested.max(0).unsigned_abs(),
            allocated_peak: self.allocated.peak().max(allocated),
            cached_bytes,
            reserved_peak: reserved_peak.max(allocated + cached_bytes),
            hits: sum.hits,
            misses: sum.misses,
        }
    }

    /// A new zeroed buffer, through `aclrtMallocHostWithCfg` until it
    /// proves missing.
    pub(super) fn fresh(&self, size: usize) -> Result<PinnedHostBuf<u8>> {
        if !WITH_CFG_MISSING.load(Ordering::Relaxed) {
            match PinnedHostBuf::zeroed_with_config(&self.device, size, &self.config) {
                Err(Error::Unsupported { .. }) => {
                    log::info!("PinnedPool: aclrtMallocHostWithCfg is missing; using aclrtMallocHost from now on");
                    WITH_CFG_MISSING.store(true, Ordering::Relaxed);
                }
                other => return other,
            }
        }
        PinnedHostBuf::zeroed(&self.device, size)
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        // Empty by construction: every cached buffer holds a count of
        // this state, and the pool's drop takes the cache. Kept so that a
        // count gone wrong leaks a buffer whose work cannot be proven
        // finished instead of freeing it.
        for shard in self.shards.iter_mut() {
            for (buffer, mut tracks) in shard.get_mut().take_all() {
                if let Settled::Unproven(_) = tracks.settle("PinnedPool drop") {
                    std::mem::forget(buffer);
                }
            }
        }
    }
}

#[cfg(feature = "testing")]
impl crate::pool::watch::Watched for Shared {
    fn kind(&self) -> crate::pool::watch::PoolKind {
        crate::pool::watch::PoolKind::Pinned
    }

    fn device_id(&self) -> i32 {
        self.device.id()
    }

    fn start_watch(&self) {
        self.watch().start();
    }

    fn watched_now(&self) -> Vec<crate::pool::watch::WatchedBlock> {
        self.watch().live()
    }

    fn end_watch(&self) -> Vec<crate::pool::watch::WatchedBlock> {
        self.watch().end()
    }

    fn held(&self, held: &mut crate::pool::watch::Held) {
        for shard in hold_all(&self.shards) {
            held.host.extend(shard.cached_addresses());
        }
    }
}

//! The hub of a [`DevicePool`]: [`Shared`], what the pool's handles and
//! its blocks hold (the device, the configuration, the thread caches and
//! the locked [`State`]), and [`State`] (each tag's arena, the statistics
//! and counters kept under the lock, the memory limit, the leak check's
//! watch, the memory history). Placing a request, the out-of-memory path
//! and giving a block back are here; the public methods are in `mod.rs`.

use super::block::BlockNode;
use super::observability::history::{self, HistoryAction, Recorder};
use super::segments::arena::{Arena, SMALL};
use super::segments::memory_limit::Limit;
use super::segments::sleep;
use super::statistics::counters::StateCounters;
use super::statistics::stats::PoolStats;
use super::thread_cache::{CacheTotals, ThreadCaches};
use crate::Device;
use crate::error::{Error, Result};
use crate::pool::config::PoolConfig;
use crate::pool::config::rounding;
use crate::pool::watch::Watch;
use crate::stream::{Tracks, UseGate};
use crate::vmm::{PhysicalMemProp, SegmentBlock};
use std::sync::{Arc, Mutex, MutexGuard};

pub(super) struct Shared {
    pub(super) device: Device,
    prop: PhysicalMemProp,
    pub(super) config: PoolConfig,
    /// Whether [`PoolConfig::roundup_power2_divisions`] divides some
    /// interval (else rounding is a mask).
    divides: bool,
    /// The largest request the inlined pool hit serves: the small blocks'
    /// limit rounded down to the rounding (so a request up to it rounds
    /// to at most it, without overflow), or 0 while the divisions round
    /// (one comparison on the hit for both).
    hit_limit: usize,
    pub(super) state: Mutex<State>,
    /// Whole freed blocks per thread, in front of `state` (lock order:
    /// `state`, then a cache).
    pub(super) caches: ThreadCaches,
}

pub(super) struct State {
    /// The arenas by tag; the first is [`DevicePool::DEFAULT_TAG`]'s.
    pub(super) arenas: Vec<Arena>,
    /// The statistics kept here (reserved memory, counts of events); the
    /// thread caches count the allocations.
    pub(super) stats: PoolStats,
    /// The counters of [`MemoryStats`] kept under the lock.
    pub(super) counters: StateCounters,
    /// Pinned buffers of earlier offloads, for the next sleep.
    pub(super) spares: sleep::Spares,
    /// The cap on reserved bytes, if any.
    pub(super) limit: Option<Limit>,
    /// The sequence of cached oversize blocks (for oldest first).
    oversize_seq: u64,
    /// The blocks handed out while a leak check of [`crate::testing`]
    /// watches, by `(arena, class, offset)` (nothing without the feature
    /// `testing`).
    watch: Watch<(usize, usize, usize)>,
    /// The memory history, while [`DevicePool::record_memory_history`]
    /// records (the caches are bypassed meanwhile).
    pub(super) history: Recorder,
}

/// [`Shared::hit_limit`] of `config`.
fn hit_limit(config: &PoolConfig) -> usize {
    if config.divides() {
        return 0;
    }
    // The rounding is a power of two (checked with the config).
    let mask = config.rounding - 1;
    config.small_limit.min(usize::MAX - mask) & !mask
}

impl Shared {
    /// A new pool's hub: `default` is the arena of the default tag,
    /// `limit` the cap on reserved bytes.
    pub(super) fn new(
        device: &Device,
        prop: PhysicalMemProp,
        config: PoolConfig,
        default: Arena,
        limit: Option<Limit>,
    ) -> Self {
        Self {
            device: device.clone(),
            prop,
            caches: ThreadCaches::new(config.large_chunk),
            divides: config.divides(),
            hit_limit: hit_limit(&config),
            config,
            state: Mutex::new(State {
                arenas: vec![default],
                stats: PoolStats::default(),
                counters: StateCounters::default(),
                spares: sleep::Spares::default(),
                limit,
                oversize_seq: 0,
                watch: Watch::default(),
                history: Recorder::default(),
            }),
        }
    }

    pub(super) fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The index of `tag`'s arena, reserving it on first use.
    pub(super) fn arena(&self, state: &mut State, tag: &str) -> Result<usize> {
        if let Some(index) = state.arenas.iter().position(|arena| arena.tag == tag) {
            return Ok(index);
        }
        state.arenas.push(Arena::new(tag, &self.prop, &self.config)?);
        Ok(state.arenas.len() - 1)
    }

    /// The size class of a block of `size` bytes: [`SMALL`] or large.
    pub(super) fn class_of(&self, size: usize) -> usize {
        usize::from(size > self.config.small_limit)
    }

    /// `bytes` rounded up to the configured rounding; `None` on overflow.
    #[inline]
    pub(super) fn rounded(&self, bytes: usize) -> Option<usize> {
        if self.divides {
            return rounding::round_size(bytes, self.config.rounding, &self.config.roundup_power2_divisions);
        }
        // The rounding is a power of two (checked with the config): a mask
        // instead of a division.
        let mask = self.config.rounding - 1;
        Some(bytes.max(1).checked_add(mask)? & !mask)
    }

    /// `bytes` rounded, when that is a small block's size (a request the
    /// thread caches may serve) and the rounding is a plain power of two;
    /// `None` otherwise, also when the divisions round it (the pool hit's
    /// inlined path calls nothing: `DevicePool::miss` rounds those).
    #[inline]
    pub(super) fn small_size(&self, bytes: usize) -> Option<usize> {
        // 1 to `hit_limit` bytes (0 wraps above it: `DevicePool::miss`
        // serves it); none while the divisions round (the limit is 0).
        if bytes.wrapping_sub(1) >= self.hit_limit {
            return None;
        }
        // At most `hit_limit`, a multiple of the rounding within the small
        // blocks' limit (so `class_of` is SMALL), and no overflow.
        let mask = self.config.rounding - 1;
        Some((bytes + mask) & !mask)
    }

    /// Moves every thread cache's blocks back into the free lists
    /// (coalescing them); returns the busy bytes moved.
    fn flush_caches(&self, state: &mut State) -> usize {
        self.caches
            .flush_all(&mut |node, tracks| drop(state.insert_free(*node, tracks)))
    }

    /// Runs `work` on the (locked) state with the thread caches flushed
    /// into it, counting the change of the active bytes on the calling
    /// thread (coalescing can make idle bytes wait for a neighbour's work,
    /// and `work` may settle work).
    pub(super) fn flushed_in<T>(&self, state: &mut State, work: impl FnOnce(&mut State) -> T) -> T {
        let before = state.busy();
        let moved = self.flush_caches(state);
        let result = work(state);
        let delta = signed(state.busy()) - signed(before) - signed(moved);
        self.caches.active_changed(&mut self.caches.mine(), delta);
        result
    }

    /// A block of `size` bytes in `class` of `arena` from the free lists,
    /// growing the segment when none fits (a miss of the thread cache).
    /// A block of `size` bytes placed from `class` of `arena`'s free
    /// lists, the uses that may be queued on it, and its tag's gate.
    pub(super) fn alloc_from_state(
        &self,
        arena: usize,
        class: usize,
        size: usize,
    ) -> Result<(SegmentBlock, Tracks, Arc<UseGate>)> {
        let mut state = self.state();
        state.check_awake(arena)?;
        let before = state.busy();
        // This thread's whole blocks coalesce first, as they would have.
        let mut moved = self
            .caches
            .flush_mine(&mut |node, tracks| drop(state.insert_free(*node, tracks)));
        let placed = self.place(&mut state, arena, class, size, &mut moved);
        let placed = placed.and_then(|(offset, len, tracks)| {
            let segment = &state.arenas[arena].classes[class].segment;
            match segment.block(offset, len) {
                Ok(block) => Ok((block, tracks)),
                Err(error) => {
                    state.arenas[arena].classes[class].free.insert(offset, len, tracks);
                    if self.is_oversize(len) {
                        // Counted when placed or cached; now a free range.
                        state.stats.oversize_segments = state.stats.oversize_segments.saturating_sub(1);
                    }
                    Err(error)
                }
            }
        });
        let len = placed.as_ref().map_or(size, |(block, _)| block.len());
        if let Ok((block, _)) = &placed {
            if self.is_oversize(len) {
                state.stats.oversize_allocations += 1;
            }
            let State {
                arenas, watch, history, ..
            } = &mut *state;
            let tag = arenas[arena].tag.as_str();
            watch.handed_out((arena, class, block.offset()), block.address() as usize, len, Some(tag));
            history.record(HistoryAction::Alloc, block.address() as usize, len, tag);
            state.counters.handed_out(arena, class, len);
        } else if let Err(Error::PoolExhausted { requested, free, .. }) = &placed {
            let State { arenas, history, .. } = &mut *state;
            history.record_oom(*requested, *free, &arenas[arena].tag);
        }
        state.note_counters();
        let delta = signed(state.busy()) - signed(before) - signed(moved);
        let mut cache = self.caches.mine();
        match &placed {
            Ok(_) => self.caches.handed_out(&mut cache, len, delta + signed(len)),
            Err(_) => self.caches.active_changed(&mut cache, delta),
        }
        let gate = Arc::clone(&state.arenas[arena].gate);
        placed.map(|(block, tracks)| (block, tracks, gate))
    }

    /// Whether a block of `len` bytes is oversize
    /// ([`PoolConfig::max_split_size`]).
    fn is_oversize(&self, len: usize) -> bool {
        self.config.max_split_size.is_some_and(|max_split| len >= max_split)
    }

    /// A free range of at least `size` bytes in `class` of `arena`: a
    /// cached oversize block (for an oversize request, within the slack),
    /// a cached range, or newly mapped memory; its offset, length and
    /// tracks. Before growing, every thread's cached blocks are coalesced
    /// into the free lists (their busy bytes are added to `moved`), and
    /// past the garbage-collection threshold cached memory is given back.
    fn place(
        &self,
        state: &mut State,
        arena: usize,
        class: usize,
        size: usize,
        moved: &mut usize,
    ) -> Result<(usize, usize, Tracks)> {
        let capacity = state.arenas[arena].classes[class].segment.capacity();
        if size > capacity {
            // Larger than the whole reservation: nothing to flush, give back
            // or retry for.
            return Err(self.exhausted(
                state,
                size,
                format!("larger than the {capacity}-byte reservation"),
                None,
            ));
        }
        if let Some(limit) = state.limit
            && size > limit.bytes
        {
            let cause = format!("larger than {}", limit.describe());
            return Err(self.exhausted(state, size, cause, Some(limit.bytes)));
        }
        if self.is_oversize(size)
            && let Some(found) = state.arenas[arena].classes[class]
                .oversize
                .take(size, PoolConfig::OVERSIZE_SLACK)
        {
            return Ok(found);
        }
        let mut retried = false;
        let mut flushed = false;
        let mut collected = false;
        loop {
            if let Some((offset, tracks)) = state.arenas[arena].classes[class].free.take_best_fit(size) {
                if self.is_oversize(size) {
                    state.stats.oversize_segments += 1;
                }
                return Ok((offset, size, tracks));
            }
            if !flushed {
                flushed = true;
                *moved += self.flush_caches(state);
                continue;
            }
            if !collected {
                let before = history::mapped_sizes(&state.history, &state.arenas);
                let ran = state.collect_garbage(self.config.garbage_collection_threshold, (arena, class));
                let State { arenas, history, .. } = &mut *state;
                history.segments_changed(arenas, &before);
                if ran {
                    collected = true;
                    continue;
                }
            }
            let State {
                arenas,
                stats,
                limit,
                history,
                ..
            } = &mut *state;
            let capped = limit.and_then(|limit| {
                let more = arenas[arena].growth(class, size).ok()?;
                Some((limit.refuses(stats.reserved, more)?, limit.bytes))
            });
            let cap = capped.as_ref().map(|&(_, bytes)| bytes);
            let before = history::mapped_sizes(history, arenas);
            let grown = match capped {
                Some((cause, _)) => Err(cause),
                None => arenas[arena].grow(class, size, stats),
            };
            history.segments_changed(arenas, &before);
            match grown {
                Ok(()) => continue,
                Err(cause) if !retried => {
                    log::debug!("DevicePool: growing for {size} bytes failed ({cause}); emptying the cache");
                    retried = true;
                    state.stats.retries += 1;
                    if let Err(error) = state.empty_cache() {
                        log::warn!("DevicePool: emptying the cache for a retry: {error}");
                    }
                }
                Err(cause) => return Err(self.exhausted(state, size, cause, cap)),
            }
        }
    }

    /// Under a cap on reserved memory, room for what a wake of `tags`
    /// maps again: the cache is emptied first when the cap would refuse
    /// it, as an allocation's retry does; [`Error::PoolExhausted`] naming
    /// the cap when that is not enough (the tags stay asleep).
    pub(super) fn room_to_wake(&self, state: &mut State, tags: Option<&[&str]>) -> Result<()> {
        let Some(limit) = state.limit else {
            return Ok(());
        };
        let more = sleep::wake_growth(&state.arenas, tags);
        if limit.refuses(state.stats.reserved, more).is_none() {
            return Ok(());
        }
        let emptied = self.flushed_in(state, |state| {
            let emptied = state.empty_cache();
            state.note_counters();
            emptied
        });
        if let Err(error) = emptied {
            log::warn!("DevicePool: emptying the cache to make room for a wake: {error}");
        }
        match limit.refuses(state.stats.reserved, more) {
            None => Ok(()),
            Some(cause) => Err(self.exhausted(state, more, format!("waking: {cause}"), Some(limit.bytes))),
        }
    }

    /// [`Error::PoolExhausted`] for a request of `size` bytes, with `cause`
    /// and the cap that refused it.
    fn exhausted(&self, state: &mut State, size: usize, cause: String, limit: Option<usize>) -> Error {
        state.counters.ooms += 1;
        Error::PoolExhausted {
            requested: size,
            allocated: self.caches.totals().allocated,
            reserved: state.stats.reserved,
            free: state.arenas.iter().map(Arena::free_bytes).sum(),
            limit,
            cause,
        }
    }
}

/// `value` as a signed byte count (pool byte counts fit: they are bounded
/// by reserved address space).
fn signed(value: usize) -> isize {
    isize::try_from(value).unwrap_or(isize::MAX)
}

impl State {
    /// Gives `node`'s range to its free list with `tracks`; returns the
    /// node's hold on the pool, the caller's to drop (it may be the last).
    fn insert_free(&mut self, node: BlockNode, tracks: Tracks) -> Arc<Shared> {
        let BlockNode {
            block,
            pool,
            gate: _,
            arena,
            class,
            len: _,
        } = node;
        let (offset, len) = (block.offset(), block.len());
        self.watch.given_back(&(arena, class, offset));
        // The segment forgets the block before the free list offers it.
        drop(block);
        let oversize = pool.config.max_split_size.is_some_and(|max_split| len >= max_split);
        let target = &mut self.arenas[arena];
        if oversize {
            self.stats.oversize_allocations = self.stats.oversize_allocations.saturating_sub(1);
        }
        if oversize && target.asleep.is_none() {
            // Kept whole for a later oversize request.
            self.oversize_seq += 1;
            target.classes[class]
                .oversize
                .put(offset, len, tracks, self.oversize_seq);
        } else {
            if oversize {
                self.stats.oversize_segments = self.stats.oversize_segments.saturating_sub(1);
            }
            target.classes[class].free.insert(offset, len, tracks);
        }
        pool
    }

    pub(super) fn empty_cache(&mut self) -> Result<()> {
        self.release_oversize();
        // Chunks mapped earlier in the same request (a growth that failed
        // half-way) are counted before these unmaps, and the unmaps after
        // them: the counters see each change, not only the net one.
        self.counters.note_mappings(&self.arenas);
        let before = history::mapped_sizes(&self.history, &self.arenas);
        let mut first = None;
        for arena in &mut self.arenas {
            if let Err(error) = arena.empty_cache(&mut self.stats) {
                first.get_or_insert(error);
            }
        }
        self.history.segments_changed(&self.arenas, &before);
        self.counters.note_mappings(&self.arenas);
        first.map_or(Ok(()), Err)
    }

    /// Brings the counters of [`MemoryStats`] up to date with the
    /// mappings and the cached work.
    pub(super) fn note_counters(&mut self) {
        self.counters.note_mappings(&self.arenas);
        self.counters.note_active(&self.arenas);
        let counters = &mut self.counters;
        counters.oversize_allocations.level(self.stats.oversize_allocations);
        counters.oversize_segments.level(self.stats.oversize_segments);
    }

    /// Bytes of free ranges whose former work may still be queued.
    fn busy(&self) -> usize {
        self.arenas.iter().map(Arena::busy_bytes).sum()
    }

    /// Whether a tag is asleep.
    pub(super) fn any_asleep(&self) -> bool {
        self.arenas.iter().any(|arena| arena.asleep.is_some())
    }

    /// [`Error::PoolAsleep`] when `arena`'s tag is asleep.
    pub(super) fn check_awake(&self, arena: usize) -> Result<()> {
        match &self.arenas[arena] {
            asleep if asleep.asleep.is_some() => Err(Error::PoolAsleep {
                tag: asleep.tag.clone(),
            }),
            _ => Ok(()),
        }
    }

    /// The statistics, with the thread caches' counts.
    pub(super) fn stats_with(&self, caches: &CacheTotals) -> PoolStats {
        let mut stats = self.stats;
        stats.allocated = caches.allocated;
        stats.allocated_peak = caches.allocated_peak;
        stats.active = caches.allocated + caches.busy + self.busy();
        stats.active_peak = caches.active_peak.max(stats.active);
        let (allocations, frees, ..) = self.counters.cache_base;
        stats.allocations = caches.allocations.wrapping_sub(allocations);
        stats.frees = caches.frees.wrapping_sub(frees);
        stats
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        // The last block is gone: wait for the work on the cache before the
        // segments unmap; keep (leak) a segment whose work is unproven.
        let mut state = self.state();
        self.flush_caches(&mut state);
        state.arenas.iter_mut().for_each(Arena::settle_for_drop);
    }
}

impl Shared {
    /// Takes `node` back with the uses that may still be queued on it: a
    /// small block of the default tag whole to this thread's cache (unless
    /// a tag sleeps), others to their free list.
    ///
    /// `node` may hold the last reference to the pool: once a cache keeps
    /// it (the caches live in the pool), a flush may free the pool as soon
    /// as the cache is let go; the free list's path drops it last. So the
    /// pool is reached through a raw pointer, as `Arc::drop` reaches its
    /// counts, and no reference to it outlives either step.
    ///
    /// # Safety
    ///
    /// `this` points to the live pool that `node` holds.
    #[inline]
    pub(super) unsafe fn give_back(this: *const Self, node: Box<BlockNode>, tracks: Tracks) {
        // Small blocks are kept whole for the next request of their size;
        // large ones coalesce at once, which keeps large-pool fragmentation
        // low. The common case, with no call on any path; the rest is
        // `give_back_slowly`'s, a tail call. `put_idle` keeps only a block
        // of its hot stack's key: a small size of the default tag (only
        // `put` sets that key, for such blocks), so a large or tagged block
        // goes on without a test of its own here.
        // SAFETY: `node` holds the pool until a cache keeps it, and
        // `put_idle` keeps no reference across letting go of the cache.
        match unsafe { ThreadCaches::put_idle(&raw const (*this).caches, node, tracks) } {
            Ok(()) => {}
            // SAFETY: `node` holds the pool.
            Err((node, tracks)) => unsafe { Self::give_back_slowly(this, node, tracks) },
        }
    }

    /// [`Shared::give_back`] past its common case.
    ///
    /// # Safety
    ///
    /// As [`Shared::give_back`].
    #[inline(never)]
    unsafe fn give_back_slowly(this: *const Self, node: Box<BlockNode>, tracks: Tracks) {
        let (node, tracks) = if node.class == SMALL && node.arena == 0 {
            // SAFETY: `node` holds the pool until a cache keeps it, and
            // `put` keeps no reference across letting go of the cache.
            match unsafe { ThreadCaches::put(&raw const (*this).caches, node, tracks) } {
                Ok(()) => return,
                Err(given) => given,
            }
        } else {
            (node, tracks)
        };
        // SAFETY: `node` holds the pool; the reference ends with the call,
        // which hands the hold back to be dropped after it.
        let hold = unsafe { &*this }.give_back_to_state(*node, tracks);
        drop(hold); // last: it may be the last reference to the pool
    }

    /// Gives `node` to its free list (a large block, or a small one while
    /// the caches are bypassed); returns `node`'s hold on the pool, which
    /// may be the last reference to `self`, for the caller to drop once
    /// no reference to `self` remains.
    #[inline(never)]
    #[must_use = "the pool's hold is dropped by the caller"]
    fn give_back_to_state(&self, node: BlockNode, mut tracks: Tracks) -> Arc<Shared> {
        // The free list cuts and joins blocks: ranges within this one mean
        // nothing there.
        tracks.widen();
        let len = node.block.len();
        let mut state = self.state();
        if state.history.is_on() {
            let State { arenas, history, .. } = &mut *state;
            history.record_free(node.block.address() as usize, len, &arenas[node.arena].tag);
        }
        let before = state.busy();
        let (arena, class) = (node.arena, node.class);
        let hold = state.insert_free(node, tracks);
        state.counters.given_back(arena, class, len);
        state.note_counters();
        let delta = signed(state.busy()) - signed(before) - signed(len);
        self.caches.given_back(&mut self.caches.mine(), len, delta);
        drop(state);
        hold
    }
}

#[cfg(feature = "testing")]
impl crate::pool::watch::Watched for Shared {
    fn kind(&self) -> crate::pool::watch::PoolKind {
        crate::pool::watch::PoolKind::Device
    }

    fn device_id(&self) -> i32 {
        self.device.id()
    }

    fn start_watch(&self) {
        let mut state = self.state();
        state.watch.start();
        // Every block goes through the state from now on (the hit reads
        // the flag it already reads for sleep); the cached ones go back to
        // their free lists, as for a snapshot.
        self.caches.set_watched(true);
        self.flushed_in(&mut state, |_| ());
    }

    fn watched_now(&self) -> Vec<crate::pool::watch::WatchedBlock> {
        self.state().watch.live()
    }

    fn end_watch(&self) -> Vec<crate::pool::watch::WatchedBlock> {
        let mut state = self.state();
        self.caches.set_watched(false);
        state.watch.end()
    }

    fn held(&self, held: &mut crate::pool::watch::Held) {
        let state = self.state();
        for class in state.arenas.iter().flat_map(|arena| &arena.classes) {
            held.device_ranges
                .push((class.segment.base() as usize, class.segment.capacity()));
            held.physical.extend(class.segment.physical_handles());
        }
        held.host.extend(state.spares.addresses());
    }
}

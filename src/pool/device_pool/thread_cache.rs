//! [`ThreadCaches`]: whole freed blocks kept per thread in front of a
//! [`DevicePool`](crate::pool::DevicePool)'s shared state, with the counters that
//! keep its statistics exact without a lock shared by every thread.
//!
//! A pool hit holds only the calling thread's cache (with plain stores when
//! the thread owns its slot: [`CacheSlot`]), which no other thread holds
//! unless it shares the slot or the pool flushes the caches (a miss that
//! must grow, `empty_cache`, sleep, a snapshot, the drop). Order: the
//! pool's state, then a cache; no thread takes the state's lock while
//! holding a cache. The statistics read each cache's counts without
//! holding it (a snapshot of counts read one after another, exact when
//! no thread allocates meanwhile).
//!
//! **Counting.** Each cache counts the bytes handed out and given back
//! through it. The peaks need the sum of all caches at every moment, which
//! only a shared counter knows; to keep a shared write off the hit path,
//! each cache holds *headroom*: bytes already counted in the shared total
//! but not in use. A cache draws on its headroom when its bytes rise and
//! adds to it when they fall, touching the shared counter only when the
//! headroom runs out or passes a cap (one large chunk). So the shared total
//! is the true total plus every cache's headroom: it rises only when the
//! true total reaches it, and its peak is exact while one thread uses the
//! pool, and above the true peak by at most the other threads' headroom
//! otherwise (never below it).

use super::block::BlockNode;
use super::segments::arena::SMALL;
use crate::pool::per_thread::cache_slot::{CacheSlot, SlotHold, hold_all};
use crate::pool::per_thread::shared_total::SharedTotal;
use crate::pool::per_thread::thread_token::{named_token, token};
use crate::stream::Tracks;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::atomic::{AtomicU8, AtomicU64, AtomicUsize, Ordering};

/// Hashes the arena indexes and block sizes that key the whole-block
/// caches. They are numbers the pool made itself (no adversary picks
/// them), so one multiply each does the work of SipHash, which was a
/// quarter of a pool hit's instructions.
#[derive(Default, Clone, Copy)]
struct SizeHasher(u64);

impl SizeHasher {
    const MIX: u64 = 0x9E37_79B9_7F4A_7C15;
}

impl Hasher for SizeHasher {
    fn finish(&self) -> u64 {
        // The table indexes by the low bits: fold the high ones in (the
        // sizes are multiples of the rounding, so their low bits are 0).
        self.0 ^ (self.0 >> 29)
    }

    fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(byte)).wrapping_mul(Self::MIX);
        }
    }

    fn write_usize(&mut self, value: usize) {
        self.0 = (self.0 ^ value as u64).wrapping_mul(Self::MIX);
    }
}

/// A cached block with the uses that may still be queued on it.
pub(super) type Cached = (Box<BlockNode>, Tracks);

/// No key: what [`Blocks::hot_key`] is before the first block (no block
/// has size 0).
const NO_KEY: (usize, usize) = (usize::MAX, 0);

/// Whole blocks by arena and size. The stack used last (the *hot* one)
/// lives in the cache itself, so a loop allocating and freeing one size
/// reaches its blocks with one comparison: no index, no hash.
struct Blocks<V> {
    /// The key of `hot`, or [`NO_KEY`].
    hot_key: (usize, usize),
    /// The hot key's blocks.
    hot: Vec<V>,
    /// Where the hot key is in `stacks`, which holds an empty stack for it
    /// meanwhile (`usize::MAX` before the first key).
    hot_place: usize,
    /// `((arena, size), blocks)`, in the order the keys were first seen.
    stacks: Vec<((usize, usize), Vec<V>)>,
    /// Where each key is in `stacks`.
    index: HashMap<(usize, usize), usize, BuildHasherDefault<SizeHasher>>,
}

impl<V> Default for Blocks<V> {
    fn default() -> Self {
        Self {
            hot_key: NO_KEY,
            hot: Vec::new(),
            hot_place: usize::MAX,
            stacks: Vec::new(),
            index: HashMap::default(),
        }
    }
}

impl<V> Blocks<V> {
    #[inline]
    fn pop(&mut self, key: (usize, usize)) -> Option<V> {
        if key != self.hot_key && !self.heat(key) {
            return None;
        }
        self.hot.pop()
    }

    #[inline]
    fn push(&mut self, key: (usize, usize), value: V) {
        if key != self.hot_key {
            self.heat_or_add(key);
        }
        self.hot.push(value);
    }

    /// Makes the stack of `key` the hot one; `false` (nothing changed)
    /// for a key never seen.
    #[cold]
    #[inline(never)]
    fn heat(&mut self, key: (usize, usize)) -> bool {
        let Some(&place) = self.index.get(&key) else {
            return false;
        };
        self.heat_place(key, place);
        true
    }

    /// [`Blocks::heat`], adding a stack for a key seen for the first time.
    #[cold]
    #[inline(never)]
    fn heat_or_add(&mut self, key: (usize, usize)) {
        let place = match self.index.get(&key) {
            Some(&place) => place,
            None => self.add_stack(key),
        };
        self.heat_place(key, place);
    }

    /// A new, empty stack of `key`, indexed; its place.
    fn add_stack(&mut self, key: (usize, usize)) -> usize {
        self.stacks.push((key, Vec::new()));
        self.index.insert(key, self.stacks.len() - 1);
        self.stacks.len() - 1
    }

    /// Puts the hot stack back in its place, and takes the one at `place`
    /// (of `key`) out.
    fn heat_place(&mut self, key: (usize, usize), place: usize) {
        let place = if place < self.stacks.len() {
            place
        } else {
            // Never: `index` only names places in `stacks`. Were it to name
            // another, a new stack of `key` still makes `key` the hot key,
            // so that no block is ever filed under another size.
            self.add_stack(key)
        };
        if let Some((_, parked)) = self.stacks.get_mut(self.hot_place) {
            std::mem::swap(parked, &mut self.hot);
        }
        std::mem::swap(&mut self.stacks[place].1, &mut self.hot);
        self.hot_key = key;
        self.hot_place = place;
    }

    /// Every cached block, taken out (the keys stay known).
    fn drain(&mut self) -> impl Iterator<Item = V> + '_ {
        self.hot
            .drain(..)
            .chain(self.stacks.iter_mut().flat_map(|(_, blocks)| blocks.drain(..)))
    }
}

/// A reason to bypass the caches: a tag is asleep (blocks go through the
/// pool's state, which knows the tag sleeps).
const ASLEEP: u8 = 1;
/// A reason to bypass the caches for good: the pool's last handle is gone
/// (a cached block holds the pool, so nothing may stay).
const CLOSED: u8 = 2;

/// A reason to bypass the caches: a leak check of [`crate::testing`]
/// watches the pool (blocks go through the pool's state, which records
/// them).
#[cfg(feature = "testing")]
const WATCHED: u8 = 4;

/// A reason to bypass the caches: the pool records its memory history
/// (blocks go through the pool's state, which records them).
const RECORDING: u8 = 8;

/// The per-thread caches of one pool.
pub(super) struct ThreadCaches {
    /// A power of two of slots (never resized), so that a token masked by
    /// `mask` is always one's index.
    caches: Box<[CacheSlot<Cache, CacheCounts>]>,
    /// `caches.len() - 1`.
    mask: usize,
    /// Why blocks go through the pool's state instead ([`ASLEEP`],
    /// [`CLOSED`], [`RECORDING`], and with the feature `testing` `WATCHED`): one load
    /// tells a hit whether it may use a cache.
    bypass: AtomicU8,
    allocated: SharedTotal,
    active: SharedTotal,
    /// The most headroom a cache keeps.
    headroom_cap: usize,
}

/// Exclusive access to a cache until dropped.
pub(super) type Held<'a> = SlotHold<'a, Cache, CacheCounts>;

/// One thread's cache.
#[derive(Default)]
pub(super) struct Cache {
    blocks: Blocks<Cached>,
    allocated_headroom: usize,
    active_headroom: usize,
}

/// The counts of one cache, which the statistics read without holding it
/// (holding another thread's cache costs a process-wide barrier). Only the
/// cache's holder writes them, so a plain load and store update them.
#[derive(Default)]
pub(super) struct CacheCounts {
    /// Bytes of cached blocks whose former work may still be queued.
    busy: AtomicUsize,
    /// Bytes handed out here (a block may be freed on another thread
    /// than the one that took it: only the sums over every cache are
    /// meaningful).
    bytes_out: AtomicU64,
    /// Bytes given back here.
    bytes_back: AtomicU64,
    allocations: AtomicU64,
    frees: AtomicU64,
}

impl CacheCounts {
    /// Counts `size` bytes handed out.
    #[inline]
    fn handed_out(&self, size: usize) {
        let out = self.bytes_out.load(Ordering::Relaxed);
        self.bytes_out.store(out.wrapping_add(size as u64), Ordering::Relaxed);
        let allocations = self.allocations.load(Ordering::Relaxed);
        self.allocations.store(allocations + 1, Ordering::Relaxed);
    }

    /// Counts `len` bytes given back.
    #[inline]
    fn given_back(&self, len: usize) {
        let back = self.bytes_back.load(Ordering::Relaxed);
        self.bytes_back.store(back.wrapping_add(len as u64), Ordering::Relaxed);
        let frees = self.frees.load(Ordering::Relaxed);
        self.frees.store(frees + 1, Ordering::Relaxed);
    }

    /// Sets the busy bytes cached here.
    #[inline]
    fn set_busy(&self, busy: usize) {
        self.busy.store(busy, Ordering::Relaxed);
    }

    fn busy(&self) -> usize {
        self.busy.load(Ordering::Relaxed)
    }
}

/// What the caches hold together, for the statistics.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct CacheTotals {
    /// Bytes in live blocks.
    pub(super) allocated: usize,
    /// Cached bytes whose former work may still be queued.
    pub(super) busy: usize,
    pub(super) allocations: u64,
    pub(super) frees: u64,
    /// Bytes handed out, ever.
    pub(super) bytes_out: u64,
    /// Bytes given back, ever.
    pub(super) bytes_back: u64,
    pub(super) allocated_peak: usize,
    pub(super) active_peak: usize,
}

impl ThreadCaches {
    /// Caches for twice as many threads as the machine runs at once,
    /// rounded up to a power of two (more threads share them), keeping at
    /// most `headroom_cap` bytes of headroom each.
    pub(super) fn new(headroom_cap: usize) -> Self {
        // At most 2^16 slots, so that the power of two cannot overflow:
        // `slot` relies on a power-of-two count of at least one.
        let count = std::thread::available_parallelism()
            .map_or(4, |threads| threads.get().saturating_mul(2))
            .min(1 << 16)
            .next_power_of_two();
        Self {
            mask: count - 1,
            caches: (0..count)
                .map(|_| CacheSlot::new(Cache::default(), CacheCounts::default()))
                .collect(),
            bypass: AtomicU8::new(0),
            allocated: SharedTotal::default(),
            active: SharedTotal::default(),
            headroom_cap,
        }
    }

    /// The calling thread's slot and token.
    #[inline]
    fn my_slot(&self) -> (&CacheSlot<Cache, CacheCounts>, usize) {
        let token = token();
        (self.slot(token), token)
    }

    /// The slot of `token`: the count is a power of two, so a mask instead
    /// of a division, and no bounds test.
    #[inline(always)]
    fn slot(&self, token: usize) -> &CacheSlot<Cache, CacheCounts> {
        debug_assert!(self.caches.len().is_power_of_two() && self.mask == self.caches.len() - 1);
        // SAFETY: `mask` is `caches.len() - 1` for a power-of-two length,
        // both fixed when the caches were made, so the masked token is
        // below the length.
        unsafe { self.caches.get_unchecked(token & self.mask) }
    }

    /// The calling thread's cache, once no one else holds it.
    pub(super) fn mine(&self) -> Held<'_> {
        let (slot, token) = self.my_slot();
        slot.hold(token)
    }

    /// The calling thread's slot and token when it has a token (a thread
    /// without one has no slot of its own yet: `None`).
    #[inline(always)]
    fn my_named_slot(&self) -> Option<(&CacheSlot<Cache, CacheCounts>, usize)> {
        let token = named_token()?;
        Some((self.slot(token), token))
    }

    /// The pool hit's take: [`ThreadCaches::take`] in its common case
    /// alone (the thread owns its slot, the hot stack is of `(arena,
    /// size)`, its top block is idle, both headrooms cover `size`), with
    /// no call on any path; `None` otherwise, and the caller then calls
    /// `take`, which does the rest. Nothing is changed on `None`.
    #[inline(always)]
    pub(super) fn take_idle(&self, arena: usize, size: usize) -> Option<Cached> {
        let (slot, token) = self.my_named_slot()?;
        let work = move |cache: &mut Cache, counts: &CacheCounts, ()| {
            let blocks = &mut cache.blocks;
            if self.bypassed()
                || blocks.hot_key != (arena, size)
                || cache.allocated_headroom < size
                || cache.active_headroom < size
                || !blocks.hot.last()?.1.is_empty()
            {
                return None;
            }
            let taken = blocks.hot.pop()?;
            counts.handed_out(size);
            // Idle bytes become live: both totals rise, within the
            // headrooms.
            cache.allocated_headroom -= size;
            cache.active_headroom -= size;
            Some(taken)
        };
        // SAFETY: the slot lives in `self`, borrowed for the call.
        unsafe { CacheSlot::with_owned(slot, token, (), work) }.ok().flatten()
    }

    /// The pool hit's put: [`ThreadCaches::put`] in its common case alone
    /// (the thread owns its slot, the block is idle, the hot stack is of
    /// its key and has room, the headrooms stay within their cap), with
    /// no call on any path; gives the block back otherwise, and the
    /// caller then calls `put`, which does the rest. Nothing is changed
    /// when it gives the block back.
    ///
    /// # Safety
    ///
    /// As [`ThreadCaches::put`].
    #[inline(always)]
    pub(super) unsafe fn put_idle(
        this: *const Self,
        node: Box<BlockNode>,
        tracks: Tracks,
    ) -> std::result::Result<(), Cached> {
        // SAFETY: live (the caller's promise); the reference ends here.
        let Some((slot, token)) = unsafe { &*this }.my_named_slot() else {
            return Err((node, tracks));
        };
        let slot: *const CacheSlot<Cache, CacheCounts> = slot;
        let work = move |cache: &mut Cache, counts: &CacheCounts, (node, tracks): Cached| {
            // SAFETY: live while the slot is held.
            let caches = unsafe { &*this };
            let len = node.block.len();
            let blocks = &mut cache.blocks;
            if caches.bypassed()
                || blocks.hot_key != (node.arena, len)
                || blocks.hot.len() == blocks.hot.capacity()
                || cache.allocated_headroom + len > caches.headroom_cap
                || cache.active_headroom + len > caches.headroom_cap
                || !tracks.is_empty()
            {
                return Err((node, tracks));
            }
            // The hot key is a small size of the default tag (see
            // `Shared::give_back`).
            debug_assert!(node.class == SMALL && node.arena == 0, "a large or tagged block cached");
            counts.given_back(len);
            // Live bytes become idle: both totals fall, within the
            // headrooms' cap.
            cache.allocated_headroom += len;
            cache.active_headroom += len;
            let len = blocks.hot.len();
            // SAFETY: below the capacity (tested above), so the slot
            // at `len` is allocated and unused; it is written before
            // the length covers it. (`push` is not inlined here, and
            // its call made a third of this path.)
            unsafe {
                blocks.hot.as_mut_ptr().add(len).write((node, tracks));
                blocks.hot.set_len(len + 1);
            }
            Ok(())
        };
        // SAFETY: the slot lives in `*this`, live until the slot is let
        // go; the closure's references end before that.
        unsafe { CacheSlot::with_owned(slot, token, (node, tracks), work) }.and_then(|kept| kept)
    }

    /// Takes a whole cached block of `size` bytes of `arena`, counted as
    /// handed out; `None` on a miss or while the caches are bypassed.
    #[inline]
    pub(super) fn take(&self, arena: usize, size: usize) -> Option<Cached> {
        let (slot, token) = self.my_slot();
        // Held by a flush (or a thread sharing the slot): a miss.
        // SAFETY: the slot lives in `self`, borrowed for the call.
        unsafe {
            CacheSlot::with_held(slot, token, (), move |cache, counts, ()| {
                if self.bypassed() {
                    return None;
                }
                let (block, tracks) = cache.blocks.pop((arena, size))?;
                counts.handed_out(size);
                if tracks.is_empty() {
                    // Idle bytes become live: both totals rise.
                    self.both_rise(cache, size);
                } else {
                    // Busy bytes become live: the active ones stay as they were.
                    counts.set_busy(counts.busy() - size);
                    self.allocated.rise(&mut cache.allocated_headroom, size);
                }
                Some((block, tracks))
            })
        }
        .ok()
        .flatten()
    }

    /// Keeps a freed block whole for the next request of its size, counted
    /// as given back; gives it back to the caller while the caches are
    /// bypassed or another holds this thread's cache.
    ///
    /// Reached through a raw pointer, as `Arc::drop` reaches its counts:
    /// `node` may hold the last reference to the pool that owns these
    /// caches, and once it is in a cache, the store that lets go of the
    /// slot lets a flush free the pool. No reference to `*this` lives
    /// across that store.
    ///
    /// # Safety
    ///
    /// `this` points to live caches, kept alive until this call lets go
    /// of its slot (by `node`'s hold on their pool, or the caller's).
    #[inline]
    pub(super) unsafe fn put(
        this: *const Self,
        node: Box<BlockNode>,
        tracks: Tracks,
    ) -> std::result::Result<(), Cached> {
        // SAFETY: live (the caller's promise); the reference ends here.
        let (slot, token) = unsafe { &*this }.my_slot();
        let slot: *const CacheSlot<Cache, CacheCounts> = slot;
        let work = move |cache: &mut Cache, counts: &CacheCounts, (node, mut tracks): Cached| {
            // SAFETY: live while the slot is held.
            let caches = unsafe { &*this };
            if caches.bypassed() {
                return Err((node, tracks));
            }
            let (arena, len) = (node.arena, node.block.len());
            counts.given_back(len);
            if tracks.is_empty() {
                // Live bytes become idle: both totals fall.
                caches.both_fall(cache, len);
            } else {
                // The cached block may be handed out whole or joined with
                // its neighbours: its uses cover all of it from here. Off
                // the common path, where there is nothing to widen.
                tracks.widen();
                // Live bytes stay active while their work may be queued.
                counts.set_busy(counts.busy() + len);
                caches
                    .allocated
                    .fall(&mut cache.allocated_headroom, len, caches.headroom_cap);
            }
            cache.blocks.push((arena, len), (node, tracks));
            Ok(())
        };
        // SAFETY: the slot lives in `*this`, live until the slot is let
        // go; the closure's references end before that.
        unsafe { CacheSlot::with_held(slot, token, (node, tracks), work) }.and_then(|kept| kept)
    }

    /// The allocated and the active bytes both rose by `by` (a hit of an
    /// idle block): one test on the common path, where both headrooms
    /// cover it.
    #[inline(always)]
    fn both_rise(&self, cache: &mut Cache, by: usize) {
        if cache.allocated_headroom >= by && cache.active_headroom >= by {
            cache.allocated_headroom -= by;
            cache.active_headroom -= by;
        } else {
            self.allocated.rise(&mut cache.allocated_headroom, by);
            self.active.rise(&mut cache.active_headroom, by);
        }
    }

    /// The allocated and the active bytes both fell by `by`.
    #[inline(always)]
    fn both_fall(&self, cache: &mut Cache, by: usize) {
        cache.allocated_headroom += by;
        cache.active_headroom += by;
        if cache.allocated_headroom > self.headroom_cap || cache.active_headroom > self.headroom_cap {
            self.allocated.fall(&mut cache.allocated_headroom, 0, self.headroom_cap);
            self.active.fall(&mut cache.active_headroom, 0, self.headroom_cap);
        }
    }

    /// Counts `size` bytes handed out through `cache`, the active bytes
    /// having changed by `active`.
    pub(super) fn handed_out(&self, cache: &mut Held<'_>, size: usize, active: isize) {
        let (cache, counts) = cache.parts();
        counts.handed_out(size);
        self.allocated.rise(&mut cache.allocated_headroom, size);
        self.active
            .change(&mut cache.active_headroom, active, self.headroom_cap);
    }

    /// Counts `len` bytes given back through `cache`, the active bytes
    /// having changed by `active`.
    pub(super) fn given_back(&self, cache: &mut Held<'_>, len: usize, active: isize) {
        let (cache, counts) = cache.parts();
        counts.given_back(len);
        self.allocated
            .fall(&mut cache.allocated_headroom, len, self.headroom_cap);
        self.active
            .change(&mut cache.active_headroom, active, self.headroom_cap);
    }

    /// Counts a change of the active bytes made by the pool's state on
    /// behalf of the calling thread (settled work, coalescing).
    pub(super) fn active_changed(&self, cache: &mut Held<'_>, delta: isize) {
        self.active.change(&mut cache.active_headroom, delta, self.headroom_cap);
    }

    /// Sets whether the caches are bypassed (while a tag sleeps).
    pub(super) fn set_bypass(&self, bypass: bool) {
        self.set_reason(ASLEEP, bypass);
    }

    /// Sets or clears one reason (a flag) to bypass the caches.
    fn set_reason(&self, reason: u8, on: bool) {
        if on {
            self.bypass.fetch_or(reason, Ordering::Relaxed);
        } else {
            self.bypass.fetch_and(!reason, Ordering::Relaxed);
        }
    }

    /// Sets whether a leak check watches (the caches are bypassed
    /// meanwhile). Like [`ThreadCaches::set_bypass`], flush every cache
    /// after setting it.
    #[cfg(feature = "testing")]
    pub(super) fn set_watched(&self, watched: bool) {
        self.set_reason(WATCHED, watched);
    }

    /// Sets whether the pool records its memory history (the caches are
    /// bypassed meanwhile). Like [`ThreadCaches::set_bypass`], flush every
    /// cache after setting it.
    pub(super) fn set_recording(&self, recording: bool) {
        self.set_reason(RECORDING, recording);
    }

    /// Bypasses the caches for good (the pool's last handle is gone).
    pub(super) fn close(&self) {
        self.bypass.fetch_or(CLOSED, Ordering::Relaxed);
    }

    /// Whether blocks go through the pool's state instead. Read while
    /// holding a cache: whoever sets it and then flushes every cache
    /// (holding each in turn) leaves no block in them.
    #[inline]
    fn bypassed(&self) -> bool {
        self.bypass.load(Ordering::Relaxed) != 0
    }

    /// Empties the calling thread's cache through `sink`; returns the busy
    /// bytes moved.
    pub(super) fn flush_mine(&self, sink: &mut impl FnMut(Box<BlockNode>, Tracks)) -> usize {
        flush(&mut self.mine(), sink)
    }

    /// Empties every cache through `sink`; returns the busy bytes moved.
    pub(super) fn flush_all(&self, sink: &mut impl FnMut(Box<BlockNode>, Tracks)) -> usize {
        hold_all(&self.caches).iter_mut().map(|cache| flush(cache, sink)).sum()
    }

    /// Starts the allocated and active peaks again from the totals now,
    /// `cache` (the caller's) giving its headroom back first.
    pub(super) fn reset_peaks(&self, cache: &mut Held<'_>) {
        let (cache, _) = cache.parts();
        self.allocated.reset_peak(&mut cache.allocated_headroom);
        self.active.reset_peak(&mut cache.active_headroom);
    }

    /// The caches' counts together.
    pub(super) fn totals(&self) -> CacheTotals {
        let mut totals = CacheTotals::default();
        for counts in self.caches.iter().map(CacheSlot::shared) {
            totals.bytes_out = totals.bytes_out.wrapping_add(counts.bytes_out.load(Ordering::Relaxed));
            totals.bytes_back = totals
                .bytes_back
                .wrapping_add(counts.bytes_back.load(Ordering::Relaxed));
            totals.busy += counts.busy();
            totals.allocations += counts.allocations.load(Ordering::Relaxed);
            totals.frees += counts.frees.load(Ordering::Relaxed);
        }
        // Read one cache after another: a block handed out by a cache read
        // earlier and given back to one read later may count as freed only.
        totals.allocated = usize::try_from(totals.bytes_out.saturating_sub(totals.bytes_back)).unwrap_or(usize::MAX);
        totals.allocated_peak = self.allocated.peak().max(totals.allocated);
        totals.active_peak = self.active.peak();
        totals
    }
}

/// Empties the held cache through `sink`; returns the busy bytes moved.
fn flush(cache: &mut Held<'_>, sink: &mut impl FnMut(Box<BlockNode>, Tracks)) -> usize {
    let (cache, counts) = cache.parts();
    for (node, tracks) in cache.blocks.drain() {
        sink(node, tracks);
    }
    let busy = counts.busy();
    counts.set_busy(0);
    busy
}

#[cfg(test)]
mod tests {
    use super::Blocks;

    /// Stacks survive turns of which key is hot: every block comes back
    /// from its own key, last in first out, and a drain finds the rest.
    #[test]
    fn blocks_keep_each_key_apart_across_turns() {
        let mut blocks = Blocks::default();
        assert_eq!(blocks.pop((0, 512)), None, "an unseen key is a miss");
        blocks.push((0, 512), 1);
        blocks.push((0, 512), 2);
        blocks.push((1, 512), 10);
        blocks.push((0, 1024), 20);
        assert_eq!(blocks.pop((0, 512)), Some(2));
        blocks.push((1, 512), 11);
        assert_eq!(blocks.pop((0, 1024)), Some(20));
        assert_eq!(blocks.pop((0, 1024)), None, "a known key, emptied");
        assert_eq!(blocks.pop((1, 512)), Some(11));
        assert_eq!(blocks.pop((7, 7)), None, "an unseen key leaves the hot one");
        assert_eq!(blocks.pop((1, 512)), Some(10));
        blocks.push((0, 1024), 21);
        let mut rest: Vec<i32> = blocks.drain().collect();
        rest.sort_unstable();
        assert_eq!(rest, [1, 21]);
        assert_eq!(blocks.pop((0, 512)), None, "drained");
        blocks.push((0, 512), 3);
        assert_eq!(blocks.pop((0, 512)), Some(3), "keys stay known after a drain");
    }

    /// Were the index to name a place that is not there, a push still
    /// files the block under its own key, never under the hot one.
    #[test]
    fn a_stale_index_never_files_a_block_under_another_key() {
        let mut blocks = Blocks::default();
        blocks.push((0, 512), 1);
        blocks.index.insert((0, 1024), 99); // no stack at 99
        blocks.push((0, 1024), 2);
        assert_eq!(blocks.pop((0, 512)), Some(1));
        assert_eq!(blocks.pop((0, 1024)), Some(2));
        assert_eq!(blocks.pop((0, 1024)), None);
    }
}

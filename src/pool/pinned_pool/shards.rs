//! The [`PinnedPool`](super::PinnedPool)'s cached buffers and counts, in
//! shards: each thread allocates from and gives back to the shard of its
//! token (a [`CacheSlot`], which the thread that first uses it holds with
//! plain stores), so a hit makes no atomic read-modify-write and two
//! threads' hits share no cache line.
//!
//! **Holds.** A hit holds its own shard ([`CacheSlot::with_owned`], the owner's hold; any other hold goes the slow way). The
//! slow paths hold one shard at a time with [`CacheSlot::hold`] (a
//! give-back that finds its shard held by someone else waits for it), or
//! every shard at once with [`hold_all`] (a steal, `empty_cache`, the
//! pool's drop, a leak check's `held`), in index order. No one waits for a
//! shard while holding another except through `hold_all`, whose holders
//! take them in the same order: no hold waits on a holder that waits.
//!
//! **Counting.** Each shard counts what goes through it, in atomics of the
//! slot's shared part that only its holder writes (a load and a store, no
//! read-modify-write), so the statistics read them without holding; the
//! statistics are the sums. A buffer may leave through one shard and come
//! back through another, so a shard's own counts may go below zero
//! (signed); the sums are exact when no thread allocates meanwhile. The
//! peak of the bytes handed out needs the sum at every moment, which only
//! a shared counter knows; to keep that write off the hit path, each
//! shard holds *headroom*: bytes counted in the shared total but not
//! handed out ([`SharedTotal`], as the device pool's thread caches count:
//! the total's peak is exact while one thread uses the pool, and above the
//! true peak by at most the other shards' headroom, [`HEADROOM_CAP`] each).

use crate::memory::PinnedHostBuf;
use crate::pool::per_thread::cache_slot::CacheSlot;
#[cfg(doc)]
use crate::pool::per_thread::cache_slot::hold_all;
pub(super) use crate::pool::per_thread::shared_total::SharedTotal;
use crate::stream::Tracks;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicIsize, AtomicU64, Ordering};

/// Shards per pool, a power of two (a thread's is its token masked):
/// more than the threads that usually share a pinned pool, few enough
/// that summing them for the statistics stays cheap.
pub(super) const SHARDS: usize = 8;
const _: () = assert!(SHARDS.is_power_of_two(), "a thread's shard is its token masked");

/// The most headroom a shard keeps (see the module's notes).
pub(super) const HEADROOM_CAP: usize = 16 << 20;

/// A cached buffer with the uses that may still be queued on it.
pub(super) type Cached = (PinnedHostBuf<u8>, Tracks);

/// One shard: its cached buffers (held) and its counts (read by anyone).
pub(super) type Shard = CacheSlot<ShardState, Counts>;

/// A new shard, empty.
pub(super) fn new_shard() -> Shard {
    CacheSlot::new(ShardState::default(), Counts::default())
}

/// The shard of the thread whose token is `token`.
#[inline(always)]
pub(super) fn shard_of(token: usize) -> usize {
    token & (SHARDS - 1)
}

/// A shard's buffers, for its holder.
pub(super) struct ShardState {
    /// Cached buffers of a power-of-two size, at the power's exponent.
    powers: [Vec<Cached>; usize::BITS as usize],
    /// Cached buffers of other sizes (requests above the rounding
    /// threshold), by size.
    others: BTreeMap<usize, Vec<Cached>>,
    /// Bytes counted in the shared total of bytes handed out but not
    /// handed out through this shard.
    headroom: usize,
}

impl Default for ShardState {
    fn default() -> Self {
        Self {
            powers: std::array::from_fn(|_| Vec::new()),
            others: BTreeMap::new(),
            headroom: 0,
        }
    }
}

/// One shard's counts (signed: see the module's notes), written by the
/// shard's holder alone, read by anyone.
#[derive(Default)]
pub(super) struct Counts {
    allocated: AtomicIsize,
    requested: AtomicIsize,
    cached_bytes: AtomicIsize,
    hits: AtomicU64,
    misses: AtomicU64,
}

/// A snapshot of counts, or their sum.
#[derive(Default, Clone, Copy)]
pub(super) struct CountsNow {
    pub(super) allocated: isize,
    pub(super) requested: isize,
    pub(super) cached_bytes: isize,
    pub(super) hits: u64,
    pub(super) misses: u64,
}

/// Adds `by` to `counter`, which only the caller (the shard's holder)
/// writes: a load and a store.
#[inline(always)]
fn add(counter: &AtomicIsize, by: isize) {
    counter.store(counter.load(Ordering::Relaxed).wrapping_add(by), Ordering::Relaxed);
}

/// Adds 1 to `counter`, as [`add`].
#[inline(always)]
fn bump(counter: &AtomicU64) {
    counter.store(counter.load(Ordering::Relaxed).wrapping_add(1), Ordering::Relaxed);
}

impl Counts {
    /// Changes the cached bytes by `by` (the caller holds the shard).
    #[inline]
    pub(super) fn cached(&self, by: isize) {
        add(&self.cached_bytes, by);
    }

    /// Counts a miss (the caller holds the shard).
    pub(super) fn miss(&self) {
        bump(&self.misses);
    }

    /// The cached bytes counted here.
    pub(super) fn cached_bytes(&self) -> isize {
        self.cached_bytes.load(Ordering::Relaxed)
    }

    /// Adds these counts to `sum` (read without holding the shard).
    pub(super) fn add_to(&self, sum: &mut CountsNow) {
        sum.allocated += self.allocated.load(Ordering::Relaxed);
        sum.requested += self.requested.load(Ordering::Relaxed);
        sum.cached_bytes += self.cached_bytes.load(Ordering::Relaxed);
        sum.hits += self.hits.load(Ordering::Relaxed);
        sum.misses += self.misses.load(Ordering::Relaxed);
    }
}

impl ShardState {
    fn bucket(&mut self, size: usize) -> &mut Vec<Cached> {
        if size.is_power_of_two() {
            &mut self.powers[size.trailing_zeros() as usize]
        } else {
            self.others.entry(size).or_default()
        }
    }

    /// A cached buffer of `size` bytes, if this shard has one: inlined
    /// for a power of two (the hit then keeps the buffer in registers; a
    /// call returned it through memory, read back across stores of other
    /// widths, which the processor cannot forward).
    #[inline(always)]
    pub(super) fn take(&mut self, size: usize) -> Option<Cached> {
        if size.is_power_of_two() {
            self.powers[size.trailing_zeros() as usize].pop()
        } else {
            self.take_other(size)
        }
    }

    /// [`ShardState::take`] of a size above the rounding threshold.
    #[cold]
    #[inline(never)]
    fn take_other(&mut self, size: usize) -> Option<Cached> {
        let bucket = self.others.get_mut(&size)?;
        let found = bucket.pop();
        if bucket.is_empty() {
            self.others.remove(&size);
        }
        found
    }

    /// Every cached buffer of `size` bytes, taken out.
    pub(super) fn take_bucket(&mut self, size: usize) -> Vec<Cached> {
        if size.is_power_of_two() {
            std::mem::take(&mut self.powers[size.trailing_zeros() as usize])
        } else {
            self.others.remove(&size).unwrap_or_default()
        }
    }

    /// A hit: a cached buffer of `size` bytes for a request of `bytes`,
    /// counted in `counts` and, beyond the headroom, in `total`.
    #[inline(always)]
    pub(super) fn hit(&mut self, counts: &Counts, total: &SharedTotal, size: usize, bytes: usize) -> Option<Cached> {
        let found = self.take(size)?;
        bump(&counts.hits);
        counts.cached(-(size as isize));
        self.count_out(counts, total, size, bytes);
        Some(found)
    }

    /// Caches `buffer` in its size's bucket: inlined for a power of two
    /// whose bucket has room (as [`ShardState::take`]).
    #[inline(always)]
    pub(super) fn keep(&mut self, cached: Cached) {
        let size = cached.0.capacity();
        if size.is_power_of_two() {
            let bucket = &mut self.powers[size.trailing_zeros() as usize];
            if bucket.len() < bucket.capacity() {
                let len = bucket.len();
                // SAFETY: below the capacity (tested above), so the place
                // at `len` is allocated and unused; it is written before
                // the length covers it.
                unsafe {
                    bucket.as_mut_ptr().add(len).write(cached);
                    bucket.set_len(len + 1);
                }
                return;
            }
        }
        self.keep_slowly(cached);
    }

    /// [`ShardState::keep`] past its common case.
    #[cold]
    #[inline(never)]
    fn keep_slowly(&mut self, cached: Cached) {
        let size = cached.0.capacity();
        self.bucket(size).push(cached);
    }

    /// Caches a buffer given back for a request of `bytes`, counted in
    /// `counts` and, beyond the headroom's cap, in `total`.
    #[inline(always)]
    pub(super) fn keep_given_back(&mut self, counts: &Counts, total: &SharedTotal, cached: Cached, bytes: usize) {
        let size = cached.0.capacity();
        self.count_back(counts, total, size, bytes);
        counts.cached(size as isize);
        self.keep(cached);
    }

    /// Every cached buffer, taken out.
    pub(super) fn take_all(&mut self) -> Vec<Cached> {
        let mut all: Vec<Cached> = self.powers.iter_mut().flat_map(std::mem::take).collect();
        all.extend(std::mem::take(&mut self.others).into_values().flatten());
        all
    }

    /// The addresses of the cached buffers.
    #[cfg(feature = "testing")]
    pub(super) fn cached_addresses(&self) -> impl Iterator<Item = u64> + '_ {
        let others = self.others.values().flatten();
        self.powers
            .iter()
            .flatten()
            .chain(others)
            .map(|(buffer, _)| buffer.as_ptr() as u64)
    }

    /// `size` bytes handed out for a request of `bytes`, counted in
    /// `counts` and, beyond the headroom, in `total`.
    #[inline(always)]
    pub(super) fn count_out(&mut self, counts: &Counts, total: &SharedTotal, size: usize, bytes: usize) {
        add(&counts.allocated, size as isize);
        add(&counts.requested, bytes as isize);
        total.rise(&mut self.headroom, size);
    }

    /// `size` bytes of a request of `bytes` given back, counted in
    /// `counts` and, beyond the headroom's cap, in `total`.
    #[inline(always)]
    pub(super) fn count_back(&mut self, counts: &Counts, total: &SharedTotal, size: usize, bytes: usize) {
        add(&counts.allocated, -(size as isize));
        add(&counts.requested, -(bytes as isize));
        total.fall(&mut self.headroom, size, HEADROOM_CAP);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now(counts: &Counts) -> CountsNow {
        let mut sum = CountsNow::default();
        counts.add_to(&mut sum);
        sum
    }

    #[test]
    fn headroom_keeps_the_shared_total_still_until_it_runs_out() {
        let total = SharedTotal::default();
        let counts = Counts::default();
        let mut shard = ShardState::default();
        shard.count_out(&counts, &total, 4096, 4000);
        assert_eq!((total.now(), total.peak()), (4096, 4096));
        shard.count_back(&counts, &total, 4096, 4000);
        // Kept as headroom: the next hit writes nothing shared.
        assert_eq!(total.now(), 4096);
        shard.count_out(&counts, &total, 4096, 10);
        assert_eq!((total.now(), total.peak()), (4096, 4096));
        shard.count_out(&counts, &total, 8192, 8192);
        assert_eq!(total.peak(), 4096 + 8192);
        shard.count_back(&counts, &total, 8192, 8192);
        shard.count_back(&counts, &total, 4096, 10);
        shard.count_out(&counts, &total, HEADROOM_CAP + 1, 1);
        shard.count_back(&counts, &total, HEADROOM_CAP + 1, 1);
        // Past the cap, the excess goes back to the shared total.
        assert_eq!(total.now(), HEADROOM_CAP);
        let counted = now(&counts);
        assert_eq!((counted.allocated, counted.requested), (0, 0));
    }

    #[test]
    fn threads_have_shards_by_token() {
        use crate::pool::per_thread::thread_token::token;
        let mine = shard_of(token());
        assert_eq!(mine, shard_of(token()), "a thread keeps its shard");
        let theirs = std::thread::spawn(|| shard_of(token()))
            .join()
            .expect("the other thread");
        assert!(mine < SHARDS && theirs < SHARDS);
    }

    #[test]
    fn a_hit_and_a_give_back_count_in_the_shards_atomics() {
        let device = crate::Device::new(0).expect("the software device");
        let total = SharedTotal::default();
        let counts = Counts::default();
        let mut shard = ShardState::default();
        let buffer = PinnedHostBuf::<u8>::zeroed(&device, 4096).expect("a buffer");
        shard.keep_given_back(&counts, &total, (buffer, Tracks::default()), 100);
        assert_eq!(now(&counts).cached_bytes, 4096);
        assert!(
            shard.hit(&counts, &total, 8192, 8000).is_none(),
            "no buffer of that size"
        );
        let (buffer, _) = shard.hit(&counts, &total, 4096, 4000).expect("the cached buffer");
        assert_eq!(buffer.capacity(), 4096);
        let counted = now(&counts);
        assert_eq!(
            (counted.allocated, counted.requested, counted.cached_bytes, counted.hits),
            (0, 3900, 0, 1)
        );
    }
}

//! The [`PinnedPool`](super::PinnedPool)'s cached buffers and counts, in
//! shards: each thread allocates from and gives back to a shard of its
//! own (threads take shards in turn), so two threads' hits take no common
//! lock and write no common counter.
//!
//! **Counting.** Each shard counts what goes through it; the statistics
//! are the sums. A buffer may leave through one shard and come back
//! through another, so a shard's own counts may go below zero (signed);
//! the sums are exact when no thread allocates meanwhile. The peak of the
//! bytes handed out needs the sum at every moment, which only a shared
//! counter knows; to keep that write off the hit path, each shard holds
//! *headroom*: bytes counted in the shared total but not handed out. A
//! shard draws on its headroom when its bytes rise and adds to it when
//! they fall, writing the shared total only when the headroom runs out or
//! passes [`HEADROOM_CAP`]. The shared total is then the true total plus
//! every shard's headroom: its peak is exact while one thread uses the
//! pool, and above the true peak by at most the other shards' headroom
//! otherwise (never below it).

use crate::memory::PinnedHostBuf;
use crate::stream::Tracks;
use std::cell::Cell;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};

/// Shards per pool: more than the threads that usually share a pinned
/// pool, few enough that summing them for the statistics stays cheap.
pub(super) const SHARDS: usize = 8;

/// The most headroom a shard keeps (see the module's notes).
pub(super) const HEADROOM_CAP: usize = 16 << 20;

/// A cached buffer with the uses that may still be queued on it.
pub(super) type Cached = (PinnedHostBuf<u8>, Tracks);

/// One shard: its cached buffers by size and its counts. Aligned to its
/// own cache lines, so that two threads' shards never share one.
#[repr(align(128))]
pub(super) struct Shard {
    state: Mutex<ShardState>,
}

/// A shard's buffers and counts, under its lock.
pub(super) struct ShardState {
    /// Cached buffers of a power-of-two size, at the power's exponent.
    powers: [Vec<Cached>; usize::BITS as usize],
    /// Cached buffers of other sizes (requests above the rounding
    /// threshold), by size.
    others: BTreeMap<usize, Vec<Cached>>,
    pub(super) counts: Counts,
    /// Bytes counted in the shared total of bytes handed out but not
    /// handed out through this shard.
    headroom: usize,
}

impl Default for ShardState {
    fn default() -> Self {
        Self {
            powers: std::array::from_fn(|_| Vec::new()),
            others: BTreeMap::new(),
            counts: Counts::default(),
            headroom: 0,
        }
    }
}

/// One shard's counts (signed: see the module's notes).
#[derive(Default, Clone, Copy)]
pub(super) struct Counts {
    pub(super) allocated: isize,
    pub(super) requested: isize,
    pub(super) cached_bytes: isize,
    pub(super) hits: u64,
    pub(super) misses: u64,
}

impl Shard {
    pub(super) fn new() -> Self {
        Self {
            state: Mutex::new(ShardState::default()),
        }
    }

    pub(super) fn lock(&self) -> MutexGuard<'_, ShardState> {
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// [`Shard::lock`] of a value being dropped: no other thread holds it.
    pub(super) fn get_mut(&mut self) -> &mut ShardState {
        self.state.get_mut().unwrap_or_else(|poisoned| poisoned.into_inner())
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

    /// A cached buffer of `size` bytes, if this shard has one.
    #[inline]
    pub(super) fn take(&mut self, size: usize) -> Option<Cached> {
        if size.is_power_of_two() {
            self.powers[size.trailing_zeros() as usize].pop()
        } else {
            let bucket = self.others.get_mut(&size)?;
            let found = bucket.pop();
            if bucket.is_empty() {
                self.others.remove(&size);
            }
            found
        }
    }

    /// Caches `buffer` in its size's bucket.
    #[inline]
    pub(super) fn keep(&mut self, cached: Cached) {
        let size = cached.0.capacity();
        self.bucket(size).push(cached);
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

    /// `size` bytes handed out for a request of `bytes`, counted here and,
    /// beyond the headroom, in `total`.
    #[inline]
    pub(super) fn count_out(&mut self, total: &SharedTotal, size: usize, bytes: usize) {
        self.counts.allocated += size as isize;
        self.counts.requested += bytes as isize;
        if self.headroom >= size {
            self.headroom -= size;
        } else {
            total.rise(size - self.headroom);
            self.headroom = 0;
        }
    }

    /// `size` bytes of a request of `bytes` given back, counted here and,
    /// beyond the headroom's cap, in `total`.
    #[inline]
    pub(super) fn count_back(&mut self, total: &SharedTotal, size: usize, bytes: usize) {
        self.counts.allocated -= size as isize;
        self.counts.requested -= bytes as isize;
        self.headroom += size;
        if self.headroom > HEADROOM_CAP {
            total.fall(self.headroom - HEADROOM_CAP);
            self.headroom = HEADROOM_CAP;
        }
    }
}

/// The bytes handed out by all shards plus their headroom, with its peak.
#[derive(Default)]
pub(super) struct SharedTotal {
    total: AtomicUsize,
    peak: AtomicUsize,
}

impl SharedTotal {
    #[cold]
    fn rise(&self, by: usize) {
        let total = self.total.fetch_add(by, Ordering::Relaxed).saturating_add(by);
        self.peak.fetch_max(total, Ordering::Relaxed);
    }

    #[cold]
    fn fall(&self, by: usize) {
        // Never below zero: a wrong peak is better than a wrapped one.
        let _ = self.total.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |total| {
            Some(total.saturating_sub(by))
        });
    }

    pub(super) fn peak(&self) -> usize {
        self.peak.load(Ordering::Relaxed)
    }
}

/// The calling thread's shard index (threads take them in turn).
#[inline]
pub(super) fn my_shard() -> usize {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    thread_local! {
        static MINE: Cell<usize> = const { Cell::new(usize::MAX) };
    }
    MINE.try_with(|mine| {
        if mine.get() == usize::MAX {
            mine.set(NEXT.fetch_add(1, Ordering::Relaxed) % SHARDS);
        }
        mine.get()
    })
    // A thread whose locals are gone uses the first shard.
    .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headroom_keeps_the_shared_total_still_until_it_runs_out() {
        let total = SharedTotal::default();
        let mut shard = ShardState::default();
        shard.count_out(&total, 4096, 4000);
        assert_eq!((total.total.load(Ordering::Relaxed), total.peak()), (4096, 4096));
        shard.count_back(&total, 4096, 4000);
        // Kept as headroom: the next hit writes nothing shared.
        assert_eq!(total.total.load(Ordering::Relaxed), 4096);
        shard.count_out(&total, 4096, 10);
        assert_eq!((total.total.load(Ordering::Relaxed), total.peak()), (4096, 4096));
        shard.count_out(&total, 8192, 8192);
        assert_eq!(total.peak(), 4096 + 8192);
        shard.count_back(&total, 8192, 8192);
        shard.count_back(&total, 4096, 10);
        shard.count_out(&total, HEADROOM_CAP + 1, 1);
        shard.count_back(&total, HEADROOM_CAP + 1, 1);
        // Past the cap, the excess goes back to the shared total.
        assert_eq!(total.total.load(Ordering::Relaxed), HEADROOM_CAP);
        assert_eq!((shard.counts.allocated, shard.counts.requested), (0, 0));
    }

    #[test]
    fn threads_take_shards_in_turn() {
        let mine = my_shard();
        assert_eq!(mine, my_shard(), "a thread keeps its shard");
        let theirs = std::thread::spawn(my_shard).join().expect("the other thread");
        assert!(mine < SHARDS && theirs < SHARDS);
    }
}

//! A shard of one device's small `aclrtMalloc` allocations: the slabs it
//! holds, the free ranges inside them, and its allocations.
//!
//! Each thread allocates from one shard, so threads allocating and freeing
//! independently take different locks and touch different slabs.

use super::credit::Credit;
use super::recent::Recent;
use super::space::SLAB;
use super::stale::Stale;
use super::table::Allocations;
use crate::soft::core::range_alloc::RangeAllocator;
use crate::soft::started::DEVICE_ALIGN;
use std::collections::{BTreeMap, BTreeSet};

/// One shard: only its own lock guards it.
pub(crate) struct Shard {
    /// The device address of offset 0.
    base: usize,
    /// Free ranges inside the shard's slabs (physical offsets).
    space: RangeAllocator,
    /// The shard's slabs (offset → bytes allocated inside).
    slabs: BTreeMap<u64, u64>,
    /// The slabs with nothing allocated inside (so a free finds them
    /// without walking every slab).
    empty: BTreeSet<u64>,
    /// Live allocations by device address (and the blocks kept for reuse,
    /// parked).
    pub(super) allocations: Allocations,
    /// Bytes of small frees whose pages stay resident.
    pub(super) stale: Stale,
    /// Capacity counted as allocated on the device but not yet used.
    pub(super) credit: Credit,
    /// Blocks freed lately, kept whole for the next allocation of their
    /// size (still allocated as far as the free ranges and slabs go).
    recent: Recent,
}

impl Shard {
    /// An empty shard of the device whose offset 0 is at `base`.
    pub(super) fn new(base: usize) -> Self {
        Self {
            base,
            space: RangeAllocator::empty(),
            slabs: BTreeMap::new(),
            empty: BTreeSet::new(),
            allocations: Allocations::new(),
            stale: Stale::default(),
            credit: Credit::default(),
            recent: Recent::default(),
        }
    }

    /// Places `size` bytes in one of the shard's slabs: a block of that
    /// size freed lately if there is one.
    pub(super) fn place(&mut self, size: u64) -> Option<u64> {
        if let Some(offset) = self.recent.take(size) {
            return Some(offset);
        }
        let offset = self.space.allocate(size, DEVICE_ALIGN)?;
        self.count(offset, size, |used, bytes| *used += bytes);
        Some(offset)
    }

    /// Adds a slab handed over by the device's space; all of it is free.
    pub(super) fn add_slab(&mut self, slab: u64) {
        self.slabs.insert(slab, 0);
        self.empty.insert(slab);
        self.space.release(slab, SLAB);
    }

    /// Gives `[offset, offset + size)` back: kept whole for the next
    /// allocation of its size when small (its table entry parked), else to
    /// the free ranges (its entry removed).
    /// Returns a slab left empty that the shard does not keep (it keeps one
    /// empty slab, so a thread that allocates and frees does not trade slabs
    /// with the space each time); the caller hands it back to the space.
    pub(super) fn release(&mut self, offset: u64, size: u64) -> Option<u64> {
        let address = self.base + offset as usize;
        if self.recent.keep(offset, size) {
            self.allocations.park(address);
            return None;
        }
        self.allocations.remove(address);
        self.give_back(offset, size)
    }

    /// Releases every block kept for reuse; returns the slabs left empty
    /// that the shard does not keep.
    pub(super) fn release_recent(&mut self) -> Vec<u64> {
        let kept = self.recent.drain();
        kept.into_iter()
            .filter_map(|(offset, size)| {
                self.allocations.remove(self.base + offset as usize);
                self.give_back(offset, size)
            })
            .collect()
    }

    /// [`release`](Self::release) without keeping the block.
    fn give_back(&mut self, offset: u64, size: u64) -> Option<u64> {
        self.space.release(offset, size);
        self.count(offset, size, |used, bytes| *used -= bytes);
        if self.empty.len() < 2 {
            return None;
        }
        let spare = self.empty.pop_last()?;
        self.slabs.remove(&spare);
        self.space.take_free(spare, SLAB);
        Some(spare)
    }

    /// Takes every empty slab out of the shard, for the space.
    pub(super) fn take_empty_slabs(&mut self) -> Vec<u64> {
        let empty: Vec<u64> = std::mem::take(&mut self.empty).into_iter().collect();
        for &slab in &empty {
            self.slabs.remove(&slab);
            self.space.take_free(slab, SLAB);
        }
        empty
    }

    /// The free ranges inside the shard's slabs.
    pub(super) fn free_ranges(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.space.free_ranges()
    }

    /// Applies `change` to the bytes-allocated count of each slab that
    /// `[offset, offset + size)` overlaps, with the bytes it overlaps.
    fn count(&mut self, offset: u64, size: u64, change: impl Fn(&mut u64, u64)) {
        let end = offset + size;
        let mut slab = offset / SLAB * SLAB;
        while slab < end {
            let overlap = end.min(slab + SLAB) - offset.max(slab);
            if let Some(used) = self.slabs.get_mut(&slab) {
                change(used, overlap);
                if *used == 0 {
                    self.empty.insert(slab);
                } else {
                    self.empty.remove(&slab);
                }
            } else {
                debug_assert!(false, "bytes at {offset} are outside the shard's slabs");
            }
            slab += SLAB;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shard_keeps_one_empty_slab_and_hands_back_the_next() {
        let mut shard = Shard::new(0);
        assert_eq!(shard.place(4096), None);
        shard.add_slab(2 * SLAB);
        shard.add_slab(3 * SLAB);
        let a = shard.place(SLAB).unwrap();
        let b = shard.place(SLAB).unwrap();
        assert_eq!((a, b), (2 * SLAB, 3 * SLAB));
        // The first slab to empty is kept, the second goes back.
        assert_eq!(shard.release(a, SLAB), None);
        assert_eq!(shard.release(b, SLAB), Some(3 * SLAB));
        assert_eq!(shard.free_ranges().collect::<Vec<_>>(), [(2 * SLAB, SLAB)]);
        assert_eq!(shard.take_empty_slabs(), [2 * SLAB]);
        assert_eq!(shard.free_ranges().count(), 0);
    }

    #[test]
    fn an_allocation_across_two_slabs_counts_in_both() {
        let mut shard = Shard::new(0);
        shard.add_slab(0);
        shard.add_slab(SLAB);
        let first = shard.place(SLAB - 4096).unwrap();
        let across = shard.place(8192).unwrap();
        assert_eq!(across, SLAB - 4096);
        assert_eq!(shard.release(first, SLAB - 4096), None);
        // Both slabs still hold part of `across`: neither is empty.
        assert!(shard.take_empty_slabs().is_empty());
        // A small block is kept whole for reuse; released, both slabs are
        // empty: one is kept, the other handed back.
        assert_eq!(shard.release(across, 8192), None);
        assert_eq!(shard.place(8192), Some(across), "reused whole");
        assert_eq!(shard.release(across, 8192), None);
        assert_eq!(shard.release_recent(), [SLAB]);
        assert_eq!(shard.take_empty_slabs(), [0]);
    }
}

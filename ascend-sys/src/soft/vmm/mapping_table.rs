//! The mapping table: mappings by start address, with a lookup by any
//! address inside one whose cost does not grow with the number of mappings.
//!
//! Mappings live in slots. An ordered map from start to slot serves range
//! queries (overlap checks, listings); translation goes through a second
//! index: for each 1 GiB chunk of the address space, the sorted
//! `(start, end, slot)` of the mappings touching it. A lookup hashes the
//! chunk number and binary-searches at most the mappings of one chunk (512
//! with the default 2 MiB granularity), so 100,000 mappings cost about what
//! ten do.

use super::Mapping;
use std::collections::{BTreeMap, HashMap};
use std::hash::{BuildHasherDefault, Hasher};
use std::ops::RangeBounds;

/// log2 of the chunk size of the lookup index.
const CHUNK_SHIFT: u32 = 30;

/// A hasher for chunk numbers: one multiply (keys are small integers that
/// need no protection against collision attacks).
#[derive(Default)]
struct ChunkHasher(u64);

impl Hasher for ChunkHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(byte)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_usize(&mut self, value: usize) {
        self.0 = (value as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

/// `(start, end, slot)` of one mapping in one chunk.
type Entry = (usize, usize, usize);

#[derive(Default)]
pub(crate) struct MappingTable {
    slots: Vec<Option<(usize, Mapping)>>,
    vacant: Vec<usize>,
    order: BTreeMap<usize, usize>,
    chunks: HashMap<usize, Vec<Entry>, BuildHasherDefault<ChunkHasher>>,
}

fn chunks_of(start: usize, size: usize) -> std::ops::RangeInclusive<usize> {
    (start >> CHUNK_SHIFT)..=((start + size.max(1) - 1) >> CHUNK_SHIFT)
}

impl MappingTable {
    /// Number of mappings.
    pub(crate) fn len(&self) -> usize {
        self.order.len()
    }

    /// Adds a mapping at `start` (the caller has checked it overlaps none).
    pub(crate) fn insert(&mut self, start: usize, mapping: Mapping) {
        let size = mapping.size;
        let slot = match self.vacant.pop() {
            Some(slot) => {
                self.slots[slot] = Some((start, mapping));
                slot
            }
            None => {
                self.slots.push(Some((start, mapping)));
                self.slots.len() - 1
            }
        };
        self.order.insert(start, slot);
        for chunk in chunks_of(start, size) {
            let entries = self.chunks.entry(chunk).or_default();
            let at = entries.partition_point(|entry| entry.0 < start);
            entries.insert(at, (start, start + size, slot));
        }
    }

    /// Removes the mapping that starts at `start`.
    pub(crate) fn remove(&mut self, start: usize) -> Option<Mapping> {
        let slot = self.order.remove(&start)?;
        let (_, mapping) = self.slots.get_mut(slot)?.take()?;
        self.vacant.push(slot);
        for chunk in chunks_of(start, mapping.size) {
            if let Some(entries) = self.chunks.get_mut(&chunk) {
                entries.retain(|entry| entry.0 != start);
                if entries.is_empty() {
                    self.chunks.remove(&chunk);
                }
            }
        }
        Some(mapping)
    }

    fn slot(&self, slot: usize) -> Option<&(usize, Mapping)> {
        self.slots.get(slot)?.as_ref()
    }

    /// The mapping that starts at `start`.
    pub(crate) fn get(&self, start: usize) -> Option<&Mapping> {
        self.slot(*self.order.get(&start)?).map(|(_, mapping)| mapping)
    }

    /// The mapping that starts at `start`, to change it.
    pub(crate) fn get_mut(&mut self, start: usize) -> Option<&mut Mapping> {
        let slot = *self.order.get(&start)?;
        self.slots.get_mut(slot)?.as_mut().map(|(_, mapping)| mapping)
    }

    /// The mapping containing `address`, with its start.
    #[inline]
    pub(crate) fn find(&self, address: usize) -> Option<(usize, &Mapping)> {
        let entries = self.chunks.get(&(address >> CHUNK_SHIFT))?;
        let at = entries.partition_point(|entry| entry.0 <= address);
        let &(start, end, slot) = entries.get(at.checked_sub(1)?)?;
        if address >= end {
            return None;
        }
        self.slot(slot).map(|(_, mapping)| (start, mapping))
    }

    /// The mappings whose start is in `range`, in address order.
    pub(crate) fn range(&self, range: impl RangeBounds<usize>) -> impl DoubleEndedIterator<Item = (usize, &Mapping)> {
        self.order
            .range(range)
            .filter_map(|(&start, &slot)| self.slot(slot).map(|(_, mapping)| (start, mapping)))
    }

    /// Every mapping, in address order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (usize, &Mapping)> {
        self.range(..)
    }
}

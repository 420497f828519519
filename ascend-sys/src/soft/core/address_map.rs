//! Host-visible address ranges that are not plain host memory: VMM
//! reservations, IPC imports, the device pointers of host registrations and
//! pinned host allocations.
//!
//! Part of the core: the families that own such ranges note them here when
//! they make them and remove them, under their own lock, when they take them
//! out of their tables (before the range can be unmapped and reused).
//! Translation asks this map first, so a copy from or to plain host memory
//! reads no family's state. A leaf lock: nothing is called while it is held.

use crossbeam_utils::sync::ShardedLock;
use std::collections::BTreeMap;
use std::sync::LazyLock;

/// Start → length. The ranges are disjoint: each is a mapping or an
/// allocation of its own.
static RANGES: LazyLock<ShardedLock<BTreeMap<usize, usize>>> = LazyLock::new(|| ShardedLock::new(BTreeMap::new()));

/// Notes `[start, start + length)`.
pub(crate) fn insert(start: usize, length: usize) {
    RANGES
        .write()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .insert(start, length);
}

/// Forgets the range starting at `start`.
pub(crate) fn remove(start: usize) {
    RANGES
        .write()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .remove(&start);
}

/// Whether `[address, end)` (the byte at `address` if empty) touches a
/// noted range: if not, it is plain host memory.
pub(crate) fn touches(address: usize, end: usize) -> bool {
    let end = end.max(address.saturating_add(1));
    let ranges = RANGES.read().unwrap_or_else(|poisoned| poisoned.into_inner());
    // Disjoint ranges: only the last one starting before `end` can reach
    // `address`.
    ranges
        .range(..end)
        .next_back()
        .is_some_and(|(&start, &length)| start + length > address)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_range_is_touched_by_what_overlaps_it_only() {
        let base = 0x7000_0000_0000;
        insert(base, 4096);
        assert!(touches(base, base + 1));
        assert!(touches(base + 4095, base + 4095));
        assert!(touches(base - 10, base + 1), "a range running into it");
        assert!(!touches(base - 10, base));
        assert!(!touches(base + 4096, base + 8192));
        remove(base);
        assert!(!touches(base, base + 1));
    }
}

//! First-fit allocation of aligned ranges inside `[0, capacity)`.

use std::collections::BTreeMap;

/// Free space as a map from start to length; adjacent free ranges are kept
/// merged.
#[derive(Debug)]
pub(crate) struct RangeAllocator {
    free: BTreeMap<u64, u64>,
}

impl RangeAllocator {
    pub(crate) fn new(capacity: u64) -> Self {
        let mut free = BTreeMap::new();
        if capacity > 0 {
            free.insert(0, capacity);
        }
        Self { free }
    }

    /// A space with nothing free yet: ranges become free by
    /// [`release`](Self::release).
    pub(crate) fn empty() -> Self {
        Self { free: BTreeMap::new() }
    }

    /// Takes `[offset, offset + size)`, which is wholly free, out of the free
    /// ranges.
    pub(crate) fn take_free(&mut self, offset: u64, size: u64) {
        let Some((&start, &length)) = self.free.range(..=offset).next_back() else {
            debug_assert!(false, "range {offset}+{size} is not free");
            return;
        };
        debug_assert!(
            start + length >= offset + size,
            "range {offset}+{size} is not wholly free"
        );
        self.free.remove(&start);
        if offset > start {
            self.free.insert(start, offset - start);
        }
        if start + length > offset + size {
            self.free.insert(offset + size, start + length - offset - size);
        }
    }

    /// The free ranges, `(start, length)`, in address order.
    pub(crate) fn free_ranges(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.free.iter().map(|(&start, &length)| (start, length))
    }

    /// Takes `size` bytes starting at a multiple of `align` (a power of two).
    /// `None` when no free range is large enough.
    pub(crate) fn allocate(&mut self, size: u64, align: u64) -> Option<u64> {
        debug_assert!(align.is_power_of_two() && size > 0);
        let (start, length, offset) = self.free.iter().find_map(|(&start, &length)| {
            let aligned = start.checked_add(align - 1)? & !(align - 1);
            let end = aligned.checked_add(size)?;
            (end <= start + length).then_some((start, length, aligned))
        })?;
        self.free.remove(&start);
        if offset > start {
            self.free.insert(start, offset - start);
        }
        let end = offset + size;
        if end < start + length {
            self.free.insert(end, start + length - end);
        }
        Some(offset)
    }

    /// Makes `[offset, offset + size)` free again (it came from
    /// [`allocate`](Self::allocate) or [`take_free`](Self::take_free), or was
    /// never free), merged with its free neighbours. Returns the merged
    /// free range that now contains it, so the caller can release backing
    /// pages.
    pub(crate) fn release(&mut self, offset: u64, size: u64) -> (u64, u64) {
        let mut start = offset;
        let mut end = offset + size;
        if let Some((&before, &length)) = self.free.range(..offset).next_back()
            && before + length == offset
        {
            self.free.remove(&before);
            start = before;
        }
        if let Some(&length) = self.free.get(&end) {
            self.free.remove(&end);
            end += length;
        }
        self.free.insert(start, end - start);
        (start, end - start)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allocations_are_aligned_disjoint_and_merge_back() {
        let mut space = RangeAllocator::new(1 << 20);
        let a = space.allocate(100, 512).unwrap();
        let b = space.allocate(100, 512).unwrap();
        assert_eq!(a % 512, 0);
        assert_eq!(b % 512, 0);
        assert!(a + 100 <= b || b + 100 <= a);
        space.release(a, 100);
        space.release(b, 100);
        assert_eq!(space.free.len(), 1);
        assert_eq!(space.free.get(&0), Some(&(1 << 20)));
    }

    #[test]
    fn ranges_added_and_taken_out_merge_and_split() {
        let mut space = RangeAllocator::empty();
        assert!(space.allocate(1, 1).is_none());
        space.release(4096, 4096);
        space.release(8192, 4096);
        assert_eq!(space.free_ranges().collect::<Vec<_>>(), [(4096, 8192)]);
        space.take_free(4096 + 1024, 1024);
        assert_eq!(space.free_ranges().collect::<Vec<_>>(), [(4096, 1024), (6144, 6144)]);
        assert_eq!(space.allocate(6144, 2048), Some(6144));
    }

    #[test]
    fn exhaustion_returns_none() {
        let mut space = RangeAllocator::new(4096);
        assert!(space.allocate(4096, 4096).is_some());
        assert!(space.allocate(1, 1).is_none());
    }
}

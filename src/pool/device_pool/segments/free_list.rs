//! [`FreeList`]: the free ranges of one pool's segment, each with the uses
//! that may still be queued on it; best fit, splitting and coalescing.

use crate::stream::Tracks;
use std::collections::{BTreeMap, BTreeSet};

/// A free range and the work that may still use it.
pub(in crate::pool) struct FreeRange {
    pub(in crate::pool) len: usize,
    pub(in crate::pool) tracks: Tracks,
}

/// Free ranges by offset (for coalescing) and by size (for best fit).
#[derive(Default)]
pub(in crate::pool) struct FreeList {
    by_offset: BTreeMap<usize, FreeRange>,
    by_size: BTreeSet<(usize, usize)>,
    /// Bytes of ranges whose tracks are not empty (kept as ranges come and
    /// go; [`FreeList::recount`] after tracks change in place).
    busy: usize,
}

impl FreeList {
    fn remove(&mut self, offset: usize) -> Option<FreeRange> {
        let range = self.by_offset.remove(&offset)?;
        self.by_size.remove(&(range.len, offset));
        if !range.tracks.is_empty() {
            self.busy -= range.len;
        }
        Some(range)
    }

    fn put(&mut self, offset: usize, range: FreeRange) {
        if !range.tracks.is_empty() {
            self.busy += range.len;
        }
        self.by_size.insert((range.len, offset));
        self.by_offset.insert(offset, range);
    }

    /// Recomputes the busy bytes after tracks were settled in place.
    pub(in crate::pool) fn recount(&mut self) {
        self.busy = self
            .by_offset
            .values()
            .filter(|range| !range.tracks.is_empty())
            .map(|range| range.len)
            .sum();
    }

    /// Adds `[offset, offset + len)`, merged with free neighbours (their
    /// uses are merged too: memory from several blocks waits for all).
    pub(in crate::pool) fn insert(&mut self, mut offset: usize, mut len: usize, mut tracks: Tracks) {
        if let Some((&before, range)) = self.by_offset.range(..offset).next_back()
            && before.checked_add(range.len) == Some(offset)
            && let Some(range) = self.remove(before)
        {
            offset = before;
            len += range.len;
            tracks = tracks.merge(range.tracks);
        }
        if let Some(range) = offset.checked_add(len).and_then(|end| self.remove(end)) {
            len += range.len;
            tracks = tracks.merge(range.tracks);
        }
        self.put(offset, FreeRange { len, tracks });
    }

    /// Takes the smallest range of at least `len` bytes, splitting off the
    /// rest: its offset and the uses that may still be queued on it.
    pub(in crate::pool) fn take_best_fit(&mut self, len: usize) -> Option<(usize, Tracks)> {
        let &(_, offset) = self.by_size.range((len, 0)..).next()?;
        let range = self.remove(offset)?;
        // Inside the range, which ends in the segment: the sum fits.
        if range.len > len
            && let Some(rest) = offset.checked_add(len)
        {
            self.put(
                rest,
                FreeRange {
                    len: range.len - len,
                    tracks: range.tracks.clone(),
                },
            );
        }
        Some((offset, range.tracks))
    }

    /// Every free range: `(offset, len, busy)`, busy when former work may
    /// still be queued on it.
    pub(in crate::pool) fn ranges(&self) -> impl Iterator<Item = (usize, usize, bool)> + '_ {
        self.by_offset
            .iter()
            .map(|(&offset, range)| (offset, range.len, !range.tracks.is_empty()))
    }

    /// Free bytes.
    pub(in crate::pool) fn bytes(&self) -> usize {
        self.by_offset.values().map(|range| range.len).sum()
    }

    /// Free bytes whose former work may still be queued.
    pub(in crate::pool) fn busy_bytes(&self) -> usize {
        self.busy
    }

    /// The free ranges at or past `cut`, as `(offset, len, tracks)`
    /// borrowed for settling.
    pub(in crate::pool) fn ranges_past_mut(&mut self, cut: usize) -> impl Iterator<Item = &mut FreeRange> {
        let first = self
            .by_offset
            .range(..cut)
            .next_back()
            .filter(|(offset, range)| offset.checked_add(range.len).is_none_or(|end| end > cut))
            .map_or(cut, |(offset, _)| *offset);
        self.by_offset.range_mut(first..).map(|(_, range)| range)
    }

    /// Forgets everything at or past `cut` (unmapped), keeping the part of
    /// a range before it.
    pub(in crate::pool) fn cut(&mut self, cut: usize) {
        let at_or_past: Vec<usize> = self.by_offset.range(cut..).map(|(offset, _)| *offset).collect();
        for offset in at_or_past {
            self.remove(offset);
        }
        if let Some((&offset, range)) = self.by_offset.range(..cut).next_back()
            && offset.checked_add(range.len).is_none_or(|end| end > cut)
            && let Some(range) = self.remove(offset)
        {
            self.put(
                offset,
                FreeRange {
                    len: cut - offset,
                    tracks: range.tracks,
                },
            );
        }
    }

    /// The end of the last free range that reaches `end` (the start of the
    /// free tail of `[0, end)`), or `end` when the tail is not free.
    pub(in crate::pool) fn tail_start(&self, end: usize) -> usize {
        match self.by_offset.range(..end).next_back() {
            Some((&offset, range)) if offset.checked_add(range.len) == Some(end) => offset,
            _ => end,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn best_fit_splits_and_frees_coalesce() {
        let mut free = FreeList::default();
        free.insert(0, 4096, Tracks::default());
        free.insert(8192, 1024, Tracks::default());
        // The smallest fit is the 1 KiB range.
        assert_eq!(free.take_best_fit(512).map(|(offset, _)| offset), Some(8192));
        assert_eq!(free.bytes(), 4096 + 512);
        assert_eq!(free.take_best_fit(2048).map(|(offset, _)| offset), Some(0));
        assert!(free.take_best_fit(4096).is_none());
        // Giving both back merges with the split remainders.
        free.insert(0, 2048, Tracks::default());
        free.insert(8192, 512, Tracks::default());
        assert_eq!(free.by_offset.len(), 2);
        free.insert(4096, 4096, Tracks::default());
        assert_eq!(free.by_offset.len(), 1);
        assert_eq!(free.tail_start(9216), 0);
        free.cut(6144);
        assert_eq!(free.bytes(), 6144);
        assert_eq!(free.tail_start(6144), 0);
        assert_eq!(free.tail_start(9216), 9216);
    }
}

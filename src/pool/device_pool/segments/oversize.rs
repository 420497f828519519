//! [`OversizeCache`]: freed oversize blocks (torch's `max_split_size_mb`)
//! kept whole, out of the coalescing free list, each with the work that
//! may still use it.

use crate::stream::Tracks;
use std::collections::BTreeMap;

/// A cached oversize block.
pub(in crate::pool) struct Oversize {
    /// When it was cached (a pool-wide sequence: smaller is older).
    pub(in crate::pool) seq: u64,
    pub(in crate::pool) tracks: Tracks,
}

/// The oversize blocks of one segment, by `(len, offset)` for the
/// smallest fit.
#[derive(Default)]
pub(in crate::pool) struct OversizeCache {
    blocks: BTreeMap<(usize, usize), Oversize>,
}

impl OversizeCache {
    /// Keeps `[offset, offset + len)` whole with `tracks`, cached at `seq`.
    pub(in crate::pool) fn put(&mut self, offset: usize, len: usize, tracks: Tracks, seq: u64) {
        self.blocks.insert((len, offset), Oversize { seq, tracks });
    }

    /// The smallest block of at least `size` bytes and less than
    /// `size + slack`: `(offset, len, tracks)`.
    pub(in crate::pool) fn take(&mut self, size: usize, slack: usize) -> Option<(usize, usize, Tracks)> {
        let top = size.saturating_add(slack);
        let (&(len, offset), _) = self.blocks.range((size, 0)..(top, 0)).next()?;
        let block = self.blocks.remove(&(len, offset))?;
        Some((offset, len, block.tracks))
    }

    /// The sequence number of the oldest block.
    pub(in crate::pool) fn oldest(&self) -> Option<u64> {
        self.blocks.values().map(|block| block.seq).min()
    }

    /// Takes the oldest block out: `(offset, len, tracks)`.
    pub(in crate::pool) fn take_oldest(&mut self) -> Option<(usize, usize, Tracks)> {
        let (&key, _) = self.blocks.iter().min_by_key(|(_, block)| block.seq)?;
        let block = self.blocks.remove(&key)?;
        Some((key.1, key.0, block.tracks))
    }

    /// Takes every block out.
    pub(in crate::pool) fn drain(&mut self) -> impl Iterator<Item = (usize, usize, Tracks)> {
        std::mem::take(&mut self.blocks)
            .into_iter()
            .map(|((len, offset), block)| (offset, len, block.tracks))
    }

    /// Bytes cached.
    pub(in crate::pool) fn bytes(&self) -> usize {
        self.blocks.keys().map(|&(len, _)| len).sum()
    }

    /// Bytes cached whose former work may still be queued.
    pub(in crate::pool) fn busy_bytes(&self) -> usize {
        self.blocks
            .iter()
            .filter(|(_, block)| !block.tracks.is_empty())
            .map(|(&(len, _), _)| len)
            .sum()
    }

    /// The end of the last cached block (0 when none is).
    pub(in crate::pool) fn end(&self) -> usize {
        self.blocks
            .keys()
            .map(|&(len, offset)| offset.saturating_add(len))
            .max()
            .unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_smallest_fit_within_the_slack_and_the_oldest_first() {
        let mut cache = OversizeCache::default();
        cache.put(0, 100, Tracks::default(), 2);
        cache.put(100, 60, Tracks::default(), 1);
        assert!(cache.take(30, 20).is_none(), "60 is beyond 30 + 20");
        assert!(cache.take(40, 20).is_none(), "60 is not below 40 + 20");
        assert!(cache.take(120, 50).is_none(), "none is large enough");
        assert_eq!(cache.oldest(), Some(1));
        assert_eq!(cache.end(), 160);
        assert_eq!(
            cache.take(50, 60).map(|(offset, len, _)| (offset, len)),
            Some((100, 60))
        );
        assert_eq!(
            cache.take_oldest().map(|(offset, len, _)| (offset, len)),
            Some((0, 100))
        );
        assert_eq!((cache.oldest(), cache.bytes()), (None, 0));
    }
}

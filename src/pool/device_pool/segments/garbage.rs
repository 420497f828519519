//! Garbage collection (torch's `garbage_collection_threshold`) and the
//! release of cached oversize blocks (`max_split_size_mb`) of a
//! [`DevicePool`](crate::pool::DevicePool)'s state.

use super::arena::Arena;
use crate::pool::device_pool::State;

impl State {
    /// Gives every cached oversize block to the free lists.
    pub(in crate::pool) fn release_oversize(&mut self) {
        let released: usize = self.arenas.iter_mut().map(Arena::release_oversize).sum();
        self.stats.oversize_segments = self.stats.oversize_segments.saturating_sub(released as u64);
    }

    /// When the reserved bytes pass `threshold` of the memory limit, gives
    /// cached memory back until they do not: the oldest cached oversize
    /// block first (unmapping what it frees at a segment's end), then the
    /// chunks past each segment's last live block. The segment of
    /// `growing` (arena, class), which the request that runs this is about
    /// to grow, keeps its free tail: the growth counts it, so unmapping it
    /// would map it again at once. Returns whether it ran.
    pub(in crate::pool) fn collect_garbage(&mut self, threshold: Option<f64>, growing: (usize, usize)) -> bool {
        let (Some(threshold), Some(limit)) = (threshold, self.limit) else {
            return false;
        };
        let goal = limit.share(threshold);
        let spared = |index: usize| (index == growing.0).then_some(growing.1);
        if self.stats.reserved <= goal {
            return false;
        }
        self.stats.gc_runs += 1;
        // The unmaps below are counted on their own, not netted with the
        // growth that may follow in the same request.
        self.counters.note_mappings(&self.arenas);
        while self.stats.reserved > goal {
            let oldest = self
                .arenas
                .iter()
                .enumerate()
                .flat_map(|(index, arena)| {
                    arena
                        .classes
                        .iter()
                        .enumerate()
                        .filter_map(move |(class, slot)| Some((slot.oversize.oldest()?, index, class)))
                })
                .min();
            let Some((_, index, class)) = oldest else { break };
            let arena = &mut self.arenas[index];
            if let Some((offset, len, tracks)) = arena.classes[class].oversize.take_oldest() {
                arena.classes[class].free.insert(offset, len, tracks);
                self.stats.oversize_segments = self.stats.oversize_segments.saturating_sub(1);
            }
            if let Err(error) = arena.empty_cache_but(spared(index), &mut self.stats) {
                log::warn!("DevicePool: garbage collection: {error}");
            }
        }
        if self.stats.reserved > goal {
            for (index, arena) in self.arenas.iter_mut().enumerate() {
                if let Err(error) = arena.empty_cache_but(spared(index), &mut self.stats) {
                    log::warn!("DevicePool: garbage collection: {error}");
                }
            }
        }
        self.counters.note_mappings(&self.arenas);
        true
    }
}

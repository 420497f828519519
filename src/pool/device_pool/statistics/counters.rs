//! The counters behind [`MemoryStats`](crate::pool::MemoryStats) that the pool
//! keeps under its lock: the large pool's, each tag's, the mappings'.
//!
//! The per-thread caches serve small blocks of the default tag without the
//! lock (their counts are in [`ThreadCaches`](crate::pool::device_pool::thread_cache)); every
//! other allocation and free, every mapping and unmapping, reaches the
//! pool's state, and is counted here exactly.

use super::torch_stats::Stat;
use crate::pool::device_pool::segments::arena::{Arena, SMALL};

/// One statistic in torch's four figures, kept exactly.
#[derive(Debug, Clone, Copy, Default)]
pub(in crate::pool) struct Counter {
    pub(in crate::pool) current: u64,
    pub(in crate::pool) peak: u64,
    pub(in crate::pool) allocated: u64,
    pub(in crate::pool) freed: u64,
}

impl Counter {
    pub(in crate::pool) fn rise(&mut self, by: u64) {
        self.current += by;
        self.allocated += by;
        self.peak = self.peak.max(self.current);
    }

    pub(in crate::pool) fn fall(&mut self, by: u64) {
        self.current = self.current.saturating_sub(by);
        self.freed += by;
    }

    /// A level that is not counted event by event: its peak follows.
    pub(in crate::pool) fn level(&mut self, now: u64) {
        self.current = now;
        self.peak = self.peak.max(now);
    }

    pub(in crate::pool) fn reset_peak(&mut self) {
        self.peak = self.current;
    }

    pub(in crate::pool) fn reset_accumulated(&mut self) {
        (self.allocated, self.freed) = (0, 0);
    }

    /// As the public [`Stat`], with all four figures.
    pub(in crate::pool) fn stat(&self) -> Stat {
        Stat {
            current: self.current,
            peak: Some(self.peak),
            allocated: Some(self.allocated),
            freed: Some(self.freed),
        }
    }
}

/// The counters of one group: a size class, a tag, or the whole pool.
#[derive(Debug, Clone, Copy, Default)]
pub(in crate::pool) struct GroupCounters {
    /// Bytes in live blocks (kept for the large pool and the tags other
    /// than the default one, whose blocks always reach the state).
    pub(in crate::pool) allocated_bytes: Counter,
    /// Live blocks (the same groups).
    pub(in crate::pool) allocation: Counter,
    /// Live bytes plus cached bytes whose work may be queued (its level,
    /// read at each event of the group).
    pub(in crate::pool) active_bytes: Counter,
    /// Bytes mapped.
    pub(in crate::pool) reserved_bytes: Counter,
    /// Chunks mapped.
    pub(in crate::pool) segment: Counter,
}

impl GroupCounters {
    fn reset_peaks(&mut self) {
        for counter in self.counters() {
            counter.reset_peak();
        }
    }

    fn reset_accumulated(&mut self) {
        for counter in self.counters() {
            counter.reset_accumulated();
        }
    }

    fn counters(&mut self) -> [&mut Counter; 5] {
        [
            &mut self.allocated_bytes,
            &mut self.allocation,
            &mut self.active_bytes,
            &mut self.reserved_bytes,
            &mut self.segment,
        ]
    }
}

/// What the pool's state counts for [`MemoryStats`](crate::pool::MemoryStats).
#[derive(Debug, Default)]
pub(in crate::pool) struct StateCounters {
    /// The whole pool's mappings (its allocations are the caches').
    pub(in crate::pool) all: GroupCounters,
    /// By size class: [`SMALL`], then large.
    pub(in crate::pool) classes: [GroupCounters; 2],
    /// By arena (tag), in the order of the pool's arenas.
    pub(in crate::pool) tags: Vec<GroupCounters>,
    /// The mapped bytes of each arena's classes when last seen.
    mapped_seen: Vec<[usize; 2]>,
    /// Requests refused for want of memory.
    pub(in crate::pool) ooms: u64,
    /// Live oversize blocks, as a level (its peak follows).
    pub(in crate::pool) oversize_allocations: Counter,
    /// Oversize blocks held whole, as a level.
    pub(in crate::pool) oversize_segments: Counter,
    /// The caches' cumulative counts at the last
    /// [`reset_accumulated`](StateCounters::reset_accumulated), subtracted
    /// from theirs: `(allocations, frees, bytes out, bytes back)`.
    pub(in crate::pool) cache_base: (u64, u64, u64, u64),
}

impl StateCounters {
    /// The tag counters of `arena`, made on first use.
    pub(in crate::pool) fn tag(&mut self, arena: usize) -> &mut GroupCounters {
        if self.tags.len() <= arena {
            self.tags.resize(arena + 1, GroupCounters::default());
        }
        &mut self.tags[arena]
    }

    /// Counts a block of `size` bytes of `class` in `arena` handed out by
    /// the state.
    pub(in crate::pool) fn handed_out(&mut self, arena: usize, class: usize, size: usize) {
        let size = size as u64;
        for group in self.groups_of(arena, class).into_iter().flatten() {
            group.allocated_bytes.rise(size);
            group.allocation.rise(1);
        }
    }

    /// Counts a block of `size` bytes of `class` in `arena` given back to
    /// the state.
    pub(in crate::pool) fn given_back(&mut self, arena: usize, class: usize, size: usize) {
        let size = size as u64;
        for group in self.groups_of(arena, class).into_iter().flatten() {
            group.allocated_bytes.fall(size);
            group.allocation.fall(1);
        }
    }

    /// The groups whose allocations the state counts: the large pool and
    /// the tags other than the default one.
    fn groups_of(&mut self, arena: usize, class: usize) -> [Option<&mut GroupCounters>; 2] {
        let tagged = arena != 0;
        if tagged {
            self.tag(arena);
        }
        let Self { classes, tags, .. } = self;
        let large = (class != SMALL).then_some(&mut classes[1]);
        let tag = if tagged { tags.get_mut(arena) } else { None };
        [large, tag]
    }

    /// Reads the active bytes of the groups counted here after an event
    /// (their peaks follow).
    pub(in crate::pool) fn note_active(&mut self, arenas: &[Arena]) {
        // Busy free ranges and busy cached oversize blocks alike.
        let large_busy: usize = arenas.iter().map(|arena| arena.classes[1].busy_bytes()).sum();
        let large = &mut self.classes[1];
        large
            .active_bytes
            .level(large.allocated_bytes.current + large_busy as u64);
        for (index, arena) in arenas.iter().enumerate().skip(1) {
            let tag = self.tag(index);
            tag.active_bytes
                .level(tag.allocated_bytes.current + arena.busy_bytes() as u64);
        }
    }

    /// Counts what was mapped and unmapped since the last look, by class
    /// and by tag.
    pub(in crate::pool) fn note_mappings(&mut self, arenas: &[Arena]) {
        if self.mapped_seen.len() < arenas.len() {
            self.mapped_seen.resize(arenas.len(), [0; 2]);
        }
        for (index, arena) in arenas.iter().enumerate() {
            for (class, seen) in arena.classes.iter().zip(0..) {
                let now = class.segment.size();
                let before = std::mem::replace(&mut self.mapped_seen[index][seen], now);
                if now == before {
                    continue;
                }
                let chunk = class.segment.chunk_size().max(1);
                let (bytes, chunks) = (now.abs_diff(before) as u64, (now.abs_diff(before) / chunk) as u64);
                self.tag(index);
                let Self { all, classes, tags, .. } = self;
                for group in [all, &mut classes[seen], &mut tags[index]] {
                    if now > before {
                        group.reserved_bytes.rise(bytes);
                        group.segment.rise(chunks);
                    } else {
                        group.reserved_bytes.fall(bytes);
                        group.segment.fall(chunks);
                    }
                }
            }
        }
    }

    /// Every peak starts again from its current value.
    pub(in crate::pool) fn reset_peaks(&mut self) {
        self.oversize_allocations.reset_peak();
        self.oversize_segments.reset_peak();
        self.all.reset_peaks();
        self.classes.iter_mut().for_each(GroupCounters::reset_peaks);
        self.tags.iter_mut().for_each(GroupCounters::reset_peaks);
    }

    /// Every cumulative count starts again from 0; `cache` are the caches'
    /// counts now.
    pub(in crate::pool) fn reset_accumulated(&mut self, cache: (u64, u64, u64, u64)) {
        self.all.reset_accumulated();
        self.classes.iter_mut().for_each(GroupCounters::reset_accumulated);
        self.tags.iter_mut().for_each(GroupCounters::reset_accumulated);
        self.ooms = 0;
        self.cache_base = cache;
    }
}

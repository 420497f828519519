//! The counters behind [`MemoryStats`](super::MemoryStats) that the pool
//! keeps under its lock: the large pool's, each tag's, the mappings'.
//!
//! The per-thread caches serve small blocks of the default tag without the
//! lock (their counts are in [`ThreadCaches`](super::thread_cache)); every
//! other allocation and free, every mapping and unmapping, reaches the
//! pool's state, and is counted here exactly.

use super::arena::{Arena, SMALL};
use super::torch_stats::Stat;

/// One statistic in torch's four figures, kept exactly.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Counter {
    pub(super) current: u64,
    pub(super) peak: u64,
    pub(super) allocated: u64,
    pub(super) freed: u64,
}

impl Counter {
    pub(super) fn rise(&mut self, by: u64) {
        self.current += by;
        self.allocated += by;
        self.peak = self.peak.max(self.current);
    }

    pub(super) fn fall(&mut self, by: u64) {
        self.current = self.current.saturating_sub(by);
        self.freed += by;
    }

    /// A level that is not counted event by event: its peak follows.
    pub(super) fn level(&mut self, now: u64) {
        self.current = now;
        self.peak = self.peak.max(now);
    }

    pub(super) fn reset_peak(&mut self) {
        self.peak = self.current;
    }

    pub(super) fn reset_accumulated(&mut self) {
        (self.allocated, self.freed) = (0, 0);
    }

    /// As the public [`Stat`], with all four figures.
    pub(super) fn stat(&self) -> Stat {
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
pub(super) struct GroupCounters {
    /// Bytes in live blocks (kept for the large pool and the tags other
    /// than the default one, whose blocks always reach the state).
    pub(super) allocated_bytes: Counter,
    /// Live blocks (the same groups).
    pub(super) allocation: Counter,
    /// Live bytes plus cached bytes whose work may be queued (its level,
    /// read at each event of the group).
    pub(super) active_bytes: Counter,
    /// Bytes mapped.
    pub(super) reserved_bytes: Counter,
    /// Chunks mapped.
    pub(super) segment: Counter,
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

/// What the pool's state counts for [`MemoryStats`](super::MemoryStats).
#[derive(Debug, Default)]
pub(super) struct StateCounters {
    /// The whole pool's mappings (its allocations are the caches').
    pub(super) all: GroupCounters,
    /// By size class: [`SMALL`], then large.
    pub(super) classes: [GroupCounters; 2],
    /// By arena (tag), in the order of the pool's arenas.
    pub(super) tags: Vec<GroupCounters>,
    /// The mapped bytes of each arena's classes when last seen.
    mapped_seen: Vec<[usize; 2]>,
    /// Requests refused for want of memory.
    pub(super) ooms: u64,
    /// Live oversize blocks, as a level (its peak follows).
    pub(super) oversize_allocations: Counter,
    /// Oversize blocks held whole, as a level.
    pub(super) oversize_segments: Counter,
    /// The caches' cumulative counts at the last
    /// [`reset_accumulated`](StateCounters::reset_accumulated), subtracted
    /// from theirs: `(allocations, frees, bytes out, bytes back)`.
    pub(super) cache_base: (u64, u64, u64, u64),
}

impl StateCounters {
    /// The tag counters of `arena`, made on first use.
    pub(super) fn tag(&mut self, arena: usize) -> &mut GroupCounters {
        if self.tags.len() <= arena {
            self.tags.resize(arena + 1, GroupCounters::default());
        }
        &mut self.tags[arena]
    }

    /// Counts a block of `size` bytes of `class` in `arena` handed out by
    /// the state.
    pub(super) fn handed_out(&mut self, arena: usize, class: usize, size: usize) {
        let size = size as u64;
        for group in self.groups_of(arena, class).into_iter().flatten() {
            group.allocated_bytes.rise(size);
            group.allocation.rise(1);
        }
    }

    /// Counts a block of `size` bytes of `class` in `arena` given back to
    /// the state.
    pub(super) fn given_back(&mut self, arena: usize, class: usize, size: usize) {
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
    pub(super) fn note_active(&mut self, arenas: &[Arena]) {
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
    pub(super) fn note_mappings(&mut self, arenas: &[Arena]) {
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
    pub(super) fn reset_peaks(&mut self) {
        self.oversize_allocations.reset_peak();
        self.oversize_segments.reset_peak();
        self.all.reset_peaks();
        self.classes.iter_mut().for_each(GroupCounters::reset_peaks);
        self.tags.iter_mut().for_each(GroupCounters::reset_peaks);
    }

    /// Every cumulative count starts again from 0; `cache` are the caches'
    /// counts now.
    pub(super) fn reset_accumulated(&mut self, cache: (u64, u64, u64, u64)) {
        self.all.reset_accumulated();
        self.classes.iter_mut().for_each(GroupCounters::reset_accumulated);
        self.tags.iter_mut().for_each(GroupCounters::reset_accumulated);
        self.ooms = 0;
        self.cache_base = cache;
    }
}

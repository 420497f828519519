//! [`Arena`]: the memory of one tag of a [`DevicePool`](crate::pool::DevicePool):
//! a small and a large expandable segment and their free lists.

use super::asleep::Asleep;
use super::free_list::FreeList;
use super::oversize::OversizeCache;
use crate::error::Result;
use crate::pool::config::PoolConfig;
use crate::pool::device_pool::statistics::stats::PoolStats;
use crate::stream::{Settled, Tracks, UseGate};
use crate::vmm::{ExpandableSegment, PhysicalMemProp, SharedSegment};
use std::sync::Arc;

/// The index of the small pool in [`Arena::classes`].
pub(in crate::pool) const SMALL: usize = 0;

/// The segments of one tag. Tags sleep and wake separately, so each has
/// segments of its own.
pub(in crate::pool) struct Arena {
    pub(in crate::pool) tag: String,
    /// The small pool, then the large one.
    pub(in crate::pool) classes: [Class; 2],
    /// What sleep saved, while the tag is asleep.
    pub(in crate::pool) asleep: Option<Asleep>,
    /// The gate every use of the tag's blocks enters: closed while the
    /// tag sleeps (and while it is being put to sleep), so that no use
    /// starts on memory that is being offloaded or is unmapped.
    pub(in crate::pool) gate: Arc<UseGate>,
}

/// One size class of an arena: a segment, its free ranges and its
/// oversize blocks cached whole.
pub(in crate::pool) struct Class {
    pub(in crate::pool) segment: Arc<SharedSegment>,
    pub(in crate::pool) free: FreeList,
    pub(in crate::pool) oversize: OversizeCache,
}

impl Class {
    /// Bytes of this class's cached memory (free ranges and oversize
    /// blocks kept whole) whose former work may still be queued.
    pub(in crate::pool) fn busy_bytes(&self) -> usize {
        self.free.busy_bytes() + self.oversize.busy_bytes()
    }
}

impl Arena {
    /// Reserves the two segments of `tag`; nothing is mapped yet.
    pub(in crate::pool) fn new(tag: &str, prop: &PhysicalMemProp, config: &PoolConfig) -> Result<Self> {
        let class = |reserve: usize, chunk: usize| -> Result<Class> {
            Ok(Class {
                segment: SharedSegment::new(ExpandableSegment::new(prop, reserve, chunk)?),
                free: FreeList::default(),
                oversize: OversizeCache::default(),
            })
        };
        Ok(Self {
            tag: tag.to_owned(),
            classes: [
                class(config.small_reserve, config.small_chunk)?,
                class(config.large_reserve, config.large_chunk)?,
            ],
            asleep: None,
            gate: Arc::new(UseGate::new(tag)),
        })
    }

    /// Bytes mapped by both segments.
    pub(in crate::pool) fn mapped(&self) -> usize {
        self.classes.iter().map(|class| class.segment.size()).sum()
    }

    /// Bytes of cached memory whose former work may still be queued.
    pub(in crate::pool) fn busy_bytes(&self) -> usize {
        self.classes.iter().map(Class::busy_bytes).sum()
    }

    /// Bytes in free ranges and cached oversize blocks.
    pub(in crate::pool) fn free_bytes(&self) -> usize {
        self.classes
            .iter()
            .map(|class| class.free.bytes() + class.oversize.bytes())
            .sum()
    }

    /// Gives every cached oversize block to its free list; returns how
    /// many.
    pub(in crate::pool) fn release_oversize(&mut self) -> usize {
        let mut released = 0;
        for class in &mut self.classes {
            for (offset, len, tracks) in class.oversize.drain() {
                class.free.insert(offset, len, tracks);
                released += 1;
            }
        }
        released
    }

    /// The bytes `class`'s segment must grow by for `size` bytes (counting
    /// a free tail).
    pub(in crate::pool) fn growth(&self, class: usize, size: usize) -> std::result::Result<usize, String> {
        let Class { segment, free, .. } = &self.classes[class];
        let (mapped, capacity) = (segment.size(), segment.capacity());
        let tail = mapped.saturating_sub(free.tail_start(mapped));
        // Checked: `size` may be near `usize::MAX`. The free tail counts,
        // so a request fits when what it lacks fits in the unmapped rest.
        let lacking = size.saturating_sub(tail);
        lacking
            .checked_next_multiple_of(segment.chunk_size())
            .filter(|&more| mapped.checked_add(more).is_some_and(|end| end <= capacity))
            .ok_or_else(|| {
                format!(
                    "the {capacity}-byte reservation is full: {lacking} more bytes needed, {} unmapped",
                    capacity.saturating_sub(mapped)
                )
            })
    }

    /// Maps enough chunks at the end of `class`'s segment for `size` bytes
    /// (counting a free tail), and frees them into the cache.
    pub(in crate::pool) fn grow(
        &mut self,
        class: usize,
        size: usize,
        stats: &mut PoolStats,
    ) -> std::result::Result<(), String> {
        let more = self.growth(class, size)?;
        let Class { segment, free, .. } = &mut self.classes[class];
        let mapped = segment.size();
        let grown = segment.grow(more);
        // Whatever the outcome, the free list and the statistics follow what
        // is mapped now: a growth whose undo failed keeps chunks mapped,
        // which are new, unused memory.
        let now = segment.size();
        if now > mapped {
            free.insert(mapped, now - mapped, Tracks::default());
            stats.reserved += now - mapped;
            stats.note_reserved_peak();
            stats.chunks_mapped += ((now - mapped) / segment.chunk_size()) as u64;
        }
        grown.map_err(|error| error.to_string())
    }

    /// Gives the cached chunks past the last live block of each segment
    /// back, after the work queued on them is proven finished. An arena
    /// asleep has nothing mapped and is left as it is.
    pub(in crate::pool) fn empty_cache(&mut self, stats: &mut PoolStats) -> Result<()> {
        self.empty_cache_but(None, stats)
    }

    /// [`Arena::empty_cache`] of every class but `spared` (the class a
    /// request is about to grow: its free tail counts toward the growth,
    /// so unmapping it would only map it again).
    pub(in crate::pool) fn empty_cache_but(&mut self, spared: Option<usize>, stats: &mut PoolStats) -> Result<()> {
        if self.asleep.is_some() {
            return Ok(());
        }
        let mut first = None;
        for (index, class) in self.classes.iter_mut().enumerate() {
            if spared == Some(index) {
                continue;
            }
            let chunk = class.segment.chunk_size();
            let mapped = class.segment.size();
            // The high water is inside the mapped chunks: its rounding up
            // cannot pass them (and keeps them all if it overflowed). Cached
            // oversize blocks are kept like live ones.
            let keep = class
                .segment
                .high_water()
                .max(class.oversize.end())
                .checked_next_multiple_of(chunk)
                .unwrap_or(mapped);
            if keep >= mapped {
                continue;
            }
            let mut proven = true;
            for range in class.free.ranges_past_mut(keep) {
                if let Settled::Unproven(error) = range.tracks.settle("DevicePool::empty_cache") {
                    first.get_or_insert(error);
                    proven = false;
                    break;
                }
            }
            class.free.recount();
            if !proven {
                continue;
            }
            let shrunk = class.segment.shrink(mapped - keep);
            // Whatever the outcome, the free list and the statistics follow
            // what is mapped now: a shrink whose undo failed leaves chunks
            // unmapped (their ranges were proven idle above).
            let now = class.segment.size();
            if now < mapped {
                class.free.cut(now);
                stats.reserved -= mapped - now;
                stats.chunks_unmapped += ((mapped - now) / chunk) as u64;
            }
            match shrunk {
                Ok(()) => {
                    if let Err(error) = class.segment.release_spare() {
                        first.get_or_insert(error);
                    }
                }
                Err(error) => {
                    first.get_or_insert(error);
                }
            }
        }
        first.map_or(Ok(()), Err)
    }

    /// The tag's memory is shared with another process: an export of one
    /// of its chunks is held outside the pool.
    pub(in crate::pool) fn is_shared(&self) -> bool {
        self.classes.iter().any(|class| class.segment.is_shared())
    }

    /// Waits for the work on the cache; when it cannot be proven finished,
    /// keeps (leaks) the segments it may use. For the pool's drop.
    pub(in crate::pool) fn settle_for_drop(&mut self) {
        self.release_oversize();
        for class in &mut self.classes {
            for range in class.free.ranges_past_mut(0) {
                if let Settled::Unproven(_) = range.tracks.settle("DevicePool drop") {
                    std::mem::forget(Arc::clone(&class.segment));
                    break;
                }
            }
        }
    }
}

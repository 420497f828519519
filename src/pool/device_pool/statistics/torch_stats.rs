//! [`MemoryStats`]: a [`DevicePool`](crate::pool::DevicePool)'s statistics in the
//! shape of torch's `memory_stats()`.

use super::counters::GroupCounters;
use crate::pool::device_pool::State;
use crate::pool::device_pool::segments::arena::{Arena, Class};
use crate::pool::device_pool::thread_cache::CacheTotals;
use std::collections::BTreeMap;

/// One statistic in torch's four figures: `current`, `peak`, and the
/// cumulative `allocated` and `freed` (since the pool was made or the last
/// [`DevicePool::reset_accumulated_stats`](crate::pool::DevicePool::reset_accumulated_stats)).
/// A figure the pool does not keep is `None` (and left out of
/// [`MemoryStats::to_torch_map`]); which ones, and why, is in
/// [`MemoryStats`]'s table.
///
/// ```
/// use ascend::pool::{DevicePool, PoolConfig};
/// # let device = ascend::Device::new(0)?;
/// let pool = DevicePool::new(&device, PoolConfig::default())?;
/// drop(pool.alloc(4096)?);
/// let allocated = pool.memory_stats().all.allocated_bytes;
/// assert_eq!((allocated.current, allocated.peak), (0, Some(4096)));
/// assert_eq!((allocated.allocated, allocated.freed), (Some(4096), Some(4096)));
/// # Ok::<(), ascend::Error>(())
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Stat {
    /// The value now.
    pub current: u64,
    /// The highest `current` has been.
    pub peak: Option<u64>,
    /// The total of every rise.
    pub allocated: Option<u64>,
    /// The total of every fall.
    pub freed: Option<u64>,
}

/// The statistics of one group of memory — the whole pool, a size class,
/// or a tag — under torch's names.
///
/// ```
/// use ascend::pool::{DevicePool, PoolConfig};
/// # let device = ascend::Device::new(0)?;
/// let pool = DevicePool::new(&device, PoolConfig::default())?;
/// let block = pool.alloc(3 << 20)?; // a large block
/// let large = pool.memory_stats().large_pool;
/// assert_eq!(large.allocation.current, 1);
/// assert_eq!(large.reserved_bytes.current, 20 << 20); // one large chunk
/// assert_eq!(large.segment.current, 1);
/// # drop(block);
/// # Ok::<(), ascend::Error>(())
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct StatGroup {
    /// Bytes in live blocks, by capacity (torch's `allocated_bytes`).
    pub allocated_bytes: Stat,
    /// Bytes of device memory mapped (torch's `reserved_bytes`).
    pub reserved_bytes: Stat,
    /// Live bytes plus cached bytes whose former work may still be queued
    /// (torch's `active_bytes`; see [`PoolStats::active`](crate::pool::PoolStats::active)).
    pub active_bytes: Stat,
    /// Cached bytes that [`DevicePool::empty_cache`](crate::pool::DevicePool::empty_cache)
    /// cannot give back: free ranges below a segment's last live block,
    /// and blocks kept whole in the per-thread caches (torch's
    /// `inactive_split_bytes`).
    pub inactive_split_bytes: Stat,
    /// Live blocks (torch's `allocation`).
    pub allocation: Stat,
    /// Mapped chunks: the pool's unit of device memory, as torch's
    /// `segment` counts its device allocations.
    pub segment: Stat,
}

/// A [`DevicePool`](crate::pool::DevicePool)'s statistics under the keys and
/// with the meaning of torch's `torch.npu.memory_stats()` (and
/// `torch.cuda.memory_stats()`), for the whole pool (`all`), each size
/// class (`small_pool`, `large_pool`) and each tag.
///
/// What is kept, and why some figures are not:
///
/// | group | `current` | `peak` | `allocated` / `freed` |
/// |---|---|---|---|
/// | `all` | every statistic | allocated, active, reserved bytes, segments (see [`PoolStats`](crate::pool::PoolStats) for the peaks with several threads) | allocated bytes, allocations, reserved bytes, segments |
/// | `large_pool` | every statistic | all but inactive split | allocated bytes, allocations, reserved bytes, segments |
/// | `small_pool` | every statistic | reserved bytes, segments | as `large_pool` |
/// | a tag other than the default | every statistic | all but inactive split | as `large_pool` |
/// | the default tag | every statistic | reserved bytes, segments (all, while it is the only tag) | as `large_pool` |
///
/// Small blocks of the default tag are served from per-thread caches
/// that touch no shared count on a hit; the pool-wide peaks are kept by
/// headroom there, and a second peak for the small class alone would add
/// to every hit, so the small class's and the default tag's allocation
/// peaks are not kept (`None`). Tagged memory always goes through the
/// pool's lock (its small blocks skip the per-thread caches), so each
/// other tag's figures are exact. Not kept at all: the count peak of
/// live blocks pool-wide, `requested_bytes` (the blocks' lengths: another
/// count on every hit), the `active` and `inactive_split` block counts,
/// and `num_sync_all_streams` (the pool synchronises the streams that
/// used the memory it gives back, never all of them).
///
/// ```
/// use ascend::pool::{DevicePool, PoolConfig};
/// # let device = ascend::Device::new(0)?;
/// let pool = DevicePool::new(&device, PoolConfig::default())?;
/// let weights = pool.alloc_tagged(1 << 20, "weights")?;
/// let scratch = pool.alloc(4096)?;
/// let stats = pool.memory_stats();
/// assert_eq!(stats.all.allocated_bytes.current, (1 << 20) + 4096);
/// assert_eq!(stats.tags["weights"].allocated_bytes.current, 1 << 20);
/// assert_eq!(stats.tags["default"].allocated_bytes.current, 4096);
/// let torch = stats.to_torch_map();
/// assert_eq!(torch["allocated_bytes.all.current"], (1 << 20) + 4096);
/// assert_eq!(torch["num_ooms"], 0);
/// # drop((weights, scratch));
/// # Ok::<(), ascend::Error>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct MemoryStats {
    /// The whole pool.
    pub all: StatGroup,
    /// Blocks up to [`PoolConfig::small_limit`](crate::pool::PoolConfig::small_limit).
    pub small_pool: StatGroup,
    /// Larger blocks.
    pub large_pool: StatGroup,
    /// Each tag used so far, by name.
    pub tags: BTreeMap<String, StatGroup>,
    /// Requests that gave cached memory back and tried again
    /// (`num_alloc_retries`).
    pub num_alloc_retries: u64,
    /// Requests refused for want of memory (`num_ooms`).
    pub num_ooms: u64,
    /// Chunks of physical memory mapped (`num_device_alloc`).
    pub num_device_alloc: u64,
    /// Chunks of physical memory unmapped (`num_device_free`).
    pub num_device_free: u64,
    /// [`PoolConfig::max_split_size`](crate::pool::PoolConfig::max_split_size)
    /// (`max_split_size`; torch says -1 when it is unset, here `None` and
    /// no key).
    pub max_split_size: Option<u64>,
    /// Live oversize blocks (`oversize_allocations`: current and peak).
    pub oversize_allocations: Stat,
    /// Oversize blocks held whole, live or cached (`oversize_segments`:
    /// current and peak).
    pub oversize_segments: Stat,
}

impl MemoryStats {
    /// The statistics as torch's flat dictionary: keys such as
    /// `allocated_bytes.all.current` or `reserved_bytes.large_pool.peak`,
    /// and `num_alloc_retries`, `num_ooms`, `num_device_alloc`,
    /// `num_device_free`, `max_split_size` and `oversize_allocations` /
    /// `oversize_segments` (current, peak). Figures the pool does not keep have no key; the
    /// tags are not in it (torch has none).
    ///
    /// ```
    /// use ascend::pool::{DevicePool, PoolConfig};
    /// # let device = ascend::Device::new(0)?;
    /// let pool = DevicePool::new(&device, PoolConfig::default())?;
    /// let block = pool.alloc(4096)?;
    /// let torch = pool.memory_stats().to_torch_map();
    /// assert_eq!(torch["reserved_bytes.all.current"], 2 << 20);
    /// assert_eq!(torch["allocation.all.allocated"], 1);
    /// assert!(!torch.contains_key("allocated_bytes.small_pool.peak")); // not kept
    /// # drop(block);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn to_torch_map(&self) -> BTreeMap<String, u64> {
        let mut map = BTreeMap::new();
        for (group, stats) in [
            ("all", &self.all),
            ("small_pool", &self.small_pool),
            ("large_pool", &self.large_pool),
        ] {
            for (name, stat) in stats.named() {
                let figures = [
                    ("current", Some(stat.current)),
                    ("peak", stat.peak),
                    ("allocated", stat.allocated),
                    ("freed", stat.freed),
                ];
                for (figure, value) in figures {
                    if let Some(value) = value {
                        map.insert(format!("{name}.{group}.{figure}"), value);
                    }
                }
            }
        }
        for (name, stat) in [
            ("oversize_allocations", &self.oversize_allocations),
            ("oversize_segments", &self.oversize_segments),
        ] {
            map.insert(format!("{name}.current"), stat.current);
            if let Some(peak) = stat.peak {
                map.insert(format!("{name}.peak"), peak);
            }
        }
        if let Some(max_split_size) = self.max_split_size {
            map.insert("max_split_size".to_owned(), max_split_size);
        }
        for (key, value) in [
            ("num_alloc_retries", self.num_alloc_retries),
            ("num_ooms", self.num_ooms),
            ("num_device_alloc", self.num_device_alloc),
            ("num_device_free", self.num_device_free),
        ] {
            map.insert(key.to_owned(), value);
        }
        map
    }
}

impl StatGroup {
    /// Each statistic with torch's name.
    fn named(&self) -> [(&'static str, &Stat); 6] {
        [
            ("allocated_bytes", &self.allocated_bytes),
            ("reserved_bytes", &self.reserved_bytes),
            ("active_bytes", &self.active_bytes),
            ("inactive_split_bytes", &self.inactive_split_bytes),
            ("allocation", &self.allocation),
            ("segment", &self.segment),
        ]
    }

    /// The group counted in `counters`, with `inactive` inactive split
    /// bytes.
    fn exact(counters: &GroupCounters, inactive: usize) -> Self {
        let active = counters.active_bytes;
        Self {
            allocated_bytes: counters.allocated_bytes.stat(),
            reserved_bytes: counters.reserved_bytes.stat(),
            active_bytes: Stat {
                current: active.current,
                peak: Some(active.peak),
                allocated: None,
                freed: None,
            },
            inactive_split_bytes: level(inactive),
            allocation: counters.allocation.stat(),
            segment: counters.segment.stat(),
        }
    }

    /// `self` less the groups `parts` (its allocations, which the pool
    /// counts only as a whole): current and cumulative figures, no peak.
    /// The mappings, counted exactly for every group, are `mapped`'s.
    fn less(&self, parts: &[StatGroup], mapped: &GroupCounters, inactive: usize) -> Self {
        let less = |pick: fn(&StatGroup) -> Stat| {
            let whole = pick(self);
            let minus = |figure: fn(&Stat) -> Option<u64>| {
                let parts: Option<u64> = parts.iter().map(|part| figure(&pick(part))).sum();
                Some(figure(&whole)?.saturating_sub(parts?))
            };
            Stat {
                current: minus(|stat| Some(stat.current)).unwrap_or(0),
                peak: None,
                allocated: minus(|stat| stat.allocated),
                freed: minus(|stat| stat.freed),
            }
        };
        Self {
            allocated_bytes: less(|group| group.allocated_bytes),
            reserved_bytes: mapped.reserved_bytes.stat(),
            active_bytes: less(|group| group.active_bytes),
            inactive_split_bytes: level(inactive),
            allocation: less(|group| group.allocation),
            segment: mapped.segment.stat(),
        }
    }
}

/// A level counted with its peak.
fn level_and_peak(counter: &super::counters::Counter) -> Stat {
    Stat {
        current: counter.current,
        peak: Some(counter.peak),
        ..Stat::default()
    }
}

/// A figure known only as its current value.
fn level(current: usize) -> Stat {
    Stat {
        current: current as u64,
        ..Stat::default()
    }
}

/// Bytes of `class` that `empty_cache` could not give back now (live
/// ones included).
fn kept_of(class: &Class) -> u64 {
    let mapped = class.segment.size();
    let chunk = class.segment.chunk_size();
    let kept = class
        .segment
        .high_water()
        .checked_next_multiple_of(chunk)
        .unwrap_or(mapped)
        .min(mapped);
    kept as u64
}

/// Bytes of `arenas`' classes `classes` that `empty_cache` could not give
/// back, with `allocated` of them live.
fn inactive(arenas: &[&Arena], classes: &[usize], allocated: u64) -> usize {
    let kept: u64 = arenas
        .iter()
        .flat_map(|arena| classes.iter().map(|&class| kept_of(&arena.classes[class])))
        .sum();
    usize::try_from(kept.saturating_sub(allocated)).unwrap_or(usize::MAX)
}

/// The statistics of the pool whose (locked) state is `state`, with the
/// caches' counts `caches` and the pool-wide active bytes `active` and
/// their peak.
pub(in crate::pool) fn memory_stats(
    state: &State,
    caches: &CacheTotals,
    active: (usize, usize),
    max_split_size: Option<usize>,
) -> MemoryStats {
    let counters = &state.counters;
    let (base_allocations, base_frees, base_out, base_back) = counters.cache_base;
    let arenas: Vec<&Arena> = state.arenas.iter().collect();
    let allocated = caches.allocated as u64;
    let all = StatGroup {
        allocated_bytes: Stat {
            current: allocated,
            peak: Some(caches.allocated_peak as u64),
            allocated: Some(caches.bytes_out.wrapping_sub(base_out)),
            freed: Some(caches.bytes_back.wrapping_sub(base_back)),
        },
        reserved_bytes: counters.all.reserved_bytes.stat(),
        active_bytes: Stat {
            current: active.0 as u64,
            peak: Some(active.1 as u64),
            allocated: None,
            freed: None,
        },
        inactive_split_bytes: level(inactive(&arenas, &[0, 1], allocated)),
        allocation: Stat {
            current: caches.allocations.saturating_sub(caches.frees),
            peak: None,
            allocated: Some(caches.allocations.wrapping_sub(base_allocations)),
            freed: Some(caches.frees.wrapping_sub(base_frees)),
        },
        segment: counters.all.segment.stat(),
    };
    let large_counters = &counters.classes[1];
    let large_allocated = large_counters.allocated_bytes.current;
    let large_pool = StatGroup::exact(large_counters, inactive(&arenas, &[1], large_allocated));
    let small_inactive = inactive(&arenas, &[0], allocated.saturating_sub(large_allocated));
    let small_pool = all.less(&[large_pool], &counters.classes[0], small_inactive);
    let mut tags = BTreeMap::new();
    let mut others = Vec::new();
    for (index, arena) in state.arenas.iter().enumerate().skip(1) {
        let group = counters.tags.get(index).copied().unwrap_or_default();
        let inactive = inactive(&[arena], &[0, 1], group.allocated_bytes.current);
        let stats = StatGroup::exact(&group, inactive);
        others.push(stats);
        tags.insert(arena.tag.clone(), stats);
    }
    if let Some(default) = state.arenas.first() {
        let mapped = counters.tags.first().copied().unwrap_or_default();
        let mut stats = all;
        if !others.is_empty() {
            let own: u64 = others.iter().map(|tag| tag.allocated_bytes.current).sum();
            let inactive = inactive(&[default], &[0, 1], allocated.saturating_sub(own));
            stats = all.less(&others, &mapped, inactive);
        }
        tags.insert(default.tag.clone(), stats);
    }
    MemoryStats {
        all,
        small_pool,
        large_pool,
        tags,
        num_alloc_retries: state.stats.retries,
        num_ooms: counters.ooms,
        num_device_alloc: state.stats.chunks_mapped,
        num_device_free: state.stats.chunks_unmapped,
        max_split_size: max_split_size.map(|bytes| bytes as u64),
        oversize_allocations: level_and_peak(&counters.oversize_allocations),
        oversize_segments: level_and_peak(&counters.oversize_segments),
    }
}

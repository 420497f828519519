//! The memory history of a [`DevicePool`](crate::pool::DevicePool)
//! ([`DevicePool::record_memory_history`](crate::pool::DevicePool::record_memory_history)):
//! a bounded ring of the pool's events, recorded under the pool's lock while
//! the thread caches are bypassed, and [`PoolHistory`], a copy of it.

use crate::pool::device_pool::segments::arena::Arena;
use std::backtrace::Backtrace;
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// How to record a pool's memory history (torch's
/// `torch.cuda.memory._record_memory_history(enabled, context, stacks,
/// max_entries)`): the bound of the ring, and whether each event captures
/// where it was made.
///
/// ```
/// use ascend::pool::{DevicePool, HistoryOptions, PoolConfig};
/// # let device = ascend::Device::new(0)?;
/// let pool = DevicePool::new(&device, PoolConfig::default())?;
/// let options = HistoryOptions { max_entries: 1000, ..HistoryOptions::default() };
/// pool.record_memory_history(Some(options))?;
/// drop(pool.alloc(4096)?);
/// // A chunk mapped, the block allocated, its free requested and completed:
/// assert_eq!(pool.memory_history().events.len(), 4);
/// # Ok::<(), ascend::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HistoryOptions {
    /// The most events kept: the oldest go first (torch's `max_entries`).
    /// At least 1.
    pub max_entries: usize,
    /// Whether each event captures a Rust backtrace of its call site
    /// (torch's `stacks="all"`): slow, for finding who holds memory. Off by
    /// default.
    pub backtraces: bool,
}

impl Default for HistoryOptions {
    /// 100,000 events, no backtraces.
    fn default() -> Self {
        Self {
            max_entries: 100_000,
            backtraces: false,
        }
    }
}

/// What happened in a [`HistoryEvent`]. The names PyTorch's snapshot gives
/// them are [`HistoryAction::torch_name`].
///
/// ```
/// use ascend::pool::HistoryAction;
/// assert_eq!(HistoryAction::FreeCompleted.torch_name(), "free_completed");
/// assert_eq!(HistoryAction::Sleep.torch_name(), "user_defined"); // torch has no sleep
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum HistoryAction {
    /// A block was handed out.
    Alloc,
    /// A block was dropped. Its range goes back to the cache at once (with
    /// its queued uses), so a [`HistoryAction::FreeCompleted`] follows
    /// right after.
    FreeRequested,
    /// A dropped block's range is in the cache.
    FreeCompleted,
    /// Chunks were mapped at the end of a segment (growing, or a wake).
    SegmentMap,
    /// Chunks were unmapped (`empty_cache`, garbage collection, an
    /// out-of-memory retry, or a sleep).
    SegmentUnmap,
    /// The pool went to sleep (after its segments' unmaps).
    Sleep,
    /// The pool woke (after its segments' maps).
    Wake,
    /// [`DevicePool::empty_cache`](crate::pool::DevicePool::empty_cache) ran
    /// (after its unmaps).
    EmptyCache,
    /// A request failed with [`Error::PoolExhausted`](crate::Error::PoolExhausted).
    Oom,
}

impl HistoryAction {
    /// The `action` of PyTorch's trace entry (`c10`'s `TraceEntry`):
    /// `alloc`, `free_requested`, `free_completed`, `segment_map`,
    /// `segment_unmap`, `oom`, and `user_defined` for sleep, wake and
    /// `empty_cache`, which torch does not have.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::pool::{DevicePool, HistoryAction, HistoryOptions, PoolConfig};
    /// # let device = ascend::Device::new(0)?;
    /// let pool = DevicePool::new(&device, PoolConfig::default())?;
    /// pool.record_memory_history(Some(HistoryOptions::default()))?;
    /// drop(pool.alloc(512)?);
    /// let names: Vec<&str> = pool.memory_history().events.iter().map(|event| event.action.torch_name()).collect();
    /// assert!(names.contains(&"alloc") && names.contains(&"free_completed"), "{names:?}");
    /// assert_eq!(HistoryAction::SegmentMap.torch_name(), "segment_map");
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn torch_name(self) -> &'static str {
        match self {
            Self::Alloc => "alloc",
            Self::FreeRequested => "free_requested",
            Self::FreeCompleted => "free_completed",
            Self::SegmentMap => "segment_map",
            Self::SegmentUnmap => "segment_unmap",
            Self::Oom => "oom",
            Self::Sleep | Self::Wake | Self::EmptyCache => "user_defined",
        }
    }

    /// What a `user_defined` action was (`sleep`, `wake`, `empty_cache`):
    /// the torch snapshot's `user_metadata`.
    #[cfg(feature = "torch-snapshot")]
    pub(in crate::pool) fn user_metadata(self) -> Option<&'static str> {
        match self {
            Self::Sleep => Some("sleep"),
            Self::Wake => Some("wake"),
            Self::EmptyCache => Some("empty_cache"),
            _ => None,
        }
    }
}

/// One event of a pool's memory history.
///
/// ```
/// use ascend::pool::{DevicePool, HistoryAction, HistoryOptions, PoolConfig};
/// # let device = ascend::Device::new(0)?;
/// let pool = DevicePool::new(&device, PoolConfig::default())?;
/// pool.record_memory_history(Some(HistoryOptions::default()))?;
/// let block = pool.alloc_tagged(1000, "weights")?;
/// let history = pool.memory_history();
/// let alloc = history.events.iter().find(|event| event.action == HistoryAction::Alloc).unwrap();
/// assert_eq!((alloc.address, alloc.size, &*alloc.tag), (block.device_ptr() as usize, 1024, "weights"));
/// # Ok::<(), ascend::Error>(())
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct HistoryEvent {
    /// What happened.
    pub action: HistoryAction,
    /// The block's or the mapped range's device address (0 for sleep,
    /// wake, `empty_cache` and out-of-memory).
    pub address: usize,
    /// Bytes: a block's capacity (what the statistics count), a mapped or
    /// unmapped range, or the request that failed.
    pub size: usize,
    /// The stream: 0, as a pool block belongs to none (it is ordered on
    /// every stream it is used on).
    pub stream: u64,
    /// The tag of the block or segment (empty for pool-wide events),
    /// shared by the events of the same tag.
    pub tag: Arc<str>,
    /// Nanoseconds since recording started ([`PoolHistory::started_unix_us`]
    /// is that moment), from a monotonic clock.
    pub time_ns: u64,
    /// For [`HistoryAction::Oom`], the bytes the pool had free in its
    /// mapped memory; 0 otherwise.
    pub free: usize,
    /// Where the event was made, when [`HistoryOptions::backtraces`] is on.
    pub backtrace: Option<Arc<Backtrace>>,
}

/// A copy of a pool's memory history
/// ([`DevicePool::memory_history`](crate::pool::DevicePool::memory_history)),
/// oldest event first, with the totals before its first event so that
/// [`PoolHistory::replay`] gives the allocated and reserved bytes after
/// each.
///
/// ```
/// use ascend::pool::{DevicePool, HistoryOptions, PoolConfig};
/// # let device = ascend::Device::new(0)?;
/// let pool = DevicePool::new(&device, PoolConfig::default())?;
/// pool.record_memory_history(Some(HistoryOptions::default()))?;
/// let block = pool.alloc(4096)?;
/// let history = pool.memory_history();
/// let (allocated, reserved) = *history.replay().last().unwrap();
/// assert_eq!((allocated, reserved), (pool.stats().allocated, pool.stats().reserved));
/// let svg = history.to_timeline_svg(); // the same story as a picture
/// assert!(svg.starts_with("<svg"));
/// # drop(block);
/// # Ok::<(), ascend::Error>(())
/// ```
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct PoolHistory {
    /// The pool's device.
    pub device: i32,
    /// The events kept, oldest first.
    pub events: Vec<HistoryEvent>,
    /// Events dropped by the bound ([`HistoryOptions::max_entries`]).
    pub dropped: u64,
    /// Allocated bytes before the first event kept.
    pub start_allocated: usize,
    /// Reserved bytes before the first event kept.
    pub start_reserved: usize,
    /// Microseconds since the Unix epoch when recording started
    /// ([`HistoryEvent::time_ns`] 0).
    pub started_unix_us: u64,
    /// Whether the pool still records.
    pub recording: bool,
}

impl PoolHistory {
    /// The allocated and reserved bytes after each event (one pair per
    /// event): allocations and completed frees change the first, segment
    /// maps and unmaps the second.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::pool::{DevicePool, HistoryOptions, PoolConfig};
    /// # let device = ascend::Device::new(0)?;
    /// let pool = DevicePool::new(&device, PoolConfig::default())?;
    /// pool.record_memory_history(Some(HistoryOptions::default()))?;
    /// drop(pool.alloc(4096)?);
    /// let history = pool.memory_history();
    /// let totals = history.replay();
    /// assert_eq!(totals.len(), history.events.len()); // one pair per event
    /// let peak = totals.iter().map(|&(allocated, _)| allocated).max();
    /// assert_eq!(peak, Some(4096));
    /// assert_eq!(totals.last().map(|&(allocated, _)| allocated), Some(0), "freed at the end");
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn replay(&self) -> Vec<(usize, usize)> {
        let (mut allocated, mut reserved) = (self.start_allocated, self.start_reserved);
        self.events
            .iter()
            .map(|event| {
                apply(event, &mut allocated, &mut reserved);
                (allocated, reserved)
            })
            .collect()
    }
}

/// Applies `event` to the running totals.
fn apply(event: &HistoryEvent, allocated: &mut usize, reserved: &mut usize) {
    match event.action {
        // Saturating: the fields are public, so a history may be edited.
        HistoryAction::Alloc => *allocated = allocated.saturating_add(event.size),
        HistoryAction::FreeCompleted => *allocated = allocated.saturating_sub(event.size),
        HistoryAction::SegmentMap => *reserved = reserved.saturating_add(event.size),
        HistoryAction::SegmentUnmap => *reserved = reserved.saturating_sub(event.size),
        _ => {}
    }
}

/// The pool's recorder (in its locked state): nothing until recording is
/// first started.
#[derive(Default)]
pub(in crate::pool) struct Recorder(Option<Ring>);

struct Ring {
    events: VecDeque<HistoryEvent>,
    options: HistoryOptions,
    recording: bool,
    dropped: u64,
    start_allocated: usize,
    start_reserved: usize,
    origin: Instant,
    origin_unix_us: u64,
    /// The tag of the last event, shared with the next of the same tag.
    last_tag: Arc<str>,
}

impl Recorder {
    /// Starts recording afresh (forgetting earlier events), the pool
    /// holding `allocated` and `reserved` bytes now.
    pub(in crate::pool) fn start(&mut self, options: HistoryOptions, allocated: usize, reserved: usize) {
        let origin_unix_us = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |since| u64::try_from(since.as_micros()).unwrap_or(u64::MAX));
        self.0 = Some(Ring {
            events: VecDeque::with_capacity(options.max_entries.min(4096)),
            options,
            recording: true,
            dropped: 0,
            start_allocated: allocated,
            start_reserved: reserved,
            origin: Instant::now(),
            origin_unix_us,
            last_tag: Arc::from(""),
        });
    }

    /// Stops recording; the events stay until the next start.
    pub(in crate::pool) fn stop(&mut self) {
        if let Some(ring) = &mut self.0 {
            ring.recording = false;
        }
    }

    /// Whether events are recorded now.
    #[inline]
    pub(in crate::pool) fn is_on(&self) -> bool {
        self.0.as_ref().is_some_and(|ring| ring.recording)
    }

    /// Records an event (nothing while not recording).
    #[inline]
    pub(in crate::pool) fn record(&mut self, action: HistoryAction, address: usize, size: usize, tag: &str) {
        if self.is_on() {
            self.push(action, address, size, tag, 0);
        }
    }

    /// Records a block's free: requested and completed at once (its range
    /// is cached with its queued uses).
    pub(in crate::pool) fn record_free(&mut self, address: usize, size: usize, tag: &str) {
        self.record(HistoryAction::FreeRequested, address, size, tag);
        self.record(HistoryAction::FreeCompleted, address, size, tag);
    }

    /// Records an out-of-memory event for `requested` bytes, `free` bytes
    /// being free in the pool.
    pub(in crate::pool) fn record_oom(&mut self, requested: usize, free: usize, tag: &str) {
        if self.is_on() {
            self.push(HistoryAction::Oom, 0, requested, tag, free);
        }
    }

    #[cold]
    fn push(&mut self, action: HistoryAction, address: usize, size: usize, tag: &str, free: usize) {
        let Some(ring) = &mut self.0 else { return };
        let time_ns = u64::try_from(ring.origin.elapsed().as_nanos()).unwrap_or(u64::MAX);
        let backtrace = ring.options.backtraces.then(|| Arc::new(Backtrace::force_capture()));
        while ring.events.len() >= ring.options.max_entries.max(1) {
            let Some(old) = ring.events.pop_front() else { break };
            apply(&old, &mut ring.start_allocated, &mut ring.start_reserved);
            ring.dropped += 1;
        }
        if *ring.last_tag != *tag {
            ring.last_tag = Arc::from(tag);
        }
        ring.events.push_back(HistoryEvent {
            action,
            address,
            size,
            stream: 0,
            tag: Arc::clone(&ring.last_tag),
            time_ns,
            free,
            backtrace,
        });
    }

    /// A copy of what was recorded.
    pub(in crate::pool) fn history(&self, device: i32) -> PoolHistory {
        let Some(ring) = &self.0 else {
            return PoolHistory {
                device,
                ..PoolHistory::default()
            };
        };
        PoolHistory {
            device,
            events: ring.events.iter().cloned().collect(),
            dropped: ring.dropped,
            start_allocated: ring.start_allocated,
            start_reserved: ring.start_reserved,
            started_unix_us: ring.origin_unix_us,
            recording: ring.recording,
        }
    }
}

/// The mapped bytes of each size class of each arena, to compare with
/// after a change ([`Recorder::segments_changed`]); empty while not
/// recording.
pub(in crate::pool) fn mapped_sizes(recorder: &Recorder, arenas: &[Arena]) -> Vec<[usize; 2]> {
    if !recorder.is_on() {
        return Vec::new();
    }
    arenas
        .iter()
        .map(|arena| [0, 1].map(|class| arena.classes[class].segment.size()))
        .collect()
}

impl Recorder {
    /// Records the maps and unmaps since `before` ([`mapped_sizes`]): a
    /// segment maps and unmaps at its end, so each change is one range.
    pub(in crate::pool) fn segments_changed(&mut self, arenas: &[Arena], before: &[[usize; 2]]) {
        if !self.is_on() {
            return;
        }
        for (arena, before) in arenas.iter().zip(before) {
            for (class, &before) in arena.classes.iter().zip(before) {
                let (base, now) = (class.segment.base() as usize, class.segment.size());
                if now > before {
                    self.record(HistoryAction::SegmentMap, base + before, now - before, &arena.tag);
                } else if now < before {
                    self.record(HistoryAction::SegmentUnmap, base + now, before - now, &arena.tag);
                }
            }
        }
    }
}

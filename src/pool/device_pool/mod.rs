//! [`DevicePool`] and [`PoolBlock`]: a caching, stream-ordered device
//! allocator on expandable segments.

mod block;
mod block_export;
mod observability;
mod segments;
mod statistics;
mod stream_allocator;
mod thread_cache;

pub use block::PoolBlock;
pub use block_export::BlockExport;
pub use observability::{
    BlockSnapshot, BlockState, HistoryAction, HistoryEvent, HistoryOptions, PoolHistory, PoolSnapshot, SegmentSnapshot,
};
pub use statistics::{MemoryStats, PoolStats, Stat, StatGroup};
pub use stream_allocator::PoolAllocator;

use super::config::PoolConfig;
use super::watch::Watch;
use crate::Call;
use crate::Device;
use crate::error::{Error, Result};
use crate::pool::config::rounding;
use crate::stream::{Ordered, Tracks, UseGate};
use crate::vmm::{Granularity, PhysicalMemProp, SegmentBlock};
use block::BlockNode;
use observability::history::{self, Recorder};
use segments::arena::{Arena, SMALL};
use segments::memory_limit::Limit;
use segments::sleep;
use statistics::counters::StateCounters;
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard};
use thread_cache::{CacheTotals, ThreadCaches};

/// A caching device allocator for one device: blocks are placed best-fit
/// in two expandable segments (a small and a large pool, as torch_npu's),
/// split and coalesced, and a freed block's memory is cached for the next
/// request instead of going back to the device.
///
/// **Stream-ordered, by the block's own tracks.** A block is an
/// [`Ordered`] owner: its copies and memsets on any stream are ordered
/// after the uses that conflict with them. When it is dropped, nothing
/// waits: its range goes back to the cache *with* the uses that may still
/// be queued on it, and the next block placed there inherits them. Work on
/// the same stream is ordered by the stream itself, work on another stream
/// first waits for an event, and host access (`get_mut`) waits for the
/// work. So a block freed on stream S is reusable at once on S and, after
/// a device-side wait, on any other stream — the record-stream bookkeeping
/// of torch_npu is built in.
///
/// **Out of memory.** When a segment cannot grow, the pool gives its cached
/// chunks back ([`DevicePool::empty_cache`]) and tries once more; then it
/// fails with [`Error::PoolExhausted`] naming the allocated, reserved and
/// free bytes. A request larger than its pool's whole reservation fails so
/// at once. With a cap on reserved memory ([`PoolConfig::memory_limit`],
/// [`DevicePool::set_memory_fraction`]) growing past it fails the same way,
/// the error's `limit` naming the cap. torch's other knobs
/// (`max_split_size_mb`, `garbage_collection_threshold`,
/// `roundup_power2_divisions`) are fields of [`PoolConfig`].
///
/// ```
/// use std::sync::Arc;
/// use ascend::pool::{DevicePool, PoolConfig};
/// use ascend::stream::Stream;
/// use ascend::Device;
/// let device = Device::new(0)?;
/// let pool = DevicePool::new(&device, PoolConfig::default())?;
/// let stream = Arc::new(Stream::new(&device)?);
/// let first = pool.alloc(4000)?; // 4000 bytes, in a 4096-byte block
/// assert_eq!((first.byte_len(), first.capacity()), (4000, 4096));
/// first.fill_bytes(1, &stream)?;
/// let address = first.device_ptr();
/// drop(first); // cached, with its queued memset
/// let again = pool.alloc(4096)?; // the same memory, ordered after it
/// assert_eq!(again.device_ptr(), address);
/// assert_eq!(pool.stats().allocated, 4096); // capacities are counted
/// # Ok::<(), ascend::Error>(())
/// ```
///
/// **Tags, sleep and wake.** Blocks can be tagged
/// ([`DevicePool::alloc_tagged`]); each tag has segments of its own.
/// [`DevicePool::sleep`] gives the pool's physical memory back to the
/// device while every block keeps its address, copying the tags it is told
/// to offload to pinned host memory; [`DevicePool::wake`] maps new memory
/// at the same addresses and restores them. Both are transactional.
///
/// **Threads:** `DevicePool` is `Send` and `Sync`: share it with `Arc` and
/// allocate from any thread. Each thread keeps the small blocks it frees in
/// a cache of its own, so threads do not wait for each other on a hit; a
/// miss, `empty_cache`, sleep and a snapshot bring every thread's cached
/// blocks back to the free lists first. A forked child process must not
/// use a pool made before the fork (one of the parent's threads may have
/// been holding its cache at that moment, for good in the child); make
/// pools after forking, as the device itself must be.
///
/// **Guide:** [Memory pools, for a torch_npu user](crate::guide::pools);
/// its costs: [Performance](crate::guide::performance).
pub struct DevicePool {
    pub(super) shared: Arc<Shared>,
    /// Counts the pool's handles: the last one's drop empties the thread
    /// caches, whose blocks hold the pool.
    handles: Arc<Handles>,
}

/// The handles of one pool; dropped with the last.
struct Handles(Arc<Shared>);

impl Drop for Handles {
    fn drop(&mut self) {
        // No request can come any more: cached blocks go back to their
        // segments (dropping their hold on the pool), and blocks freed from
        // now on go there directly.
        self.0.caches.close();
        let mut state = self.0.state();
        self.0.flushed_in(&mut state, |_| ());
    }
}

pub(super) struct Shared {
    pub(super) device: Device,
    prop: PhysicalMemProp,
    config: PoolConfig,
    /// Whether [`PoolConfig::roundup_power2_divisions`] divides some
    /// interval (else rounding is a mask).
    divides: bool,
    pub(super) state: Mutex<State>,
    /// Whole freed blocks per thread, in front of `state` (lock order:
    /// `state`, then a cache).
    pub(super) caches: ThreadCaches,
}

pub(super) struct State {
    /// The arenas by tag; the first is [`DevicePool::DEFAULT_TAG`]'s.
    pub(super) arenas: Vec<Arena>,
    /// The statistics kept here (reserved memory, counts of events); the
    /// thread caches count the allocations.
    pub(super) stats: PoolStats,
    /// The counters of [`MemoryStats`] kept under the lock.
    pub(super) counters: StateCounters,
    /// Pinned buffers of earlier offloads, for the next sleep.
    spares: sleep::Spares,
    /// The cap on reserved bytes, if any.
    pub(super) limit: Option<Limit>,
    /// The sequence of cached oversize blocks (for oldest first).
    oversize_seq: u64,
    /// The blocks handed out while a leak check of [`crate::testing`]
    /// watches, by `(arena, class, offset)` (nothing without the feature
    /// `testing`).
    watch: Watch<(usize, usize, usize)>,
    /// The memory history, while [`DevicePool::record_memory_history`]
    /// records (the caches are bypassed meanwhile).
    pub(super) history: Recorder,
}

impl DevicePool {
    /// The tag of [`DevicePool::alloc`]'s blocks.
    pub const DEFAULT_TAG: &'static str = "default";

    /// A pool for `device` configured by `config`; it reserves the address
    /// ranges of the segments of [`DevicePool::DEFAULT_TAG`] and maps
    /// nothing yet.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for settings that do not fit each other
    /// or the VMM granularity; the runtime's code from the reservations.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::pool::{DevicePool, PoolConfig};
    /// use ascend::{Device, Error};
    /// let device = Device::new(0)?;
    /// let mut config = PoolConfig::default();
    /// config.large_chunk = 40 << 20; // fewer, larger chunks for big tensors
    /// let pool = DevicePool::new(&device, config)?;
    /// assert_eq!(pool.stats().reserved, 0); // addresses only, nothing mapped yet
    /// config.rounding = 3000; // not a power of two
    /// assert!(matches!(DevicePool::new(&device, config), Err(Error::InvalidArgument { .. })));
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn new(device: &Device, config: PoolConfig) -> Result<Self> {
        let prop = PhysicalMemProp::device(device);
        config.check(prop.granularity(Granularity::Minimum)?)?;
        let fraction = match config.memory_fraction {
            Some(fraction) => Some(Limit::of_fraction(fraction, device.memory_info()?.1)),
            None => None,
        };
        let limit = config.memory_limit.map(|bytes| Limit { bytes, fraction: None });
        let default = Arena::new(Self::DEFAULT_TAG, &prop, &config)?;
        let shared = Arc::new(Shared {
            device: device.clone(),
            prop,
            caches: ThreadCaches::new(config.large_chunk),
            divides: config.divides(),
            config,
            state: Mutex::new(State {
                arenas: vec![default],
                stats: PoolStats::default(),
                counters: StateCounters::default(),
                spares: sleep::Spares::default(),
                limit: Limit::smaller(limit, fraction),
                oversize_seq: 0,
                watch: Watch::default(),
                history: Recorder::default(),
            }),
        });
        #[cfg(feature = "testing")]
        super::watch::register({
            let weak: std::sync::Weak<Shared> = Arc::downgrade(&shared);
            weak
        });
        Ok(Self {
            handles: Arc::new(Handles(Arc::clone(&shared))),
            shared,
        })
    }

    /// Another handle to the same pool (for adapters that keep one).
    pub(super) fn handle(&self) -> DevicePool {
        DevicePool {
            shared: Arc::clone(&self.shared),
            handles: Arc::clone(&self.handles),
        }
    }

    /// The pool's settings.
    ///
    /// ```
    /// # use ascend::pool::{DevicePool, PoolConfig};
    /// # let device = ascend::Device::new(0)?;
    /// # let pool = DevicePool::new(&device, PoolConfig::default())?;
    /// let rounding = pool.config().rounding; // 512 by default
    /// assert_eq!(pool.alloc(rounding + 1)?.capacity(), 2 * rounding);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn config(&self) -> &PoolConfig {
        &self.shared.config
    }

    /// The device it allocates on.
    ///
    /// ```
    /// use ascend::pool::{DevicePool, PoolConfig};
    /// let device = ascend::Device::new(0)?;
    /// let pool = DevicePool::new(&device, PoolConfig::default())?;
    /// let stream = ascend::stream::Stream::new(pool.device())?; // a stream for its blocks
    /// assert_eq!(pool.device().id(), device.id());
    /// # drop(stream);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn device(&self) -> &Device {
        &self.shared.device
    }

    /// A block of `bytes` bytes, tagged [`DevicePool::DEFAULT_TAG`], as an
    /// [`Ordered`] owner: share it in an `Arc`, use it on any stream;
    /// dropping it caches its memory with its queued uses. Its length
    /// ([`Ordered::byte_len`], [`Ordered::view`]) is `bytes`; its capacity
    /// ([`PoolBlock::capacity`]), the range it holds and the statistics
    /// count, is `bytes` rounded up to the configured rounding.
    ///
    /// # Errors
    ///
    /// [`Error::PoolExhausted`] when the memory cannot be found even after
    /// giving the cache back, or at once for a request larger than its
    /// pool's whole reservation; [`Error::PoolAsleep`] while the tag is
    /// asleep; [`Error::InvalidArgument`] when rounding the request up
    /// overflows `usize`.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::Error;
    /// # use ascend::pool::{DevicePool, PoolConfig};
    /// # let device = ascend::Device::new(0)?;
    /// # let pool = DevicePool::new(&device, PoolConfig::default())?;
    /// let block = pool.alloc(1000)?;
    /// assert_eq!((block.byte_len(), block.capacity()), (1000, 1024));
    /// block.view().write_from_host(&[7u8; 1000])?; // host writes through the Ordered owner
    /// assert_eq!(block.bytes(998..1000)?.to_vec::<u8>()?, [7, 7]);
    /// // More than the pool reserves for large blocks (31.25 GiB by default):
    /// let too_big = pool.alloc(64 << 30);
    /// assert!(matches!(too_big, Err(Error::PoolExhausted { .. })));
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[inline]
    pub fn alloc(&self, bytes: usize) -> Result<Ordered<PoolBlock>> {
        // The hit, inlined into the caller: a small size of the default
        // tag that this thread's cache holds.
        // Its common case only, with no call on any path (so the caller
        // saves no registers for it); everything else is `alloc_in`'s.
        let shared = &*self.shared;
        if let Some(size) = shared.small_size(bytes)
            && let Some((node, tracks)) = shared.caches.take_idle(0, size)
        {
            return Ok(PoolBlock::ordered(node, bytes, tracks));
        }
        self.alloc_in(None, bytes)
    }

    /// [`DevicePool::alloc`] for memory tagged `tag` (for example
    /// `"weights"` or `"kv_cache"`): each tag has segments of its own, so
    /// that [`DevicePool::sleep`] can offload some tags and discard
    /// others, and [`DevicePool::wake_tags`] can wake them one by one. The
    /// first block of a new tag reserves its address ranges.
    ///
    /// # Errors
    ///
    /// As [`DevicePool::alloc`], and the runtime's code when the first
    /// block of a tag cannot reserve its ranges.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::Device;
    /// use ascend::pool::{DevicePool, PoolConfig};
    /// let device = Device::new(0)?;
    /// let pool = DevicePool::new(&device, PoolConfig::default())?;
    /// let weights = pool.alloc_tagged(1 << 20, "weights")?;
    /// let scratch = pool.alloc(1 << 20)?; // the default tag: another segment
    /// assert_ne!(weights.device_ptr(), scratch.device_ptr());
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn alloc_tagged(&self, bytes: usize, tag: &str) -> Result<Ordered<PoolBlock>> {
        self.alloc_in(Some(tag), bytes)
    }

    #[inline(never)]
    fn alloc_in(&self, tag: Option<&str>, bytes: usize) -> Result<Ordered<PoolBlock>> {
        let shared = &self.shared;
        let size = shared.rounded(bytes).ok_or_else(|| {
            let api = if tag.is_some() {
                "DevicePool::alloc_tagged"
            } else {
                "DevicePool::alloc"
            };
            let rounding = shared.config.rounding;
            Error::invalid(
                Call::rust(api),
                format!("{bytes} bytes overflow usize when rounded up to {rounding}"),
            )
        })?;
        let class = shared.class_of(size);
        let arena = match tag {
            None => 0,
            Some(tag) => {
                let mut state = shared.state();
                let arena = shared.arena(&mut state, tag)?;
                state.check_awake(arena)?;
                arena
            }
        };
        // The hit: only this thread's cache is held, and the block comes
        // with its hold on the pool (no shared count is touched). Tagged
        // memory goes through the state, which counts it by tag.
        if class == SMALL
            && arena == 0
            && let Some((node, tracks)) = shared.caches.take(arena, size)
        {
            return Ok(PoolBlock::ordered(node, bytes, tracks));
        }
        self.placed(arena, class, size, bytes)
    }

    /// A block of `size` bytes placed from `class` of `arena`'s free lists
    /// (a miss of the thread cache, or a large block), of length `bytes`
    /// (at most `size`).
    #[inline(never)]
    fn placed(&self, arena: usize, class: usize, size: usize, bytes: usize) -> Result<Ordered<PoolBlock>> {
        let shared = &self.shared;
        let (block, tracks, gate) = shared.alloc_from_state(arena, class, size)?;
        let node = Box::new(BlockNode {
            block,
            pool: Arc::clone(shared),
            gate,
            arena,
            class,
            len: bytes,
        });
        Ok(PoolBlock::ordered(node, bytes, tracks))
    }

    /// Gives the cached chunks past the last live block of each segment
    /// back to the device (the cached oversize blocks of
    /// [`PoolConfig::max_split_size`] first go back to the free ranges,
    /// so they count as cached), after the work queued on them is proven
    /// finished (each stream that used them is synchronised: the fence is
    /// on exactly the streams that touched that memory). Tags asleep are
    /// left as they are. The pinned buffers kept from earlier offloads
    /// ([`PoolStats::offload_spare`]) are freed too.
    ///
    /// # Errors
    ///
    /// The error of a synchronisation that could not prove the work
    /// finished (that segment keeps its chunks); [`Error::InvalidArgument`]
    /// when a chunk past the last live block is shared with another process
    /// (a [`BlockExport`](super::BlockExport) lives; that segment keeps its
    /// chunks); the runtime's code of an unmap (the segment is as before).
    ///
    /// # Examples
    ///
    /// ```
    /// # use ascend::pool::{DevicePool, PoolConfig};
    /// # let device = ascend::Device::new(0)?;
    /// # let pool = DevicePool::new(&device, PoolConfig::default())?;
    /// let block = pool.alloc(4096)?;
    /// assert_eq!(pool.stats().reserved, 2 << 20); // one small chunk mapped
    /// drop(block); // cached: the chunk stays mapped
    /// assert_eq!(pool.stats().reserved, 2 << 20);
    /// pool.empty_cache()?;
    /// assert_eq!(pool.stats().reserved, 0);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn empty_cache(&self) -> Result<()> {
        let mut state = self.shared.state();
        self.shared.flushed_in(&mut state, |state| {
            state.spares.clear();
            state.stats.offload_spare = 0;
            let emptied = state.empty_cache();
            state.note_counters();
            state.history.record(HistoryAction::EmptyCache, 0, 0, "");
            emptied
        })
    }

    /// Puts every tag that is awake to sleep: the live blocks of the tags
    /// in `offload` are copied to pinned host memory, then the physical
    /// memory of every tag is given back to the device. Every block keeps
    /// its device address (the addresses stay reserved for the pool), and
    /// [`DevicePool::wake`] maps new memory there and restores the
    /// offloaded contents; the contents of the other tags are discarded,
    /// as in vLLM's sleep mode. The pinned buffer of an offload is kept
    /// after the wake for the next sleep ([`PoolStats::offload_spare`];
    /// [`DevicePool::empty_cache`] frees it), as torch's caching host
    /// allocator keeps vLLM's CPU backup.
    ///
    /// **A point in time.** Every write to a block that returned before
    /// `sleep` returned is in the block after the wake. Sleep first
    /// refuses new uses of the blocks of the tags it puts to sleep: from
    /// then on a use through their `Ordered` (a host read or write, or
    /// queueing device work) fails with [`Error::PoolAsleep`]. It waits
    /// for the uses under way to end, then for all work queued on the
    /// pool's device (`aclrtSynchronizeDevice`: the fence is on the
    /// device that owns the memory), and only then copies. Work queued on
    /// *another* device's stream that touches the pool's blocks (a peer
    /// copy), and a block taken out of its `Ordered`
    /// ([`Ordered::into_inner`]), are not covered: finish their use before
    /// sleeping. The protocol is in the guide's pools chapter
    /// (`docs/pools.md`). **While asleep** an allocation of a sleeping tag
    /// and every use of its blocks through their `Ordered` fail with
    /// [`Error::PoolAsleep`]; device work queued by other means on a
    /// sleeping block fails in the runtime or on the device, reaching no
    /// other memory. Blocks may be dropped meanwhile.
    ///
    /// **Transactional.** If any call fails (the fence, a pinned
    /// allocation, a copy, an unmap) the pool is as it was: awake, every
    /// block mapped with its contents, and the error is returned. Once
    /// everything is unmapped, sleep completes; a physical free the
    /// runtime refuses is logged and its chunk is kept for the wake to map
    /// again. (One thing a failed sleep does not undo: cached oversize
    /// blocks go back to the free ranges first, as in
    /// [`DevicePool::empty_cache`], and stay there; no memory or address
    /// changes by it.)
    ///
    /// # Errors
    ///
    /// The runtime's code of the first failed call, with nothing changed.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use ascend::Device;
    /// use ascend::pool::{DevicePool, PoolConfig};
    /// use ascend::stream::Stream;
    /// let device = Device::new(0)?;
    /// let stream = Arc::new(Stream::new(&device)?);
    /// let pool = DevicePool::new(&device, PoolConfig::default())?;
    /// let weights = pool.alloc_tagged(4096, "weights")?;
    /// weights.fill_bytes(7, &stream)?;
    /// let kv_cache = pool.alloc_tagged(4096, "kv_cache")?;
    /// let address = weights.device_ptr();
    ///
    /// pool.sleep(&["weights"])?; // weights offloaded, kv_cache discarded
    /// assert_eq!(pool.stats().reserved, 0);
    /// pool.wake()?;
    ///
    /// assert_eq!(weights.device_ptr(), address);
    /// let weights = weights.into_inner()?;
    /// let mut bytes = [0u8; 4096];
    /// ascend::DeviceSlice::<u8>::from_storage(&weights)?.copy_to_host(&mut bytes)?;
    /// assert!(bytes.iter().all(|&byte| byte == 7));
    /// # drop(kv_cache);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn sleep(&self, offload: &[&str]) -> Result<()> {
        let shared = &self.shared;
        let mut state = shared.state();
        // Blocks freed from now on go through the state, which knows which
        // tags sleep (set under the lock, so a wake cannot clear it
        // meanwhile); the caches' blocks go back to their segments.
        shared.caches.set_bypass(true);
        shared.flushed_in(&mut state, |state| {
            state.release_oversize();
            let State {
                arenas,
                stats,
                spares,
                history,
                ..
            } = &mut *state;
            let before = history::mapped_sizes(history, arenas);
            let slept = sleep::sleep(arenas, &shared.device, offload, stats, spares);
            history.segments_changed(arenas, &before);
            if slept.is_ok() {
                history.record(HistoryAction::Sleep, 0, 0, "");
            }
            // A failed sleep may have kept spares, or put a tag to sleep
            // that could not be mapped back.
            stats.offload_spare = spares.bytes();
            shared.caches.set_bypass(state.any_asleep());
            state.note_counters();
            slept
        })
    }

    /// Wakes every sleeping tag: maps new physical memory at the same
    /// addresses and copies the offloaded contents back.
    ///
    /// # Errors
    ///
    /// The runtime's code of the first failed call; every tag it was to
    /// wake is still asleep, with its offloaded contents (transactional,
    /// like [`DevicePool::sleep`]). Under a cap on reserved memory
    /// ([`PoolConfig::memory_limit`], [`DevicePool::set_memory_fraction`])
    /// the cache is emptied first when the memory the wake maps again
    /// would pass the cap, and [`Error::PoolExhausted`] (its `limit` set)
    /// when it still would: the tags stay asleep.
    ///
    /// # Examples
    ///
    /// ```
    /// # use ascend::pool::{DevicePool, PoolConfig};
    /// # let device = ascend::Device::new(0)?;
    /// # let pool = DevicePool::new(&device, PoolConfig::default())?;
    /// let block = pool.alloc_tagged(4096, "weights")?;
    /// block.view().write_from_host(&[3u8; 4096])?;
    /// let address = block.device_ptr();
    /// pool.sleep(&["weights"])?; // offloaded to pinned host memory
    /// pool.wake()?; // new memory at the same addresses
    /// assert_eq!(pool.stats().wakes, 1);
    /// assert_eq!(block.device_ptr(), address);
    /// assert_eq!(block.bytes(..4)?.to_vec::<u8>()?, [3; 4]); // restored
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn wake(&self) -> Result<()> {
        self.wake_where(None)
    }

    /// [`DevicePool::wake`] for the tags in `tags` only (others stay
    /// asleep): for example the weights first, the KV cache later.
    ///
    /// # Errors
    ///
    /// As [`DevicePool::wake`].
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::Error;
    /// # use ascend::pool::{DevicePool, PoolConfig};
    /// # let device = ascend::Device::new(0)?;
    /// # let pool = DevicePool::new(&device, PoolConfig::default())?;
    /// let weights = pool.alloc_tagged(4096, "weights")?;
    /// let kv_cache = pool.alloc_tagged(4096, "kv_cache")?;
    /// pool.sleep(&["weights"])?;
    /// pool.wake_tags(&["weights"])?; // the weights first
    /// assert!(!pool.is_asleep("weights") && pool.is_asleep("kv_cache"));
    /// let refused = pool.alloc_tagged(4096, "kv_cache");
    /// assert!(matches!(refused, Err(Error::PoolAsleep { tag }) if tag == "kv_cache"));
    /// pool.wake_tags(&["kv_cache"])?; // later
    /// # drop((weights, kv_cache));
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn wake_tags(&self, tags: &[&str]) -> Result<()> {
        self.wake_where(Some(tags))
    }

    fn wake_where(&self, tags: Option<&[&str]>) -> Result<()> {
        let mut state = self.shared.state();
        self.shared.room_to_wake(&mut state, tags)?;
        let State {
            arenas,
            stats,
            spares,
            history,
            ..
        } = &mut *state;
        let before = history::mapped_sizes(history, arenas);
        let woken = sleep::wake(arenas, tags, stats, spares);
        history.segments_changed(arenas, &before);
        if woken.is_ok() {
            history.record(HistoryAction::Wake, 0, 0, "");
        }
        stats.offload_spare = spares.bytes();
        self.shared.caches.set_bypass(state.any_asleep());
        state.note_counters();
        woken
    }

    /// Whether `tag` is asleep (an unknown tag is not).
    ///
    /// ```
    /// # use ascend::pool::{DevicePool, PoolConfig};
    /// # let device = ascend::Device::new(0)?;
    /// # let pool = DevicePool::new(&device, PoolConfig::default())?;
    /// let scratch = pool.alloc(4096)?;
    /// pool.sleep(&[])?; // nothing offloaded: the contents are discarded
    /// assert!(pool.is_asleep(DevicePool::DEFAULT_TAG));
    /// assert!(!pool.is_asleep("never-used"));
    /// pool.wake()?;
    /// assert!(!pool.is_asleep(DevicePool::DEFAULT_TAG));
    /// # drop(scratch);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn is_asleep(&self, tag: &str) -> bool {
        self.shared
            .state()
            .arenas
            .iter()
            .any(|arena| arena.tag == tag && arena.asleep.is_some())
    }

    /// The statistics now (see [`PoolStats`] for what the peaks count
    /// when several threads allocate).
    ///
    /// ```
    /// # use ascend::pool::{DevicePool, PoolConfig};
    /// # let device = ascend::Device::new(0)?;
    /// # let pool = DevicePool::new(&device, PoolConfig::default())?;
    /// let a = pool.alloc(1000)?;
    /// let b = pool.alloc(3 << 20)?; // a large block
    /// let stats = pool.stats();
    /// assert_eq!((stats.allocated, stats.allocations), (1024 + (3 << 20), 2));
    /// assert_eq!(stats.reserved, (2 << 20) + (20 << 20)); // a small and a large chunk
    /// # drop((a, b));
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn stats(&self) -> PoolStats {
        let state = self.shared.state();
        state.stats_with(&self.shared.caches.totals())
    }

    /// The segments and their blocks now, with the statistics
    /// ([`PoolSnapshot::to_json`], [`PoolSnapshot::to_svg`]). Whole cached
    /// blocks are merged into the free ranges first.
    ///
    /// ```
    /// use ascend::pool::BlockState;
    /// # use ascend::pool::{DevicePool, PoolConfig};
    /// # let device = ascend::Device::new(0)?;
    /// # let pool = DevicePool::new(&device, PoolConfig::default())?;
    /// let block = pool.alloc(4096)?;
    /// let snapshot = pool.snapshot();
    /// let small = &snapshot.segments[0]; // the default tag's small pool
    /// assert_eq!((small.tag.as_str(), small.pool), ("default", "small"));
    /// assert_eq!(small.blocks[0].state, BlockState::Allocated);
    /// assert_eq!(snapshot.stats.allocated, 4096);
    /// # drop(block);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn snapshot(&self) -> PoolSnapshot {
        let mut state = self.shared.state();
        self.snapshot_locked(&mut state)
    }

    /// [`DevicePool::snapshot`] with the state locked.
    pub(super) fn snapshot_locked(&self, state: &mut State) -> PoolSnapshot {
        // Whole cached blocks are shown as the free ranges they are.
        self.shared.flushed_in(state, State::release_oversize);
        let mut segments = Vec::new();
        for arena in &state.arenas {
            for (class, pool) in arena.classes.iter().zip(["small", "large"]) {
                let allocated = class
                    .segment
                    .live_ranges()
                    .into_iter()
                    .map(|(offset, size)| BlockSnapshot {
                        offset,
                        size,
                        state: BlockState::Allocated,
                    });
                let free = class.free.ranges().map(|(offset, size, busy)| BlockSnapshot {
                    offset,
                    size,
                    state: if busy {
                        BlockState::FreePending
                    } else {
                        BlockState::Free
                    },
                });
                let mut blocks: Vec<BlockSnapshot> = allocated.chain(free).collect();
                blocks.sort_by_key(|block| block.offset);
                segments.push(SegmentSnapshot {
                    tag: arena.tag.clone(),
                    pool,
                    asleep: arena.asleep.is_some(),
                    base: class.segment.base() as usize,
                    capacity: class.segment.capacity(),
                    mapped: class.segment.size(),
                    chunk: class.segment.chunk_size(),
                    blocks,
                });
            }
        }
        PoolSnapshot {
            device: self.shared.device.id(),
            stats: state.stats_with(&self.shared.caches.totals()),
            segments,
        }
    }

    /// The statistics under the keys and with the meaning of torch's
    /// `memory_stats()`, for the whole pool, each size class and each tag
    /// ([`MemoryStats`] says which figures are kept).
    ///
    /// ```
    /// # use ascend::pool::{DevicePool, PoolConfig};
    /// # let device = ascend::Device::new(0)?;
    /// # let pool = DevicePool::new(&device, PoolConfig::default())?;
    /// let kv = pool.alloc_tagged(8 << 20, "kv_cache")?;
    /// let stats = pool.memory_stats();
    /// assert_eq!(stats.tags["kv_cache"].allocated_bytes.peak, Some(8 << 20));
    /// assert_eq!(stats.large_pool.allocated_bytes.current, 8 << 20);
    /// # drop(kv);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn memory_stats(&self) -> MemoryStats {
        let mut state = self.shared.state();
        state.note_counters();
        let caches = self.shared.caches.totals();
        let stats = state.stats_with(&caches);
        let max_split_size = self.shared.config.max_split_size;
        statistics::torch_stats::memory_stats(&state, &caches, (stats.active, stats.active_peak), max_split_size)
    }

    /// Starts every peak again from its current value (torch's
    /// `reset_peak_stats`): in [`DevicePool::memory_stats`] and in
    /// [`DevicePool::stats`]. With several threads, see [`PoolStats`] for
    /// what the pool-wide peaks count.
    ///
    /// ```
    /// # use ascend::pool::{DevicePool, PoolConfig};
    /// # let device = ascend::Device::new(0)?;
    /// # let pool = DevicePool::new(&device, PoolConfig::default())?;
    /// drop(pool.alloc(1 << 20)?); // a warm-up step
    /// pool.reset_peak_stats();
    /// let step = pool.alloc(4096)?;
    /// assert_eq!(pool.stats().allocated_peak, 4096); // this step's peak
    /// # drop(step);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn reset_peak_stats(&self) {
        let mut state = self.shared.state();
        state.note_counters();
        self.shared.caches.reset_peaks(&mut self.shared.caches.mine());
        state.stats.reserved_peak = state.stats.reserved;
        state.counters.reset_peaks();
    }

    /// Starts every cumulative count again from 0 (torch's
    /// `reset_accumulated_stats`): the `allocated` and `freed` figures of
    /// [`DevicePool::memory_stats`], the retries, out-of-memory errors and
    /// chunk counts, and [`PoolStats`]' counts of allocations, frees,
    /// retries, chunks, sleeps and wakes. Current values and peaks stay.
    ///
    /// ```
    /// # use ascend::pool::{DevicePool, PoolConfig};
    /// # let device = ascend::Device::new(0)?;
    /// # let pool = DevicePool::new(&device, PoolConfig::default())?;
    /// let kept = pool.alloc(4096)?;
    /// drop(pool.alloc(4096)?);
    /// pool.reset_accumulated_stats();
    /// let stats = pool.memory_stats();
    /// assert_eq!(stats.all.allocation.allocated, Some(0));
    /// assert_eq!(stats.all.allocation.current, 1); // `kept` is still live
    /// assert_eq!(pool.stats().allocations, 0);
    /// # drop(kept);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn reset_accumulated_stats(&self) {
        let mut state = self.shared.state();
        state.note_counters();
        let caches = self.shared.caches.totals();
        state
            .counters
            .reset_accumulated((caches.allocations, caches.frees, caches.bytes_out, caches.bytes_back));
        let stats = &mut state.stats;
        (stats.retries, stats.chunks_mapped, stats.chunks_unmapped) = (0, 0, 0);
        (stats.sleeps, stats.wakes) = (0, 0);
    }
}

impl Shared {
    pub(super) fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The index of `tag`'s arena, reserving it on first use.
    fn arena(&self, state: &mut State, tag: &str) -> Result<usize> {
        if let Some(index) = state.arenas.iter().position(|arena| arena.tag == tag) {
            return Ok(index);
        }
        state.arenas.push(Arena::new(tag, &self.prop, &self.config)?);
        Ok(state.arenas.len() - 1)
    }

    /// The size class of a block of `size` bytes: [`SMALL`] or large.
    fn class_of(&self, size: usize) -> usize {
        usize::from(size > self.config.small_limit)
    }

    /// `bytes` rounded up to the configured rounding; `None` on overflow.
    #[inline]
    fn rounded(&self, bytes: usize) -> Option<usize> {
        if self.divides {
            return rounding::round_size(bytes, self.config.rounding, &self.config.roundup_power2_divisions);
        }
        // The rounding is a power of two (checked with the config): a mask
        // instead of a division.
        let mask = self.config.rounding - 1;
        Some(bytes.max(1).checked_add(mask)? & !mask)
    }

    /// `bytes` rounded, when that is a small block's size (a request the
    /// thread caches may serve).
    #[inline]
    fn small_size(&self, bytes: usize) -> Option<usize> {
        self.rounded(bytes).filter(|&size| self.class_of(size) == SMALL)
    }

    /// Moves every thread cache's blocks back into the free lists
    /// (coalescing them); returns the busy bytes moved.
    fn flush_caches(&self, state: &mut State) -> usize {
        self.caches
            .flush_all(&mut |node, tracks| drop(state.insert_free(*node, tracks)))
    }

    /// Runs `work` on the (locked) state with the thread caches flushed
    /// into it, counting the change of the active bytes on the calling
    /// thread (coalescing can make idle bytes wait for a neighbour's work,
    /// and `work` may settle work).
    pub(super) fn flushed_in<T>(&self, state: &mut State, work: impl FnOnce(&mut State) -> T) -> T {
        let before = state.busy();
        let moved = self.flush_caches(state);
        let result = work(state);
        let delta = signed(state.busy()) - signed(before) - signed(moved);
        self.caches.active_changed(&mut self.caches.mine(), delta);
        result
    }

    /// A block of `size` bytes in `class` of `arena` from the free lists,
    /// growing the segment when none fits (a miss of the thread cache).
    /// A block of `size` bytes placed from `class` of `arena`'s free
    /// lists, the uses that may be queued on it, and its tag's gate.
    fn alloc_from_state(
        &self,
        arena: usize,
        class: usize,
        size: usize,
    ) -> Result<(SegmentBlock, Tracks, Arc<UseGate>)> {
        let mut state = self.state();
        state.check_awake(arena)?;
        let before = state.busy();
        // This thread's whole blocks coalesce first, as they would have.
        let mut moved = self
            .caches
            .flush_mine(&mut |node, tracks| drop(state.insert_free(*node, tracks)));
        let placed = self.place(&mut state, arena, class, size, &mut moved);
        let placed = placed.and_then(|(offset, len, tracks)| {
            let segment = &state.arenas[arena].classes[class].segment;
            match segment.block(offset, len) {
                Ok(block) => Ok((block, tracks)),
                Err(error) => {
                    state.arenas[arena].classes[class].free.insert(offset, len, tracks);
                    if self.is_oversize(len) {
                        // Counted when placed or cached; now a free range.
                        state.stats.oversize_segments = state.stats.oversize_segments.saturating_sub(1);
                    }
                    Err(error)
                }
            }
        });
        let len = placed.as_ref().map_or(size, |(block, _)| block.len());
        if let Ok((block, _)) = &placed {
            if self.is_oversize(len) {
                state.stats.oversize_allocations += 1;
            }
            let State {
                arenas, watch, history, ..
            } = &mut *state;
            let tag = arenas[arena].tag.as_str();
            watch.handed_out((arena, class, block.offset()), block.address() as usize, len, Some(tag));
            history.record(HistoryAction::Alloc, block.address() as usize, len, tag);
            state.counters.handed_out(arena, class, len);
        } else if let Err(Error::PoolExhausted { requested, free, .. }) = &placed {
            let State { arenas, history, .. } = &mut *state;
            history.record_oom(*requested, *free, &arenas[arena].tag);
        }
        state.note_counters();
        let delta = signed(state.busy()) - signed(before) - signed(moved);
        let mut cache = self.caches.mine();
        match &placed {
            Ok(_) => self.caches.handed_out(&mut cache, len, delta + signed(len)),
            Err(_) => self.caches.active_changed(&mut cache, delta),
        }
        let gate = Arc::clone(&state.arenas[arena].gate);
        placed.map(|(block, tracks)| (block, tracks, gate))
    }

    /// Whether a block of `len` bytes is oversize
    /// ([`PoolConfig::max_split_size`]).
    fn is_oversize(&self, len: usize) -> bool {
        self.config.max_split_size.is_some_and(|max_split| len >= max_split)
    }

    /// A free range of at least `size` bytes in `class` of `arena`: a
    /// cached oversize block (for an oversize request, within the slack),
    /// a cached range, or newly mapped memory; its offset, length and
    /// tracks. Before growing, every thread's cached blocks are coalesced
    /// into the free lists (their busy bytes are added to `moved`), and
    /// past the garbage-collection threshold cached memory is given back.
    fn place(
        &self,
        state: &mut State,
        arena: usize,
        class: usize,
        size: usize,
        moved: &mut usize,
    ) -> Result<(usize, usize, Tracks)> {
        let capacity = state.arenas[arena].classes[class].segment.capacity();
        if size > capacity {
            // Larger than the whole reservation: nothing to flush, give back
            // or retry for.
            return Err(self.exhausted(
                state,
                size,
                format!("larger than the {capacity}-byte reservation"),
                None,
            ));
        }
        if let Some(limit) = state.limit
            && size > limit.bytes
        {
            let cause = format!("larger than {}", limit.describe());
            return Err(self.exhausted(state, size, cause, Some(limit.bytes)));
        }
        if self.is_oversize(size)
            && let Some(found) = state.arenas[arena].classes[class]
                .oversize
                .take(size, PoolConfig::OVERSIZE_SLACK)
        {
            return Ok(found);
        }
        let mut retried = false;
        let mut flushed = false;
        let mut collected = false;
        loop {
            if let Some((offset, tracks)) = state.arenas[arena].classes[class].free.take_best_fit(size) {
                if self.is_oversize(size) {
                    state.stats.oversize_segments += 1;
                }
                return Ok((offset, size, tracks));
            }
            if !flushed {
                flushed = true;
                *moved += self.flush_caches(state);
                continue;
            }
            if !collected {
                let before = history::mapped_sizes(&state.history, &state.arenas);
                let ran = state.collect_garbage(self.config.garbage_collection_threshold, (arena, class));
                let State { arenas, history, .. } = &mut *state;
                history.segments_changed(arenas, &before);
                if ran {
                    collected = true;
                    continue;
                }
            }
            let State {
                arenas,
                stats,
                limit,
                history,
                ..
            } = &mut *state;
            let capped = limit.and_then(|limit| {
                let more = arenas[arena].growth(class, size).ok()?;
                Some((limit.refuses(stats.reserved, more)?, limit.bytes))
            });
            let cap = capped.as_ref().map(|&(_, bytes)| bytes);
            let before = history::mapped_sizes(history, arenas);
            let grown = match capped {
                Some((cause, _)) => Err(cause),
                None => arenas[arena].grow(class, size, stats),
            };
            history.segments_changed(arenas, &before);
            match grown {
                Ok(()) => continue,
                Err(cause) if !retried => {
                    log::debug!("DevicePool: growing for {size} bytes failed ({cause}); emptying the cache");
                    retried = true;
                    state.stats.retries += 1;
                    if let Err(error) = state.empty_cache() {
                        log::warn!("DevicePool: emptying the cache for a retry: {error}");
                    }
                }
                Err(cause) => return Err(self.exhausted(state, size, cause, cap)),
            }
        }
    }

    /// Under a cap on reserved memory, room for what a wake of `tags`
    /// maps again: the cache is emptied first when the cap would refuse
    /// it, as an allocation's retry does; [`Error::PoolExhausted`] naming
    /// the cap when that is not enough (the tags stay asleep).
    fn room_to_wake(&self, state: &mut State, tags: Option<&[&str]>) -> Result<()> {
        let Some(limit) = state.limit else {
            return Ok(());
        };
        let more = sleep::wake_growth(&state.arenas, tags);
        if limit.refuses(state.stats.reserved, more).is_none() {
            return Ok(());
        }
        let emptied = self.flushed_in(state, |state| {
            let emptied = state.empty_cache();
            state.note_counters();
            emptied
        });
        if let Err(error) = emptied {
            log::warn!("DevicePool: emptying the cache to make room for a wake: {error}");
        }
        match limit.refuses(state.stats.reserved, more) {
            None => Ok(()),
            Some(cause) => Err(self.exhausted(state, more, format!("waking: {cause}"), Some(limit.bytes))),
        }
    }

    /// [`Error::PoolExhausted`] for a request of `size` bytes, with `cause`
    /// and the cap that refused it.
    fn exhausted(&self, state: &mut State, size: usize, cause: String, limit: Option<usize>) -> Error {
        state.counters.ooms += 1;
        Error::PoolExhausted {
            requested: size,
            allocated: self.caches.totals().allocated,
            reserved: state.stats.reserved,
            free: state.arenas.iter().map(Arena::free_bytes).sum(),
            limit,
            cause,
        }
    }
}

/// `value` as a signed byte count (pool byte counts fit: they are bounded
/// by reserved address space).
fn signed(value: usize) -> isize {
    isize::try_from(value).unwrap_or(isize::MAX)
}

impl State {
    /// Gives `node`'s range to its free list with `tracks`; returns the
    /// node's hold on the pool, the caller's to drop (it may be the last).
    fn insert_free(&mut self, node: BlockNode, tracks: Tracks) -> Arc<Shared> {
        let BlockNode {
            block,
            pool,
            gate: _,
            arena,
            class,
            len: _,
        } = node;
        let (offset, len) = (block.offset(), block.len());
        self.watch.given_back(&(arena, class, offset));
        // The segment forgets the block before the free list offers it.
        drop(block);
        let oversize = pool.config.max_split_size.is_some_and(|max_split| len >= max_split);
        let target = &mut self.arenas[arena];
        if oversize {
            self.stats.oversize_allocations = self.stats.oversize_allocations.saturating_sub(1);
        }
        if oversize && target.asleep.is_none() {
            // Kept whole for a later oversize request.
            self.oversize_seq += 1;
            target.classes[class]
                .oversize
                .put(offset, len, tracks, self.oversize_seq);
        } else {
            if oversize {
                self.stats.oversize_segments = self.stats.oversize_segments.saturating_sub(1);
            }
            target.classes[class].free.insert(offset, len, tracks);
        }
        pool
    }

    fn empty_cache(&mut self) -> Result<()> {
        self.release_oversize();
        // Chunks mapped earlier in the same request (a growth that failed
        // half-way) are counted before these unmaps, and the unmaps after
        // them: the counters see each change, not only the net one.
        self.counters.note_mappings(&self.arenas);
        let before = history::mapped_sizes(&self.history, &self.arenas);
        let mut first = None;
        for arena in &mut self.arenas {
            if let Err(error) = arena.empty_cache(&mut self.stats) {
                first.get_or_insert(error);
            }
        }
        self.history.segments_changed(&self.arenas, &before);
        self.counters.note_mappings(&self.arenas);
        first.map_or(Ok(()), Err)
    }

    /// Brings the counters of [`MemoryStats`] up to date with the
    /// mappings and the cached work.
    fn note_counters(&mut self) {
        self.counters.note_mappings(&self.arenas);
        self.counters.note_active(&self.arenas);
        let counters = &mut self.counters;
        counters.oversize_allocations.level(self.stats.oversize_allocations);
        counters.oversize_segments.level(self.stats.oversize_segments);
    }

    /// Bytes of free ranges whose former work may still be queued.
    fn busy(&self) -> usize {
        self.arenas.iter().map(Arena::busy_bytes).sum()
    }

    /// Whether a tag is asleep.
    fn any_asleep(&self) -> bool {
        self.arenas.iter().any(|arena| arena.asleep.is_some())
    }

    /// [`Error::PoolAsleep`] when `arena`'s tag is asleep.
    fn check_awake(&self, arena: usize) -> Result<()> {
        match &self.arenas[arena] {
            asleep if asleep.asleep.is_some() => Err(Error::PoolAsleep {
                tag: asleep.tag.clone(),
            }),
            _ => Ok(()),
        }
    }

    /// The statistics, with the thread caches' counts.
    fn stats_with(&self, caches: &CacheTotals) -> PoolStats {
        let mut stats = self.stats;
        stats.allocated = caches.allocated;
        stats.allocated_peak = caches.allocated_peak;
        stats.active = caches.allocated + caches.busy + self.busy();
        stats.active_peak = caches.active_peak.max(stats.active);
        let (allocations, frees, ..) = self.counters.cache_base;
        stats.allocations = caches.allocations.wrapping_sub(allocations);
        stats.frees = caches.frees.wrapping_sub(frees);
        stats
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        // The last block is gone: wait for the work on the cache before the
        // segments unmap; keep (leak) a segment whose work is unproven.
        let mut state = self.state();
        self.flush_caches(&mut state);
        state.arenas.iter_mut().for_each(Arena::settle_for_drop);
    }
}

impl fmt::Debug for DevicePool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DevicePool")
            .field("device", &self.shared.device.id())
            .field("stats", &self.stats())
            .finish()
    }
}

impl Shared {
    /// Takes `node` back with the uses that may still be queued on it: a
    /// small block of the default tag whole to this thread's cache (unless
    /// a tag sleeps), others to their free list.
    ///
    /// `node` may hold the last reference to the pool: once a cache keeps
    /// it (the caches live in the pool), a flush may free the pool as soon
    /// as the cache is let go; the free list's path drops it last. So the
    /// pool is reached through a raw pointer, as `Arc::drop` reaches its
    /// counts, and no reference to it outlives either step.
    ///
    /// # Safety
    ///
    /// `this` points to the live pool that `node` holds.
    #[inline]
    pub(super) unsafe fn give_back(this: *const Self, node: Box<BlockNode>, tracks: Tracks) {
        // Small blocks are kept whole for the next request of their size;
        // large ones coalesce at once, which keeps large-pool fragmentation
        // low.
        if node.class == SMALL && node.arena == 0 {
            // The common case, with no call on any path; the rest is
            // `give_back_slowly`'s, a tail call.
            // SAFETY: `node` holds the pool until a cache keeps it, and
            // `put_idle` keeps no reference across letting go of the cache.
            match unsafe { ThreadCaches::put_idle(&raw const (*this).caches, node, tracks) } {
                Ok(()) => {}
                // SAFETY: `node` holds the pool.
                Err((node, tracks)) => unsafe { Self::give_back_slowly(this, node, tracks) },
            }
        } else {
            // SAFETY: `node` holds the pool.
            unsafe { Self::give_back_slowly(this, node, tracks) };
        }
    }

    /// [`Shared::give_back`] past its common case.
    ///
    /// # Safety
    ///
    /// As [`Shared::give_back`].
    #[inline(never)]
    unsafe fn give_back_slowly(this: *const Self, node: Box<BlockNode>, tracks: Tracks) {
        let (node, tracks) = if node.class == SMALL && node.arena == 0 {
            // SAFETY: `node` holds the pool until a cache keeps it, and
            // `put` keeps no reference across letting go of the cache.
            match unsafe { ThreadCaches::put(&raw const (*this).caches, node, tracks) } {
                Ok(()) => return,
                Err(given) => given,
            }
        } else {
            (node, tracks)
        };
        // SAFETY: `node` holds the pool; the reference ends with the call,
        // which hands the hold back to be dropped after it.
        let hold = unsafe { &*this }.give_back_to_state(*node, tracks);
        drop(hold); // last: it may be the last reference to the pool
    }

    /// Gives `node` to its free list (a large block, or a small one while
    /// the caches are bypassed); returns `node`'s hold on the pool, which
    /// may be the last reference to `self`, for the caller to drop once
    /// no reference to `self` remains.
    #[inline(never)]
    #[must_use = "the pool's hold is dropped by the caller"]
    fn give_back_to_state(&self, node: BlockNode, mut tracks: Tracks) -> Arc<Shared> {
        // The free list cuts and joins blocks: ranges within this one mean
        // nothing there.
        tracks.widen();
        let len = node.block.len();
        let mut state = self.state();
        if state.history.is_on() {
            let State { arenas, history, .. } = &mut *state;
            history.record_free(node.block.address() as usize, len, &arenas[node.arena].tag);
        }
        let before = state.busy();
        let (arena, class) = (node.arena, node.class);
        let hold = state.insert_free(node, tracks);
        state.counters.given_back(arena, class, len);
        state.note_counters();
        let delta = signed(state.busy()) - signed(before) - signed(len);
        self.caches.given_back(&mut self.caches.mine(), len, delta);
        drop(state);
        hold
    }
}

#[cfg(feature = "testing")]
impl super::watch::Watched for Shared {
    fn kind(&self) -> crate::pool::watch::PoolKind {
        crate::pool::watch::PoolKind::Device
    }

    fn device_id(&self) -> i32 {
        self.device.id()
    }

    fn start_watch(&self) {
        let mut state = self.state();
        state.watch.start();
        // Every block goes through the state from now on (the hit reads
        // the flag it already reads for sleep); the cached ones go back to
        // their free lists, as for a snapshot.
        self.caches.set_watched(true);
        self.flushed_in(&mut state, |_| ());
    }

    fn watched_now(&self) -> Vec<super::watch::WatchedBlock> {
        self.state().watch.live()
    }

    fn end_watch(&self) -> Vec<super::watch::WatchedBlock> {
        let mut state = self.state();
        self.caches.set_watched(false);
        state.watch.end()
    }

    fn held(&self, held: &mut super::watch::Held) {
        let state = self.state();
        for class in state.arenas.iter().flat_map(|arena| &arena.classes) {
            held.device_ranges
                .push((class.segment.base() as usize, class.segment.capacity()));
            held.physical.extend(class.segment.physical_handles());
        }
        held.host.extend(state.spares.addresses());
    }
}

//! [`DevicePool`] and [`PoolBlock`]: a caching, stream-ordered device
//! allocator on expandable segments.
//!
//! Here: the public type and its methods. Behind it, in this folder: the
//! pool's shared state and the paths every request and free takes
//! (`state.rs`); its blocks (`block.rs`, shared with other processes in
//! `block_export.rs`); the per-thread caches in front of the state
//! (`thread_cache.rs`); the memory of each tag (`segments/`: free lists,
//! oversize blocks, garbage collection, memory limit, sleep and wake);
//! the statistics (`statistics/`); history, snapshots and their pictures
//! (`observability/`); the pool as the runtime's allocator for a stream
//! (`stream_allocator.rs`).

mod block;
mod block_export;
mod observability;
mod segments;
mod state;
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
use crate::Call;
use crate::Device;
use crate::error::{Error, Result};
use crate::stream::Ordered;
use crate::vmm::{Granularity, PhysicalMemProp};
use block::BlockNode;
use observability::history;
use segments::arena::{Arena, SMALL};
use segments::memory_limit::Limit;
use segments::sleep;
use state::{Shared, State};
use std::fmt;
use std::sync::Arc;
use thread_cache::Cached;

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
    shared: Arc<Shared>,
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
        let shared = Arc::new(Shared::new(
            device,
            prop,
            config,
            default,
            Limit::smaller(limit, fraction),
        ));
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
    #[inline(always)]
    pub fn alloc(&self, bytes: usize) -> Result<Ordered<PoolBlock>> {
        // The hit, inlined into the caller: a small size of the default
        // tag that this thread's cache holds, with no call on any path.
        // The owner is built here, after the hit and the miss meet, so
        // that it goes to the caller's place in registers: built in the
        // miss's returned memory instead, a move out of it (any `?`) read
        // the hit's word-by-word stores with wider loads, which cannot be
        // forwarded from them, and the hit waited for its own stores.
        let shared = &*self.shared;
        let hit = match shared.small_size(bytes) {
            Some(size) => shared.caches.take_idle(0, size),
            None => None,
        };
        let (node, tracks) = match hit {
            Some(hit) => hit,
            None => self.miss(None, bytes)?,
        };
        Ok(PoolBlock::ordered(node, bytes, tracks))
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
        let (node, tracks) = self.miss(Some(tag), bytes)?;
        Ok(PoolBlock::ordered(node, bytes, tracks))
    }

    /// The block for a request of `bytes` of `tag`'s memory that
    /// [`DevicePool::alloc`]'s inlined hit did not serve, with the uses
    /// that may be queued on it (its length not yet set).
    #[inline(never)]
    fn miss(&self, tag: Option<&str>, bytes: usize) -> Result<Cached> {
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
            && let Some(cached) = shared.caches.take(arena, size)
        {
            return Ok(cached);
        }
        self.placed(arena, class, size, bytes)
    }

    /// A block of `size` bytes placed from `class` of `arena`'s free lists
    /// (a miss of the thread cache, or a large block), of length `bytes`
    /// (at most `size`).
    #[inline(never)]
    fn placed(&self, arena: usize, class: usize, size: usize, bytes: usize) -> Result<Cached> {
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
        Ok((node, tracks))
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
    /// ascend::DeviceSlice::<u8>::from_storage(&weights)?.read_to_host(&mut bytes)?;
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
    /// assert!(matches!(refused, Err(Error::PoolAsleep { tag, .. }) if tag == "kv_cache"));
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
    fn snapshot_locked(&self, state: &mut State) -> PoolSnapshot {
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

impl fmt::Debug for DevicePool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DevicePool")
            .field("device", &self.shared.device.id())
            .field("stats", &self.stats())
            .finish()
    }
}

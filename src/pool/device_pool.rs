//! [`DevicePool`] and [`PoolBlock`]: a caching, stream-ordered device
//! allocator on expandable segments.

use super::config::PoolConfig;
use super::free_list::FreeList;
use super::snapshot::{BlockSnapshot, BlockState, PoolSnapshot, SegmentSnapshot};
use super::stats::PoolStats;
use crate::Device;
use crate::error::{Error, Result};
use crate::memory::{DeviceStorage, DeviceStorageMut};
use crate::stream::{Ordered, Recycle, Settled, Tracks};
use crate::vmm::{ExpandableSegment, Granularity, PhysicalMemProp, SegmentBlock, SharedSegment};
use std::collections::HashMap;
use std::ffi::c_void;
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard};

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
/// free bytes.
///
/// ```
/// use std::sync::Arc;
/// use ascend::pool::{DevicePool, PoolConfig};
/// use ascend::stream::Stream;
/// use ascend::Device;
/// let device = Device::new(0)?;
/// let pool = DevicePool::new(&device, PoolConfig::default())?;
/// let stream = Arc::new(Stream::new(&device)?);
/// let first = pool.alloc(4000)?; // rounded to 4096, in the small pool
/// first.fill_bytes(1, &stream)?;
/// let address = first.device_ptr();
/// drop(first); // cached, with its queued memset
/// let again = pool.alloc(4096)?; // the same memory, ordered after it
/// assert_eq!(again.device_ptr(), address);
/// assert_eq!(pool.stats().allocated, 4096);
/// # Ok::<(), ascend::Error>(())
/// ```
///
/// **Threads:** `DevicePool` is `Send` and `Sync`: share it with `Arc` and
/// allocate from any thread.
///
/// **Guide:** [Memory pools, for a torch_npu user](crate::guide::pools);
/// its costs: [Performance](crate::guide::performance).
pub struct DevicePool {
    shared: Arc<Shared>,
    /// Where a dropped block goes: back to its pool (one shared hook, so a
    /// block costs no allocation for it).
    recycle: Recycle<PoolBlock>,
}

struct Shared {
    device: Device,
    config: PoolConfig,
    state: Mutex<State>,
}

/// The index of the small pool in [`State::classes`].
const SMALL: usize = 0;

struct State {
    /// The small pool, then the large one.
    classes: [Class; 2],
    stats: PoolStats,
}

struct Class {
    segment: Arc<SharedSegment>,
    free: FreeList,
    /// Freed blocks kept whole (small pool only), by size, for the next
    /// request of the same size: a hit reuses the block as it is (no
    /// free-list or segment update). They go to the free list (coalescing)
    /// on the first miss.
    exact: HashMap<usize, Vec<(SegmentBlock, Tracks)>>,
    /// Bytes of `exact` blocks whose former work may still be queued.
    exact_busy: usize,
}

impl Class {
    /// Takes a whole cached block of `size` bytes.
    fn take_exact(&mut self, size: usize) -> Option<(SegmentBlock, Tracks)> {
        let found = self.exact.get_mut(&size)?.pop()?;
        if !found.1.is_empty() {
            self.exact_busy -= size;
        }
        Some(found)
    }

    /// Moves every whole cached block into the free list.
    fn flush_exact(&mut self) {
        for (block, tracks) in self.exact.drain().flat_map(|(_, blocks)| blocks) {
            let (offset, len) = (block.offset(), block.len());
            // The segment forgets the block before the free list offers it.
            drop(block);
            self.free.insert(offset, len, tracks);
        }
        self.exact_busy = 0;
    }
}

impl DevicePool {
    /// A pool for `device` configured by `config`; it reserves the address
    /// ranges of its two segments and maps nothing yet.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for settings that do not fit each other
    /// or the VMM granularity; the runtime's code from the reservations.
    pub fn new(device: &Device, config: PoolConfig) -> Result<Self> {
        let prop = PhysicalMemProp::device(device);
        config.check(prop.granularity(Granularity::Minimum)?)?;
        let class = |reserve: usize, chunk: usize| -> Result<Class> {
            Ok(Class {
                segment: SharedSegment::new(ExpandableSegment::new(&prop, reserve, chunk)?),
                free: FreeList::default(),
                exact: HashMap::new(),
                exact_busy: 0,
            })
        };
        let classes = [
            class(config.small_reserve, config.small_chunk)?,
            class(config.large_reserve, config.large_chunk)?,
        ];
        Ok(Self {
            recycle: Arc::new(|mut block: PoolBlock, tracks| block.give_back(tracks)),
            shared: Arc::new(Shared {
                device: device.clone(),
                config,
                state: Mutex::new(State {
                    classes,
                    stats: PoolStats::default(),
                }),
            }),
        })
    }

    /// The pool's settings.
    pub fn config(&self) -> &PoolConfig {
        &self.shared.config
    }

    /// The device it allocates on.
    pub fn device(&self) -> &Device {
        &self.shared.device
    }

    /// A block of at least `bytes` bytes (rounded up to the configured
    /// rounding), as an [`Ordered`] owner: share it in an `Arc`, use it on
    /// any stream; dropping it caches its memory with its queued uses.
    ///
    /// # Errors
    ///
    /// [`Error::PoolExhausted`] when the memory cannot be found even after
    /// giving the cache back; [`Error::InvalidArgument`] when the request
    /// overflows.
    pub fn alloc(&self, bytes: usize) -> Result<Ordered<PoolBlock>> {
        let config = &self.shared.config;
        let size = bytes
            .max(1)
            .checked_next_multiple_of(config.rounding)
            .ok_or_else(|| Error::invalid("DevicePool::alloc", format!("{bytes} bytes overflow")))?;
        let class = usize::from(size > config.small_limit);
        let mut state = self.shared.state();
        let (block, tracks) = match state.classes[class].take_exact(size) {
            Some(found) => found,
            None => {
                let (offset, tracks) = self.shared.place(&mut state, class, size)?;
                (state.classes[class].segment.block(offset, size)?, tracks)
            }
        };
        state.stats.allocated += size;
        state.stats.allocations += 1;
        state.refresh();
        drop(state);
        let block = PoolBlock {
            block: Some(block),
            pool: Arc::clone(&self.shared),
            class,
        };
        Ok(Ordered::recycled(block, tracks, Arc::clone(&self.recycle)))
    }

    /// Gives the cached chunks past the last live block of each segment
    /// back to the device, after the work queued on them is proven
    /// finished (each stream that used them is synchronised: the fence is
    /// on exactly the streams that touched that memory).
    ///
    /// # Errors
    ///
    /// The error of a synchronisation that could not prove the work
    /// finished (that segment keeps its chunks); the runtime's code of an
    /// unmap (the segment is as before).
    pub fn empty_cache(&self) -> Result<()> {
        let mut state = self.shared.state();
        state.empty_cache()
    }

    /// The statistics now.
    pub fn stats(&self) -> PoolStats {
        self.shared.state().stats
    }

    /// The segments and their blocks now, with the statistics
    /// ([`PoolSnapshot::to_json`], [`PoolSnapshot::to_svg`]). Whole cached
    /// blocks are merged into the free ranges first.
    pub fn snapshot(&self) -> PoolSnapshot {
        let mut state = self.shared.state();
        // Whole cached blocks are shown as the free ranges they are.
        state.classes.iter_mut().for_each(Class::flush_exact);
        let segments = state
            .classes
            .iter()
            .zip(["small", "large"])
            .map(|(class, pool)| {
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
                SegmentSnapshot {
                    pool,
                    base: class.segment.base() as usize,
                    capacity: class.segment.capacity(),
                    mapped: class.segment.size(),
                    chunk: class.segment.chunk_size(),
                    blocks,
                }
            })
            .collect();
        PoolSnapshot {
            device: self.shared.device.id(),
            stats: state.stats,
            segments,
        }
    }
}

impl Shared {
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// A free range of `size` bytes in `class`: cached, or newly mapped.
    fn place(&self, state: &mut State, class: usize, size: usize) -> Result<(usize, Tracks)> {
        let mut retried = false;
        state.classes[class].flush_exact();
        loop {
            if let Some(found) = state.classes[class].free.take_best_fit(size) {
                return Ok(found);
            }
            let grown = state.grow(class, size);
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
                Err(cause) => {
                    let free = state.classes.iter().map(|class| class.free.bytes()).sum();
                    return Err(Error::PoolExhausted {
                        requested: size,
                        allocated: state.stats.allocated,
                        reserved: state.stats.reserved,
                        free,
                        cause,
                    });
                }
            }
        }
    }
}

impl State {
    /// Maps enough chunks at the end of `class`'s segment for `size` bytes
    /// (counting a free tail), and frees them into the cache.
    fn grow(&mut self, class: usize, size: usize) -> std::result::Result<(), String> {
        let Class { segment, free, .. } = &mut self.classes[class];
        let mapped = segment.size();
        let tail = mapped - free.tail_start(mapped);
        let more = (size - tail.min(size)).next_multiple_of(segment.chunk_size());
        if mapped + more > segment.capacity() {
            return Err(format!("the {}-byte reservation is full", segment.capacity()));
        }
        segment.grow(more).map_err(|error| error.to_string())?;
        free.insert(mapped, more, Tracks::default());
        self.stats.reserved += more;
        self.stats.chunks_mapped += (more / segment.chunk_size()) as u64;
        self.refresh();
        Ok(())
    }

    fn empty_cache(&mut self) -> Result<()> {
        let mut first = None;
        for class in &mut self.classes {
            class.flush_exact();
            let chunk = class.segment.chunk_size();
            let mapped = class.segment.size();
            let keep = class.segment.high_water().next_multiple_of(chunk);
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
            match class.segment.shrink(mapped - keep) {
                Ok(()) => {
                    class.free.cut(keep);
                    self.stats.reserved -= mapped - keep;
                    self.stats.chunks_unmapped += ((mapped - keep) / chunk) as u64;
                    if let Err(error) = class.segment.release_spare() {
                        first.get_or_insert(error);
                    }
                }
                Err(error) => {
                    first.get_or_insert(error);
                }
            }
        }
        self.refresh();
        first.map_or(Ok(()), Err)
    }

    /// Recomputes what depends on the free lists, and the peaks.
    fn refresh(&mut self) {
        let busy: usize = self
            .classes
            .iter()
            .map(|class| class.free.busy_bytes() + class.exact_busy)
            .sum();
        self.stats.active = self.stats.allocated + busy;
        self.stats.note_peaks();
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        // The last block is gone: wait for the work on the cache before the
        // segments unmap; keep (leak) a segment whose work is unproven.
        let state = self.state.get_mut().unwrap_or_else(|poisoned| poisoned.into_inner());
        for class in &mut state.classes {
            class.flush_exact();
            for range in class.free.ranges_past_mut(0) {
                if let Settled::Unproven(_) = range.tracks.settle("DevicePool drop") {
                    std::mem::forget(Arc::clone(&class.segment));
                    break;
                }
            }
        }
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

/// A block of a [`DevicePool`], held by the [`Ordered`] that
/// [`DevicePool::alloc`] returns. Taken out of it
/// ([`Ordered::into_inner`], which waits for the queued work first), it is
/// plain device storage whose drop gives the memory back to the cache.
///
/// **Threads:** `PoolBlock` is `Send` and `Sync`.
pub struct PoolBlock {
    /// `None` once given back.
    block: Option<SegmentBlock>,
    pool: Arc<Shared>,
    class: usize,
}

impl PoolBlock {
    fn segment_block(&self) -> Option<&SegmentBlock> {
        self.block.as_ref()
    }

    /// Size in bytes (the rounded request).
    pub fn len(&self) -> usize {
        self.segment_block().map_or(0, SegmentBlock::len)
    }

    /// Whether the block is empty (never, while it lives).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Gives the range back to the cache with the uses that may still be
    /// queued on it.
    fn give_back(&mut self, tracks: Tracks) {
        let Some(block) = self.block.take() else { return };
        let len = block.len();
        let mut state = self.pool.state();
        let class = &mut state.classes[self.class];
        if self.class == SMALL {
            // Small blocks are kept whole for the next request of their
            // size (the frequent case); large ones coalesce at once, which
            // keeps large-pool fragmentation low.
            if !tracks.is_empty() {
                class.exact_busy += len;
            }
            class.exact.entry(len).or_default().push((block, tracks));
        } else {
            let offset = block.offset();
            // The segment forgets the block before the free list offers it.
            drop(block);
            class.free.insert(offset, len, tracks);
        }
        state.stats.allocated -= len;
        state.stats.frees += 1;
        state.refresh();
    }
}

impl Drop for PoolBlock {
    fn drop(&mut self) {
        // Outside an `Ordered` no work of this crate's is queued on it.
        self.give_back(Tracks::default());
    }
}

impl fmt::Debug for PoolBlock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PoolBlock")
            .field("address", &self.device_ptr())
            .field("len", &self.len())
            .finish()
    }
}

// SAFETY: the segment block's promises carry over: mapped device memory of
// the pool's device, stable while the block lives (it is given back only
// when dropped; a leaked block keeps its range forever), never overlapping
// another live block, written only through `&mut self` or by the `Ordered`
// that owns it.
unsafe impl DeviceStorage for PoolBlock {
    fn device(&self) -> &Device {
        &self.pool.device
    }

    fn device_ptr(&self) -> *const c_void {
        self.segment_block()
            .map_or(std::ptr::null(), |block| block.address().cast_const())
    }

    fn byte_len(&self) -> usize {
        self.len()
    }
}

// SAFETY: as above; exclusive access to the block is exclusive access to
// its bytes.
unsafe impl DeviceStorageMut for PoolBlock {}

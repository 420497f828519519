//! [`PoolStats`]: what a [`DevicePool`](crate::pool::DevicePool) holds and did.

/// A pool's statistics, like torch_npu's `memory_stats`.
///
/// The current values are exact. **Peaks with several threads:** the pool
/// serves each thread from a cache of its own, so no count shared by the
/// threads is written on a pool hit; each thread's cache keeps up to one
/// large chunk ([`PoolConfig::large_chunk`](crate::pool::PoolConfig::large_chunk))
/// of counted headroom instead. `allocated_peak` and `active_peak` are
/// therefore exact while one thread allocates and frees, and otherwise
/// never below the true peak and above it by at most one large chunk per
/// other thread: safe for sizing memory from a profiling run.
///
/// From [`DevicePool::stats`](crate::pool::DevicePool::stats), or a snapshot's
/// [`stats`](crate::pool::PoolSnapshot::stats):
///
/// ```
/// use ascend::pool::{DevicePool, PoolConfig};
/// # let device = ascend::Device::new(0)?;
/// # let stream = std::sync::Arc::new(ascend::stream::Stream::new(&device)?);
/// let pool = DevicePool::new(&device, PoolConfig::default())?;
/// for _step in 0..3 {
///     let activations = pool.alloc(256 << 10)?;
///     activations.fill_bytes(0, &stream)?;
/// } // freed at the end of each step, cached with its memset
/// let stats = pool.stats();
/// assert_eq!((stats.allocations, stats.frees, stats.chunks_mapped), (3, 3, 1));
/// assert_eq!((stats.allocated, stats.allocated_peak), (0, 256 << 10));
/// assert_eq!(stats.reserved, 2 << 20); // one small chunk, cached
/// assert_eq!(stats.active, 256 << 10); // cached, its memset not proven finished
/// # Ok::<(), ascend::Error>(())
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct PoolStats {
    /// Bytes in live blocks, by capacity: each block's request rounded
    /// up ([`PoolBlock::capacity`](crate::pool::PoolBlock::capacity)), as
    /// torch's `allocated_bytes` counts them. (torch's `requested_bytes`,
    /// the sum of the blocks' lengths, is not kept: it would add a count
    /// to every pool hit and free.)
    pub allocated: usize,
    /// The highest `allocated` has been.
    pub allocated_peak: usize,
    /// Bytes of device memory mapped by the pool (live and cached).
    pub reserved: usize,
    /// The highest `reserved` has been.
    pub reserved_peak: usize,
    /// Bytes in live blocks plus freed (cached) memory whose former work
    /// the pool has not proven finished — torch's active bytes, with the
    /// pool's own notion of "finished":
    ///
    /// - A freed block keeps the streams that used it (its tracks), and the
    ///   pool forgets them only when it proves that work finished by
    ///   synchronising those streams itself: in
    ///   [`empty_cache`](crate::pool::DevicePool::empty_cache) (for the memory
    ///   past the last live block of each segment, which it unmaps),
    ///   [`sleep`](crate::pool::DevicePool::sleep) (for all of it) and the pool's
    ///   end. It does not query events, so a stream the caller synchronised,
    ///   or whose work simply ended, still counts until then.
    /// - A freed block coalesces with its free neighbours, and the merged
    ///   range waits for all their work (the next block placed anywhere in
    ///   it inherits it): its idle bytes count too. After an inference loop
    ///   whose activations were used on a stream, `active` is therefore
    ///   about the whole mapped memory the loop touched, with nothing
    ///   allocated, until `empty_cache` or `sleep`.
    ///
    /// So `active - allocated` is the cached memory whose next use is
    /// ordered after earlier work (the snapshot's
    /// [`FreePending`](crate::pool::BlockState::FreePending) blocks, plus small
    /// blocks cached whole with their work).
    pub active: usize,
    /// The highest `active` has been.
    pub active_peak: usize,
    /// Blocks handed out.
    pub allocations: u64,
    /// Blocks given back.
    pub frees: u64,
    /// Requests that had to give cached memory back and try again.
    pub retries: u64,
    /// Chunks mapped.
    pub chunks_mapped: u64,
    /// Chunks unmapped.
    pub chunks_unmapped: u64,
    /// Completed [`sleep`](crate::pool::DevicePool::sleep)s.
    pub sleeps: u64,
    /// Completed [`wake`](crate::pool::DevicePool::wake)s.
    pub wakes: u64,
    /// Bytes of offloaded contents of sleeping tags, held in pinned host
    /// memory.
    pub offloaded: usize,
    /// Bytes of pinned host memory kept from earlier offloads for the next
    /// sleep (freed by [`empty_cache`](crate::pool::DevicePool::empty_cache)).
    pub offload_spare: usize,
    /// Live oversize blocks ([`PoolConfig::max_split_size`](crate::pool::PoolConfig::max_split_size)),
    /// torch's `oversize_allocations.current`.
    pub oversize_allocations: u64,
    /// Oversize blocks held whole, live or cached, torch's
    /// `oversize_segments.current` (a cached one stops counting when it
    /// goes back to the free ranges).
    pub oversize_segments: u64,
    /// Runs of garbage collection
    /// ([`PoolConfig::garbage_collection_threshold`](crate::pool::PoolConfig::garbage_collection_threshold)).
    pub gc_runs: u64,
}

impl PoolStats {
    pub(in crate::pool) fn note_reserved_peak(&mut self) {
        self.reserved_peak = self.reserved_peak.max(self.reserved);
    }
}

//! Memory pools: the layer a framework otherwise writes itself.
//!
//! [`DevicePool`] is a caching device allocator on expandable segments
//! (the model of torch_npu's and PyTorch's, with expandable segments on):
//! best-fit placement with splitting and coalescing, a small and a large
//! pool, cached memory reused at once on the stream that freed it and, by
//! a device-side wait, on any other, `empty_cache`, an out-of-memory retry
//! and statistics. Its blocks are [`Ordered`](crate::stream::Ordered)
//! owners, so they are used on any stream without a scope. Blocks can be
//! tagged, and the pool can sleep (its physical memory given back, the
//! offloaded tags copied to pinned host memory, every device address
//! kept) and wake, as vLLM's sleep mode does. A block can be shared with
//! another process ([`DevicePool::export_block`], one shareable handle per
//! chunk, the pid whitelist on; [`ImportedChunks`](crate::share::ImportedChunks)
//! on the other side), and
//! the pool can serve the runtime's allocations for a stream
//! ([`PoolAllocator`]).
//!
//! [`RuntimePool`] is the runtime's own stream-ordered pool
//! (`aclrtMemPool*`): allocations ordered on a stream, freed on it and
//! reused by the runtime; its allocations are `Ordered` owners too.
//!
//! [`PinnedPool`] caches pinned host buffers in power-of-two buckets; a
//! buffer goes back with the copies that may still use it, and its next
//! owner's host access waits for them.
//!
//! In both pools, as with `Vec`, a block's length is the request and its
//! capacity is the rounded size ([`PoolBlock::capacity`],
//! [`PinnedHostBuf::capacity`](crate::PinnedHostBuf::capacity)): a pinned
//! buffer and a device block of the same request copy whole to whole,
//! whatever each pool rounds to. The statistics count capacities.

mod config;
mod device_pool;
mod per_thread;
mod pinned_pool;
mod runtime_pool;
pub(crate) mod watch;

pub use config::{ENV_ALLOC_CONF, PoolConfig};
pub use device_pool::{
    BlockExport, BlockSnapshot, BlockState, DevicePool, HistoryAction, HistoryEvent, HistoryOptions, MemoryStats,
    PoolAllocator, PoolBlock, PoolHistory, PoolSnapshot, PoolStats, SegmentSnapshot, Stat, StatGroup,
};
pub use pinned_pool::{PinnedPool, PinnedStats};
pub use runtime_pool::{RuntimePool, RuntimePoolBuf, RuntimePoolConfig, RuntimePoolStats};

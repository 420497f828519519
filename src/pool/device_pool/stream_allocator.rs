//! [`PoolAllocator`]: a device pool as the runtime's allocator for a
//! stream.

use super::DevicePool;
use super::block::PoolBlock;
use crate::allocator::{Block, DeviceAllocator};
use crate::stream::{Ordered, Stream};
use std::collections::HashMap;
use std::fmt;
use std::ptr::NonNull;
use std::sync::{Arc, Mutex};

/// A [`DevicePool`] serving the runtime's allocations for work on one
/// stream: register it with
/// [`AllocatorRegistration::register`](crate::allocator::AllocatorRegistration::register)
/// and the runtime (an operator library's workspaces, say) takes its
/// memory from the pool's cache.
///
/// Each block it hands out is noted as used by the stream
/// ([`Ordered::record_stream`]): the stream first waits for the block's
/// former uses on other streams, and when the runtime frees the block it
/// goes back to the cache with the stream's work, so the pool reuses it at
/// once on that stream and, after a device-side wait, on any other. A free
/// of a block it did not hand out is logged and ignored.
///
/// ```
/// use std::sync::Arc;
/// use ascend::allocator::{AllocatorRegistration, DeviceAllocator};
/// use ascend::pool::{DevicePool, PoolConfig};
/// use ascend::stream::Stream;
/// use ascend::Device;
/// let device = Device::new(0)?;
/// let pool = DevicePool::new(&device, PoolConfig::default())?;
/// let stream = Arc::new(Stream::new(&device)?);
/// let allocator = pool.stream_allocator(&stream);
/// let registration = AllocatorRegistration::register(&stream, allocator.clone())?;
/// // What the runtime does for an operator's workspace:
/// let block = allocator.alloc(1 << 20).expect("a block");
/// assert_eq!(pool.stats().allocated, 1 << 20);
/// allocator.free(block);
/// assert_eq!(pool.stats().allocated, 0); // cached, with the stream's work
/// registration.unregister()?;
/// # Ok::<(), ascend::Error>(())
/// ```
///
/// **Threads:** `PoolAllocator` is `Send` and `Sync`, and `'static`.
pub struct PoolAllocator {
    pool: DevicePool,
    stream: Arc<Stream>,
    /// The blocks the runtime holds, by address.
    live: Mutex<HashMap<usize, Ordered<PoolBlock>>>,
}

impl DevicePool {
    /// This pool as the runtime's allocator for work on `stream` (see
    /// [`PoolAllocator`]).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use ascend::allocator::DeviceAllocator;
    /// use ascend::stream::Stream;
    /// # use ascend::pool::{DevicePool, PoolConfig};
    /// # let device = ascend::Device::new(0)?;
    /// # let pool = DevicePool::new(&device, PoolConfig::default())?;
    /// let stream = Arc::new(Stream::new(&device)?);
    /// let allocator = pool.stream_allocator(&stream); // register it for `stream`
    /// let block = allocator.alloc(1000).expect("a block");
    /// assert_eq!(block.size(), 1000);
    /// assert_eq!(pool.stats().allocated, 1024); // from the pool's cache
    /// allocator.free(block);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn stream_allocator(&self, stream: &Arc<Stream>) -> Arc<PoolAllocator> {
        Arc::new(PoolAllocator {
            pool: self.handle(),
            stream: Arc::clone(stream),
            live: Mutex::new(HashMap::new()),
        })
    }
}

impl PoolAllocator {
    /// Blocks the runtime holds now.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// use ascend::allocator::DeviceAllocator;
    /// # use ascend::pool::{DevicePool, PoolConfig};
    /// # let device = ascend::Device::new(0)?;
    /// # let pool = DevicePool::new(&device, PoolConfig::default())?;
    /// # let stream = Arc::new(ascend::stream::Stream::new(&device)?);
    /// let allocator = pool.stream_allocator(&stream);
    /// let workspace = allocator.alloc(4096).expect("a block"); // as the runtime asks
    /// assert_eq!(allocator.outstanding(), 1);
    /// allocator.free(workspace);
    /// assert_eq!(allocator.outstanding(), 0); // nothing leaks when it is dropped
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn outstanding(&self) -> usize {
        self.live.lock().map_or(0, |live| live.len())
    }
}

// SAFETY: every block is a live pool block of at least `size` bytes of the
// pool's device, kept in `live` (so neither freed nor handed out again)
// until `free` takes it back, and leaked if the allocator is dropped
// before (the runtime may still hold it); the stream was made to wait for the block's
// former uses, and the stream's work is noted on it, so the pool reuses
// the memory elsewhere only after that work.
unsafe impl DeviceAllocator for PoolAllocator {
    fn alloc(&self, size: usize) -> Option<Block> {
        let block = match self.pool.alloc(size) {
            Ok(block) => block,
            Err(error) => {
                log::debug!("PoolAllocator: {error}");
                return None;
            }
        };
        if let Err(error) = block.record_stream(&self.stream) {
            log::warn!("PoolAllocator: ordering the block on its stream: {error}");
            return None;
        }
        let address = NonNull::new(block.device_ptr().cast_mut())?;
        let len = block.byte_len();
        let mut live = self.live.lock().ok()?;
        live.insert(address.as_ptr() as usize, block);
        Some(Block::new(address, len))
    }

    fn free(&self, block: Block) {
        let taken = match self.live.lock() {
            Ok(mut live) => live.remove(&(block.address().as_ptr() as usize)),
            Err(_) => None,
        };
        match taken {
            // Back to the cache with the stream's work.
            Some(block) => drop(block),
            None => log::warn!("PoolAllocator: free of {block:?}, which it did not hand out"),
        }
    }
}

impl Drop for PoolAllocator {
    fn drop(&mut self) {
        // Blocks the runtime never gave back may still be in its hands (an
        // allocator unregistered with blocks outstanding): keep (leak)
        // them, never let the pool hand their memory out again.
        let live = match self.live.get_mut() {
            Ok(live) => std::mem::take(live),
            Err(poisoned) => std::mem::take(poisoned.into_inner()),
        };
        if !live.is_empty() {
            log::warn!(
                "PoolAllocator: dropped with {} block(s) the runtime never freed; they are kept, not reused",
                live.len()
            );
            live.into_values().for_each(std::mem::forget);
        }
    }
}

impl fmt::Debug for PoolAllocator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PoolAllocator")
            .field("stream", &self.stream.as_raw())
            .field("outstanding", &self.outstanding())
            .finish()
    }
}

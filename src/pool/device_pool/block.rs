//! [`PoolBlock`]: a block of a [`DevicePool`](crate::pool::DevicePool), and the
//! node on the heap that holds what it owns.

use super::Shared;
use crate::Device;
use crate::memory::{DeviceStorage, DeviceStorageMut};
use crate::stream::{Ordered, Recycle, Tracks, UseGate};
use crate::vmm::SegmentBlock;
use std::ffi::c_void;
use std::fmt;
use std::mem::ManuallyDrop;
use std::sync::Arc;

/// A block of a [`DevicePool`](crate::pool::DevicePool), held by the
/// [`Ordered`](crate::stream::Ordered) that
/// [`DevicePool::alloc`](crate::pool::DevicePool::alloc) returns. Taken out of it
/// ([`Ordered::into_inner`](crate::stream::Ordered::into_inner), which
/// waits for the queued work first), it is plain device storage whose drop
/// gives the memory back to the cache.
///
/// **Length and capacity**, as with `Vec`: its length
/// ([`PoolBlock::len`], [`DeviceStorage::byte_len`], and so the
/// `Ordered` owner's [`byte_len`](crate::stream::Ordered::byte_len) and
/// [`view`](crate::stream::Ordered::view)) is the number of bytes
/// requested; its capacity ([`PoolBlock::capacity`]) is the rounded size
/// the pool placed and caches, which the pool's statistics count.
///
/// ```
/// use ascend::DeviceSliceMut;
/// use ascend::pool::{DevicePool, PoolBlock, PoolConfig};
/// # let device = ascend::Device::new(0)?;
/// let pool = DevicePool::new(&device, PoolConfig::default())?;
/// let mut block: PoolBlock = pool.alloc(4096)?.into_inner()?; // plain device storage
/// DeviceSliceMut::<u32>::from_storage(&mut block)?.write_from_host(&[5; 1024])?;
/// assert_eq!(pool.stats().allocated, 4096);
/// drop(block); // back to the pool's cache
/// assert_eq!(pool.stats().allocated, 0);
/// # Ok::<(), ascend::Error>(())
/// ```
///
/// **Threads:** `PoolBlock` is `Send` and `Sync`.
pub struct PoolBlock {
    /// Taken only by `into_node` and `drop`, each of which ends the block.
    node: ManuallyDrop<Box<BlockNode>>,
}

/// What a [`PoolBlock`] owns, on the heap: a pool hit moves the block out
/// of a thread cache, into an `Ordered`, out of it and back, and a pointer
/// moves at a sixth of the cost of these fields. A node lives as long as
/// its range stays whole (a cached block keeps its node): only placing a
/// block from a free list makes one, and only giving one back to a free
/// list frees it. Each hand-out sets its `len` to the new request
/// (`PoolBlock::ordered`): one store, which callgrind counts as cheaper
/// than a length carried beside the pointer (a wider `PoolBlock` costs
/// every move of the block, about 6 instructions per hit against 1).
pub(super) struct BlockNode {
    pub(super) block: SegmentBlock,
    /// The pool, kept alive by every block (cached ones too).
    pub(super) pool: Arc<Shared>,
    /// The gate of the block's tag: every use of the block through its
    /// `Ordered` enters it, and a sleep closes it.
    pub(super) gate: Arc<UseGate>,
    pub(super) arena: usize,
    pub(super) class: usize,
    /// The bytes requested by the block's current owner (at most
    /// `block`'s length, its capacity, which [`PoolBlock::len`] enforces
    /// on reading); set by every hand-out.
    pub(super) len: usize,
}

impl PoolBlock {
    /// The block owning `node`, of the node's `len` bytes.
    #[inline]
    pub(super) fn from_node(node: Box<BlockNode>) -> Self {
        Self {
            node: ManuallyDrop::new(node),
        }
    }

    /// The block owning `node`, of `len` requested bytes (at most the
    /// node's block length), in the `Ordered` owner a pool
    /// hands out (its drop sends the block back to the pool with
    /// `tracks`).
    #[inline]
    pub(super) fn ordered(mut node: Box<BlockNode>, len: usize, tracks: Tracks) -> Ordered<Self> {
        debug_assert!(
            len <= node.block.len(),
            "{len} bytes in a {}-byte block",
            node.block.len()
        );
        // Not bounded here (off the hit path): `PoolBlock::len` bounds it.
        node.len = len;
        Ordered::recycled(
            Self::from_node(node),
            len,
            tracks,
            Recycle::Gated {
                give_back: Self::recycle,
                gate: Self::gate,
            },
        )
    }

    /// The gate of the block's tag.
    fn gate(&self) -> &UseGate {
        &self.node.gate
    }

    /// What the block owns, without giving it back.
    #[inline]
    pub(super) fn into_node(self) -> Box<BlockNode> {
        let mut block = ManuallyDrop::new(self);
        // SAFETY: `block` is never dropped, so its node is taken once.
        unsafe { ManuallyDrop::take(&mut block.node) }
    }

    pub(super) fn node(&self) -> &BlockNode {
        &self.node
    }

    /// Length in bytes: the number requested from the pool.
    ///
    /// ```
    /// use ascend::pool::{DevicePool, PoolConfig};
    /// let device = ascend::Device::new(0)?;
    /// let pool = DevicePool::new(&device, PoolConfig::default())?;
    /// let block = pool.alloc(3000)?.into_inner()?;
    /// assert_eq!((block.len(), block.capacity()), (3000, 3072));
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[inline]
    pub fn len(&self) -> usize {
        // The pool's requests fit their rounded sizes; the bound keeps the
        // storage's range within the block whatever was set.
        self.node.len.min(self.node.block.len())
    }

    /// Whether the length is zero (a request of 0 bytes; the block still
    /// holds a range of [`PoolBlock::capacity`] bytes).
    ///
    /// ```
    /// # use ascend::pool::{DevicePool, PoolConfig};
    /// # let device = ascend::Device::new(0)?;
    /// # let pool = DevicePool::new(&device, PoolConfig::default())?;
    /// let empty = pool.alloc(0)?.into_inner()?;
    /// assert!(empty.is_empty());
    /// assert_eq!(empty.capacity(), 512); // a range of one rounding unit all the same
    /// assert!(!pool.alloc(1)?.into_inner()?.is_empty());
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Capacity in bytes: the request rounded up to the pool's rounding,
    /// the range the block holds (and the bytes the statistics count).
    ///
    /// ```
    /// # use ascend::pool::{DevicePool, PoolConfig};
    /// # let device = ascend::Device::new(0)?;
    /// # let pool = DevicePool::new(&device, PoolConfig::default())?;
    /// let block = pool.alloc(1000)?.into_inner()?;
    /// assert_eq!((block.len(), block.capacity()), (1000, 1024));
    /// assert_eq!(pool.stats().allocated, block.capacity()); // counted by capacity
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn capacity(&self) -> usize {
        self.node.block.len()
    }

    /// Where a dropped `Ordered<PoolBlock>` sends its block: back to the
    /// cache, with the uses that may still be queued on it.
    #[inline]
    fn recycle(block: PoolBlock, tracks: Tracks) {
        let node = block.into_node();
        let pool = Arc::as_ptr(&node.pool);
        // SAFETY: `node` holds the pool, and `give_back` keeps it until its
        // own last step: moved into a cache, after which `give_back` only
        // lets go of the cache's slot (a flush that could free the pool
        // waits for that store, the slot's last access), or dropped at the
        // end of the free-list path. The pool is passed as a raw pointer:
        // no reference to it outlives that step. Not cloning the `Arc`
        // keeps a count shared by every thread off the hit path.
        unsafe { Shared::give_back(pool, node, tracks) };
    }
}

impl Drop for PoolBlock {
    fn drop(&mut self) {
        // SAFETY: taken once, here; `into_node` forgets the blocks it
        // empties, so they never reach this.
        let node = unsafe { ManuallyDrop::take(&mut self.node) };
        // Outside an `Ordered` no work of this crate's is queued on it.
        Self::recycle(Self::from_node(node), Tracks::default());
    }
}

impl fmt::Debug for PoolBlock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PoolBlock")
            .field("address", &self.device_ptr())
            .field("len", &self.len())
            .field("capacity", &self.capacity())
            .finish()
    }
}

impl Ordered<PoolBlock> {
    /// The block's capacity in bytes ([`PoolBlock::capacity`]: the rounded
    /// size; [`Ordered::byte_len`] is the requested length).
    ///
    /// ```
    /// use ascend::pool::{DevicePool, PoolConfig};
    /// let device = ascend::Device::new(0)?;
    /// let pool = DevicePool::new(&device, PoolConfig::default())?;
    /// let block = pool.alloc(3000)?;
    /// assert_eq!((block.byte_len(), block.capacity()), (3000, 3072));
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn capacity(&self) -> usize {
        self.storage().capacity()
    }
}

// SAFETY: the segment block's promises carry over to its first `len()`
// bytes (at most the block's length: `len` bounds them): mapped device
// memory of the pool's device, stable while the block lives (it is given
// back only when dropped; a leaked block keeps its range forever), never
// overlapping another live block, written only through `&mut self` or by
// the `Ordered` that owns it. While its tag sleeps the range is unmapped but stays
// reserved for the pool's segment, which maps nothing else there (the
// documented suspension of `DeviceStorage`).
unsafe impl DeviceStorage for PoolBlock {
    fn device(&self) -> &Device {
        &self.node.pool.device
    }

    fn device_ptr(&self) -> *const c_void {
        self.node.block.address().cast_const()
    }

    #[inline]
    fn byte_len(&self) -> usize {
        self.len()
    }
}

// SAFETY: as above; exclusive access to the block is exclusive access to
// its bytes.
unsafe impl DeviceStorageMut for PoolBlock {}

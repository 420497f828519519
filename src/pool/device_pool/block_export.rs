//! [`BlockExport`]: a pool block shared with other processes, one
//! shareable handle per chunk it covers.

use super::DevicePool;
use super::block::PoolBlock;
use crate::Call;
use crate::error::{Error, Result};
use crate::share::{OwnedExport, Pid, ShareKind};
use crate::stream::Ordered;
use std::fmt;
use std::sync::Arc;

/// A [`DevicePool`] block shared with other processes
/// ([`DevicePool::export_block`]): the physical memory of every chunk the
/// block covers is exported (each chunk once, whatever number of blocks
/// in it are shared), with the pid whitelist **on**: only the processes
/// given to [`BlockExport::allow_pids`] can import it.
///
/// It holds the block, so the pool cannot give its range to another block
/// while the export lives, and while any export lives the pool refuses to
/// sleep. Keep it until the importers are done: dropping it does not unmap
/// their imports (the runtime keeps the memory alive for them), but the
/// pool may then reuse the range. The importer maps the chunks in an
/// address range of its own ([`ImportedChunks`](crate::share::ImportedChunks)).
///
/// **What a whitelisted process can reach.** The runtime shares whole
/// chunks, and an export cannot be withdrawn: a process on the whitelist
/// can map the *whole* chunks the block lies in (its neighbours in them
/// too), and import them again later, while the pool's memory lives, even
/// after this value is dropped and the range reused. Share with processes
/// you trust with that memory, or give shared blocks a tag of their own
/// ([`DevicePool::alloc_tagged`]) and sizes that fill whole chunks.
///
/// ```
/// use std::sync::Arc;
/// use ascend::pool::{DevicePool, PoolConfig};
/// use ascend::share::{Pid, ShareKind};
/// # let device = ascend::Device::new(0)?;
/// let pool = DevicePool::new(&device, PoolConfig::default())?;
/// let kv = Arc::new(pool.alloc_tagged(1 << 20, "shared")?); // shared blocks: a tag of their own
/// let export = pool.export_block(&kv, ShareKind::V2Default)?;
/// export.allow_pids(&[Pid::from_raw(4242)?])?; // the importer's reported pid
/// let line = export.descriptor(); // for ImportedChunks::import over there
/// assert_eq!(line.split_whitespace().count(), 4 + 1); // one token: one chunk
/// let refused = pool.sleep(&[]); // a live export keeps the pool awake
/// assert!(matches!(refused, Err(ascend::Error::InvalidArgument { .. })));
/// drop(export); // once the importers are done
/// pool.sleep(&[])?;
/// # pool.wake()?;
/// # Ok::<(), ascend::Error>(())
/// ```
///
/// **Threads:** `BlockExport` is `Send` and `Sync`, and `'static`.
pub struct BlockExport {
    block: Arc<Ordered<PoolBlock>>,
    exports: Vec<Arc<OwnedExport>>,
    chunk: usize,
    /// Where the block starts in its first chunk.
    offset: usize,
}

impl DevicePool {
    /// Shares `block` with other processes as `kind` handles, one per
    /// chunk it covers, with the pid whitelist on.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when the block is not this pool's, or a
    /// chunk of it was already shared as another kind;
    /// [`Error::PoolAsleep`] while its tag sleeps; the runtime's code of an
    /// export. The chunks exported before a failed export stay exported,
    /// since the runtime cannot take an export back, but with an empty
    /// whitelist nobody can import them; the next export of those chunks
    /// reuses them.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use ascend::Device;
    /// use ascend::pool::{DevicePool, PoolConfig};
    /// use ascend::share::{Pid, ShareKind};
    /// let device = Device::new(0)?;
    /// let pool = DevicePool::new(&device, PoolConfig::default())?;
    /// let block = Arc::new(pool.alloc(4096)?);
    /// let export = pool.export_block(&block, ShareKind::V2Default)?;
    /// export.allow_pids(&["4242".parse::<Pid>()?])?; // the importer
    /// let descriptor = export.descriptor(); // text for the importer
    /// assert!(descriptor.starts_with("ascend-chunks-v1"));
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn export_block(&self, block: &Arc<Ordered<PoolBlock>>, kind: ShareKind) -> Result<BlockExport> {
        const API: &str = "DevicePool::export_block";
        let storage: &PoolBlock = block.storage();
        let node = storage.node();
        if !Arc::ptr_eq(&node.pool, &self.shared) {
            return Err(Error::invalid(Call::rust(API), "the block belongs to another pool"));
        }
        let segment_block = &node.block;
        let state = self.shared.state();
        let arena = &state.arenas[node.arena];
        if arena.asleep.is_some() {
            return Err(Error::PoolAsleep { tag: arena.tag.clone() });
        }
        let segment = &arena.classes[node.class].segment;
        let chunk = segment.chunk_size();
        let (first, exports) =
            segment.export_chunks(Call::rust(API), segment_block.offset(), segment_block.len(), kind)?;
        Ok(BlockExport {
            block: Arc::clone(block),
            exports,
            chunk,
            offset: segment_block.offset() - first * chunk,
        })
    }
}

impl BlockExport {
    /// Lets `pids` import the block (every chunk's whitelist).
    ///
    /// # Errors
    ///
    /// The runtime's code of the first chunk that refused.
    ///
    /// # Examples
    ///
    /// ```
    /// # use std::sync::Arc;
    /// use ascend::share::{Pid, ShareKind};
    /// # use ascend::pool::{DevicePool, PoolConfig};
    /// # let device = ascend::Device::new(0)?;
    /// # let pool = DevicePool::new(&device, PoolConfig::default())?;
    /// let block = Arc::new(pool.alloc(4096)?);
    /// let export = pool.export_block(&block, ShareKind::V2Default)?;
    /// let importer: Pid = "4242".parse()?; // as it reported `Pid::current()`
    /// export.allow_pids(&[importer])?;
    /// assert!(export.allow_pids(&[]).is_err());
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn allow_pids(&self, pids: &[Pid]) -> Result<()> {
        self.exports.iter().try_for_each(|export| export.allow_pids(pids))
    }

    /// The shared block.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// use ascend::share::ShareKind;
    /// # use ascend::pool::{DevicePool, PoolConfig};
    /// # let device = ascend::Device::new(0)?;
    /// # let pool = DevicePool::new(&device, PoolConfig::default())?;
    /// let block = Arc::new(pool.alloc(4096)?);
    /// let export = pool.export_block(&block, ShareKind::V2Default)?;
    /// drop(block); // the export keeps it: its range is not reused meanwhile
    /// export.block().view().write_from_host(&[1u8; 4096])?; // what the importer reads
    /// assert_eq!(export.block().byte_len(), 4096);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn block(&self) -> &Arc<Ordered<PoolBlock>> {
        &self.block
    }

    /// The chunks' exports, in address order.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// use ascend::share::ShareKind;
    /// # use ascend::pool::{DevicePool, PoolConfig};
    /// # let device = ascend::Device::new(0)?;
    /// # let pool = DevicePool::new(&device, PoolConfig::default())?;
    /// let first = Arc::new(pool.alloc(4096)?);
    /// let second = Arc::new(pool.alloc(4096)?); // the same 2 MiB chunk
    /// let a = pool.export_block(&first, ShareKind::V2Default)?;
    /// let b = pool.export_block(&second, ShareKind::V2Default)?;
    /// assert_eq!(a.chunk_exports().len(), 1);
    /// assert!(Arc::ptr_eq(&a.chunk_exports()[0], &b.chunk_exports()[0])); // one export per chunk
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn chunk_exports(&self) -> &[Arc<OwnedExport>] {
        &self.exports
    }

    /// One line of text that an importer passes to
    /// [`ImportedChunks::import`](crate::share::ImportedChunks::import):
    /// `ascend-chunks-v1 <chunk> <offset> <len> <token>...`, with the chunk
    /// size, the block's offset in its first chunk, its length in bytes and
    /// each chunk's [`ShareableHandle`](crate::share::ShareableHandle) in
    /// its text form.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// use ascend::share::ShareKind;
    /// # use ascend::pool::{DevicePool, PoolConfig};
    /// # let device = ascend::Device::new(0)?;
    /// # let pool = DevicePool::new(&device, PoolConfig::default())?;
    /// let block = Arc::new(pool.alloc(3000)?);
    /// let export = pool.export_block(&block, ShareKind::V2Default)?;
    /// let line = export.descriptor();
    /// let words: Vec<&str> = line.split_whitespace().collect();
    /// assert_eq!(words[..4], ["ascend-chunks-v1", "2097152", "0", "3000"]);
    /// assert!(words[4].starts_with("v2:2097152:"));
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn descriptor(&self) -> String {
        crate::share::describe_chunks(self.chunk, self.offset, self.block.byte_len(), &self.exports)
    }
}

impl fmt::Debug for BlockExport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BlockExport")
            .field("chunks", &self.exports.len())
            .field("offset", &self.offset)
            .field("len", &self.block.byte_len())
            .finish()
    }
}

//! [`SharedSegment`] and [`SegmentBlock`]: an expandable segment carved
//! into owned blocks, the ground a sub-allocator stands on.

use crate::Device;
use crate::error::{Call, Error, Result};
use crate::memory::transfer;
use crate::memory::{DeviceSlice, DeviceSliceMut};
use crate::share::{OwnedExport, ShareKind};
use crate::vmm::mapped;
use crate::vmm::{ExpandableSegment, PhysicalAlloc};
use ascend_sys as sys;
use bytemuck::Pod;
use std::collections::{BTreeMap, HashMap};
use std::ffi::c_void;
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard};

/// An [`ExpandableSegment`] shared through an `Arc` and carved into
/// [`SegmentBlock`]s: owned, `'static + Send + Sync` ranges of its mapped
/// part that never overlap.
///
/// It decides nothing about placement: a sub-allocator (a caching
/// allocator, a bump allocator, an arena per step) picks the offsets, and
/// the segment checks, at run time and before any call, what keeps blocks
/// sound:
/// - a block lies inside the mapped part and overlaps no live block, so a
///   block's exclusive view is exclusive;
/// - the segment never unmaps memory a live block covers (a shrink may only
///   unmap past the end of the last live block), and it lives as long as
///   any block does. (The one exception is inside this crate: a
///   [`DevicePool`](crate::pool::DevicePool) that sleeps unmaps its own
///   segments with their addresses kept reserved, as documented there.)
///
/// ```
/// use ascend::Device;
/// use ascend::vmm::{ExpandableSegment, PhysicalMemProp, SharedSegment};
/// let device = Device::new(0)?;
/// let prop = PhysicalMemProp::device(&device);
/// let chunk = prop.round_up(1)?;
/// let segment = SharedSegment::new(ExpandableSegment::new(&prop, 4 * chunk, chunk)?);
/// segment.grow(chunk)?;
/// let mut first = segment.block(0, 4096)?;
/// assert!(segment.block(2048, 4096).is_err()); // overlaps `first`
/// let second = segment.block(4096, 4096)?;
/// first.as_mut_slice::<u32>()?.fill_bytes(1)?;
/// // Blocks are owned: they move to other threads, and keep the segment.
/// std::thread::spawn(move || drop(second)).join().expect("no panic");
/// assert!(segment.shrink(chunk).is_err()); // `first` is still live
/// drop(first);
/// segment.shrink(chunk)?;
/// # Ok::<(), ascend::Error>(())
/// ```
///
/// **Threads:** `SharedSegment` is `Send` and `Sync`: share it with `Arc` and
/// carve blocks from any thread.
///
/// **Guide:** [Concepts: owned forms](crate::guide::concepts).
pub struct SharedSegment {
    inner: Mutex<Inner>,
    base: usize,
    capacity: usize,
    chunk: usize,
    device: Device,
}

struct Inner {
    segment: ExpandableSegment,
    /// Live blocks: offset to length.
    blocks: BTreeMap<usize, usize>,
    /// The export of each chunk's memory shared so far, by the physical
    /// allocation's handle ([`memory_key`]): the runtime exports a
    /// physical allocation once, so every export that covers a chunk
    /// shares this one, wherever the chunk is mapped. Forgotten when the
    /// memory is freed.
    exports: HashMap<usize, Arc<OwnedExport>>,
}

/// What keys the exports: the physical allocation's handle, which stays
/// the same as long as the memory lives.
fn memory_key(physical: &PhysicalAlloc) -> usize {
    physical.as_raw() as usize
}

impl Inner {
    /// Whether the export of a mapped chunk from `first` on is held
    /// outside the segment (by a block or segment export).
    fn shared_from(&self, first: usize) -> bool {
        (first..)
            .map_while(|index| self.segment.chunk_physical(index))
            .filter_map(|physical| self.exports.get(&memory_key(physical)))
            .any(|export| Arc::strong_count(export) > 1)
    }

    /// Whether any export is held outside the segment.
    fn any_shared(&self) -> bool {
        self.exports.values().any(|export| Arc::strong_count(export) > 1)
    }
}

impl SharedSegment {
    /// Shares `segment`; blocks can be carved from its mapped part.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::Device;
    /// use ascend::vmm::{ExpandableSegment, PhysicalMemProp, SharedSegment};
    /// let device = Device::new(0)?;
    /// let prop = PhysicalMemProp::device(&device);
    /// let chunk = prop.round_up(1)?;
    /// let segment = SharedSegment::new(ExpandableSegment::new(&prop, 4 * chunk, chunk)?);
    /// segment.grow(chunk)?;
    /// let block = segment.block(0, 1024)?;
    /// assert_eq!(segment.live_blocks(), 1);
    /// drop(block);
    /// assert_eq!(segment.live_blocks(), 0);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn new(segment: ExpandableSegment) -> Arc<Self> {
        Arc::new(Self {
            base: segment.base() as usize,
            capacity: segment.capacity(),
            chunk: segment.chunk_size(),
            device: segment.device().clone(),
            inner: Mutex::new(Inner {
                segment,
                blocks: BTreeMap::new(),
                exports: HashMap::new(),
            }),
        })
    }

    fn inner(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The handles of the physical memory the segment holds (mapped and
    /// spare chunks), for a leak check's list of what a pool keeps.
    #[cfg(feature = "testing")]
    pub(crate) fn physical_handles(&self) -> Vec<u64> {
        let inner = self.inner();
        let mapped = (0..).map_while(|index| inner.segment.chunk_physical(index));
        mapped
            .chain(inner.segment.spare_physical())
            .map(|physical| memory_key(physical) as u64)
            .collect()
    }

    /// The first address.
    ///
    /// # Examples
    ///
    /// ```
    /// # use ascend::Device;
    /// # use ascend::vmm::{ExpandableSegment, PhysicalMemProp, SharedSegment};
    /// # let device = Device::new(0)?;
    /// # let prop = PhysicalMemProp::device(&device);
    /// # let chunk = prop.round_up(1)?;
    /// # let segment = SharedSegment::new(ExpandableSegment::new(&prop, 4 * chunk, chunk)?);
    /// # segment.grow(chunk)?;
    /// let block = segment.block(4096, 64)?;
    /// assert_eq!(block.address() as usize, segment.base() as usize + 4096);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn base(&self) -> *mut c_void {
        self.base as *mut c_void
    }

    /// Bytes mapped now.
    ///
    /// # Examples
    ///
    /// ```
    /// # use ascend::Device;
    /// # use ascend::vmm::{ExpandableSegment, PhysicalMemProp, SharedSegment};
    /// # let device = Device::new(0)?;
    /// # let prop = PhysicalMemProp::device(&device);
    /// # let chunk = prop.round_up(1)?;
    /// # let segment = SharedSegment::new(ExpandableSegment::new(&prop, 4 * chunk, chunk)?);
    /// assert_eq!(segment.size(), 0);
    /// segment.grow(2 * chunk)?;
    /// assert_eq!(segment.size(), 2 * chunk);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn size(&self) -> usize {
        self.inner().segment.size()
    }

    /// Bytes of addresses reserved.
    ///
    /// # Examples
    ///
    /// ```
    /// # use ascend::Device;
    /// # use ascend::vmm::{ExpandableSegment, PhysicalMemProp, SharedSegment};
    /// # let device = Device::new(0)?;
    /// # let prop = PhysicalMemProp::device(&device);
    /// # let chunk = prop.round_up(1)?;
    /// # let segment = SharedSegment::new(ExpandableSegment::new(&prop, 4 * chunk, chunk)?);
    /// assert_eq!(segment.capacity(), 4 * chunk);
    /// assert!(segment.grow(segment.capacity() + chunk).is_err());
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Bytes per chunk.
    ///
    /// # Examples
    ///
    /// ```
    /// # use ascend::Device;
    /// # use ascend::vmm::{ExpandableSegment, PhysicalMemProp, SharedSegment};
    /// # let device = Device::new(0)?;
    /// # let prop = PhysicalMemProp::device(&device);
    /// # let chunk = prop.round_up(1)?;
    /// # let segment = SharedSegment::new(ExpandableSegment::new(&prop, 4 * chunk, chunk)?);
    /// assert_eq!(segment.chunk_size(), chunk);
    /// segment.grow(segment.chunk_size())?;
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn chunk_size(&self) -> usize {
        self.chunk
    }

    /// The device whose context copies into it use.
    ///
    /// # Examples
    ///
    /// ```
    /// # use ascend::Device;
    /// # use ascend::vmm::{ExpandableSegment, PhysicalMemProp, SharedSegment};
    /// # let device = Device::new(0)?;
    /// # let prop = PhysicalMemProp::device(&device);
    /// # let chunk = prop.round_up(1)?;
    /// # let segment = SharedSegment::new(ExpandableSegment::new(&prop, 4 * chunk, chunk)?);
    /// assert_eq!(segment.device().id(), device.id());
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// Live blocks.
    ///
    /// # Examples
    ///
    /// ```
    /// # use ascend::Device;
    /// # use ascend::vmm::{ExpandableSegment, PhysicalMemProp, SharedSegment};
    /// # let device = Device::new(0)?;
    /// # let prop = PhysicalMemProp::device(&device);
    /// # let chunk = prop.round_up(1)?;
    /// # let segment = SharedSegment::new(ExpandableSegment::new(&prop, 4 * chunk, chunk)?);
    /// # segment.grow(chunk)?;
    /// let (a, b) = (segment.block(0, 256)?, segment.block(256, 256)?);
    /// assert_eq!(segment.live_blocks(), 2);
    /// drop((a, b));
    /// assert_eq!(segment.live_blocks(), 0);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn live_blocks(&self) -> usize {
        self.inner().blocks.len()
    }

    /// The live blocks, `(offset, len)` in offset order: a snapshot for a
    /// sub-allocator's placement (blocks made or dropped by other threads
    /// after it are not in it; [`SharedSegment::block`] checks again).
    ///
    /// # Examples
    ///
    /// ```
    /// # use ascend::Device;
    /// # use ascend::vmm::{ExpandableSegment, PhysicalMemProp, SharedSegment};
    /// # let device = Device::new(0)?;
    /// # let prop = PhysicalMemProp::device(&device);
    /// # let chunk = prop.round_up(1)?;
    /// # let segment = SharedSegment::new(ExpandableSegment::new(&prop, 4 * chunk, chunk)?);
    /// # segment.grow(chunk)?;
    /// let _high = segment.block(8192, 100)?;
    /// let _low = segment.block(0, 4096)?;
    /// assert_eq!(segment.live_ranges(), [(0, 4096), (8192, 100)]); // in offset order
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn live_ranges(&self) -> Vec<(usize, usize)> {
        self.inner()
            .blocks
            .iter()
            .map(|(&offset, &len)| (offset, len))
            .collect()
    }

    /// The end of the last live block (0 with none): a shrink may unmap
    /// only past it.
    ///
    /// # Examples
    ///
    /// ```
    /// # use ascend::Device;
    /// # use ascend::vmm::{ExpandableSegment, PhysicalMemProp, SharedSegment};
    /// # let device = Device::new(0)?;
    /// # let prop = PhysicalMemProp::device(&device);
    /// # let chunk = prop.round_up(1)?;
    /// # let segment = SharedSegment::new(ExpandableSegment::new(&prop, 4 * chunk, chunk)?);
    /// segment.grow(2 * chunk)?;
    /// assert_eq!(segment.high_water(), 0);
    /// let block = segment.block(chunk - 16, 32)?; // reaches into the second chunk
    /// assert_eq!(segment.high_water(), chunk + 16);
    /// assert!(segment.shrink(chunk).is_err()); // would unmap under the block
    /// drop(block);
    /// segment.shrink(chunk)?;
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn high_water(&self) -> usize {
        Self::end_of_blocks(&self.inner())
    }

    fn end_of_blocks(inner: &Inner) -> usize {
        inner.blocks.last_key_value().map_or(0, |(offset, len)| offset + len)
    }

    /// [`ExpandableSegment::grow`]: maps `bytes` more at the end.
    ///
    /// # Errors
    ///
    /// As [`ExpandableSegment::grow`] (transactional).
    ///
    /// # Examples
    ///
    /// ```
    /// # use ascend::Device;
    /// # use ascend::vmm::{ExpandableSegment, PhysicalMemProp, SharedSegment};
    /// # let device = Device::new(0)?;
    /// # let prop = PhysicalMemProp::device(&device);
    /// # let chunk = prop.round_up(1)?;
    /// # let segment = SharedSegment::new(ExpandableSegment::new(&prop, 4 * chunk, chunk)?);
    /// segment.grow(chunk)?; // through a shared reference: any `Arc` holder may grow it
    /// assert!(segment.block(chunk, 16).is_err()); // not mapped yet
    /// segment.grow(chunk)?;
    /// let _block = segment.block(chunk, 16)?;
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn grow(&self, bytes: usize) -> Result<()> {
        self.inner().segment.grow_for(Call::rust("SharedSegment::grow"), bytes)
    }

    /// [`ExpandableSegment::shrink`]: unmaps `bytes` from the end.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`], before any call, when a live block
    /// reaches into the bytes to unmap, or a chunk there is shared with
    /// another process (a [`SegmentExport`](crate::vmm::SegmentExport) or a pool's
    /// block export of it lives); as [`ExpandableSegment::shrink`].
    ///
    /// # Examples
    ///
    /// ```
    /// # use ascend::Device;
    /// # use ascend::vmm::{ExpandableSegment, PhysicalMemProp, SharedSegment};
    /// # let device = Device::new(0)?;
    /// # let prop = PhysicalMemProp::device(&device);
    /// # let chunk = prop.round_up(1)?;
    /// # let segment = SharedSegment::new(ExpandableSegment::new(&prop, 4 * chunk, chunk)?);
    /// segment.grow(2 * chunk)?;
    /// let block = segment.block(chunk, 16)?;
    /// assert!(segment.shrink(chunk).is_err()); // `block` lives in the last chunk
    /// drop(block);
    /// segment.shrink(chunk)?;
    /// assert_eq!(segment.size(), chunk);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn shrink(&self, bytes: usize) -> Result<()> {
        const SHRINK: Call = Call::rust("SharedSegment::shrink");
        let mut inner = self.inner();
        let keep = inner.segment.size().saturating_sub(bytes);
        let end = Self::end_of_blocks(&inner);
        if end > keep {
            return Err(Error::invalid(
                SHRINK,
                format!("a live block reaches offset {end:#x}, past the {keep:#x} bytes the shrink would keep"),
            ));
        }
        if inner.shared_from(keep / self.chunk) {
            return Err(Error::invalid(
                SHRINK,
                "a chunk past the bytes the shrink would keep is shared with another process (an export lives)",
            ));
        }
        inner.segment.shrink_for(SHRINK, bytes)
    }

    /// [`ExpandableSegment::release_spare`]; the cached exports of chunks
    /// no longer mapped are dropped first, so their memory is freed too.
    ///
    /// # Errors
    ///
    /// As [`ExpandableSegment::release_spare`].
    ///
    /// # Examples
    ///
    /// ```
    /// # use ascend::Device;
    /// # use ascend::vmm::{ExpandableSegment, PhysicalMemProp, SharedSegment};
    /// # let device = Device::new(0)?;
    /// # let prop = PhysicalMemProp::device(&device);
    /// # let chunk = prop.round_up(1)?;
    /// # let segment = SharedSegment::new(ExpandableSegment::new(&prop, 4 * chunk, chunk)?);
    /// segment.grow(2 * chunk)?;
    /// segment.shrink(2 * chunk)?; // the chunks stay allocated, as spares
    /// segment.release_spare()?; // and are freed now
    /// segment.grow(chunk)?; // allocates again
    /// assert_eq!(segment.size(), chunk);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn release_spare(&self) -> Result<()> {
        let mut inner = self.inner();
        let Inner { segment, exports, .. } = &mut *inner;
        // The exports of unmapped chunks go first, so that their memory can
        // be freed (an export holds it).
        let mapped: Vec<usize> = (0..)
            .map_while(|index| segment.chunk_physical(index))
            .map(|physical| memory_key(physical))
            .collect();
        let mut dropped = Vec::new();
        exports.retain(|key, export| {
            let keep = mapped.contains(key);
            if !keep {
                dropped.push((*key, export.token(), export.validation()));
            }
            keep
        });
        let released = segment.release_spare();
        // Memory whose free the runtime refused stays spare, and its export
        // with it: the next export of that chunk must use it (the runtime
        // exports a handle once).
        for (key, token, validation) in dropped {
            if let Some(physical) = segment
                .spare_physical()
                .iter()
                .find(|physical| memory_key(physical) == key)
            {
                let export = OwnedExport::resumed(Arc::clone(physical), token, validation);
                exports.insert(key, Arc::new(export));
            }
        }
        released
    }

    /// The exports of the chunks that `len` bytes at `offset` cover, as
    /// `kind` (each chunk exported once, then shared), and the index of
    /// the first chunk.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when the range is not mapped or a chunk
    /// was exported as another kind; the runtime's code of an export.
    pub(crate) fn export_chunks(
        &self,
        call: Call,
        offset: usize,
        len: usize,
        kind: ShareKind,
    ) -> Result<(usize, Vec<Arc<OwnedExport>>)> {
        let mut inner = self.inner();
        Self::mapped_range(&inner, call, offset, len)?;
        let (first, last) = (offset / self.chunk, (offset + len).div_ceil(self.chunk));
        // Every chunk is checked before any is exported: an export cannot
        // be taken back, so a refusal must come first.
        for index in first..last {
            let Some(physical) = inner.segment.chunk_physical(index) else {
                return Err(Error::invalid(call, format!("chunk {index} is not mapped")));
            };
            if let Some(export) = inner.exports.get(&memory_key(physical))
                && export.token().kind() != kind
            {
                return Err(Error::invalid(
                    call,
                    format!(
                        "chunk {index} is already shared as {:?}, not {kind:?}",
                        export.token().kind()
                    ),
                ));
            }
        }
        let mut exports = Vec::with_capacity(last - first);
        for index in first..last {
            let Inner {
                segment,
                exports: cache,
                ..
            } = &mut *inner;
            let physical = segment
                .chunk_physical(index)
                .ok_or_else(|| Error::invalid(call, format!("chunk {index} is not mapped")))?;
            let export = match cache.get(&memory_key(physical)) {
                Some(export) => {
                    if export.token().kind() != kind {
                        return Err(Error::invalid(
                            call,
                            format!(
                                "chunk {index} is already shared as {:?}, not {kind:?}",
                                export.token().kind()
                            ),
                        ));
                    }
                    Arc::clone(export)
                }
                None => {
                    let export = Arc::new(OwnedExport::new(Arc::clone(physical), kind)?);
                    cache.insert(memory_key(physical), Arc::clone(&export));
                    export
                }
            };
            exports.push(export);
        }
        Ok((first, exports))
    }

    /// Whether any chunk is shared with another process (an export of it
    /// is held outside the segment).
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::share::ShareKind;
    /// # use ascend::Device;
    /// # use ascend::vmm::{ExpandableSegment, PhysicalMemProp, SharedSegment};
    /// # let device = Device::new(0)?;
    /// # let prop = PhysicalMemProp::device(&device);
    /// # let chunk = prop.round_up(1)?;
    /// # let segment = SharedSegment::new(ExpandableSegment::new(&prop, 4 * chunk, chunk)?);
    /// # segment.grow(chunk)?;
    /// assert!(!segment.is_shared());
    /// let export = segment.export(ShareKind::V2Default)?;
    /// assert!(segment.is_shared());
    /// drop(export);
    /// assert!(!segment.is_shared());
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn is_shared(&self) -> bool {
        self.inner().any_shared()
    }

    /// Unmaps the whole mapped part, under live blocks too, and keeps its
    /// physical memory as spare chunks; returns the bytes unmapped. Only a
    /// sleeping [`DevicePool`](crate::pool::DevicePool) does this: it keeps
    /// the addresses reserved (nothing else is ever mapped there), has
    /// fenced the device first, and maps them again before its blocks are
    /// usable.
    ///
    /// # Errors
    ///
    /// As [`ExpandableSegment::shrink`] (transactional).
    pub(crate) fn suspend(&self) -> Result<usize> {
        let mut inner = self.inner();
        let size = inner.segment.size();
        inner.segment.shrink(size)?;
        Ok(size)
    }

    /// Maps chunks (spare ones first) until `size` bytes are mapped.
    ///
    /// # Errors
    ///
    /// As [`ExpandableSegment::grow`] (transactional).
    pub(crate) fn resume(&self, size: usize) -> Result<()> {
        let mut inner = self.inner();
        let mapped = inner.segment.size();
        inner.segment.grow(size.saturating_sub(mapped))
    }

    /// Copies `len` bytes at `offset` of the mapped part to the host
    /// address `dst`.
    ///
    /// # Safety
    ///
    /// `dst` is valid for writes of `len` bytes for the whole call.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when the range is not mapped; the
    /// runtime's code.
    pub(crate) unsafe fn copy_out(&self, offset: usize, dst: *mut c_void, len: usize) -> Result<()> {
        let inner = self.inner();
        let src = Self::mapped_range(&inner, Call::rust("SharedSegment::copy_out"), offset, len)?;
        transfer::copy(&self.device, dst, src, len, sys::ACL_MEMCPY_DEVICE_TO_HOST)
    }

    /// Copies `len` bytes from the host address `src` to `offset` of the
    /// mapped part.
    ///
    /// # Safety
    ///
    /// `src` is valid for reads of `len` bytes for the whole call, and
    /// nothing else uses the device bytes written (the pool's blocks there
    /// are asleep).
    ///
    /// # Errors
    ///
    /// As [`SharedSegment::copy_out`].
    pub(crate) unsafe fn copy_in(&self, offset: usize, src: *const c_void, len: usize) -> Result<()> {
        let inner = self.inner();
        let dst = Self::mapped_range(&inner, Call::rust("SharedSegment::copy_in"), offset, len)?;
        transfer::copy(&self.device, dst, src, len, sys::ACL_MEMCPY_HOST_TO_DEVICE)
    }

    /// The device address of `len` mapped bytes at `offset`.
    fn mapped_range(inner: &Inner, call: Call, offset: usize, len: usize) -> Result<*mut c_void> {
        match offset.checked_add(len) {
            Some(end) if end <= inner.segment.size() => Ok(inner.segment.base().wrapping_byte_add(offset)),
            _ => Err(Error::invalid(
                call,
                format!(
                    "{len} bytes at {offset:#x} are not inside the {:#x} mapped bytes",
                    inner.segment.size()
                ),
            )),
        }
    }

    /// A block of `len` bytes at `offset`.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when `len` is 0, the block runs past the
    /// mapped part, or it overlaps a live block.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::Device;
    /// use ascend::vmm::{ExpandableSegment, PhysicalMemProp, SharedSegment};
    /// let device = Device::new(0)?;
    /// let prop = PhysicalMemProp::device(&device);
    /// let chunk = prop.round_up(1)?;
    /// let segment = SharedSegment::new(ExpandableSegment::new(&prop, 4 * chunk, chunk)?);
    /// segment.grow(chunk)?;
    /// let mut block = segment.block(4096, 4096)?;
    /// assert_eq!((block.offset(), block.len()), (4096, 4096));
    /// block.as_mut_slice::<u32>()?.fill_bytes(0)?;
    /// assert!(segment.block(0, 8192).is_err()); // overlaps `block`
    /// assert!(segment.block(chunk, 1).is_err()); // past the mapped part
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn block(self: &Arc<Self>, offset: usize, len: usize) -> Result<SegmentBlock> {
        const API: &str = "SharedSegment::block";
        let mut inner = self.inner();
        let end = offset
            .checked_add(len)
            .filter(|&end| len > 0 && end <= inner.segment.size())
            .ok_or_else(|| {
                Error::invalid(
                    Call::rust(API),
                    format!(
                        "{len} bytes at offset {offset:#x} are not inside the {:#x} mapped bytes",
                        inner.segment.size()
                    ),
                )
            })?;
        let before = inner.blocks.range(..end).next_back();
        if let Some((&other, &other_len)) = before
            && other + other_len > offset
        {
            return Err(Error::invalid(
                Call::rust(API),
                format!("{offset:#x}+{len:#x} overlaps the live block at {other:#x}+{other_len:#x}"),
            ));
        }
        inner.blocks.insert(offset, len);
        Ok(SegmentBlock {
            segment: Arc::clone(self),
            offset,
            len,
        })
    }
}

impl fmt::Debug for SharedSegment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let inner = self.inner();
        f.debug_struct("SharedSegment")
            .field("segment", &inner.segment)
            .field("live_blocks", &inner.blocks.len())
            .finish()
    }
}

/// A range of a [`SharedSegment`]'s mapped part, owned: no other live block
/// overlaps it, the segment keeps it mapped while it lives, and dropping it
/// gives the range back. `'static + Send + Sync`.
///
/// **Threads:** `SegmentBlock` is `Send` and `Sync`, and `'static`.
///
/// ```
/// use ascend::vmm::SegmentBlock;
/// # use ascend::Device;
/// # use ascend::vmm::{ExpandableSegment, PhysicalMemProp, SharedSegment};
/// # let device = Device::new(0)?;
/// # let prop = PhysicalMemProp::device(&device);
/// # let chunk = prop.round_up(1)?;
/// # let segment = SharedSegment::new(ExpandableSegment::new(&prop, 4 * chunk, chunk)?);
/// # segment.grow(chunk)?;
/// /// A tensor's storage: a block of the segment, kept anywhere.
/// struct Tensor { storage: SegmentBlock, len: usize }
/// let mut tensor = Tensor { storage: segment.block(0, 4 * 4)?, len: 4 };
/// tensor.storage.as_mut_slice::<f32>()?.write_from_host(&[1.0, 2.0, 3.0, 4.0])?;
/// let tensor = std::thread::spawn(move || tensor).join().expect("no panic");
/// assert_eq!(tensor.storage.as_slice::<f32>()?.to_vec()?.len(), tensor.len);
/// assert_eq!(segment.live_blocks(), 1);
/// # Ok::<(), ascend::Error>(())
/// ```
pub struct SegmentBlock {
    segment: Arc<SharedSegment>,
    offset: usize,
    len: usize,
}

impl SegmentBlock {
    /// Offset in the segment.
    ///
    /// # Examples
    ///
    /// ```
    /// # use ascend::Device;
    /// # use ascend::vmm::{ExpandableSegment, PhysicalMemProp, SharedSegment};
    /// # let device = Device::new(0)?;
    /// # let prop = PhysicalMemProp::device(&device);
    /// # let chunk = prop.round_up(1)?;
    /// # let segment = SharedSegment::new(ExpandableSegment::new(&prop, 4 * chunk, chunk)?);
    /// # segment.grow(chunk)?;
    /// let block = segment.block(4096, 64)?;
    /// assert_eq!(block.offset(), 4096);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// Size in bytes.
    ///
    /// # Examples
    ///
    /// ```
    /// # use ascend::Device;
    /// # use ascend::vmm::{ExpandableSegment, PhysicalMemProp, SharedSegment};
    /// # let device = Device::new(0)?;
    /// # let prop = PhysicalMemProp::device(&device);
    /// # let chunk = prop.round_up(1)?;
    /// # let segment = SharedSegment::new(ExpandableSegment::new(&prop, 4 * chunk, chunk)?);
    /// # segment.grow(chunk)?;
    /// let block = segment.block(0, 100)?;
    /// assert_eq!(block.len(), 100);
    /// assert_eq!(block.as_slice::<u8>()?.len(), block.len());
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn len(&self) -> usize {
        self.len
    }

    /// Always false: a block has at least one byte.
    ///
    /// # Examples
    ///
    /// ```
    /// # use ascend::Device;
    /// # use ascend::vmm::{ExpandableSegment, PhysicalMemProp, SharedSegment};
    /// # let device = Device::new(0)?;
    /// # let prop = PhysicalMemProp::device(&device);
    /// # let chunk = prop.round_up(1)?;
    /// # let segment = SharedSegment::new(ExpandableSegment::new(&prop, 4 * chunk, chunk)?);
    /// # segment.grow(chunk)?;
    /// assert!(!segment.block(0, 1)?.is_empty());
    /// assert!(segment.block(0, 0).is_err()); // no empty blocks
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The first device address.
    ///
    /// # Examples
    ///
    /// ```
    /// # use ascend::Device;
    /// # use ascend::vmm::{ExpandableSegment, PhysicalMemProp, SharedSegment};
    /// # let device = Device::new(0)?;
    /// # let prop = PhysicalMemProp::device(&device);
    /// # let chunk = prop.round_up(1)?;
    /// # let segment = SharedSegment::new(ExpandableSegment::new(&prop, 4 * chunk, chunk)?);
    /// # segment.grow(chunk)?;
    /// let block = segment.block(512, 64)?;
    /// assert_eq!(block.address() as usize, segment.base() as usize + block.offset());
    /// assert_eq!(block.as_slice::<u8>()?.as_raw(), block.address().cast_const());
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn address(&self) -> *mut c_void {
        (self.segment.base + self.offset) as *mut c_void
    }

    /// The segment it belongs to.
    ///
    /// # Examples
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use ascend::Device;
    /// # use ascend::vmm::{ExpandableSegment, PhysicalMemProp, SharedSegment};
    /// # let device = Device::new(0)?;
    /// # let prop = PhysicalMemProp::device(&device);
    /// # let chunk = prop.round_up(1)?;
    /// # let segment = SharedSegment::new(ExpandableSegment::new(&prop, 4 * chunk, chunk)?);
    /// # segment.grow(chunk)?;
    /// let block = segment.block(0, 64)?;
    /// assert!(Arc::ptr_eq(block.segment(), &segment));
    /// drop(segment); // the block keeps the segment alive
    /// assert_eq!(block.segment().live_blocks(), 1);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn segment(&self) -> &Arc<SharedSegment> {
        &self.segment
    }

    /// The device whose context copies into it use.
    ///
    /// # Examples
    ///
    /// ```
    /// # use ascend::Device;
    /// # use ascend::vmm::{ExpandableSegment, PhysicalMemProp, SharedSegment};
    /// # let device = Device::new(0)?;
    /// # let prop = PhysicalMemProp::device(&device);
    /// # let chunk = prop.round_up(1)?;
    /// # let segment = SharedSegment::new(ExpandableSegment::new(&prop, 4 * chunk, chunk)?);
    /// # segment.grow(chunk)?;
    /// let block = segment.block(0, 64)?;
    /// assert_eq!(block.device().id(), device.id());
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn device(&self) -> &Device {
        &self.segment.device
    }

    /// A typed view of the block.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when the size is not a whole number of
    /// `T`s or the address is not aligned for `T`.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::Device;
    /// use ascend::vmm::{ExpandableSegment, PhysicalMemProp, SharedSegment};
    /// let device = Device::new(0)?;
    /// let prop = PhysicalMemProp::device(&device);
    /// let chunk = prop.round_up(1)?;
    /// let segment = SharedSegment::new(ExpandableSegment::new(&prop, 4 * chunk, chunk)?);
    /// segment.grow(chunk)?;
    /// let mut block = segment.block(0, 16)?;
    /// block.as_mut_slice::<u32>()?.write_from_host(&[1, 2, 3, 4])?;
    /// assert_eq!(block.as_slice::<u32>()?.to_vec()?, [1, 2, 3, 4]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn as_slice<T: Pod>(&self) -> Result<DeviceSlice<'_, T>> {
        let len = mapped::elements::<T>(Call::rust("SegmentBlock::as_slice"), self.address(), self.len)?;
        // SAFETY: the block's bytes stay mapped while it lives (the segment
        // refuses to unmap them), and it is borrowed for the view's life.
        Ok(unsafe { DeviceSlice::from_raw_parts(self.address(), len, self.device()) })
    }

    /// An exclusive typed view of the block.
    ///
    /// # Errors
    ///
    /// As [`SegmentBlock::as_slice`].
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::Device;
    /// use ascend::vmm::{ExpandableSegment, PhysicalMemProp, SharedSegment};
    /// let device = Device::new(0)?;
    /// let prop = PhysicalMemProp::device(&device);
    /// let chunk = prop.round_up(1)?;
    /// let segment = SharedSegment::new(ExpandableSegment::new(&prop, 4 * chunk, chunk)?);
    /// segment.grow(chunk)?;
    /// let mut block = segment.block(0, 16)?;
    /// block.as_mut_slice::<u32>()?.write_from_host(&[1, 2, 3, 4])?;
    /// assert_eq!(block.as_slice::<u32>()?.to_vec()?, [1, 2, 3, 4]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn as_mut_slice<T: Pod>(&mut self) -> Result<DeviceSliceMut<'_, T>> {
        let len = mapped::elements::<T>(Call::rust("SegmentBlock::as_mut_slice"), self.address(), self.len)?;
        // SAFETY: as in `as_slice`; no other live block overlaps this one,
        // and `&mut self` makes the view the block's only one.
        Ok(unsafe { DeviceSliceMut::from_raw_parts(self.address(), len, self.device()) })
    }
}

impl Drop for SegmentBlock {
    fn drop(&mut self) {
        self.segment.inner().blocks.remove(&self.offset);
    }
}

impl fmt::Debug for SegmentBlock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SegmentBlock")
            .field("address", &self.address())
            .field("len", &self.len)
            .finish()
    }
}

// SAFETY: the block's bytes are mapped device memory of the segment's
// device for as long as the block lives (the segment refuses to unmap them
// and lives while the block holds it); offset, length and device never
// change; the range is given back only when the block is dropped, so a
// leaked block keeps it forever; no other live block overlaps it, and it is
// written only through `&mut self`.
unsafe impl crate::memory::DeviceStorage for SegmentBlock {
    fn device(&self) -> &Device {
        &self.segment.device
    }

    fn device_ptr(&self) -> *const c_void {
        self.address()
    }

    fn byte_len(&self) -> usize {
        self.len
    }
}

// SAFETY: as above; exclusive access to the block is exclusive access to
// its bytes.
unsafe impl crate::memory::DeviceStorageMut for SegmentBlock {}

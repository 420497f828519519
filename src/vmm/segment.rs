//! [`ExpandableSegment`]: one reserved address range that grows and shrinks
//! at its end, chunk by chunk.

use super::mapped;
use super::owned_mapping::{OwnedMapping, UnmapError};
use super::physical::{PhysicalAlloc, context_device};
use super::properties::{Granularity, PhysicalMemProp};
use super::range::VirtualRange;
use crate::Device;
use crate::error::{Call, Error, Result};
use crate::memory::{DeviceSlice, DeviceSliceMut};
use bytemuck::Pod;
use std::ffi::c_void;
use std::fmt;
use std::sync::Arc;

/// A contiguous device range that grows and shrinks at its end: the
/// building block of expandable-segment allocators (torch_npu's, PyTorch's).
///
/// It reserves `capacity` bytes of addresses once. [`grow`](Self::grow)
/// maps physical chunks of `chunk` bytes after the mapped part;
/// [`shrink`](Self::shrink) unmaps chunks from the end and keeps their
/// physical memory as spare chunks, which the next `grow` maps again
/// before it allocates anything ([`release_spare`](Self::release_spare)
/// frees them). The mapped part is one contiguous range, and the views of
/// [`as_slice`](Self::as_slice) / [`as_mut_slice`](Self::as_mut_slice) span
/// every chunk.
///
/// **Transactional.** A `grow` or `shrink` makes several runtime calls. If
/// one fails, the ones already made are undone and the segment is exactly
/// as before — same size, same spare chunks, the same data in the mapped
/// part — and the error is returned. Only if undoing fails as well (a
/// second failure) does the segment keep what it could not undo: chunks
/// that could not be unmapped stay mapped (it is then larger than before),
/// chunks that could not be mapped again become spare (smaller). It is
/// always contiguous and consistent.
///
/// Every view borrows the segment, so no device work can be queued on its
/// memory while `grow` or `shrink` runs. It is `'static`, `Send` and
/// `Sync`.
///
/// ```
/// use ascend::Device;
/// use ascend::vmm::{ExpandableSegment, PhysicalMemProp};
/// let device = Device::new(0)?;
/// let prop = PhysicalMemProp::device(&device);
/// let chunk = prop.round_up(1)?;
/// let mut segment = ExpandableSegment::new(&prop, 8 * chunk, chunk)?;
/// segment.grow(2 * chunk)?;
/// let data: Vec<u32> = (0..(2 * chunk / 4) as u32).collect();
/// segment.as_mut_slice::<u32>()?.write_from_host(&data)?; // spans both chunks
/// segment.grow(chunk)?; // the first two chunks keep their data
/// assert_eq!(segment.as_slice::<u32>()?.slice(..data.len())?.to_vec()?, data);
/// segment.shrink(2 * chunk)?;
/// assert_eq!((segment.size(), segment.spare_chunks()), (chunk, 2));
/// # Ok::<(), ascend::Error>(())
/// ```
///
/// **Threads:** `ExpandableSegment` is `Send` and `Sync`, and `'static`.
///
/// **Guide:** [Concepts: owned forms](crate::guide::concepts); a tested
/// allocator built on it: [Testing your own code](crate::guide::testing).
pub struct ExpandableSegment {
    range: Arc<VirtualRange>,
    prop: PhysicalMemProp,
    chunk: usize,
    device: Device,
    /// The mapped chunks, in address order from the base.
    mapped: Vec<OwnedMapping>,
    /// Unmapped chunks kept for the next grow; the last is mapped first.
    spare: Vec<Arc<PhysicalAlloc>>,
}

impl ExpandableSegment {
    /// Reserves `capacity` bytes of addresses for memory with `prop`,
    /// mapped in chunks of `chunk` bytes. Nothing is mapped yet.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`], before any reservation, when `chunk` is
    /// not a positive multiple of the granularity of `prop` or `capacity`
    /// is not a positive multiple of `chunk`; the runtime's code.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::Device;
    /// use ascend::vmm::{ExpandableSegment, PhysicalMemProp};
    /// let device = Device::new(0)?;
    /// let prop = PhysicalMemProp::device(&device);
    /// let chunk = prop.round_up(1)?;
    /// let mut segment = ExpandableSegment::new(&prop, 16 * chunk, chunk)?;
    /// assert_eq!((segment.size(), segment.capacity()), (0, 16 * chunk));
    /// segment.grow(chunk)?; // maps the first chunk
    /// assert_eq!(segment.size(), chunk);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn new(prop: &PhysicalMemProp, capacity: usize, chunk: usize) -> Result<Self> {
        const API: &str = "ExpandableSegment::new";
        let granularity = prop.granularity(Granularity::Minimum)?;
        if chunk == 0 || !chunk.is_multiple_of(granularity) {
            return Err(Error::invalid(
                Call::rust(API),
                format!("chunk {chunk} is not a positive multiple of the granularity {granularity}"),
            ));
        }
        if capacity == 0 || !capacity.is_multiple_of(chunk) {
            return Err(Error::invalid(
                Call::rust(API),
                format!("capacity {capacity} is not a positive multiple of the chunk {chunk}"),
            ));
        }
        let device = context_device(prop)?;
        Ok(Self {
            range: Arc::new(VirtualRange::reserve(capacity)?),
            prop: *prop,
            chunk,
            device,
            mapped: Vec::new(),
            spare: Vec::new(),
        })
    }

    /// The first address; the mapped part starts here.
    ///
    /// # Examples
    ///
    /// ```
    /// # use ascend::Device;
    /// # use ascend::vmm::{ExpandableSegment, PhysicalMemProp};
    /// # let device = Device::new(0)?;
    /// # let prop = PhysicalMemProp::device(&device);
    /// # let chunk = prop.round_up(1)?;
    /// let mut segment = ExpandableSegment::new(&prop, 4 * chunk, chunk)?;
    /// segment.grow(chunk)?;
    /// assert_eq!(segment.as_slice::<u8>()?.as_raw(), segment.base().cast_const());
    /// let before = segment.base();
    /// segment.grow(chunk)?; // growing never moves the segment
    /// assert_eq!(segment.base(), before);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn base(&self) -> *mut c_void {
        self.range.base()
    }

    /// Bytes mapped now.
    ///
    /// # Examples
    ///
    /// ```
    /// # use ascend::Device;
    /// # use ascend::vmm::{ExpandableSegment, PhysicalMemProp};
    /// # let device = Device::new(0)?;
    /// # let prop = PhysicalMemProp::device(&device);
    /// # let chunk = prop.round_up(1)?;
    /// let mut segment = ExpandableSegment::new(&prop, 4 * chunk, chunk)?;
    /// assert_eq!(segment.size(), 0);
    /// segment.grow(2 * chunk)?;
    /// assert_eq!(segment.size(), 2 * chunk);
    /// assert_eq!(segment.as_slice::<u8>()?.len(), segment.size());
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn size(&self) -> usize {
        self.mapped.len() * self.chunk
    }

    /// Bytes of addresses reserved: the most the segment can grow to.
    ///
    /// # Examples
    ///
    /// ```
    /// # use ascend::Device;
    /// # use ascend::vmm::{ExpandableSegment, PhysicalMemProp};
    /// # let device = Device::new(0)?;
    /// # let prop = PhysicalMemProp::device(&device);
    /// # let chunk = prop.round_up(1)?;
    /// let mut segment = ExpandableSegment::new(&prop, 2 * chunk, chunk)?;
    /// assert_eq!(segment.capacity(), 2 * chunk);
    /// segment.grow(segment.capacity())?;
    /// assert!(segment.grow(chunk).is_err()); // full
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn capacity(&self) -> usize {
        self.range.size()
    }

    /// Bytes per chunk.
    ///
    /// # Examples
    ///
    /// ```
    /// # use ascend::Device;
    /// # use ascend::vmm::{ExpandableSegment, PhysicalMemProp};
    /// # let device = Device::new(0)?;
    /// # let prop = PhysicalMemProp::device(&device);
    /// # let chunk = prop.round_up(1)?;
    /// let mut segment = ExpandableSegment::new(&prop, 8 * chunk, 2 * chunk)?;
    /// assert_eq!(segment.chunk_size(), 2 * chunk);
    /// assert!(segment.grow(chunk).is_err()); // not a whole chunk
    /// segment.grow(segment.chunk_size())?;
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn chunk_size(&self) -> usize {
        self.chunk
    }

    /// Unmapped chunks kept for reuse.
    ///
    /// # Examples
    ///
    /// ```
    /// # use ascend::Device;
    /// # use ascend::vmm::{ExpandableSegment, PhysicalMemProp};
    /// # let device = Device::new(0)?;
    /// # let prop = PhysicalMemProp::device(&device);
    /// # let chunk = prop.round_up(1)?;
    /// let mut segment = ExpandableSegment::new(&prop, 4 * chunk, chunk)?;
    /// segment.grow(3 * chunk)?;
    /// segment.shrink(2 * chunk)?;
    /// assert_eq!(segment.spare_chunks(), 2);
    /// segment.grow(chunk)?; // takes one spare chunk back
    /// assert_eq!(segment.spare_chunks(), 1);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn spare_chunks(&self) -> usize {
        self.spare.len()
    }

    /// The properties of its physical memory.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::vmm::MemAttr;
    /// # use ascend::Device;
    /// # use ascend::vmm::{ExpandableSegment, PhysicalMemProp};
    /// # let device = Device::new(0)?;
    /// # let prop = PhysicalMemProp::device(&device);
    /// # let chunk = prop.round_up(1)?;
    /// let normal = prop.with_attr(MemAttr::NORMAL);
    /// let segment = ExpandableSegment::new(&normal, 4 * chunk, chunk)?;
    /// assert_eq!(segment.prop().attr(), MemAttr::NORMAL);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn prop(&self) -> &PhysicalMemProp {
        &self.prop
    }

    /// The device whose context copies into it use.
    ///
    /// # Examples
    ///
    /// ```
    /// # use ascend::Device;
    /// # use ascend::vmm::{ExpandableSegment, PhysicalMemProp};
    /// # let device = Device::new(0)?;
    /// # let prop = PhysicalMemProp::device(&device);
    /// # let chunk = prop.round_up(1)?;
    /// let segment = ExpandableSegment::new(&prop, 4 * chunk, chunk)?;
    /// assert_eq!(segment.device().id(), device.id());
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// `bytes` as a number of chunks, checked against `limit` chunks.
    fn chunks(&self, call: Call, bytes: usize, limit: usize, what: &str) -> Result<usize> {
        if !bytes.is_multiple_of(self.chunk) {
            return Err(Error::invalid(
                call,
                format!("{bytes} bytes are not a whole number of {}-byte chunks", self.chunk),
            ));
        }
        let count = bytes / self.chunk;
        if count > limit {
            return Err(Error::invalid(
                call,
                format!("{bytes} bytes are more than the {} bytes {what}", limit * self.chunk),
            ));
        }
        Ok(count)
    }

    /// Maps `bytes` more after the mapped part, spare chunks first, then
    /// new physical allocations. Growing by 0 does nothing.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`], before any call, when `bytes` is not a
    /// whole number of chunks or runs past the capacity; the runtime's code
    /// of the first failed call, with the segment as it was (see the type's
    /// docs).
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::Device;
    /// use ascend::vmm::{ExpandableSegment, PhysicalMemProp};
    /// let device = Device::new(0)?;
    /// let prop = PhysicalMemProp::device(&device);
    /// let chunk = prop.round_up(1)?;
    /// let mut segment = ExpandableSegment::new(&prop, 4 * chunk, chunk)?;
    /// segment.grow(chunk)?;
    /// segment.grow(2 * chunk)?;
    /// assert_eq!(segment.size(), 3 * chunk);
    /// assert!(segment.grow(chunk + 1).is_err()); // not a whole number of chunks
    /// assert!(segment.grow(2 * chunk).is_err()); // past the capacity
    /// assert_eq!(segment.size(), 3 * chunk); // unchanged
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn grow(&mut self, bytes: usize) -> Result<()> {
        self.grow_for(Call::rust("ExpandableSegment::grow"), bytes)
    }

    /// [`ExpandableSegment::grow`] for the public method `call`.
    pub(crate) fn grow_for(&mut self, call: Call, bytes: usize) -> Result<()> {
        let room = (self.capacity() - self.size()) / self.chunk;
        let count = self.chunks(call, bytes, room, "left in the reservation")?;
        let before = self.mapped.len();
        // Physical memory this call allocated (not taken from the spares).
        let mut fresh = 0;
        for _ in 0..count {
            let (physical, new) = match self.spare.pop() {
                Some(physical) => (physical, false),
                None => match PhysicalAlloc::new(&self.prop, self.chunk) {
                    Ok(physical) => (Arc::new(physical), true),
                    Err(error) => return Err(self.undo_grow(before, fresh, error)),
                },
            };
            let offset = self.size();
            match OwnedMapping::new(Arc::clone(&self.range), offset, Arc::clone(&physical)) {
                Ok(mapping) => {
                    self.mapped.push(mapping);
                    fresh += usize::from(new);
                }
                Err(error) => {
                    if !new {
                        self.spare.push(physical);
                    }
                    return Err(self.undo_grow(before, fresh, error));
                }
            }
        }
        Ok(())
    }

    /// Unmaps the chunks a failed grow mapped after the first `before`:
    /// spare ones go back to the spares, the `fresh` ones (the last mapped)
    /// are freed. Returns `error`.
    fn undo_grow(&mut self, before: usize, fresh: usize, error: Error) -> Error {
        let mut to_free = fresh;
        while self.mapped.len() > before {
            let Some(mapping) = self.mapped.pop() else { break };
            match mapping.unmap() {
                Ok(physical) if to_free > 0 => {
                    to_free -= 1;
                    drop(physical);
                }
                Ok(physical) => self.spare.push(physical),
                Err(UnmapError { mapping, error: undo }) => {
                    log::error!(
                        "ExpandableSegment::grow: undoing after `{error}` failed ({undo}); the segment keeps {} \
                         more chunk(s) than before",
                        self.mapped.len() + 1 - before
                    );
                    self.mapped.push(mapping);
                    break;
                }
            }
        }
        error
    }

    /// Unmaps `bytes` from the end of the mapped part; their physical
    /// memory becomes spare chunks. Shrinking by 0 does nothing.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`], before any call, when `bytes` is not a
    /// whole number of chunks or more than is mapped; the runtime's code of
    /// the first failed unmap, with the segment as it was (see the type's
    /// docs).
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::Device;
    /// use ascend::vmm::{ExpandableSegment, PhysicalMemProp};
    /// let device = Device::new(0)?;
    /// let prop = PhysicalMemProp::device(&device);
    /// let chunk = prop.round_up(1)?;
    /// let mut segment = ExpandableSegment::new(&prop, 4 * chunk, chunk)?;
    /// segment.grow(3 * chunk)?;
    /// segment.shrink(2 * chunk)?; // unmaps the last two chunks, keeps them spare
    /// assert_eq!((segment.size(), segment.spare_chunks()), (chunk, 2));
    /// segment.grow(chunk)?; // maps a spare chunk again, allocates nothing
    /// segment.release_spare()?; // frees the other one
    /// assert_eq!(segment.spare_chunks(), 0);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn shrink(&mut self, bytes: usize) -> Result<()> {
        self.shrink_for(Call::rust("ExpandableSegment::shrink"), bytes)
    }

    /// [`ExpandableSegment::shrink`] for the public method `call`.
    pub(crate) fn shrink_for(&mut self, call: Call, bytes: usize) -> Result<()> {
        let count = self.chunks(call, bytes, self.mapped.len(), "mapped")?;
        let mut unmapped = Vec::with_capacity(count);
        for _ in 0..count {
            let Some(mapping) = self.mapped.pop() else { break };
            match mapping.unmap() {
                Ok(physical) => unmapped.push(physical),
                Err(UnmapError { mapping, error }) => {
                    self.mapped.push(mapping);
                    self.undo_shrink(unmapped, &error);
                    return Err(error);
                }
            }
        }
        // The chunk nearest the base goes last, so it is the first to be
        // mapped again.
        self.spare.extend(unmapped);
        Ok(())
    }

    /// Maps again, in address order, the chunks a failed shrink unmapped
    /// (`unmapped` holds them from the end backwards).
    ///
    /// When a map fails, the chunks not mapped again become spares in the
    /// order `grow` maps them back: the one nearest the base first.
    fn undo_shrink(&mut self, unmapped: Vec<Arc<PhysicalAlloc>>, error: &Error) {
        let mut pending = unmapped.into_iter().rev();
        while let Some(physical) = pending.next() {
            match OwnedMapping::new(Arc::clone(&self.range), self.size(), Arc::clone(&physical)) {
                Ok(mapping) => self.mapped.push(mapping),
                Err(undo) => {
                    log::error!(
                        "ExpandableSegment::shrink: undoing after `{error}` failed ({undo}); the chunks that could \
                         not be mapped again are spare"
                    );
                    // Spares are taken from the end: the farthest chunk goes
                    // in first, this one (the nearest) last.
                    let farther: Vec<Arc<PhysicalAlloc>> = pending.collect();
                    self.spare.extend(farther.into_iter().rev());
                    self.spare.push(physical);
                    return;
                }
            }
        }
    }

    /// Frees the spare chunks (`aclrtFreePhysical`).
    ///
    /// # Errors
    ///
    /// The first failed free. A chunk whose free the runtime refused stays
    /// spare, with its reference: the next `grow` maps it again, the next
    /// `release_spare` (or the segment's drop) tries to free it again.
    ///
    /// # Examples
    ///
    /// ```
    /// # use ascend::Device;
    /// # use ascend::vmm::{ExpandableSegment, PhysicalMemProp};
    /// # let device = Device::new(0)?;
    /// # let prop = PhysicalMemProp::device(&device);
    /// # let chunk = prop.round_up(1)?;
    /// let mut segment = ExpandableSegment::new(&prop, 4 * chunk, chunk)?;
    /// segment.grow(2 * chunk)?;
    /// segment.shrink(2 * chunk)?;
    /// assert_eq!(segment.spare_chunks(), 2);
    /// segment.release_spare()?; // the physical memory is freed
    /// assert_eq!((segment.spare_chunks(), segment.size()), (0, 0));
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn release_spare(&mut self) -> Result<()> {
        let mut first = None;
        let mut kept = Vec::new();
        for physical in self.spare.drain(..) {
            match Arc::try_unwrap(physical) {
                Ok(mut physical) => {
                    if let Err(error) = physical.release() {
                        first.get_or_insert(error);
                        kept.push(Arc::new(physical));
                    }
                }
                // Shared (by a retained handle's owner, say): the last owner
                // frees it.
                Err(shared) => drop(shared),
            }
        }
        self.spare = kept;
        first.map_or(Ok(()), Err)
    }

    /// The physical memory of the spare chunks.
    pub(crate) fn spare_physical(&self) -> &[Arc<PhysicalAlloc>] {
        &self.spare
    }

    /// The physical memory of the mapped chunk at `index` (from the base).
    pub(crate) fn chunk_physical(&self, index: usize) -> Option<&Arc<PhysicalAlloc>> {
        self.mapped.get(index).map(OwnedMapping::physical)
    }

    /// A typed view of the mapped part, across every chunk.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when the size is not a whole number of
    /// `T`s.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::Device;
    /// use ascend::vmm::{ExpandableSegment, PhysicalMemProp};
    /// let device = Device::new(0)?;
    /// let prop = PhysicalMemProp::device(&device);
    /// let chunk = prop.round_up(1)?;
    /// let mut segment = ExpandableSegment::new(&prop, 4 * chunk, chunk)?;
    /// segment.grow(chunk)?;
    /// segment.as_mut_slice::<u8>()?.fill_bytes(5)?;
    /// assert_eq!(segment.as_slice::<u8>()?.slice(..3)?.to_vec()?, [5, 5, 5]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn as_slice<T: Pod>(&self) -> Result<DeviceSlice<'_, T>> {
        let len = mapped::elements::<T>(Call::rust("ExpandableSegment::as_slice"), self.base(), self.size())?;
        // SAFETY: the chunks map `size` contiguous bytes from the base, and
        // stay mapped while `self` is borrowed.
        Ok(unsafe { DeviceSlice::from_raw_parts(self.base(), len, &self.device) })
    }

    /// An exclusive typed view of the mapped part, across every chunk.
    ///
    /// # Errors
    ///
    /// As [`ExpandableSegment::as_slice`].
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::Device;
    /// use ascend::vmm::{ExpandableSegment, PhysicalMemProp};
    /// let device = Device::new(0)?;
    /// let prop = PhysicalMemProp::device(&device);
    /// let chunk = prop.round_up(1)?;
    /// let mut segment = ExpandableSegment::new(&prop, 4 * chunk, chunk)?;
    /// segment.grow(chunk)?;
    /// segment.as_mut_slice::<u8>()?.fill_bytes(5)?;
    /// assert_eq!(segment.as_slice::<u8>()?.slice(..3)?.to_vec()?, [5, 5, 5]);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn as_mut_slice<T: Pod>(&mut self) -> Result<DeviceSliceMut<'_, T>> {
        let len = mapped::elements::<T>(Call::rust("ExpandableSegment::as_mut_slice"), self.base(), self.size())?;
        // SAFETY: as in `as_slice`; `&mut self` makes it the only view, and
        // each chunk's map slot makes its mapping the only one.
        Ok(unsafe { DeviceSliceMut::from_raw_parts(self.base(), len, &self.device) })
    }
}

impl fmt::Debug for ExpandableSegment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ExpandableSegment")
            .field("base", &self.base())
            .field("size", &self.size())
            .field("capacity", &self.capacity())
            .field("chunk", &self.chunk)
            .field("spare_chunks", &self.spare.len())
            .finish()
    }
}

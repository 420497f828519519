//! [`ImportedChunks`]: memory another process exported chunk by chunk (a
//! pool block, a whole segment), mapped here.

use super::chunks_descriptor::ChunksDescriptor;
use super::import::ImportedAlloc;
use crate::Device;
use crate::error::Result;
use crate::memory::{DeviceSlice, DeviceSliceMut, DeviceStorage, DeviceStorageMut};
use crate::vmm::{OwnedMapping, VirtualRange};
use bytemuck::Pod;
use std::ffi::c_void;
use std::fmt;
use std::sync::Arc;

/// Memory of another process exported chunk by chunk: a
/// [`DevicePool`](crate::pool::DevicePool) block
/// ([`BlockExport`](crate::pool::BlockExport)) or a whole
/// [`SharedSegment`](crate::vmm::SharedSegment)
/// ([`SegmentExport`](crate::vmm::SegmentExport)). Each chunk is imported
/// and mapped, in order, in an address range reserved here, and the memory
/// is the part of that range the descriptor names.
///
/// One process maps a chunk once at a time: while an `ImportedChunks`
/// lives, importing another block that shares one of its chunks (two
/// blocks of one chunk of the exporter's pool) is refused; import the
/// whole segment instead, or drop the first.
///
/// Dropping it unmaps the chunks, frees the imports and releases the
/// range (in that order). It is device storage like any other: copies,
/// typed views, [`Ordered`](crate::stream::Ordered).
///
/// **Threads:** `ImportedChunks` is `Send` and `Sync`, and `'static`.
pub struct ImportedChunks {
    /// Dropped first: the chunks' mappings, which hold the range.
    mappings: Vec<OwnedMapping<ImportedAlloc>>,
    range: Arc<VirtualRange>,
    offset: usize,
    len: usize,
    device: Device,
}

impl ImportedChunks {
    /// Imports the memory that `descriptor` (from
    /// [`BlockExport::descriptor`](crate::pool::BlockExport::descriptor) or
    /// [`SegmentExport::descriptor`](crate::vmm::SegmentExport::descriptor))
    /// names, onto `device`.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) for a
    /// descriptor that is not one, or whose numbers do not fit together;
    /// the runtime's code of an import (this process is not on the
    /// whitelist, it is the exporter, the exporter freed the memory or
    /// exited), a reservation or a map. Whatever was imported or mapped
    /// before the failure is undone.
    pub fn import(descriptor: &str, device: &Device) -> Result<Self> {
        let ChunksDescriptor {
            chunk,
            offset,
            len,
            tokens,
        } = ChunksDescriptor::parse("ImportedChunks::import", descriptor)?;
        let needed = tokens.len();
        let range = Arc::new(VirtualRange::reserve(needed * chunk)?);
        let mut mappings = Vec::with_capacity(needed);
        for (index, token) in tokens.iter().enumerate() {
            let imported = Arc::new(ImportedAlloc::import(token, device)?);
            mappings.push(OwnedMapping::new(Arc::clone(&range), index * chunk, imported)?);
        }
        Ok(Self {
            mappings,
            range,
            offset,
            len,
            device: device.clone(),
        })
    }

    /// The device address in this process.
    pub fn address(&self) -> *mut c_void {
        self.range.base().wrapping_byte_add(self.offset)
    }

    /// Size in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it is empty (never).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Chunks mapped.
    pub fn chunks(&self) -> usize {
        self.mappings.len()
    }

    /// A typed view of the memory.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) when the length is not a whole number of
    /// `T`s or the address is not aligned for `T`.
    pub fn as_slice<T: Pod>(&self) -> Result<DeviceSlice<'_, T>> {
        DeviceSlice::from_storage(self)
    }

    /// An exclusive typed view of the memory.
    ///
    /// # Errors
    ///
    /// As [`ImportedChunks::as_slice`].
    pub fn as_mut_slice<T: Pod>(&mut self) -> Result<DeviceSliceMut<'_, T>> {
        DeviceSliceMut::from_storage(self)
    }
}

impl fmt::Debug for ImportedChunks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ImportedChunks")
            .field("address", &self.address())
            .field("len", &self.len)
            .field("chunks", &self.mappings.len())
            .finish()
    }
}

// SAFETY: the chunks are mapped in order from the range's base and stay
// mapped until the value drops (the mappings are owned and unmapped only
// then); the named bytes lie inside them (`offset + len` was checked
// against the number of chunks). In this process the memory is reached
// only through this value, written only through `&mut self` or by value
// (other processes sharing it are the exporter's protocol, as for every
// import).
unsafe impl DeviceStorage for ImportedChunks {
    fn device(&self) -> &Device {
        &self.device
    }

    fn device_ptr(&self) -> *const c_void {
        self.address().cast_const()
    }

    fn byte_len(&self) -> usize {
        self.len
    }
}

// SAFETY: as above; exclusive access to the value is exclusive access to
// its bytes in this process.
unsafe impl DeviceStorageMut for ImportedChunks {}

//! [`ImportedBlock`]: another process's pool block, mapped here.

use super::block_export::DESCRIPTOR_PREFIX;
use crate::Device;
use crate::error::{Error, Result};
use crate::memory::{DeviceSlice, DeviceSliceMut, DeviceStorage, DeviceStorageMut};
use crate::share::{ImportedAlloc, ShareableHandle};
use crate::vmm::{OwnedMapping, VirtualRange};
use bytemuck::Pod;
use std::ffi::c_void;
use std::fmt;
use std::sync::Arc;

/// A block of another process's [`DevicePool`](super::DevicePool), shared
/// by a [`BlockExport`](super::BlockExport): each chunk is imported and
/// mapped, in order, in an address range reserved here, and the block is
/// the part of that range its descriptor names.
///
/// Dropping it unmaps the chunks, frees the imports and releases the
/// range (in that order). It is device storage like any other: copies,
/// typed views, [`Ordered`](crate::stream::Ordered).
///
/// **Threads:** `ImportedBlock` is `Send` and `Sync`, and `'static`.
pub struct ImportedBlock {
    /// Dropped first: the chunks' mappings, which hold the range.
    mappings: Vec<OwnedMapping<ImportedAlloc>>,
    range: Arc<VirtualRange>,
    offset: usize,
    len: usize,
    device: Device,
}

impl ImportedBlock {
    /// Imports the block that `descriptor`
    /// ([`BlockExport::descriptor`](super::BlockExport::descriptor)) names,
    /// onto `device`.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for a descriptor that is not one, or
    /// whose numbers do not fit together; the runtime's code of an import
    /// (this process is not on the whitelist, it is the exporter, the
    /// exporter freed the memory or exited), a reservation or a map.
    /// Whatever was imported or mapped before the failure is undone.
    pub fn import(descriptor: &str, device: &Device) -> Result<Self> {
        const API: &str = "ImportedBlock::import";
        let invalid = |reason: String| Error::invalid(API, reason);
        let mut words = descriptor.split_whitespace();
        if words.next() != Some(DESCRIPTOR_PREFIX) {
            return Err(invalid(format!(
                "not a descriptor (it starts with `{DESCRIPTOR_PREFIX}`)"
            )));
        }
        let mut number = |what: &str| -> Result<usize> {
            words
                .next()
                .and_then(|word| word.parse().ok())
                .ok_or_else(|| invalid(format!("no {what}")))
        };
        let (chunk, offset, len) = (number("chunk size")?, number("offset")?, number("length")?);
        let tokens = words
            .map(|word| word.parse::<ShareableHandle>())
            .collect::<Result<Vec<_>>>()?;
        let needed = offset
            .checked_add(len)
            .filter(|_| chunk > 0 && len > 0)
            .map(|end| end.div_ceil(chunk))
            .ok_or_else(|| invalid(format!("{len} bytes at {offset} in {chunk}-byte chunks")))?;
        if tokens.len() != needed || tokens.iter().any(|token| token.size() != chunk) {
            return Err(invalid(format!(
                "{len} bytes at {offset} need {needed} tokens of {chunk} bytes, not {} ({:?})",
                tokens.len(),
                tokens.iter().map(ShareableHandle::size).collect::<Vec<_>>()
            )));
        }
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

    /// The block's device address in this process.
    pub fn address(&self) -> *mut c_void {
        self.range.base().wrapping_byte_add(self.offset)
    }

    /// Size in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the block is empty (never).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Chunks mapped.
    pub fn chunks(&self) -> usize {
        self.mappings.len()
    }

    /// A typed view of the block.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when the length is not a whole number of
    /// `T`s or the address is not aligned for `T`.
    pub fn as_slice<T: Pod>(&self) -> Result<DeviceSlice<'_, T>> {
        DeviceSlice::from_storage(self)
    }

    /// An exclusive typed view of the block.
    ///
    /// # Errors
    ///
    /// As [`ImportedBlock::as_slice`].
    pub fn as_mut_slice<T: Pod>(&mut self) -> Result<DeviceSliceMut<'_, T>> {
        DeviceSliceMut::from_storage(self)
    }
}

impl fmt::Debug for ImportedBlock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ImportedBlock")
            .field("address", &self.address())
            .field("len", &self.len)
            .field("chunks", &self.mappings.len())
            .finish()
    }
}

// SAFETY: the chunks are mapped in order from the range's base and stay
// mapped until the value drops (the mappings are owned and unmapped only
// then); the block's bytes lie inside them (`offset + len` was checked
// against the number of chunks). In this process the memory is reached
// only through this value, written only through `&mut self` or by value
// (other processes sharing it are the exporter's protocol, as for every
// import).
unsafe impl DeviceStorage for ImportedBlock {
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
unsafe impl DeviceStorageMut for ImportedBlock {}

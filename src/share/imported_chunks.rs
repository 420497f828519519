//! [`ImportedChunks`]: memory another process exported chunk by chunk (a
//! pool block, a whole segment), mapped here.

use super::chunks_descriptor::ChunksDescriptor;
use super::import::ImportedAlloc;
use crate::Call;
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
/// The importing process, with the exporter's descriptor (not run here: an
/// import needs a second process, the exporter):
///
/// ```no_run
/// use ascend::Device;
/// use ascend::share::{ImportedChunks, Pid};
/// # let descriptor = std::env::var("DESCRIPTOR").unwrap_or_default();
/// let device = Device::new(0)?;
/// println!("{}", Pid::current()?); // for the exporter's whitelist
/// // `descriptor`: the line the exporter sent back (`BlockExport::descriptor`).
/// let mut block = ImportedChunks::import(&descriptor, &device)?;
/// let mut bytes = vec![0u8; block.len()];
/// block.as_slice::<u8>()?.read_to_host(&mut bytes)?; // the exporter's bytes
/// bytes.iter_mut().for_each(|byte| *byte = !*byte);
/// block.as_mut_slice::<u8>()?.write_from_host(&bytes)?; // seen by the exporter
/// drop(block); // unmaps, frees the imports, releases the range
/// # Ok::<(), ascend::Error>(())
/// ```
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
    ///
    /// # Examples
    ///
    /// The type's example imports in another process. What is refused:
    /// a text that is no descriptor, and (by the runtime) an import in the
    /// exporting process itself.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use ascend::Error;
    /// use ascend::pool::{DevicePool, PoolConfig};
    /// use ascend::share::{ImportedChunks, ShareKind};
    /// # let device = ascend::Device::new(0)?;
    /// let bad = ImportedChunks::import("ascend-chunks-v1 2097152 0 4096", &device);
    /// assert!(matches!(bad, Err(Error::InvalidArgument { .. }))); // no token
    /// let pool = DevicePool::new(&device, PoolConfig::default())?;
    /// let block = Arc::new(pool.alloc(4096)?);
    /// let export = pool.export_block(&block, ShareKind::V2Default)?;
    /// let own = ImportedChunks::import(&export.descriptor(), &device);
    /// assert!(matches!(own, Err(Error::Acl { .. })));
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn import(descriptor: &str, device: &Device) -> Result<Self> {
        let ChunksDescriptor {
            chunk,
            offset,
            len,
            tokens,
        } = ChunksDescriptor::parse(Call::rust("ImportedChunks::import"), descriptor)?;
        let needed = tokens.len();
        let range = Arc::new(VirtualRange::reserve(needed * chunk)?);
        let mut mappings = Vec::with_capacity(needed);
        for (index, token) in tokens.iter().enumerate() {
            let imported = Arc::new(ImportedAlloc::import_for("ImportedChunks::import", token, device)?);
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
    ///
    /// Not run here: an import needs a second process, the exporter (the
    /// runtime refuses to import an export of the calling process).
    ///
    /// ```no_run
    /// # use ascend::share::ImportedChunks;
    /// # let device = ascend::Device::new(0)?;
    /// # let descriptor = std::env::var("DESCRIPTOR").unwrap_or_default(); // from the exporter
    /// let block = ImportedChunks::import(&descriptor, &device)?; // the exporter's line
    /// use ascend::memory::DeviceStorage;
    /// assert_eq!(block.address().cast_const(), block.device_ptr());
    /// // The exporter's address is another: each process maps the chunks itself.
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn address(&self) -> *mut c_void {
        self.range.base().wrapping_byte_add(self.offset)
    }

    /// Size in bytes.
    ///
    /// Not run here: an import needs a second process, the exporter (the
    /// runtime refuses to import an export of the calling process).
    ///
    /// ```no_run
    /// # use ascend::share::ImportedChunks;
    /// # let device = ascend::Device::new(0)?;
    /// # let descriptor = std::env::var("DESCRIPTOR").unwrap_or_default(); // from the exporter
    /// let block = ImportedChunks::import(&descriptor, &device)?; // the exporter's line
    /// let mut bytes = vec![0u8; block.len()]; // the exporter's block length
    /// block.as_slice::<u8>()?.read_to_host(&mut bytes)?;
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it is empty (never).
    ///
    /// Not run here: an import needs a second process, the exporter (the
    /// runtime refuses to import an export of the calling process).
    ///
    /// ```no_run
    /// # use ascend::share::ImportedChunks;
    /// # let device = ascend::Device::new(0)?;
    /// # let descriptor = std::env::var("DESCRIPTOR").unwrap_or_default(); // from the exporter
    /// let block = ImportedChunks::import(&descriptor, &device)?; // the exporter's line
    /// assert!(!block.is_empty()); // a descriptor of 0 bytes is refused
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Chunks mapped.
    ///
    /// Not run here: an import needs a second process, the exporter (the
    /// runtime refuses to import an export of the calling process).
    ///
    /// ```no_run
    /// # use ascend::share::ImportedChunks;
    /// # let device = ascend::Device::new(0)?;
    /// # let descriptor = std::env::var("DESCRIPTOR").unwrap_or_default(); // from the exporter
    /// let block = ImportedChunks::import(&descriptor, &device)?; // the exporter's line
    /// // One chunk per token in the descriptor: a block that straddles a
    /// // chunk boundary takes two, whatever its length.
    /// let tokens = descriptor.split_whitespace().count() - 4;
    /// assert_eq!(block.chunks(), tokens);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn chunks(&self) -> usize {
        self.mappings.len()
    }

    /// A typed view of the memory.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) when the length is not a whole number of
    /// `T`s or the address is not aligned for `T`.
    ///
    /// # Examples
    ///
    /// Not run here: an import needs a second process, the exporter (the
    /// runtime refuses to import an export of the calling process).
    ///
    /// ```no_run
    /// # use ascend::share::ImportedChunks;
    /// # let device = ascend::Device::new(0)?;
    /// # let descriptor = std::env::var("DESCRIPTOR").unwrap_or_default(); // from the exporter
    /// let block = ImportedChunks::import(&descriptor, &device)?; // the exporter's line
    /// let values: Vec<f32> = block.as_slice::<f32>()?.to_vec()?;
    /// assert_eq!(values.len() * 4, block.len());
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn as_slice<T: Pod>(&self) -> Result<DeviceSlice<'_, T>> {
        DeviceSlice::from_storage(self)
    }

    /// An exclusive typed view of the memory.
    ///
    /// # Errors
    ///
    /// As [`ImportedChunks::as_slice`].
    ///
    /// # Examples
    ///
    /// Not run here: an import needs a second process, the exporter (the
    /// runtime refuses to import an export of the calling process).
    ///
    /// ```no_run
    /// # use ascend::share::ImportedChunks;
    /// # let device = ascend::Device::new(0)?;
    /// # let descriptor = std::env::var("DESCRIPTOR").unwrap_or_default(); // from the exporter
    /// let mut block = ImportedChunks::import(&descriptor, &device)?; // the exporter's line
    /// let mut view = block.as_mut_slice::<u8>()?;
    /// view.fill_bytes(0)?; // the exporter reads zeros
    /// # Ok::<(), ascend::Error>(())
    /// ```
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

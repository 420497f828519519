//! [`SegmentExport`]: a whole shared segment exported to other processes,
//! one shareable handle per chunk.

use super::shared_segment::SharedSegment;
use crate::Call;
use crate::error::{Error, Result};
use crate::share::{OwnedExport, Pid, ShareKind};
use std::fmt;
use std::sync::Arc;

/// The mapped part of a [`SharedSegment`] shared with other processes
/// ([`SharedSegment::export`]): each chunk's physical memory is exported
/// (once per chunk, shared with any block export of the same chunk), with
/// the pid whitelist **on**: only the processes given to
/// [`SegmentExport::allow_pids`] can import it, with
/// [`ImportedChunks::import`](crate::share::ImportedChunks::import) and
/// [`SegmentExport::descriptor`].
///
/// It covers the chunks mapped when it was made. While it lives the
/// segment refuses to shrink below them (the importers would keep memory
/// the exporter no longer sees); it may grow, and the importers do not see
/// the new chunks.
///
/// ```
/// use ascend::Device;
/// use ascend::share::{Pid, ShareKind};
/// use ascend::vmm::{ExpandableSegment, PhysicalMemProp, SharedSegment};
/// let device = Device::new(0)?;
/// let prop = PhysicalMemProp::device(&device);
/// let chunk = prop.round_up(1)?;
/// let segment = SharedSegment::new(ExpandableSegment::new(&prop, 4 * chunk, chunk)?);
/// segment.grow(2 * chunk)?;
/// let export = segment.export(ShareKind::V2Default)?;
/// export.allow_pids(&["4242".parse::<Pid>()?])?;
/// assert_eq!(export.chunk_exports().len(), 2);
/// assert!(segment.shrink(chunk).is_err()); // shared
/// drop(export);
/// segment.shrink(chunk)?;
/// # Ok::<(), ascend::Error>(())
/// ```
///
/// **Threads:** `SegmentExport` is `Send` and `Sync`, and `'static`.
pub struct SegmentExport {
    segment: Arc<SharedSegment>,
    exports: Vec<Arc<OwnedExport>>,
}

impl SharedSegment {
    /// Shares the mapped part with other processes as `kind` handles, one
    /// per chunk, with the pid whitelist on (see [`SegmentExport`]).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when nothing is mapped, or a chunk was
    /// already shared as another kind; the runtime's code of an export.
    ///
    /// # Examples
    ///
    /// ```
    /// # use ascend::Device;
    /// # use ascend::share::ShareKind;
    /// # use ascend::vmm::{ExpandableSegment, PhysicalMemProp, SharedSegment};
    /// # let device = Device::new(0)?;
    /// # let prop = PhysicalMemProp::device(&device);
    /// # let chunk = prop.round_up(1)?;
    /// # let segment = SharedSegment::new(ExpandableSegment::new(&prop, 4 * chunk, chunk)?);
    /// assert!(segment.export(ShareKind::V2Default).is_err()); // nothing mapped yet
    /// segment.grow(2 * chunk)?;
    /// let export = segment.export(ShareKind::V2Default)?;
    /// assert_eq!(export.len(), 2 * chunk);
    /// // Each chunk is exported once, as one kind.
    /// assert!(segment.export(ShareKind::V1).is_err());
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn export(self: &Arc<Self>, kind: ShareKind) -> Result<SegmentExport> {
        let size = self.size();
        if size == 0 {
            return Err(Error::invalid(Call::rust("SharedSegment::export"), "nothing is mapped"));
        }
        let (_, exports) = self.export_chunks(Call::rust("SharedSegment::export"), 0, size, kind)?;
        Ok(SegmentExport {
            segment: Arc::clone(self),
            exports,
        })
    }
}

impl SegmentExport {
    /// Lets `pids` import the segment (every chunk's whitelist).
    ///
    /// # Errors
    ///
    /// The runtime's code of the first chunk that refused.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::share::Pid;
    /// # use ascend::Device;
    /// # use ascend::share::ShareKind;
    /// # use ascend::vmm::{ExpandableSegment, PhysicalMemProp, SharedSegment};
    /// # let device = Device::new(0)?;
    /// # let prop = PhysicalMemProp::device(&device);
    /// # let chunk = prop.round_up(1)?;
    /// # let segment = SharedSegment::new(ExpandableSegment::new(&prop, 4 * chunk, chunk)?);
    /// # segment.grow(chunk)?;
    /// let export = segment.export(ShareKind::V2Default)?;
    /// let importer: Pid = "4242".parse()?; // the importing process, told out of band
    /// export.allow_pids(&[importer])?;
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn allow_pids(&self, pids: &[Pid]) -> Result<()> {
        self.exports.iter().try_for_each(|export| export.allow_pids(pids))
    }

    /// The exported segment.
    ///
    /// # Examples
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use ascend::Device;
    /// # use ascend::share::ShareKind;
    /// # use ascend::vmm::{ExpandableSegment, PhysicalMemProp, SharedSegment};
    /// # let device = Device::new(0)?;
    /// # let prop = PhysicalMemProp::device(&device);
    /// # let chunk = prop.round_up(1)?;
    /// # let segment = SharedSegment::new(ExpandableSegment::new(&prop, 4 * chunk, chunk)?);
    /// # segment.grow(chunk)?;
    /// let export = segment.export(ShareKind::V2Default)?;
    /// assert!(Arc::ptr_eq(export.segment(), &segment));
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn segment(&self) -> &Arc<SharedSegment> {
        &self.segment
    }

    /// Bytes shared: the chunks mapped when the export was made.
    ///
    /// # Examples
    ///
    /// ```
    /// # use ascend::Device;
    /// # use ascend::share::ShareKind;
    /// # use ascend::vmm::{ExpandableSegment, PhysicalMemProp, SharedSegment};
    /// # let device = Device::new(0)?;
    /// # let prop = PhysicalMemProp::device(&device);
    /// # let chunk = prop.round_up(1)?;
    /// # let segment = SharedSegment::new(ExpandableSegment::new(&prop, 4 * chunk, chunk)?);
    /// segment.grow(chunk)?;
    /// let export = segment.export(ShareKind::V2Default)?;
    /// segment.grow(chunk)?; // growing is allowed; the export does not see it
    /// assert_eq!((export.len(), segment.size()), (chunk, 2 * chunk));
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn len(&self) -> usize {
        self.exports.len() * self.segment.chunk_size()
    }

    /// Whether nothing is shared (never).
    ///
    /// # Examples
    ///
    /// ```
    /// # use ascend::Device;
    /// # use ascend::share::ShareKind;
    /// # use ascend::vmm::{ExpandableSegment, PhysicalMemProp, SharedSegment};
    /// # let device = Device::new(0)?;
    /// # let prop = PhysicalMemProp::device(&device);
    /// # let chunk = prop.round_up(1)?;
    /// # let segment = SharedSegment::new(ExpandableSegment::new(&prop, 4 * chunk, chunk)?);
    /// # segment.grow(chunk)?;
    /// assert!(!segment.export(ShareKind::V2Default)?.is_empty());
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.exports.is_empty()
    }

    /// The chunks' exports, in address order.
    ///
    /// # Examples
    ///
    /// ```
    /// # use ascend::Device;
    /// # use ascend::share::ShareKind;
    /// # use ascend::vmm::{ExpandableSegment, PhysicalMemProp, SharedSegment};
    /// # let device = Device::new(0)?;
    /// # let prop = PhysicalMemProp::device(&device);
    /// # let chunk = prop.round_up(1)?;
    /// # let segment = SharedSegment::new(ExpandableSegment::new(&prop, 4 * chunk, chunk)?);
    /// segment.grow(3 * chunk)?;
    /// let export = segment.export(ShareKind::V2Default)?;
    /// assert_eq!(export.chunk_exports().len(), 3);
    /// assert!(export.chunk_exports().iter().all(|chunk| chunk.token().kind() == ShareKind::V2Default));
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn chunk_exports(&self) -> &[Arc<OwnedExport>] {
        &self.exports
    }

    /// One line of text for
    /// [`ImportedChunks::import`](crate::share::ImportedChunks::import):
    /// `ascend-chunks-v1 <chunk> 0 <len> <token>...`.
    ///
    /// # Examples
    ///
    /// ```
    /// # use ascend::Device;
    /// # use ascend::share::ShareKind;
    /// # use ascend::vmm::{ExpandableSegment, PhysicalMemProp, SharedSegment};
    /// # let device = Device::new(0)?;
    /// # let prop = PhysicalMemProp::device(&device);
    /// # let chunk = prop.round_up(1)?;
    /// # let segment = SharedSegment::new(ExpandableSegment::new(&prop, 4 * chunk, chunk)?);
    /// segment.grow(2 * chunk)?;
    /// let export = segment.export(ShareKind::V2Default)?;
    /// let line = export.descriptor();
    /// let fields: Vec<&str> = line.split(' ').collect();
    /// assert_eq!(fields[..4], ["ascend-chunks-v1", &chunk.to_string(), "0", &(2 * chunk).to_string()]);
    /// assert_eq!(fields.len(), 4 + 2); // one token per chunk
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn descriptor(&self) -> String {
        crate::share::describe_chunks(self.segment.chunk_size(), 0, self.len(), &self.exports)
    }
}

impl fmt::Debug for SegmentExport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SegmentExport")
            .field("chunks", &self.exports.len())
            .field("len", &self.len())
            .finish()
    }
}

//! [`ImportedAlloc`]: physical memory another process exported.

use super::handle::{HandleValue, ShareKind, ShareableHandle};
use super::import_slots;
use crate::Call;
use crate::Device;
use crate::error::{Error, Result, check};
use crate::vmm::{Granularity, Mappable, PhysicalAlloc, PhysicalMemProp};
use ascend_sys as sys;
use std::ffi::c_void;
use std::ptr::NonNull;

/// Physical memory imported from another process's
/// [`ShareableHandle`]. It maps like a [`PhysicalAlloc`]
/// ([`VirtualRange::map`](crate::vmm::VirtualRange::map) accepts both, and
/// the mapping borrows it), and dropping it (or [`ImportedAlloc::free`])
/// frees this process's reference (`aclrtFreePhysical`). The memory lives
/// until every process freed its reference, so it stays readable here after
/// the exporter freed its own.
///
/// Importing the same export twice in one process gives two owners of the
/// same memory: like a [`PhysicalAlloc`] and its retained handles, only one
/// of them can be mapped at a time (a second mapping is refused), so a
/// mapping's exclusive view stays exclusive in this process. Other
/// processes that map the memory write it at will: coordinate with them as
/// with any shared memory.
///
/// It cannot be exported again: only the original exporter shares memory
/// (a mapping's [`MappedRegion::physical`](crate::vmm::MappedRegion::physical)
/// still offers `export`, which the runtime refuses for an import).
///
/// The importing process, with the exporter's token (not run here: an
/// import needs a second process, the exporter):
///
/// ```no_run
/// use ascend::Device;
/// use ascend::share::{ImportedAlloc, Pid, ShareableHandle};
/// use ascend::vmm::VirtualRange;
/// # let line = std::env::var("TOKEN").unwrap_or_default();
/// let device = Device::new(0)?;
/// println!("{}", Pid::current()?); // for the exporter's whitelist
/// let token: ShareableHandle = line.parse()?; // the line it sent back
/// let imported = ImportedAlloc::import(&token, &device)?;
/// let range = VirtualRange::reserve(imported.size())?;
/// let region = range.map(0, &imported)?;
/// let words: Vec<u32> = region.as_slice::<u32>()?.to_vec()?; // the exporter's bytes
/// assert_eq!(words.len() * 4, token.size());
/// region.unmap()?;
/// imported.free()?; // the memory lives on while the exporter holds it
/// # Ok::<(), ascend::Error>(())
/// ```
///
/// **Threads:** `ImportedAlloc` is `Send` and `Sync`.
#[derive(Debug)]
pub struct ImportedAlloc {
    physical: PhysicalAlloc,
    kind: ShareKind,
}

impl ImportedAlloc {
    /// Imports `handle` onto `device`: a V1 handle with `device`'s id
    /// (`aclrtMemImportFromShareableHandle`), a V2 handle onto the current
    /// device, which `device` is made first
    /// (`aclrtMemImportFromShareableHandleV2`). The properties are the ones
    /// the runtime reports for the new handle
    /// (`aclrtMemGetAllocationPropertiesFromHandle`); the size is the one
    /// `handle` carries, checked against the granularity here and against
    /// the allocation by the runtime when mapped.
    ///
    /// # Errors
    ///
    /// The runtime's code: this process is not on the export's whitelist,
    /// this process is the exporter, the exporter freed the allocation or
    /// exited, or the value names no export (the codes the software device
    /// picks are in [Choices where the runtime is silent](crate::guide::runtime_choices)).
    /// [`Error::InvalidArgument`] when the handle's size is not a multiple
    /// of the granularity the runtime reports (the import is freed again).
    ///
    /// # Examples
    ///
    /// The type's example shows an import in another process. In the
    /// exporting process itself the runtime refuses it:
    ///
    /// ```
    /// use ascend::Error;
    /// use ascend::share::{ImportedAlloc, PidValidation, ShareKind};
    /// use ascend::vmm::{PhysicalAlloc, PhysicalMemProp};
    /// # let device = ascend::Device::new(0)?;
    /// let prop = PhysicalMemProp::device(&device);
    /// let physical = PhysicalAlloc::new(&prop, prop.round_up(1)?)?;
    /// let export = physical.export_with(ShareKind::V2Default, PidValidation::Disabled)?;
    /// let refused = ImportedAlloc::import(&export.token(), &device);
    /// assert!(matches!(refused, Err(Error::Acl { .. }))); // import is for other processes
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias(
        "aclrtMemImportFromShareableHandle",
        "aclrtMemImportFromShareableHandleV2",
        "aclrtMemGetAllocationPropertiesFromHandle"
    ))]
    pub fn import(handle: &ShareableHandle, device: &Device) -> Result<Self> {
        Self::import_for("ImportedAlloc::import", handle, device)
    }

    /// [`ImportedAlloc::import`] for the public method `method`.
    pub(crate) fn import_for(method: &'static str, handle: &ShareableHandle, device: &Device) -> Result<Self> {
        device.make_current()?;
        let mut raw = std::ptr::null_mut();
        let (api, code) = match handle.value() {
            HandleValue::V1(value) => (
                "aclrtMemImportFromShareableHandle",
                // SAFETY: a valid out-pointer; the value is checked by the
                // runtime.
                unsafe { sys::aclrtMemImportFromShareableHandle(value, device.id(), &mut raw) },
            ),
            HandleValue::V2Default(mut value) => (
                "aclrtMemImportFromShareableHandleV2",
                // SAFETY: a DEFAULT handle is one `u64`, which `value` is;
                // a valid out-pointer.
                unsafe {
                    sys::aclrtMemImportFromShareableHandleV2(
                        (&raw mut value).cast::<c_void>(),
                        sys::ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT,
                        0,
                        &mut raw,
                    )
                },
            ),
            HandleValue::V2Fabric(data) => {
                let mut fabric = sys::aclrtMemFabricHandle { data };
                (
                    "aclrtMemImportFromShareableHandleV2",
                    // SAFETY: a FABRIC handle is one `aclrtMemFabricHandle`,
                    // which `fabric` is; a valid out-pointer.
                    unsafe {
                        sys::aclrtMemImportFromShareableHandleV2(
                            (&raw mut fabric).cast::<c_void>(),
                            sys::ACL_MEM_SHARE_HANDLE_TYPE_FABRIC,
                            0,
                            &mut raw,
                        )
                    },
                )
            }
        };
        check(api, code)?;
        let raw = NonNull::new(raw)
            .ok_or_else(|| Error::invalid(Call::new(method, api), "the runtime returned a NULL handle"))?;
        match describe(method, raw, handle.size()) {
            Ok((prop, granularity)) => Ok(Self {
                // SAFETY: a live handle just imported, of `handle.size()`
                // bytes (the exporter's size; the runtime checks it on
                // map) with properties `prop`; this value owns its one
                // reference.
                physical: unsafe {
                    PhysicalAlloc::from_import(
                        raw,
                        handle.size(),
                        prop,
                        granularity,
                        device,
                        import_slots::slot_for(handle.value(), raw.as_ptr() as usize),
                    )
                },
                kind: handle.kind(),
            }),
            Err(error) => {
                // SAFETY: the handle just imported, owned here and freed
                // once.
                let freed = check("aclrtFreePhysical", unsafe { sys::aclrtFreePhysical(raw.as_ptr()) });
                if let Err(free_error) = freed {
                    log::warn!("ImportedAlloc::import: freeing the refused import: {free_error}");
                }
                Err(error)
            }
        }
    }

    /// Size in bytes (the exporter's, carried by the handle).
    ///
    /// Not run here: an import needs a second process, the exporter (the
    /// runtime refuses to import an export of the calling process).
    ///
    /// ```no_run
    /// # use ascend::share::{ImportedAlloc, ShareableHandle};
    /// # let device = ascend::Device::new(0)?;
    /// # let line = std::env::var("TOKEN").unwrap_or_default(); // from the exporter
    /// let token: ShareableHandle = line.parse()?; // the exporter's line
    /// let imported = ImportedAlloc::import(&token, &device)?;
    /// assert_eq!(imported.size(), token.size());
    /// let range = ascend::vmm::VirtualRange::reserve(imported.size())?; // room to map it all
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn size(&self) -> usize {
        self.physical.size()
    }

    /// The properties the runtime reports for the import.
    ///
    /// Not run here: an import needs a second process, the exporter (the
    /// runtime refuses to import an export of the calling process).
    ///
    /// ```no_run
    /// # use ascend::share::{ImportedAlloc, ShareableHandle};
    /// # let device = ascend::Device::new(0)?;
    /// # let line = std::env::var("TOKEN").unwrap_or_default(); // from the exporter
    /// let token: ShareableHandle = line.parse()?; // the exporter's line
    /// let imported = ImportedAlloc::import(&token, &device)?;
    /// use ascend::vmm::MemLocation;
    /// assert_eq!(imported.prop().location(), MemLocation::Device(device.id()));
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn prop(&self) -> &PhysicalMemProp {
        self.physical.prop()
    }

    /// The minimum granularity of its properties.
    ///
    /// Not run here: an import needs a second process, the exporter (the
    /// runtime refuses to import an export of the calling process).
    ///
    /// ```no_run
    /// # use ascend::share::{ImportedAlloc, ShareableHandle};
    /// # let device = ascend::Device::new(0)?;
    /// # let line = std::env::var("TOKEN").unwrap_or_default(); // from the exporter
    /// let token: ShareableHandle = line.parse()?; // the exporter's line
    /// let imported = ImportedAlloc::import(&token, &device)?;
    /// // Checked by the import: a whole number of granules.
    /// assert!(imported.size().is_multiple_of(imported.granularity()));
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn granularity(&self) -> usize {
        self.physical.granularity()
    }

    /// The device it was imported onto, whose context copies into its
    /// mappings use.
    ///
    /// Not run here: an import needs a second process, the exporter (the
    /// runtime refuses to import an export of the calling process).
    ///
    /// ```no_run
    /// # use ascend::share::{ImportedAlloc, ShareableHandle};
    /// # let device = ascend::Device::new(0)?;
    /// # let line = std::env::var("TOKEN").unwrap_or_default(); // from the exporter
    /// let token: ShareableHandle = line.parse()?; // the exporter's line
    /// let imported = ImportedAlloc::import(&token, &device)?;
    /// assert_eq!(imported.device().id(), device.id());
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn device(&self) -> &Device {
        self.physical.device()
    }

    /// The kind of handle it was imported from.
    ///
    /// Not run here: an import needs a second process, the exporter (the
    /// runtime refuses to import an export of the calling process).
    ///
    /// ```no_run
    /// # use ascend::share::{ImportedAlloc, ShareableHandle};
    /// # let device = ascend::Device::new(0)?;
    /// # let line = std::env::var("TOKEN").unwrap_or_default(); // from the exporter
    /// let token: ShareableHandle = line.parse()?; // the exporter's line
    /// let imported = ImportedAlloc::import(&token, &device)?;
    /// assert_eq!(imported.kind(), token.kind());
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn kind(&self) -> ShareKind {
        self.kind
    }

    /// The raw handle, for `ascend-sys` calls. Do not free it.
    ///
    /// Not run here: an import needs a second process, the exporter (the
    /// runtime refuses to import an export of the calling process).
    ///
    /// ```no_run
    /// # use ascend::share::{ImportedAlloc, ShareableHandle};
    /// # let device = ascend::Device::new(0)?;
    /// # let line = std::env::var("TOKEN").unwrap_or_default(); // from the exporter
    /// let token: ShareableHandle = line.parse()?; // the exporter's line
    /// let imported = ImportedAlloc::import(&token, &device)?;
    /// use ascend::sys;
    /// let mut raw = sys::aclrtPhysicalMemProp::default();
    /// // SAFETY: a live handle (borrowed from `imported`) and a valid out-pointer.
    /// ascend::check("aclrtMemGetAllocationPropertiesFromHandle", unsafe {
    ///     sys::aclrtMemGetAllocationPropertiesFromHandle(imported.as_raw(), &mut raw)
    /// })?;
    /// assert_eq!(ascend::vmm::PhysicalMemProp::from_raw(&raw)?, *imported.prop());
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn as_raw(&self) -> sys::aclrtDrvMemHandle {
        self.physical.as_raw()
    }

    /// Frees this process's reference now, reporting a failure. The memory
    /// itself lives on while another process holds a reference.
    ///
    /// # Errors
    ///
    /// The runtime's code from `aclrtFreePhysical`.
    ///
    /// # Examples
    ///
    /// Not run here: an import needs a second process, the exporter (the
    /// runtime refuses to import an export of the calling process).
    ///
    /// ```no_run
    /// # use ascend::share::{ImportedAlloc, ShareableHandle};
    /// # let device = ascend::Device::new(0)?;
    /// # let line = std::env::var("TOKEN").unwrap_or_default(); // from the exporter
    /// let token: ShareableHandle = line.parse()?; // the exporter's line
    /// let imported = ImportedAlloc::import(&token, &device)?;
    /// let range = ascend::vmm::VirtualRange::reserve(imported.size())?;
    /// range.map(0, &imported)?.unmap()?; // a mapping borrows the import: unmapped first
    /// imported.free()?;
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtFreePhysical")]
    pub fn free(self) -> Result<()> {
        self.physical.free()
    }
}

/// The reported properties and granularity of an imported handle, with
/// `size` checked against the granularity.
fn describe(method: &'static str, handle: NonNull<c_void>, size: usize) -> Result<(PhysicalMemProp, usize)> {
    let mut raw = sys::aclrtPhysicalMemProp::default();
    // SAFETY: a live handle and a valid out-pointer.
    check("aclrtMemGetAllocationPropertiesFromHandle", unsafe {
        sys::aclrtMemGetAllocationPropertiesFromHandle(handle.as_ptr(), &mut raw)
    })?;
    let prop = PhysicalMemProp::from_raw(&raw)?;
    let granularity = prop.granularity(Granularity::Minimum)?;
    if size == 0 || !size.is_multiple_of(granularity) {
        return Err(Error::invalid(
            Call::rust(method),
            format!("the handle's size {size} is not a positive multiple of the granularity {granularity}"),
        ));
    }
    Ok((prop, granularity))
}

impl Mappable for ImportedAlloc {}

impl crate::vmm::sealed::Sealed for ImportedAlloc {
    fn physical(&self) -> &PhysicalAlloc {
        &self.physical
    }
}

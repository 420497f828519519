//! [`ExportedHandle`]: physical memory exported for other processes.

use super::handle::{FABRIC_HANDLE_LEN, HandleValue, ShareKind, ShareableHandle};
use super::pid::{Pid, PidValidation};
use crate::Call;
use crate::Device;
use crate::error::{Result, check};
use crate::vmm::PhysicalAlloc;
use ascend_sys as sys;
use std::ffi::c_void;
use std::fmt;

impl PhysicalAlloc {
    /// Exports the allocation for other processes, which may import it only
    /// once whitelisted ([`ExportedHandle::allow_pids`]).
    ///
    /// A handle is exported at most once per process (the runtime refuses a
    /// second export, with either call), and the export lasts until the
    /// allocation's last reference is freed: there is no call to withdraw
    /// it. The returned value borrows the allocation, so it cannot be freed
    /// or moved while the export is being handed out.
    ///
    /// ```
    /// use ascend::Device;
    /// use ascend::share::{Pid, ShareKind};
    /// use ascend::vmm::{PhysicalAlloc, PhysicalMemProp};
    /// let device = Device::new(0)?;
    /// let prop = PhysicalMemProp::device(&device);
    /// let physical = PhysicalAlloc::new(&prop, prop.round_up(1)?)?;
    /// let export = physical.export(ShareKind::V2Default)?;
    /// // Whitelist the importing process, by the pid it reported.
    /// let importer: Pid = "4242".parse()?;
    /// export.allow_pids(&[importer])?;
    /// let token = export.token(); // send `token.to_string()` to the importer
    /// assert_eq!(token.size(), physical.size());
    /// # Ok::<(), ascend::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// The runtime's code: e.g. a second export of the handle, an imported
    /// handle (only its original exporter shares it), or FABRIC on a chip
    /// without it.
    #[doc(alias("aclrtMemExportToShareableHandle", "aclrtMemExportToShareableHandleV2"))]
    pub fn export(&self, kind: ShareKind) -> Result<ExportedHandle<'_>> {
        self.export_with(kind, PidValidation::Enforced)
    }

    /// [`PhysicalAlloc::export`] with a choice of pid validation:
    /// [`PidValidation::Disabled`] lets every process of the user import,
    /// with no whitelist.
    ///
    /// ```
    /// use ascend::share::{PidValidation, ShareKind};
    /// use ascend::vmm::{PhysicalAlloc, PhysicalMemProp};
    /// # let device = ascend::Device::new(0)?;
    /// let prop = PhysicalMemProp::device(&device);
    /// let physical = PhysicalAlloc::new(&prop, prop.round_up(1)?)?;
    /// let export = physical.export_with(ShareKind::V2Default, PidValidation::Disabled)?;
    /// assert_eq!(export.validation(), PidValidation::Disabled);
    /// assert_eq!(export.token().size(), physical.size());
    /// # Ok::<(), ascend::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`PhysicalAlloc::export`]. A driver that cannot disable the
    /// validation answers `ACL_ERROR_RT_FEATURE_NOT_SUPPORT` *after* the
    /// export happened, so the handle cannot be exported again.
    #[doc(alias = "aclrtMemExportToShareableHandleV2")]
    pub fn export_with(&self, kind: ShareKind, validation: PidValidation) -> Result<ExportedHandle<'_>> {
        Ok(ExportedHandle {
            physical: self,
            token: export_raw(self, kind, validation)?,
            validation,
        })
    }
}

/// Exports `physical` as `kind` (the runtime call of every export).
pub(super) fn export_raw(
    physical: &PhysicalAlloc,
    kind: ShareKind,
    validation: PidValidation,
) -> Result<ShareableHandle> {
    // FABRIC needs a context; the others do no harm with one.
    physical.device().make_current()?;
    let flags = validation.vmm_flag();
    let value = match kind {
        ShareKind::V1 => {
            let mut handle = 0u64;
            // SAFETY: a live physical handle and a valid out-pointer.
            check("aclrtMemExportToShareableHandle", unsafe {
                sys::aclrtMemExportToShareableHandle(
                    physical.as_raw(),
                    sys::ACL_MEM_HANDLE_TYPE_NONE,
                    flags,
                    &mut handle,
                )
            })?;
            HandleValue::V1(handle)
        }
        ShareKind::V2Default => {
            let mut handle = 0u64;
            // SAFETY: a live physical handle; DEFAULT writes one `u64`
            // into the buffer, which is one.
            check("aclrtMemExportToShareableHandleV2", unsafe {
                sys::aclrtMemExportToShareableHandleV2(
                    physical.as_raw(),
                    flags,
                    sys::ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT,
                    (&raw mut handle).cast::<c_void>(),
                )
            })?;
            HandleValue::V2Default(handle)
        }
        ShareKind::V2Fabric => {
            let mut fabric = sys::aclrtMemFabricHandle {
                data: [0; FABRIC_HANDLE_LEN],
            };
            // SAFETY: a live physical handle; FABRIC writes one
            // `aclrtMemFabricHandle` into the buffer, which is one.
            check("aclrtMemExportToShareableHandleV2", unsafe {
                sys::aclrtMemExportToShareableHandleV2(
                    physical.as_raw(),
                    flags,
                    sys::ACL_MEM_SHARE_HANDLE_TYPE_FABRIC,
                    (&raw mut fabric).cast::<c_void>(),
                )
            })?;
            HandleValue::V2Fabric(fabric.data)
        }
    };
    super::import_slots::register_export(value, physical.slot());
    Ok(ShareableHandle::new(value, physical.size()))
}

/// An export of a [`PhysicalAlloc`], from [`PhysicalAlloc::export`]. It
/// borrows the allocation: the allocation can be neither freed nor moved
/// while this value lives.
///
/// Hand [`ExportedHandle::token`] to the importing process and whitelist it
/// with [`ExportedHandle::allow_pids`]. Dropping this value ends the borrow
/// only: the export itself lasts until the allocation is freed.
///
/// ```
/// use ascend::share::{Pid, ShareKind, ShareableHandle};
/// use ascend::vmm::{PhysicalAlloc, PhysicalMemProp};
/// # let device = ascend::Device::new(0)?;
/// let prop = PhysicalMemProp::device(&device);
/// let physical = PhysicalAlloc::new(&prop, prop.round_up(1)?)?;
/// let export = physical.export(ShareKind::V1)?;
/// export.allow_pids(&["4242".parse::<Pid>()?])?; // the pid the importer reported
/// let line = export.token().to_string(); // one line for a pipe or a socket
/// // The importer parses it back and calls `ImportedAlloc::import`.
/// assert_eq!(line.parse::<ShareableHandle>()?, export.token());
/// # Ok::<(), ascend::Error>(())
/// ```
///
/// **Threads:** `ExportedHandle` is `Send` and `Sync`.
#[must_use = "an export is useful only through its token"]
pub struct ExportedHandle<'a> {
    physical: &'a PhysicalAlloc,
    token: ShareableHandle,
    validation: PidValidation,
}

impl<'a> ExportedHandle<'a> {
    /// The value to send to importers.
    ///
    /// ```
    /// use ascend::share::ShareKind;
    /// # use ascend::vmm::{PhysicalAlloc, PhysicalMemProp};
    /// # let device = ascend::Device::new(0)?;
    /// # let prop = PhysicalMemProp::device(&device);
    /// # let physical = PhysicalAlloc::new(&prop, prop.round_up(1)?)?;
    /// let export = physical.export(ShareKind::V2Default)?;
    /// let token = export.token();
    /// assert_eq!((token.kind(), token.size()), (ShareKind::V2Default, physical.size()));
    /// assert!(token.to_string().starts_with("v2:"));
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn token(&self) -> ShareableHandle {
        self.token
    }

    /// The exported allocation.
    ///
    /// ```
    /// use ascend::share::ShareKind;
    /// # use ascend::vmm::{PhysicalAlloc, PhysicalMemProp};
    /// # let device = ascend::Device::new(0)?;
    /// # let prop = PhysicalMemProp::device(&device);
    /// # let physical = PhysicalAlloc::new(&prop, prop.round_up(1)?)?;
    /// let export = physical.export(ShareKind::V1)?;
    /// assert!(std::ptr::eq(export.physical(), &physical));
    /// assert_eq!(export.physical().size(), export.token().size());
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn physical(&self) -> &'a PhysicalAlloc {
        self.physical
    }

    /// Whether importers are checked against the whitelist.
    ///
    /// ```
    /// use ascend::share::{PidValidation, ShareKind};
    /// # use ascend::vmm::{PhysicalAlloc, PhysicalMemProp};
    /// # let device = ascend::Device::new(0)?;
    /// # let prop = PhysicalMemProp::device(&device);
    /// # let first = PhysicalAlloc::new(&prop, prop.round_up(1)?)?;
    /// # let second = PhysicalAlloc::new(&prop, prop.round_up(1)?)?;
    /// assert_eq!(first.export(ShareKind::V1)?.validation(), PidValidation::Enforced);
    /// let open = second.export_with(ShareKind::V1, PidValidation::Disabled)?;
    /// assert_eq!(open.validation(), PidValidation::Disabled);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn validation(&self) -> PidValidation {
        self.validation
    }

    /// Adds processes to the whitelist (`aclrtMemSetPidToShareableHandle`,
    /// or its V2 for V2 exports). Take each pid from the importer's own
    /// [`Pid::current`]: on a host with containers it is not the id the
    /// container shows.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) for an
    /// empty list, or for an export made with [`PidValidation::Disabled`]
    /// (which has no whitelist; the runtime would answer
    /// `ACL_ERROR_RT_NO_PERMISSION`); the runtime's code (e.g. past its limit
    /// of pids).
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::Error;
    /// use ascend::share::{Pid, ShareKind};
    /// # use ascend::vmm::{PhysicalAlloc, PhysicalMemProp};
    /// # let device = ascend::Device::new(0)?;
    /// # let prop = PhysicalMemProp::device(&device);
    /// # let physical = PhysicalAlloc::new(&prop, prop.round_up(1)?)?;
    /// let export = physical.export(ShareKind::V2Default)?;
    /// // Each importer's `Pid::current()`, as it reported it.
    /// let importers = [Pid::from_raw(4242)?, Pid::from_raw(4243)?];
    /// export.allow_pids(&importers)?;
    /// assert!(matches!(export.allow_pids(&[]), Err(Error::InvalidArgument { .. })));
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias("aclrtMemSetPidToShareableHandle", "aclrtMemSetPidToShareableHandleV2"))]
    pub fn allow_pids(&self, pids: &[Pid]) -> Result<()> {
        allow_raw(
            "ExportedHandle::allow_pids",
            self.token,
            self.validation,
            self.physical.device(),
            pids,
        )
    }
}

/// Whitelists `pids` for the export `token` of memory on `device`.
pub(super) fn allow_raw(
    method: &'static str,
    token: ShareableHandle,
    validation: PidValidation,
    device: &Device,
    pids: &[Pid],
) -> Result<()> {
    let api = match token.kind() {
        ShareKind::V1 => "aclrtMemSetPidToShareableHandle",
        ShareKind::V2Default | ShareKind::V2Fabric => "aclrtMemSetPidToShareableHandleV2",
    };
    let mut raw = validation.check_whitelist(Call::new(method, api), pids)?;
    device.make_current()?;
    match token.value() {
        HandleValue::V1(handle) => {
            // SAFETY: `raw` holds `raw.len()` pids for the call.
            check(api, unsafe {
                sys::aclrtMemSetPidToShareableHandle(handle, raw.as_mut_ptr(), raw.len())
            })
        }
        HandleValue::V2Default(mut handle) => {
            // SAFETY: a DEFAULT handle is one `u64`, which `handle` is;
            // `raw` holds `raw.len()` pids.
            check(api, unsafe {
                sys::aclrtMemSetPidToShareableHandleV2(
                    (&raw mut handle).cast::<c_void>(),
                    sys::ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT,
                    raw.as_mut_ptr(),
                    raw.len(),
                )
            })
        }
        HandleValue::V2Fabric(data) => {
            let mut fabric = sys::aclrtMemFabricHandle { data };
            // SAFETY: a FABRIC handle is one `aclrtMemFabricHandle`,
            // which `fabric` is; `raw` holds `raw.len()` pids.
            check(api, unsafe {
                sys::aclrtMemSetPidToShareableHandleV2(
                    (&raw mut fabric).cast::<c_void>(),
                    sys::ACL_MEM_SHARE_HANDLE_TYPE_FABRIC,
                    raw.as_mut_ptr(),
                    raw.len(),
                )
            })
        }
    }
}

impl fmt::Debug for ExportedHandle<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ExportedHandle")
            .field("token", &self.token)
            .field("validation", &self.validation)
            .finish()
    }
}

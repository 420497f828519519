//! [`OwnedExport`]: an export that owns a share of its physical memory.

use super::export::{allow_raw, export_raw};
use super::handle::{ShareKind, ShareableHandle};
use super::pid::{Pid, PidValidation};
use crate::error::Result;
use crate::vmm::PhysicalAlloc;
use std::fmt;
use std::sync::Arc;

/// An export of physical memory held in an [`Arc`]: the long-lived form of
/// [`ExportedHandle`](super::ExportedHandle), for an allocator or a tensor
/// that keeps its memory shareable while other code maps it.
///
/// The runtime's export lasts until the allocation's last reference is
/// freed, and this value holds a share of the allocation, so importers can
/// import the token as long as it lives (and as long as any other share of
/// the allocation does). It is `'static`, `Send` and `Sync`.
///
/// ```
/// use std::sync::Arc;
/// use ascend::Device;
/// use ascend::share::{OwnedExport, Pid, ShareKind};
/// use ascend::vmm::{PhysicalAlloc, PhysicalMemProp};
/// let device = Device::new(0)?;
/// let prop = PhysicalMemProp::device(&device);
/// let physical = Arc::new(PhysicalAlloc::new(&prop, prop.round_up(1)?)?);
/// let export = OwnedExport::new(Arc::clone(&physical), ShareKind::V2Default)?;
/// export.allow_pids(&["4242".parse::<Pid>()?])?;
/// // Kept in a structure with the memory; the token goes to the importer.
/// let token = export.token().to_string();
/// assert!(!token.is_empty());
/// # Ok::<(), ascend::Error>(())
/// ```
///
/// **Threads:** `OwnedExport` is `Send` and `Sync`, and `'static`.
pub struct OwnedExport {
    physical: Arc<PhysicalAlloc>,
    token: ShareableHandle,
    validation: PidValidation,
}

impl OwnedExport {
    /// Exports `physical` as `kind`, importable only by whitelisted
    /// processes ([`OwnedExport::allow_pids`]).
    ///
    /// # Errors
    ///
    /// As [`PhysicalAlloc::export`]: the runtime refuses a second export of
    /// a handle, and the export of an imported one.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use ascend::Device;
    /// use ascend::share::{OwnedExport, PidValidation, ShareKind};
    /// use ascend::vmm::{PhysicalAlloc, PhysicalMemProp};
    /// let device = Device::new(0)?;
    /// let prop = PhysicalMemProp::device(&device);
    /// let physical = Arc::new(PhysicalAlloc::new(&prop, prop.round_up(1)?)?);
    /// let export = OwnedExport::new(Arc::clone(&physical), ShareKind::V2Default)?;
    /// assert!(Arc::ptr_eq(export.physical(), &physical));
    /// assert_eq!(export.validation(), PidValidation::Enforced);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn new(physical: Arc<PhysicalAlloc>, kind: ShareKind) -> Result<Self> {
        Self::with_validation(physical, kind, PidValidation::Enforced)
    }

    /// An export made earlier of `physical` (`token`, with `validation`),
    /// owned again: no call (the runtime's export lasts as long as the
    /// memory).
    pub(crate) fn resumed(physical: Arc<PhysicalAlloc>, token: ShareableHandle, validation: PidValidation) -> Self {
        Self {
            physical,
            token,
            validation,
        }
    }

    /// [`OwnedExport::new`] with a choice of pid validation.
    ///
    /// # Errors
    ///
    /// As [`PhysicalAlloc::export_with`].
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use ascend::Device;
    /// use ascend::share::{OwnedExport, PidValidation, ShareKind};
    /// use ascend::vmm::{PhysicalAlloc, PhysicalMemProp};
    /// let device = Device::new(0)?;
    /// let prop = PhysicalMemProp::device(&device);
    /// let physical = Arc::new(PhysicalAlloc::new(&prop, prop.round_up(1)?)?);
    /// let export = OwnedExport::with_validation(physical, ShareKind::V2Default, PidValidation::Disabled)?;
    /// assert_eq!(export.validation(), PidValidation::Disabled);
    /// let _token = export.token(); // any process of this user may import it
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn with_validation(physical: Arc<PhysicalAlloc>, kind: ShareKind, validation: PidValidation) -> Result<Self> {
        let token = export_raw(&physical, kind, validation)?;
        Ok(Self {
            physical,
            token,
            validation,
        })
    }

    /// The value to send to importers.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use ascend::share::{OwnedExport, ShareKind};
    /// # use ascend::vmm::{PhysicalAlloc, PhysicalMemProp};
    /// # let device = ascend::Device::new(0)?;
    /// # let prop = PhysicalMemProp::device(&device);
    /// # let physical = Arc::new(PhysicalAlloc::new(&prop, prop.round_up(1)?)?);
    /// let export = OwnedExport::new(Arc::clone(&physical), ShareKind::V1)?;
    /// let token = export.token(); // a copy: the export stays where it is kept
    /// assert_eq!((token.kind(), token.size()), (ShareKind::V1, physical.size()));
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn token(&self) -> ShareableHandle {
        self.token
    }

    /// The exported memory.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use ascend::share::{OwnedExport, ShareKind};
    /// # use ascend::vmm::{PhysicalAlloc, PhysicalMemProp};
    /// # let device = ascend::Device::new(0)?;
    /// # let prop = PhysicalMemProp::device(&device);
    /// # let physical = Arc::new(PhysicalAlloc::new(&prop, prop.round_up(1)?)?);
    /// let export = OwnedExport::new(physical, ShareKind::V2Default)?;
    /// // The export holds a share: map it in this process too.
    /// let range = Arc::new(ascend::vmm::VirtualRange::reserve(export.token().size())?);
    /// let mapping = ascend::vmm::OwnedMapping::new(range, 0, Arc::clone(export.physical()))?;
    /// assert_eq!(Arc::strong_count(export.physical()), 2);
    /// # drop(mapping);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn physical(&self) -> &Arc<PhysicalAlloc> {
        &self.physical
    }

    /// Whether importers are checked against the whitelist.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use ascend::share::{OwnedExport, ShareKind};
    /// # use ascend::vmm::{PhysicalAlloc, PhysicalMemProp};
    /// # let device = ascend::Device::new(0)?;
    /// # let prop = PhysicalMemProp::device(&device);
    /// # let physical = Arc::new(PhysicalAlloc::new(&prop, prop.round_up(1)?)?);
    /// use ascend::share::PidValidation;
    /// let export = OwnedExport::new(physical, ShareKind::V1)?;
    /// assert_eq!(export.validation(), PidValidation::Enforced); // allow_pids needed
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn validation(&self) -> PidValidation {
        self.validation
    }

    /// Adds processes to the whitelist; see
    /// [`ExportedHandle::allow_pids`](super::ExportedHandle::allow_pids).
    ///
    /// # Errors
    ///
    /// As [`ExportedHandle::allow_pids`](super::ExportedHandle::allow_pids).
    ///
    /// # Examples
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use ascend::share::{OwnedExport, ShareKind};
    /// # use ascend::vmm::{PhysicalAlloc, PhysicalMemProp};
    /// # let device = ascend::Device::new(0)?;
    /// # let prop = PhysicalMemProp::device(&device);
    /// # let physical = Arc::new(PhysicalAlloc::new(&prop, prop.round_up(1)?)?);
    /// use ascend::share::Pid;
    /// let export = Arc::new(OwnedExport::new(physical, ShareKind::V2Default)?);
    /// // `'static` and `Sync`: whitelist from wherever the importer's pid arrives.
    /// let shared = Arc::clone(&export);
    /// std::thread::spawn(move || shared.allow_pids(&[Pid::from_raw(4242)?]))
    ///     .join()
    ///     .expect("no panic")?;
    /// assert!(export.allow_pids(&[]).is_err());
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn allow_pids(&self, pids: &[Pid]) -> Result<()> {
        allow_raw(
            "OwnedExport::allow_pids",
            self.token,
            self.validation,
            self.physical.device(),
            pids,
        )
    }
}

impl fmt::Debug for OwnedExport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OwnedExport")
            .field("token", &self.token)
            .field("validation", &self.validation)
            .finish()
    }
}

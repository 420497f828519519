//! [`OwnedIpcExport`]: an IPC key that owns a share of the memory it names.

use super::ipc_export::{allow_key, close_key, export_key};
use super::ipc_key::IpcKey;
use super::pid::{Pid, PidValidation};
use crate::Device;
use crate::error::Result;
use crate::memory::DeviceStorage;
use crate::stream::Ordered;
use std::fmt;
use std::sync::Arc;

/// An IPC key for memory held in an `Arc`: the long-lived form of
/// [`IpcExport`](super::IpcExport). It keeps its share of the memory, so
/// the memory outlives the key, and the key stays open as long as this
/// value lives; dropping it (or [`OwnedIpcExport::close`]) destroys the key
/// (`aclrtIpcMemClose`). `'static`, `Send` and `Sync` when the holder is.
///
/// The holder is an `Arc` of any [`DeviceStorage`] (a `DeviceBuf`, a
/// segment block, a framework's own block), or an `Arc` of an
/// [`Ordered`] such storage, the form a tensor takes.
///
/// ```
/// use std::sync::Arc;
/// use ascend::share::OwnedIpcExport;
/// use ascend::{Device, DeviceBuf};
/// let device = Device::new(0)?;
/// let tensor = Arc::new(DeviceBuf::from_slice(&device, &[1u32; 1024])?);
/// let export = OwnedIpcExport::new(Arc::clone(&tensor))?;
/// export.allow_pids(&["4242".parse()?])?;
/// let key = export.key().to_string(); // for the importer
/// drop(tensor); // the export keeps the memory
/// assert!(key.starts_with("ipc:4096:"));
/// # Ok::<(), ascend::Error>(())
/// ```
///
/// **Threads:** `OwnedIpcExport<H>` is `Send` when the holder `H` is `Send` and
/// `Sync` when it is `Sync` (an `Arc` of device storage is both).
pub struct OwnedIpcExport<H> {
    holder: H,
    key: IpcKey,
    device: Device,
    validation: PidValidation,
    open: bool,
}

impl<S: DeviceStorage> OwnedIpcExport<Arc<S>> {
    /// Exports the memory of `holder` by key, importable only by
    /// whitelisted processes ([`OwnedIpcExport::allow_pids`]).
    ///
    /// # Errors
    ///
    /// As [`DeviceBuf::ipc_export`](crate::DeviceBuf::ipc_export).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use ascend::share::{OwnedIpcExport, PidValidation};
    /// use ascend::stream::Ordered;
    /// use ascend::{Device, DeviceBuf};
    /// let device = Device::new(0)?;
    /// let tensor = Arc::new(DeviceBuf::from_slice(&device, &[1u8; 4096])?);
    /// let export = OwnedIpcExport::new(Arc::clone(&tensor))?;
    /// assert!(Arc::ptr_eq(export.holder(), &tensor));
    /// assert_eq!(export.validation(), PidValidation::Enforced);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn new(holder: Arc<S>) -> Result<Self> {
        Self::for_method("OwnedIpcExport::new", holder, PidValidation::Enforced)
    }

    /// [`OwnedIpcExport::new`] with a choice of pid validation.
    ///
    /// # Errors
    ///
    /// As [`DeviceBuf::ipc_export`](crate::DeviceBuf::ipc_export).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use ascend::share::{OwnedIpcExport, PidValidation};
    /// use ascend::stream::Ordered;
    /// use ascend::{Device, DeviceBuf};
    /// let device = Device::new(0)?;
    /// let tensor = Arc::new(DeviceBuf::<u32>::zeroed(&device, 1024)?);
    /// let export = OwnedIpcExport::with_validation(tensor, PidValidation::Disabled)?;
    /// assert_eq!(export.validation(), PidValidation::Disabled);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn with_validation(holder: Arc<S>, validation: PidValidation) -> Result<Self> {
        Self::for_method("OwnedIpcExport::with_validation", holder, validation)
    }

    /// [`OwnedIpcExport::with_validation`] for the public method `method`.
    fn for_method(method: &'static str, holder: Arc<S>, validation: PidValidation) -> Result<Self> {
        let device = holder.device().clone();
        let key = export_key(method, holder.device_ptr(), holder.byte_len(), &device, validation)?;
        Ok(Self::opened(holder, key, device, validation))
    }
}

impl<S: DeviceStorage> OwnedIpcExport<Arc<Ordered<S>>> {
    /// Exports the memory of an [`Ordered`] owner by key. Work this process
    /// queues on it stays ordered here; what an importer does with it is
    /// coordinated with that process, as with any shared memory.
    ///
    /// # Errors
    ///
    /// As [`DeviceBuf::ipc_export`](crate::DeviceBuf::ipc_export).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use ascend::share::{OwnedIpcExport, PidValidation};
    /// use ascend::stream::Ordered;
    /// use ascend::{Device, DeviceBuf};
    /// let device = Device::new(0)?;
    /// let tensor = Arc::new(Ordered::new(DeviceBuf::<u32>::zeroed(&device, 1024)?));
    /// let export = OwnedIpcExport::of_ordered(Arc::clone(&tensor), PidValidation::Enforced)?;
    /// export.allow_pids(&["4242".parse()?])?;
    /// let _key = export.key().to_string(); // for the importer
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn of_ordered(holder: Arc<Ordered<S>>, validation: PidValidation) -> Result<Self> {
        let storage = holder.storage();
        let device = storage.device().clone();
        let key = export_key(
            "OwnedIpcExport::of_ordered",
            storage.device_ptr(),
            storage.byte_len(),
            &device,
            validation,
        )?;
        Ok(Self::opened(holder, key, device, validation))
    }
}

impl<H> OwnedIpcExport<H> {
    fn opened(holder: H, key: IpcKey, device: Device, validation: PidValidation) -> Self {
        Self {
            holder,
            key,
            device,
            validation,
            open: true,
        }
    }

    /// The key to send to importers.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use ascend::share::OwnedIpcExport;
    /// # let device = ascend::Device::new(0)?;
    /// # let tensor = Arc::new(ascend::DeviceBuf::<u32>::zeroed(&device, 1024)?);
    /// let export = OwnedIpcExport::new(tensor)?;
    /// let line = export.key().to_string(); // for the importer's IpcImport::open
    /// assert!(line.starts_with("ipc:4096:"));
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn key(&self) -> &IpcKey {
        &self.key
    }

    /// The holder of the exported memory.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use ascend::share::OwnedIpcExport;
    /// # let device = ascend::Device::new(0)?;
    /// # let tensor = Arc::new(ascend::DeviceBuf::<u32>::zeroed(&device, 1024)?);
    /// let export = OwnedIpcExport::new(Arc::clone(&tensor))?;
    /// assert_eq!(export.holder().to_vec()?, vec![0u32; 1024]); // still usable here
    /// assert!(Arc::ptr_eq(export.holder(), &tensor));
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn holder(&self) -> &H {
        &self.holder
    }

    /// Whether importers are checked against the whitelist.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use ascend::share::OwnedIpcExport;
    /// # let device = ascend::Device::new(0)?;
    /// # let tensor = Arc::new(ascend::DeviceBuf::<u32>::zeroed(&device, 1024)?);
    /// use ascend::share::PidValidation;
    /// let export = OwnedIpcExport::with_validation(tensor, PidValidation::Disabled)?;
    /// assert_eq!(export.validation(), PidValidation::Disabled);
    /// assert!(export.allow_pids(&[ascend::share::Pid::current()?]).is_err()); // no whitelist
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn validation(&self) -> PidValidation {
        self.validation
    }

    /// Adds processes to the whitelist (`aclrtIpcMemSetImportPid`).
    ///
    /// # Errors
    ///
    /// As [`IpcExport::allow_pids`](super::IpcExport::allow_pids).
    ///
    /// # Examples
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use ascend::share::OwnedIpcExport;
    /// # let device = ascend::Device::new(0)?;
    /// # let tensor = Arc::new(ascend::DeviceBuf::<u32>::zeroed(&device, 1024)?);
    /// use ascend::share::Pid;
    /// let export = OwnedIpcExport::new(tensor)?;
    /// let importers: Vec<Pid> = ["4242", "4243"].iter().map(|line| line.parse()).collect::<Result<_, _>>()?;
    /// export.allow_pids(&importers)?;
    /// assert!(matches!(export.allow_pids(&[]), Err(ascend::Error::InvalidArgument { .. })));
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn allow_pids(&self, pids: &[Pid]) -> Result<()> {
        allow_key(
            "OwnedIpcExport::allow_pids",
            &self.key,
            self.validation,
            &self.device,
            pids,
        )
    }

    /// Destroys the key now, reporting a failure. End the export only after
    /// the importers reported they closed (the runtime's rule).
    ///
    /// # Errors
    ///
    /// The runtime's code from `aclrtIpcMemClose`.
    ///
    /// # Examples
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use ascend::share::OwnedIpcExport;
    /// # let device = ascend::Device::new(0)?;
    /// # let tensor = Arc::new(ascend::DeviceBuf::<u32>::zeroed(&device, 1024)?);
    /// let export = OwnedIpcExport::new(Arc::clone(&tensor))?;
    /// // ... the importers report that they closed ...
    /// export.close()?; // the key is gone, and the export's share of the memory
    /// assert_eq!(Arc::strong_count(&tensor), 1);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn close(mut self) -> Result<()> {
        self.close_inner()
    }

    fn close_inner(&mut self) -> Result<()> {
        if !std::mem::replace(&mut self.open, false) {
            return Ok(());
        }
        close_key(&self.device, self.key.as_c_str())
    }
}

impl<H> Drop for OwnedIpcExport<H> {
    fn drop(&mut self) {
        if let Err(error) = self.close_inner() {
            log::warn!("OwnedIpcExport drop: {error}");
        }
    }
}

impl<H> fmt::Debug for OwnedIpcExport<H> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OwnedIpcExport")
            .field("key", &self.key)
            .field("validation", &self.validation)
            .finish_non_exhaustive()
    }
}

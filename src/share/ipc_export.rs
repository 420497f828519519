//! [`IpcExport`]: a [`DeviceBuf`] (or any [`DeviceStorage`]) exported to
//! other processes by key.

use super::ipc_key::{IpcKey, KEY_BUFFER_LEN};
use super::pid::{Pid, PidValidation};
use crate::Call;
use crate::error::{Error, Result, check};
use crate::memory::DeviceStorage;
use crate::{Device, DeviceBuf};
use ascend_sys as sys;
use bytemuck::Pod;
use std::ffi::{CStr, c_char};
use std::fmt;

impl<T: Pod> DeviceBuf<T> {
    /// Exports the buffer to other processes by key
    /// (`aclrtIpcMemGetExportKey`), importable only by whitelisted processes
    /// ([`IpcExport::allow_pids`]). The export borrows the buffer, so the
    /// buffer cannot be freed or moved while it lives; dropping it (or
    /// [`IpcExport::close`]) destroys the key (`aclrtIpcMemClose`).
    ///
    /// The runtime's rule that every importer closes before the exporter
    /// spans processes and is not checked here: end the export only after
    /// the importers reported they closed.
    ///
    /// ```
    /// use ascend::{Device, DeviceBuf};
    /// let device = Device::new(0)?;
    /// let buf = DeviceBuf::from_slice(&device, &[7u32; 1024])?;
    /// let export = buf.ipc_export()?;
    /// let importer: ascend::share::Pid = "4242".parse()?; // as it reported
    /// export.allow_pids(&[importer])?;
    /// let key = export.key().to_string(); // send this line to the importer
    /// assert!(key.starts_with("ipc:4096:"));
    /// export.close()?;
    /// # Ok::<(), ascend::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for an empty buffer; the runtime's code
    /// (e.g. a chip without IPC memory).
    #[doc(alias = "aclrtIpcMemGetExportKey")]
    pub fn ipc_export(&self) -> Result<IpcExport<'_>> {
        IpcExport::for_method("DeviceBuf::ipc_export", self, PidValidation::Enforced)
    }

    /// [`DeviceBuf::ipc_export`] with a choice of pid validation:
    /// [`PidValidation::Disabled`] lets every process of the user import,
    /// with no whitelist.
    ///
    /// ```
    /// use ascend::share::PidValidation;
    /// # let device = ascend::Device::new(0)?;
    /// let buf = ascend::DeviceBuf::from_slice(&device, &[1u8; 4096])?;
    /// // Any process of this user may import: no whitelist to fill.
    /// let export = buf.ipc_export_with(PidValidation::Disabled)?;
    /// assert_eq!(export.validation(), PidValidation::Disabled);
    /// assert!(export.key().to_string().starts_with("ipc:4096:"));
    /// # Ok::<(), ascend::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`DeviceBuf::ipc_export`].
    #[doc(alias = "aclrtIpcMemGetExportKey")]
    pub fn ipc_export_with(&self, validation: PidValidation) -> Result<IpcExport<'_>> {
        IpcExport::for_method("DeviceBuf::ipc_export_with", self, validation)
    }
}

/// A key naming a [`DeviceBuf`]'s memory for other processes, from
/// [`DeviceBuf::ipc_export`] (or any [`DeviceStorage`]'s, from
/// [`IpcExport::new`]). It borrows the buffer; dropping it (or
/// [`IpcExport::close`]) destroys the key (`aclrtIpcMemClose`), after
/// which no process can import it.
///
/// ```
/// use ascend::DeviceBuf;
/// use ascend::share::{IpcKey, Pid};
/// # let device = ascend::Device::new(0)?;
/// let buf = DeviceBuf::from_slice(&device, &[1.5f32; 256])?;
/// let export = buf.ipc_export()?;
/// export.allow_pids(&[Pid::from_raw(4242)?])?; // the importer's reported pid
/// let line = export.key().to_string(); // sent to the importer, for IpcImport::open
/// assert_eq!(line.parse::<IpcKey>()?.size(), 1024);
/// export.close()?; // once the importer reported it closed
/// # Ok::<(), ascend::Error>(())
/// ```
///
/// **Threads:** `IpcExport` is `Send` and `Sync`.
#[must_use = "dropping the export destroys its key at once"]
pub struct IpcExport<'a> {
    key: IpcKey,
    device: &'a Device,
    validation: PidValidation,
    open: bool,
}

impl<'a> IpcExport<'a> {
    /// Exports the memory of any [`DeviceStorage`] by key, as
    /// [`DeviceBuf::ipc_export`] does for a buffer: a framework's own
    /// block type is exported the same way. The export borrows `storage`.
    ///
    /// ```
    /// use ascend::{Device, DeviceBuf, share::IpcExport};
    /// use std::sync::Arc;
    /// let device = Device::new(0)?;
    /// let shared = Arc::new(DeviceBuf::from_slice(&device, &[1u8; 4096])?);
    /// let export = IpcExport::new(&shared)?;
    /// assert!(export.key().to_string().starts_with("ipc:4096:"));
    /// # Ok::<(), ascend::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`DeviceBuf::ipc_export`] (an empty storage is refused).
    pub fn new<S: DeviceStorage + ?Sized>(storage: &'a S) -> Result<Self> {
        Self::for_method("IpcExport::new", storage, PidValidation::Enforced)
    }

    /// [`IpcExport::new`] with a choice of pid validation, as
    /// [`DeviceBuf::ipc_export_with`].
    ///
    /// # Errors
    ///
    /// As [`DeviceBuf::ipc_export`].
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use ascend::DeviceBuf;
    /// use ascend::share::{IpcExport, PidValidation};
    /// # let device = ascend::Device::new(0)?;
    /// let shared = Arc::new(DeviceBuf::<u8>::zeroed(&device, 4096)?);
    /// let export = IpcExport::with_validation(&shared, PidValidation::Disabled)?;
    /// assert_eq!(export.validation(), PidValidation::Disabled); // no whitelist needed
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn with_validation<S: DeviceStorage + ?Sized>(storage: &'a S, validation: PidValidation) -> Result<Self> {
        Self::for_method("IpcExport::with_validation", storage, validation)
    }

    /// [`IpcExport::with_validation`] for the public method `method`.
    fn for_method<S: DeviceStorage + ?Sized>(
        method: &'static str,
        storage: &'a S,
        validation: PidValidation,
    ) -> Result<Self> {
        let device = storage.device();
        Ok(IpcExport {
            key: export_key(method, storage.device_ptr(), storage.byte_len(), device, validation)?,
            device,
            validation,
            open: true,
        })
    }

    /// The key to send to importers.
    ///
    /// ```
    /// # let device = ascend::Device::new(0)?;
    /// let buf = ascend::DeviceBuf::<u16>::zeroed(&device, 2048)?;
    /// let export = buf.ipc_export()?;
    /// let key = export.key();
    /// assert_eq!(key.size(), 4096);
    /// assert!(key.to_string().starts_with("ipc:4096:")); // one line, no spaces
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn key(&self) -> &IpcKey {
        &self.key
    }

    /// Whether importers are checked against the whitelist.
    ///
    /// ```
    /// use ascend::share::PidValidation;
    /// # let device = ascend::Device::new(0)?;
    /// let buf = ascend::DeviceBuf::<u8>::zeroed(&device, 4096)?;
    /// assert_eq!(buf.ipc_export()?.validation(), PidValidation::Enforced);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn validation(&self) -> PidValidation {
        self.validation
    }

    /// Adds processes to the whitelist (`aclrtIpcMemSetImportPid`), by the
    /// pid each importer reported ([`Pid::current`]).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for an empty list or an export made with
    /// [`PidValidation::Disabled`]; the runtime's code.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::Error;
    /// use ascend::share::Pid;
    /// # let device = ascend::Device::new(0)?;
    /// let buf = ascend::DeviceBuf::<u8>::zeroed(&device, 4096)?;
    /// let export = buf.ipc_export()?;
    /// let importer: Pid = "4242".parse()?; // the line the importer sent
    /// export.allow_pids(&[importer])?;
    /// assert!(matches!(export.allow_pids(&[]), Err(Error::InvalidArgument { .. })));
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtIpcMemSetImportPid")]
    pub fn allow_pids(&self, pids: &[Pid]) -> Result<()> {
        allow_key("IpcExport::allow_pids", &self.key, self.validation, self.device, pids)
    }

    /// Destroys the key now, reporting a failure.
    ///
    /// # Errors
    ///
    /// The runtime's code from `aclrtIpcMemClose`.
    ///
    /// # Examples
    ///
    /// ```
    /// # let device = ascend::Device::new(0)?;
    /// let mut buf = ascend::DeviceBuf::<u8>::zeroed(&device, 4096)?;
    /// let export = buf.ipc_export()?;
    /// // ... the importers open the key, work, close and say so ...
    /// export.close()?; // the key is destroyed; the buffer is free to change
    /// buf.write_from_host(&[1; 4096])?;
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtIpcMemClose")]
    pub fn close(mut self) -> Result<()> {
        self.close_inner()
    }

    fn close_inner(&mut self) -> Result<()> {
        if !std::mem::replace(&mut self.open, false) {
            return Ok(());
        }
        close_key(self.device, self.key.as_c_str())
    }
}

impl Drop for IpcExport<'_> {
    fn drop(&mut self) {
        if let Err(error) = self.close_inner() {
            log::warn!("IpcExport drop: {error}");
        }
    }
}

impl fmt::Debug for IpcExport<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IpcExport")
            .field("key", &self.key)
            .field("validation", &self.validation)
            .finish()
    }
}

/// `aclrtIpcMemClose(key)` with `device` current.
pub(super) fn close_key(device: &Device, key: &CStr) -> Result<()> {
    device.make_current()?;
    // SAFETY: a NUL-terminated key.
    check("aclrtIpcMemClose", unsafe { sys::aclrtIpcMemClose(key.as_ptr()) })
}

/// `aclrtIpcMemGetExportKey` of `bytes` bytes of device memory at `address`
/// on `device`.
pub(super) fn export_key(
    method: &'static str,
    address: *const std::ffi::c_void,
    bytes: usize,
    device: &Device,
    validation: PidValidation,
) -> Result<IpcKey> {
    const API: &str = "aclrtIpcMemGetExportKey";
    let call = Call::new(method, API);
    if bytes == 0 {
        return Err(Error::invalid(call, "an empty buffer has no memory to export"));
    }
    device.make_current()?;
    let mut buffer = [0 as c_char; KEY_BUFFER_LEN];
    // SAFETY: `bytes` bytes of live device memory (the caller's storage, kept
    // alive by the export); `buffer` has room for `KEY_BUFFER_LEN` bytes.
    check(API, unsafe {
        sys::aclrtIpcMemGetExportKey(
            address.cast_mut(),
            bytes,
            buffer.as_mut_ptr(),
            buffer.len(),
            validation.ipc_flag(),
        )
    })?;
    let key_bytes = buffer.map(|byte| byte as u8);
    let key = CStr::from_bytes_until_nul(&key_bytes)
        .map_err(|_| Error::invalid(call, "the runtime wrote a key without its terminating NUL"))?;
    IpcKey::checked(key.to_owned(), bytes, call)
}

/// `aclrtIpcMemSetImportPid` for an export's key.
pub(super) fn allow_key(
    method: &'static str,
    key: &IpcKey,
    validation: PidValidation,
    device: &Device,
    pids: &[Pid],
) -> Result<()> {
    const API: &str = "aclrtIpcMemSetImportPid";
    let mut raw = validation.check_whitelist(Call::new(method, API), pids)?;
    device.make_current()?;
    // SAFETY: a NUL-terminated key and `raw.len()` pids.
    check(API, unsafe {
        sys::aclrtIpcMemSetImportPid(key.as_c_str().as_ptr(), raw.as_mut_ptr(), raw.len())
    })
}

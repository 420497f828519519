//! [`IpcImport`]: device memory another process exported by key.

use super::ipc_export::close_key;
use super::ipc_key::IpcKey;
use crate::Device;
use crate::error::{Call, Error, Result, check};
use crate::memory::{DeviceSlice, DeviceSliceMut};
use ascend_sys as sys;
use bytemuck::Pod;
use std::collections::BTreeSet;
use std::ffi::{CString, c_void};
use std::fmt;
use std::ptr::NonNull;
use std::sync::Mutex;

/// Keys this process has imported and not closed. `aclrtIpcMemClose` in an
/// importer closes the *first* import of a key, so two live imports of one
/// key would close each other's memory: the second is refused.
static OPEN_KEYS: Mutex<BTreeSet<CString>> = Mutex::new(BTreeSet::new());

fn with_open_keys<R>(body: impl FnOnce(&mut BTreeSet<CString>) -> R) -> R {
    let mut keys = OPEN_KEYS.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    body(&mut keys)
}

/// Device memory another process exported by key, imported into this one
/// (`aclrtIpcMemImportByKey`). Its bytes are reached through typed views;
/// dropping it (or [`IpcImport::close`]) closes the import
/// (`aclrtIpcMemClose`). A process holds at most one open import of a key.
///
/// The importing process, with the exporter's key (not run here: an import
/// needs a second process, the exporter):
///
/// ```no_run
/// use ascend::Device;
/// use ascend::share::{IpcImport, IpcKey, Pid};
/// # let line = std::env::var("IPC_KEY").unwrap_or_default();
/// let device = Device::new(0)?;
/// println!("{}", Pid::current()?); // for the exporter's whitelist
/// let key: IpcKey = line.parse()?; // the line it sent back
/// let mut import = IpcImport::open(&key, &device)?;
/// let values: Vec<f32> = import.as_slice::<f32>()?.to_vec()?; // the exporter's bytes
/// import.as_mut_slice::<f32>()?.write_from_host(&vec![0.0; values.len()])?;
/// import.close()?; // then tell the exporter, which closes its key after
/// # Ok::<(), ascend::Error>(())
/// ```
///
/// **Threads:** `IpcImport` is `Send` and `Sync`.
pub struct IpcImport {
    address: NonNull<c_void>,
    key: IpcKey,
    device: Device,
    open: bool,
}

// SAFETY: the import is owned by this value; its address is never
// dereferenced on the host, and every call through it first makes its
// device current on the calling thread.
unsafe impl Send for IpcImport {}
// SAFETY: `&IpcImport` only allows reads of device memory through the
// runtime, which may run concurrently.
unsafe impl Sync for IpcImport {}

impl IpcImport {
    /// Imports the memory `key` names with `device` current.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when this process already has `key` open;
    /// the runtime's code: this process is not on the key's whitelist, it
    /// is the exporter, or the key was destroyed or names no export (the
    /// codes the software device picks are in [Choices where the runtime is silent](crate::guide::runtime_choices)).
    ///
    /// # Examples
    ///
    /// The type's example opens a key in another process. In the exporting
    /// process itself the runtime refuses it:
    ///
    /// ```
    /// use ascend::Error;
    /// use ascend::share::{IpcImport, PidValidation};
    /// # let device = ascend::Device::new(0)?;
    /// let buf = ascend::DeviceBuf::<u8>::zeroed(&device, 4096)?;
    /// let export = buf.ipc_export_with(PidValidation::Disabled)?;
    /// let refused = IpcImport::open(export.key(), &device);
    /// assert!(matches!(refused, Err(Error::Acl { .. }))); // import is for other processes
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtIpcMemImportByKey")]
    pub fn open(key: &IpcKey, device: &Device) -> Result<Self> {
        const API: &str = "aclrtIpcMemImportByKey";
        let name = key.as_c_str();
        if !with_open_keys(|keys| keys.insert(name.to_owned())) {
            return Err(Error::invalid(
                Call::new("IpcImport::open", API),
                format!("key {name:?} is already imported in this process: close that import first"),
            ));
        }
        let opened = Self::import(key, device);
        if opened.is_err() {
            with_open_keys(|keys| keys.remove(name));
        }
        opened
    }

    fn import(key: &IpcKey, device: &Device) -> Result<Self> {
        const API: &str = "aclrtIpcMemImportByKey";
        device.make_current()?;
        let mut address = std::ptr::null_mut();
        // SAFETY: a valid out-pointer and a NUL-terminated key.
        check(API, unsafe {
            sys::aclrtIpcMemImportByKey(
                &mut address,
                key.as_c_str().as_ptr(),
                sys::ACL_RT_IPC_MEM_IMPORT_FLAG_DEFAULT,
            )
        })?;
        let address = NonNull::new(address)
            .ok_or_else(|| Error::invalid(Call::new("IpcImport::open", API), "the runtime returned NULL"))?;
        Ok(Self {
            address,
            key: key.clone(),
            device: device.clone(),
            open: true,
        })
    }

    /// The device address in this process (never dereference it on the
    /// host).
    ///
    /// Not run here: an import needs a second process, the exporter (the
    /// runtime refuses to import a key of the calling process).
    ///
    /// ```no_run
    /// # use ascend::share::{IpcImport, IpcKey};
    /// # let device = ascend::Device::new(0)?;
    /// # let line = std::env::var("IPC_KEY").unwrap_or_default(); // from the exporter
    /// let key: IpcKey = line.parse()?; // the exporter's line
    /// let import = IpcImport::open(&key, &device)?;
    /// let address = import.as_raw(); // for an operator library's raw call
    /// assert!(!address.is_null());
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn as_raw(&self) -> *mut c_void {
        self.address.as_ptr()
    }

    /// Size in bytes (the exporter's, carried by the key).
    ///
    /// Not run here: an import needs a second process, the exporter (the
    /// runtime refuses to import a key of the calling process).
    ///
    /// ```no_run
    /// # use ascend::share::{IpcImport, IpcKey};
    /// # let device = ascend::Device::new(0)?;
    /// # let line = std::env::var("IPC_KEY").unwrap_or_default(); // from the exporter
    /// let key: IpcKey = line.parse()?; // the exporter's line
    /// let import = IpcImport::open(&key, &device)?;
    /// assert_eq!(import.size(), key.size());
    /// let mut bytes = vec![0u8; import.size()];
    /// import.as_slice::<u8>()?.read_to_host(&mut bytes)?;
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn size(&self) -> usize {
        self.key.size()
    }

    /// The key it was imported by.
    ///
    /// Not run here: an import needs a second process, the exporter (the
    /// runtime refuses to import a key of the calling process).
    ///
    /// ```no_run
    /// # use ascend::share::{IpcImport, IpcKey};
    /// # let device = ascend::Device::new(0)?;
    /// # let line = std::env::var("IPC_KEY").unwrap_or_default(); // from the exporter
    /// let key: IpcKey = line.parse()?; // the exporter's line
    /// let import = IpcImport::open(&key, &device)?;
    /// assert_eq!(import.key(), &key);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn key(&self) -> &IpcKey {
        &self.key
    }

    /// The device whose context its copies use.
    ///
    /// Not run here: an import needs a second process, the exporter (the
    /// runtime refuses to import a key of the calling process).
    ///
    /// ```no_run
    /// # use ascend::share::{IpcImport, IpcKey};
    /// # let device = ascend::Device::new(0)?;
    /// # let line = std::env::var("IPC_KEY").unwrap_or_default(); // from the exporter
    /// let key: IpcKey = line.parse()?; // the exporter's line
    /// let import = IpcImport::open(&key, &device)?;
    /// assert_eq!(import.device().id(), device.id());
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn device(&self) -> &Device {
        &self.device
    }

    fn elements<T: Pod>(&self, call: Call) -> Result<usize> {
        let size = self.size();
        if size_of::<T>() == 0 || !size.is_multiple_of(size_of::<T>()) {
            return Err(Error::invalid(
                call,
                format!(
                    "{size} bytes are not a whole number of {}-byte elements",
                    size_of::<T>()
                ),
            ));
        }
        if !(self.as_raw() as usize).is_multiple_of(align_of::<T>()) {
            return Err(Error::invalid(call, "the import is not aligned for the element type"));
        }
        Ok(size / size_of::<T>())
    }

    /// A typed view of the imported bytes.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when the size is not a whole number of
    /// `T`s or the address is not aligned for `T`.
    ///
    /// # Examples
    ///
    /// Not run here: an import needs a second process, the exporter (the
    /// runtime refuses to import a key of the calling process).
    ///
    /// ```no_run
    /// # use ascend::share::{IpcImport, IpcKey};
    /// # let device = ascend::Device::new(0)?;
    /// # let line = std::env::var("IPC_KEY").unwrap_or_default(); // from the exporter
    /// let key: IpcKey = line.parse()?; // the exporter's line
    /// let import = IpcImport::open(&key, &device)?;
    /// let words: Vec<u32> = import.as_slice::<u32>()?.to_vec()?;
    /// assert_eq!(words.len() * 4, import.size());
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn as_slice<T: Pod>(&self) -> Result<DeviceSlice<'_, T>> {
        let len = self.elements::<T>(Call::rust("IpcImport::as_slice"))?;
        // SAFETY: the import holds `size` bytes at its address while `self`
        // is borrowed (the runtime refuses copies past the exported range).
        Ok(unsafe { DeviceSlice::from_raw_parts(self.as_raw(), len, &self.device) })
    }

    /// An exclusive typed view of the imported bytes.
    ///
    /// # Errors
    ///
    /// As [`IpcImport::as_slice`].
    ///
    /// # Examples
    ///
    /// Not run here: an import needs a second process, the exporter (the
    /// runtime refuses to import a key of the calling process).
    ///
    /// ```no_run
    /// # use ascend::share::{IpcImport, IpcKey};
    /// # let device = ascend::Device::new(0)?;
    /// # let line = std::env::var("IPC_KEY").unwrap_or_default(); // from the exporter
    /// let key: IpcKey = line.parse()?; // the exporter's line
    /// let mut import = IpcImport::open(&key, &device)?;
    /// let mut view = import.as_mut_slice::<u32>()?;
    /// view.write_from_host(&vec![7u32; view.len()])?; // the exporter sees these bytes
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn as_mut_slice<T: Pod>(&mut self) -> Result<DeviceSliceMut<'_, T>> {
        let len = self.elements::<T>(Call::rust("IpcImport::as_mut_slice"))?;
        // SAFETY: as in `as_slice`, and `&mut self` makes it unique among
        // this import's views.
        Ok(unsafe { DeviceSliceMut::from_raw_parts(self.as_raw(), len, &self.device) })
    }

    /// Closes the import now, reporting a failure.
    ///
    /// # Errors
    ///
    /// The runtime's code from `aclrtIpcMemClose`; the key then stays
    /// marked open in this process.
    ///
    /// # Examples
    ///
    /// Not run here: an import needs a second process, the exporter (the
    /// runtime refuses to import a key of the calling process).
    ///
    /// ```no_run
    /// # use ascend::share::{IpcImport, IpcKey};
    /// # let device = ascend::Device::new(0)?;
    /// # let line = std::env::var("IPC_KEY").unwrap_or_default(); // from the exporter
    /// let key: IpcKey = line.parse()?; // the exporter's line
    /// let import = IpcImport::open(&key, &device)?;
    /// import.close()?;
    /// let again = IpcImport::open(&key, &device)?; // closed: the key can be opened again
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
        let name = self.key.as_c_str();
        close_key(&self.device, name)?;
        with_open_keys(|keys| keys.remove(name));
        Ok(())
    }
}

impl Drop for IpcImport {
    fn drop(&mut self) {
        if let Err(error) = self.close_inner() {
            log::warn!("IpcImport drop: {error}");
        }
    }
}

impl fmt::Debug for IpcImport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IpcImport")
            .field("address", &self.as_raw())
            .field("key", &self.key)
            .field("device", &self.device.id())
            .finish()
    }
}

//! Sharing a [`Notify`] between processes: [`NotifyExportKey`], the export
//! with or without the pid whitelist, and the import
//! (`aclrtNotifyGetExportKey`, `aclrtNotifySetImportPid`,
//! `aclrtNotifyImportByKey`).

use super::notify::Notify;
use crate::Device;
use crate::error::{Call, Error, Result, check};
use ascend_sys as sys;
use std::ffi::{CStr, CString, c_char};
use std::fmt;
use std::str::FromStr;

/// The name another process imports a [`Notify`] by
/// (`aclrtNotifyGetExportKey`): text to send over any channel (a pipe, a
/// socket) and parse back.
///
/// ```
/// use ascend::{Device, stream::{Notify, NotifyExportKey}};
/// let device = Device::new(0)?;
/// let notify = Notify::new(&device)?;
/// let key = notify.export_to_any_process()?;
/// let sent = key.to_string(); // over the pipe
/// let received: NotifyExportKey = sent.parse()?;
/// assert_eq!(received, key);
/// # Ok::<(), ascend::Error>(())
/// ```
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct NotifyExportKey(CString);

impl NotifyExportKey {
    /// Bytes of the key buffer the runtime writes (the key and its NUL).
    pub const BUFFER_LEN: usize = 65;

    /// The key as text.
    ///
    /// ```
    /// use ascend::{Device, stream::Notify};
    /// let key = Notify::new(&Device::new(0)?)?.export_to_any_process()?;
    /// assert!(!key.as_str().is_empty());
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn as_str(&self) -> &str {
        self.0.to_str().unwrap_or_default()
    }
}

impl FromStr for NotifyExportKey {
    type Err = Error;

    /// A key received from another process. Text that names no live
    /// exported notify is refused by [`Notify::import`].
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for text with a NUL byte or too long for
    /// a key.
    fn from_str(text: &str) -> Result<Self> {
        let call = Call::rust("NotifyExportKey::from_str");
        if text.len() >= Self::BUFFER_LEN {
            return Err(Error::invalid(
                call,
                format!("{} bytes is too long for a key", text.len()),
            ));
        }
        CString::new(text)
            .map(Self)
            .map_err(|_| Error::invalid(call, "a key has no NUL byte"))
    }
}

impl fmt::Display for NotifyExportKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Debug for NotifyExportKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "NotifyExportKey({:?})", self.as_str())
    }
}

impl Notify {
    fn export_with(&self, flags: u64) -> Result<NotifyExportKey> {
        self.device().make_current()?;
        let mut buffer = [0 as c_char; NotifyExportKey::BUFFER_LEN];
        // SAFETY: the handle is live; `buffer` holds `BUFFER_LEN` bytes.
        check("aclrtNotifyGetExportKey", unsafe {
            sys::aclrtNotifyGetExportKey(self.as_raw(), buffer.as_mut_ptr(), buffer.len(), flags)
        })?;
        // The runtime wrote a NUL-terminated key; make sure of the NUL.
        buffer[NotifyExportKey::BUFFER_LEN - 1] = 0;
        // SAFETY: `buffer` is NUL-terminated (its last byte at least).
        let key = unsafe { CStr::from_ptr(buffer.as_ptr()) };
        Ok(NotifyExportKey(key.to_owned()))
    }

    /// Makes the notify shareable and returns its key
    /// (`aclrtNotifyGetExportKey`, `ACL_RT_NOTIFY_EXPORT_FLAG_DEFAULT`):
    /// only the processes [`Notify::allow_import`] names may import it.
    /// Records and waits in any process holding it act on the same bit.
    ///
    /// # Errors
    ///
    /// The runtime's code (an imported notify cannot be exported again).
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, stream::Notify};
    /// let device = Device::new(0)?;
    /// let notify = Notify::new(&device)?;
    /// let key = notify.export()?;
    /// notify.allow_import(&[4242])?; // the importing process's pid (`aclrtDeviceGetBareTgid` there)
    /// assert_eq!(notify.export()?, key, "the same notify, the same key");
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtNotifyGetExportKey")]
    pub fn export(&self) -> Result<NotifyExportKey> {
        self.export_with(sys::ACL_RT_NOTIFY_EXPORT_FLAG_DEFAULT)
    }

    /// Like [`Notify::export`], but any process may import the notify
    /// (`ACL_RT_NOTIFY_EXPORT_FLAG_DISABLE_PID_VALIDATION`).
    ///
    /// # Errors
    ///
    /// The runtime's code.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, Stream, stream::Notify};
    /// let device = Device::new(0)?;
    /// let notify = Notify::new(&device)?;
    /// let key = notify.export_to_any_process()?;
    /// let imported = Notify::import(&device, &key)?; // (another process, in practice)
    /// let stream = Stream::new(&device)?;
    /// imported.record(&stream)?;
    /// notify.wait_and_reset(&stream, None)?;
    /// stream.synchronize()?;
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtNotifyGetExportKey")]
    pub fn export_to_any_process(&self) -> Result<NotifyExportKey> {
        self.export_with(sys::ACL_RT_NOTIFY_EXPORT_FLAG_DISABLE_PID_VALIDATION)
    }

    /// Adds `pids` to the whitelist of an exported notify
    /// (`aclrtNotifySetImportPid`).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for an empty list; the runtime's code (a
    /// notify not exported yet, for one).
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, stream::Notify};
    /// let device = Device::new(0)?;
    /// let notify = Notify::new(&device)?;
    /// assert!(notify.allow_import(&[4242]).is_err(), "export first");
    /// let _key = notify.export()?;
    /// notify.allow_import(&[4242, 4243])?;
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtNotifySetImportPid")]
    pub fn allow_import(&self, pids: &[i32]) -> Result<()> {
        if pids.is_empty() {
            return Err(Error::invalid(
                Call::new("Notify::allow_import", "aclrtNotifySetImportPid"),
                "no pid to allow",
            ));
        }
        let mut pids = pids.to_vec();
        self.device().make_current()?;
        // SAFETY: the handle is live; `pids` holds `len` entries.
        check("aclrtNotifySetImportPid", unsafe {
            sys::aclrtNotifySetImportPid(self.as_raw(), pids.as_mut_ptr(), pids.len())
        })
    }

    /// Imports on `device` the notify `key` names
    /// (`aclrtNotifyImportByKey`, `ACL_RT_NOTIFY_IMPORT_FLAG_DEFAULT`): a
    /// notify of this process sharing the exporter's bit and id. Dropping
    /// it destroys this process's notify; the exporter's stays usable.
    ///
    /// # Errors
    ///
    /// The runtime's code: a key that names no live exported notify, or
    /// this process not on its whitelist.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, stream::{Notify, NotifyExportKey}};
    /// let device = Device::new(0)?;
    /// let notify = Notify::new(&device)?;
    /// let imported = Notify::import(&device, &notify.export()?)?; // the exporting process may import
    /// assert_eq!(imported.id()?, notify.id()?);
    /// let stale: NotifyExportKey = "no such key".parse()?;
    /// assert!(Notify::import(&device, &stale).is_err());
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtNotifyImportByKey")]
    pub fn import(device: &Device, key: &NotifyExportKey) -> Result<Notify> {
        device.make_current()?;
        let mut raw = std::ptr::null_mut();
        // SAFETY: `raw` is a valid out-pointer; the key is NUL-terminated.
        check("aclrtNotifyImportByKey", unsafe {
            sys::aclrtNotifyImportByKey(&mut raw, key.0.as_ptr(), sys::ACL_RT_NOTIFY_IMPORT_FLAG_DEFAULT)
        })?;
        Notify::from_created(Call::new("Notify::import", "aclrtNotifyImportByKey"), raw, device)
    }
}

//! [`IpcKey`]: the printable name of device memory exported by key.

use super::hex;
use crate::error::{Call, Error, Result};
use std::ffi::{CStr, CString};
use std::fmt;
use std::str::FromStr;

/// Bytes of the key buffer `aclrtIpcMemGetExportKey` fills (the key and its
/// terminating NUL).
pub(crate) const KEY_BUFFER_LEN: usize = 65;

/// The name of [`DeviceBuf`](crate::DeviceBuf) memory exported with
/// [`DeviceBuf::ipc_export`](crate::DeviceBuf::ipc_export), for
/// [`IpcImport::open`](super::IpcImport::open) in another process.
///
/// It holds the runtime's key (at most 64 bytes) **and the exported size**:
/// `aclrtIpcMemImportByKey` returns an address but not a size, and typed
/// views need it. The size is the exporter's claim; the runtime refuses
/// copies that leave the exported range.
///
/// It prints as one line without spaces, `ipc:<size>:<hex of the key>`, and
/// parses back:
///
/// ```
/// use ascend::share::IpcKey;
/// let key = IpcKey::from_parts(c"example-key", 4096)?;
/// assert_eq!(key.to_string(), "ipc:4096:6578616d706c652d6b6579");
/// assert_eq!(key.to_string().parse::<IpcKey>()?, key);
/// assert!("ipc:4096:00".parse::<IpcKey>().is_err()); // a NUL in the key
/// # Ok::<(), ascend::Error>(())
/// ```
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct IpcKey {
    key: CString,
    size: usize,
}

impl IpcKey {
    /// A key received from elsewhere (e.g. a C program) naming `size` bytes.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for an empty key, a key longer than 64
    /// bytes, or a size of 0.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::Error;
    /// use ascend::share::IpcKey;
    /// let key = IpcKey::from_parts(c"key-from-c", 1 << 20)?;
    /// assert_eq!((key.as_c_str(), key.size()), (c"key-from-c", 1 << 20));
    /// assert!(matches!(IpcKey::from_parts(c"", 4096), Err(Error::InvalidArgument { .. })));
    /// assert!(IpcKey::from_parts(c"key-from-c", 0).is_err());
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn from_parts(key: &CStr, size: usize) -> Result<Self> {
        Self::checked(key.to_owned(), size, Call::rust("IpcKey::from_parts"))
    }

    pub(crate) fn checked(key: CString, size: usize, call: Call) -> Result<Self> {
        let len = key.as_bytes().len();
        if len == 0 || len >= KEY_BUFFER_LEN {
            return Err(Error::invalid(
                call,
                format!("a key is 1 to {} bytes, not {len}", KEY_BUFFER_LEN - 1),
            ));
        }
        if size == 0 {
            return Err(Error::invalid(call, "size is 0"));
        }
        Ok(Self { key, size })
    }

    /// The runtime's key, for raw calls.
    ///
    /// ```
    /// # let device = ascend::Device::new(0)?;
    /// let buf = ascend::DeviceBuf::<u8>::zeroed(&device, 4096)?;
    /// let export = buf.ipc_export()?;
    /// let key = export.key().as_c_str(); // NUL-terminated, for aclrtIpcMemImportByKey
    /// assert!(!key.is_empty() && key.count_bytes() <= 64);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn as_c_str(&self) -> &CStr {
        &self.key
    }

    /// Size in bytes of the exported memory.
    ///
    /// ```
    /// # let device = ascend::Device::new(0)?;
    /// let buf = ascend::DeviceBuf::<u32>::zeroed(&device, 1000)?;
    /// let export = buf.ipc_export()?;
    /// assert_eq!(export.key().size(), 4000); // the importer's view covers this much
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn size(&self) -> usize {
        self.size
    }
}

impl fmt::Display for IpcKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ipc:{}:{}", self.size, hex::encode(self.key.as_bytes()))
    }
}

impl fmt::Debug for IpcKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "IpcKey({:?}, {} bytes)", self.key, self.size)
    }
}

impl FromStr for IpcKey {
    type Err = Error;

    /// Reads the `Display` form, `ipc:<size>:<hex>`.
    fn from_str(text: &str) -> Result<Self> {
        const API: &str = "IpcKey::from_str";
        let invalid = || Error::invalid(Call::rust(API), format!("{text:?} is not ipc:<size>:<hex>"));
        let mut parts = text.trim().splitn(3, ':');
        let (Some("ipc"), Some(size), Some(key)) = (parts.next(), parts.next(), parts.next()) else {
            return Err(invalid());
        };
        let size = size.parse::<usize>().map_err(|_| invalid())?;
        let key = hex::decode(key).ok_or_else(invalid)?;
        let key = CString::new(key).map_err(|_| Error::invalid(Call::rust(API), "the key contains a NUL byte"))?;
        Self::checked(key, size, Call::rust(API))
    }
}

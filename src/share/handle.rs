//! [`ShareableHandle`]: the plain value that names exported physical memory
//! to another process, and [`ShareKind`]: which export call made it.

use super::hex;
use crate::error::{Call, Error, Result};
use ascend_sys as sys;
use std::fmt;
use std::str::FromStr;

/// Bytes of a FABRIC handle (`aclrtMemFabricHandle`).
pub const FABRIC_HANDLE_LEN: usize = size_of::<sys::aclrtMemFabricHandle>();

/// How physical memory is exported, and so how it is imported.
///
/// The exporter picks it ([`PhysicalAlloc::export`](crate::vmm::PhysicalAlloc::export));
/// the importer reads it from the token it received
/// ([`ShareableHandle::kind`]):
///
/// ```
/// use ascend::share::{ShareKind, ShareableHandle};
/// let token: ShareableHandle = "v2:2097152:0100000000000000".parse()?;
/// let call = match token.kind() {
///     ShareKind::V1 => "aclrtMemImportFromShareableHandle",
///     ShareKind::V2Default | ShareKind::V2Fabric => "aclrtMemImportFromShareableHandleV2",
///     _ => "a kind added later",
/// };
/// assert_eq!(call, "aclrtMemImportFromShareableHandleV2");
/// # Ok::<(), ascend::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ShareKind {
    /// `aclrtMemExportToShareableHandle`: a `u64`, imported onto a device
    /// given by id.
    V1,
    /// `aclrtMemExportToShareableHandleV2` with
    /// `ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT`: a `u64` valid within one server,
    /// imported onto the importer's current device.
    V2Default,
    /// `aclrtMemExportToShareableHandleV2` with
    /// `ACL_MEM_SHARE_HANDLE_TYPE_FABRIC`: 128 bytes valid across servers
    /// (Atlas A3 on real hardware), imported onto the current device.
    V2Fabric,
}

impl ShareKind {
    /// The name in the text form (`v1`, `v2`, `fabric`).
    fn name(self) -> &'static str {
        match self {
            ShareKind::V1 => "v1",
            ShareKind::V2Default => "v2",
            ShareKind::V2Fabric => "fabric",
        }
    }

    fn tag(self) -> u8 {
        match self {
            ShareKind::V1 => 1,
            ShareKind::V2Default => 2,
            ShareKind::V2Fabric => 3,
        }
    }

    fn from_tag(tag: u8) -> Option<Self> {
        [ShareKind::V1, ShareKind::V2Default, ShareKind::V2Fabric]
            .into_iter()
            .find(|kind| kind.tag() == tag)
    }

    fn from_name(name: &str) -> Option<Self> {
        [ShareKind::V1, ShareKind::V2Default, ShareKind::V2Fabric]
            .into_iter()
            .find(|kind| kind.name() == name)
    }
}

/// The runtime's value.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum HandleValue {
    V1(u64),
    V2Default(u64),
    V2Fabric([u8; FABRIC_HANDLE_LEN]),
}

/// Exported physical memory, as a plain value another process can import
/// with [`ImportedAlloc::import`](super::ImportedAlloc::import).
///
/// It holds the runtime's shareable handle **and the allocation's size**:
/// the import calls return a physical handle but not its size, and mapping
/// needs it. The size is the exporter's claim; the runtime checks it when
/// the import is mapped (a size that is not the allocation's is refused).
///
/// It crosses a process boundary as text (`Display` / `FromStr`, one line
/// without spaces: `<kind>:<size>:<hex>`, kind `v1`, `v2` or `fabric`) or
/// as bytes ([`to_bytes`](ShareableHandle::to_bytes) /
/// [`from_bytes`](ShareableHandle::from_bytes)). It is only a name: it
/// keeps nothing alive, and importing it fails once the exporter freed the
/// allocation.
///
/// ```
/// use ascend::share::{ShareKind, ShareableHandle};
/// let handle = ShareableHandle::from_u64(ShareKind::V1, 0x1234, 2 << 20)?;
/// let text = handle.to_string();
/// assert_eq!(text, "v1:2097152:3412000000000000");
/// assert_eq!(text.parse::<ShareableHandle>()?, handle);
/// assert_eq!(ShareableHandle::from_bytes(&handle.to_bytes())?, handle);
/// # Ok::<(), ascend::Error>(())
/// ```
///
/// **Threads:** `ShareableHandle` is `Send` and `Sync`.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct ShareableHandle {
    value: HandleValue,
    size: usize,
}

impl ShareableHandle {
    pub(crate) fn new(value: HandleValue, size: usize) -> Self {
        Self { value, size }
    }

    /// A `u64` handle (V1 or V2 DEFAULT) of `size` bytes, e.g. received from
    /// a C program.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for [`ShareKind::V2Fabric`] (use
    /// [`ShareableHandle::from_fabric`]) or a size of 0.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::Error;
    /// use ascend::share::{ShareKind, ShareableHandle};
    /// let handle = ShareableHandle::from_u64(ShareKind::V2Default, 0xabcd, 2 << 20)?;
    /// assert_eq!(handle.to_string(), "v2:2097152:cdab000000000000");
    /// let fabric = ShareableHandle::from_u64(ShareKind::V2Fabric, 0xabcd, 2 << 20);
    /// assert!(matches!(fabric, Err(Error::InvalidArgument { .. })));
    /// assert!(ShareableHandle::from_u64(ShareKind::V1, 0xabcd, 0).is_err());
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn from_u64(kind: ShareKind, handle: u64, size: usize) -> Result<Self> {
        let value = match kind {
            ShareKind::V1 => HandleValue::V1(handle),
            ShareKind::V2Default => HandleValue::V2Default(handle),
            ShareKind::V2Fabric => {
                return Err(Error::invalid(
                    Call::rust("ShareableHandle::from_u64"),
                    "a FABRIC handle is 128 bytes, not a u64",
                ));
            }
        };
        Self::checked(value, size, Call::rust("ShareableHandle::from_u64"))
    }

    /// A FABRIC handle (`aclrtMemFabricHandle`) of `size` bytes.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for a size of 0.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::share::{FABRIC_HANDLE_LEN, ShareKind, ShareableHandle};
    /// let data = [0x5a; FABRIC_HANDLE_LEN]; // as a C program received it
    /// let handle = ShareableHandle::from_fabric(data, 2 << 20)?;
    /// assert_eq!(handle.kind(), ShareKind::V2Fabric);
    /// assert_eq!(handle.as_fabric(), Some(&data));
    /// assert!(handle.to_string().starts_with("fabric:2097152:5a5a"));
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn from_fabric(data: [u8; FABRIC_HANDLE_LEN], size: usize) -> Result<Self> {
        Self::checked(
            HandleValue::V2Fabric(data),
            size,
            Call::rust("ShareableHandle::from_fabric"),
        )
    }

    fn checked(value: HandleValue, size: usize, call: Call) -> Result<Self> {
        if size == 0 {
            return Err(Error::invalid(call, "size is 0"));
        }
        Ok(Self { value, size })
    }

    pub(crate) fn value(&self) -> HandleValue {
        self.value
    }

    /// Which export made it.
    ///
    /// ```
    /// use ascend::share::ShareKind;
    /// # use ascend::vmm::{PhysicalAlloc, PhysicalMemProp};
    /// # let device = ascend::Device::new(0)?;
    /// # let prop = PhysicalMemProp::device(&device);
    /// # let physical = PhysicalAlloc::new(&prop, prop.round_up(1)?)?;
    /// let export = physical.export(ShareKind::V1)?;
    /// assert_eq!(export.token().kind(), ShareKind::V1);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn kind(&self) -> ShareKind {
        match self.value {
            HandleValue::V1(_) => ShareKind::V1,
            HandleValue::V2Default(_) => ShareKind::V2Default,
            HandleValue::V2Fabric(_) => ShareKind::V2Fabric,
        }
    }

    /// Size in bytes of the exported allocation.
    ///
    /// ```
    /// use ascend::share::ShareKind;
    /// use ascend::vmm::{PhysicalAlloc, PhysicalMemProp};
    /// # let device = ascend::Device::new(0)?;
    /// let prop = PhysicalMemProp::device(&device);
    /// let physical = PhysicalAlloc::new(&prop, 2 * prop.round_up(1)?)?;
    /// let token = physical.export(ShareKind::V2Default)?.token();
    /// assert_eq!(token.size(), physical.size()); // what the importer maps
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn size(&self) -> usize {
        self.size
    }

    /// The runtime's `u64` (V1 and V2 DEFAULT), for raw calls.
    ///
    /// ```
    /// use ascend::share::{FABRIC_HANDLE_LEN, ShareKind, ShareableHandle};
    /// let v1: ShareableHandle = "v1:2097152:3412000000000000".parse()?;
    /// assert_eq!(v1.as_u64(), Some(0x1234)); // for aclrtMemImportFromShareableHandle
    /// let fabric = ShareableHandle::from_fabric([0; FABRIC_HANDLE_LEN], 2 << 20)?;
    /// assert_eq!(fabric.as_u64(), None);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn as_u64(&self) -> Option<u64> {
        match self.value {
            HandleValue::V1(handle) | HandleValue::V2Default(handle) => Some(handle),
            HandleValue::V2Fabric(_) => None,
        }
    }

    /// The runtime's `aclrtMemFabricHandle` bytes (V2 FABRIC), for raw calls.
    ///
    /// ```
    /// use ascend::share::{ShareKind, ShareableHandle};
    /// # use ascend::vmm::{PhysicalAlloc, PhysicalMemProp};
    /// # let device = ascend::Device::new(0)?;
    /// # let prop = PhysicalMemProp::device(&device);
    /// # let physical = PhysicalAlloc::new(&prop, prop.round_up(1)?)?;
    /// let token = physical.export(ShareKind::V2Fabric)?.token();
    /// let data = token.as_fabric().expect("a FABRIC export");
    /// let raw = ascend::sys::aclrtMemFabricHandle { data: *data }; // for a C call
    /// assert_eq!(raw.data.len(), 128);
    /// let v1 = ShareableHandle::from_u64(ShareKind::V1, 1, token.size())?;
    /// assert!(v1.as_fabric().is_none());
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn as_fabric(&self) -> Option<&[u8; FABRIC_HANDLE_LEN]> {
        match &self.value {
            HandleValue::V2Fabric(data) => Some(data),
            _ => None,
        }
    }

    fn payload(&self) -> Vec<u8> {
        match &self.value {
            HandleValue::V1(handle) | HandleValue::V2Default(handle) => handle.to_le_bytes().to_vec(),
            HandleValue::V2Fabric(data) => data.to_vec(),
        }
    }

    fn from_payload(kind: ShareKind, payload: &[u8], size: usize, call: Call) -> Result<Self> {
        match kind {
            ShareKind::V1 | ShareKind::V2Default => {
                let bytes: [u8; 8] = payload.try_into().map_err(|_| {
                    Error::invalid(
                        call,
                        format!("a {} handle is 8 bytes, not {}", kind.name(), payload.len()),
                    )
                })?;
                let handle = u64::from_le_bytes(bytes);
                let value = if matches!(kind, ShareKind::V1) {
                    HandleValue::V1(handle)
                } else {
                    HandleValue::V2Default(handle)
                };
                Self::checked(value, size, call)
            }
            ShareKind::V2Fabric => {
                let data: [u8; FABRIC_HANDLE_LEN] = payload.try_into().map_err(|_| {
                    Error::invalid(
                        call,
                        format!("a fabric handle is {FABRIC_HANDLE_LEN} bytes, not {}", payload.len()),
                    )
                })?;
                Self::checked(HandleValue::V2Fabric(data), size, call)
            }
        }
    }

    /// The binary form: one byte for the kind (1 V1, 2 V2 DEFAULT,
    /// 3 FABRIC), the size as a little-endian `u64`, then the runtime's
    /// handle (8 or 128 bytes).
    ///
    /// ```
    /// use ascend::share::{ShareKind, ShareableHandle};
    /// let handle = ShareableHandle::from_u64(ShareKind::V2Default, 0x1234, 4096)?;
    /// let bytes = handle.to_bytes();
    /// assert_eq!(bytes.len(), 1 + 8 + 8);
    /// assert_eq!(bytes[0], 2); // V2 DEFAULT
    /// assert_eq!(bytes[1..9], 4096u64.to_le_bytes());
    /// assert_eq!(bytes[9..], 0x1234u64.to_le_bytes());
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut bytes = vec![self.kind().tag()];
        bytes.extend_from_slice(&(self.size as u64).to_le_bytes());
        bytes.extend_from_slice(&self.payload());
        bytes
    }

    /// Reads [`ShareableHandle::to_bytes`]'s form.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for bytes that are not that form.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::Error;
    /// use ascend::share::{ShareKind, ShareableHandle};
    /// let sent = ShareableHandle::from_u64(ShareKind::V1, 0x1234, 4096)?.to_bytes();
    /// let received = ShareableHandle::from_bytes(&sent)?;
    /// assert_eq!((received.kind(), received.as_u64()), (ShareKind::V1, Some(0x1234)));
    /// let cut = ShareableHandle::from_bytes(&sent[..12]); // a handle cut short
    /// assert!(matches!(cut, Err(Error::InvalidArgument { .. })));
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        const API: &str = "ShareableHandle::from_bytes";
        let invalid = |reason: &str| Error::invalid(Call::rust(API), reason);
        let (&tag, rest) = bytes.split_first().ok_or_else(|| invalid("no bytes"))?;
        let kind = ShareKind::from_tag(tag).ok_or_else(|| invalid("unknown kind byte"))?;
        let (size, payload) = rest.split_first_chunk::<8>().ok_or_else(|| invalid("no size"))?;
        let size = usize::try_from(u64::from_le_bytes(*size))
            .map_err(|_| invalid("the size does not fit this platform's usize"))?;
        Self::from_payload(kind, payload, size, Call::rust(API))
    }
}

impl fmt::Display for ShareableHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}:{}",
            self.kind().name(),
            self.size,
            hex::encode(&self.payload())
        )
    }
}

impl fmt::Debug for ShareableHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ShareableHandle({self})")
    }
}

impl FromStr for ShareableHandle {
    type Err = Error;

    /// Reads the `Display` form, `<kind>:<size>:<hex>`.
    fn from_str(text: &str) -> Result<Self> {
        const API: &str = "ShareableHandle::from_str";
        let invalid = || Error::invalid(Call::rust(API), format!("{text:?} is not <v1|v2|fabric>:<size>:<hex>"));
        let mut parts = text.trim().splitn(3, ':');
        let (Some(kind), Some(size), Some(payload)) = (parts.next(), parts.next(), parts.next()) else {
            return Err(invalid());
        };
        let kind = ShareKind::from_name(kind).ok_or_else(invalid)?;
        let size = size.parse::<usize>().map_err(|_| invalid())?;
        let payload = hex::decode(payload).ok_or_else(invalid)?;
        Self::from_payload(kind, &payload, size, Call::rust(API))
    }
}

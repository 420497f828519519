//! One live resource of the software device, by identity: what
//! [`crate::soft::live_since`] lists and a leak check reports.

use std::fmt;

/// The kind of a live resource (one per count of [`crate::soft::Live`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum ResourceKind {
    /// Device memory from `aclrtMalloc*`; the id is its device address.
    DeviceMemory,
    /// Pinned host memory from `aclrtMallocHost*`; the id is its address.
    HostMemory,
    /// A host registration (`aclrtHostRegister*`); the id is the host base.
    HostRegistration,
    /// A context from `aclrtCreateContext`; the id is its handle.
    Context,
    /// An allocator descriptor (`aclrtAllocatorCreateDesc`); the id is its
    /// handle.
    AllocatorDescriptor,
    /// A stream-ordered memory pool (`aclrtMemPoolCreate`); the id is its
    /// handle, the bytes what it reserves.
    MemPool,
    /// A physical allocation (`aclrtMallocPhysical`, or an import of a
    /// shareable handle); the id is its handle.
    PhysicalAllocation,
    /// A reserved address range (`aclrtReserveMemAddress`); the id is its
    /// base.
    Reservation,
    /// A mapping (`aclrtMapMem`); the id is its device address.
    Mapping,
    /// A stream from `aclrtCreateStream*`; the id is its handle.
    Stream,
    /// An event from `aclrtCreateEvent*`; the id is its handle.
    Event,
    /// A notify (`aclrtCreateNotify`, `aclrtNotifyImportByKey`) or count
    /// notify (`aclrtCntNotifyCreate`); the id is its handle (which of the
    /// two it is, in the detail).
    Notify,
    /// A shareable handle this process exported; the id is the handle.
    ShareableExport,
    /// An IPC key this process exported; the id is the device address it
    /// shares (the key is in the detail).
    IpcKey,
    /// An IPC import not yet closed; the id is the device address it gave.
    IpcImport,
    /// A message buffer header (`aclrtAllocBuf`, `aclrtCopyBufRef`); the id
    /// is its handle, the bytes those of its data area (shared by reference
    /// copies).
    Mbuf,
}

impl fmt::Display for ResourceKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ResourceKind::DeviceMemory => "device memory",
            ResourceKind::HostMemory => "host memory",
            ResourceKind::HostRegistration => "host registration",
            ResourceKind::Context => "context",
            ResourceKind::AllocatorDescriptor => "allocator descriptor",
            ResourceKind::MemPool => "memory pool",
            ResourceKind::PhysicalAllocation => "physical allocation",
            ResourceKind::Reservation => "reserved range",
            ResourceKind::Mapping => "mapping",
            ResourceKind::Stream => "stream",
            ResourceKind::Event => "event",
            ResourceKind::Notify => "notify",
            ResourceKind::ShareableExport => "shareable handle",
            ResourceKind::IpcKey => "IPC key",
            ResourceKind::IpcImport => "IPC import",
            ResourceKind::Mbuf => "mbuf",
        })
    }
}

/// One live resource: its kind, identity, size and when it was created.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct LiveResource {
    /// What it is.
    pub kind: ResourceKind,
    /// Its address or handle (see [`ResourceKind`] for which).
    pub id: u64,
    /// Bytes it covers (0 for streams, events, contexts, descriptors and
    /// shareable handles).
    pub bytes: u64,
    /// The device it belongs to, when it belongs to one.
    pub device: Option<i32>,
    /// Its creation sequence number (see [`crate::soft::sequence_now`]).
    pub created: u64,
    /// More about it, for a report (may be empty).
    pub detail: String,
}

impl LiveResource {
    pub(crate) fn new(kind: ResourceKind, id: usize, bytes: u64, created: u64) -> Self {
        Self {
            kind,
            id: id as u64,
            bytes,
            device: None,
            created,
            detail: String::new(),
        }
    }

    pub(crate) fn with_id(mut self, id: u64) -> Self {
        self.id = id;
        self
    }

    /// The device it belongs to (`None`: none).
    pub(crate) fn on(mut self, device: impl Into<Option<i32>>) -> Self {
        self.device = device.into();
        self
    }

    pub(crate) fn detail(mut self, detail: String) -> Self {
        self.detail = detail;
        self
    }
}

impl fmt::Display for LiveResource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {:#x}", self.kind, self.id)?;
        if self.bytes > 0 {
            write!(f, ": {} bytes", self.bytes)?;
        }
        if let Some(device) = self.device {
            write!(f, " on device {device}")?;
        }
        if !self.detail.is_empty() {
            write!(f, " ({})", self.detail)?;
        }
        write!(f, " [created #{}]", self.created)
    }
}

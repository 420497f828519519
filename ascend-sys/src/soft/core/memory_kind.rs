//! What kind of memory a physical allocation is: its page size class and
//! where it lives, as `aclrtMallocPhysical` validated them. Leaf types,
//! shared by the virtual-memory family (which makes and maps physical
//! allocations) and the sharing family (which writes them into an export's
//! header and reads them back on import).

/// The page size class a memory attribute asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Pages {
    /// Normal pages (served as 2 MiB huge pages on the device).
    Normal,
    /// 2 MiB huge pages.
    Huge,
    /// 1 GiB giant pages.
    Giant,
}

/// Where a physical allocation lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Place {
    /// Device memory of device `id`.
    Device(i32),
    /// Host memory (`HOST` or `HOST_NUMA` location, with its id).
    Host { numa: bool, id: u32 },
}

/// A validated property.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Kind {
    pub(crate) place: Place,
    pub(crate) pages: Pages,
    pub(crate) p2p: bool,
}

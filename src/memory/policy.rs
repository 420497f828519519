//! [`MallocPolicy`]: how `aclrtMalloc` chooses pages.

use ascend_sys as sys;

/// The page policy of a device allocation (`aclrtMemMallocPolicy`).
///
/// Huge pages are 2 MiB, giant pages 1 GiB. The P2P variants allocate memory
/// other devices can reach with peer access.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum MallocPolicy {
    /// Huge pages for allocations above 1 MiB when available, else normal
    /// pages (`ACL_MEM_MALLOC_HUGE_FIRST`, the default).
    #[default]
    HugeFirst,
    /// Huge pages only (`ACL_MEM_MALLOC_HUGE_ONLY`).
    HugeOnly,
    /// Normal pages only (`ACL_MEM_MALLOC_NORMAL_ONLY`).
    NormalOnly,
    /// As `HugeFirst`, reachable by peers (`ACL_MEM_MALLOC_HUGE_FIRST_P2P`).
    HugeFirstP2p,
    /// As `HugeOnly`, reachable by peers (`ACL_MEM_MALLOC_HUGE_ONLY_P2P`).
    HugeOnlyP2p,
    /// As `NormalOnly`, reachable by peers (`ACL_MEM_MALLOC_NORMAL_ONLY_P2P`).
    NormalOnlyP2p,
    /// 1 GiB pages only (`ACL_MEM_MALLOC_HUGE1G_ONLY`).
    GiantOnly,
    /// As `GiantOnly`, reachable by peers (`ACL_MEM_MALLOC_HUGE1G_ONLY_P2P`).
    GiantOnlyP2p,
}

impl MallocPolicy {
    /// The C value.
    pub fn raw(self) -> sys::aclrtMemMallocPolicy {
        match self {
            MallocPolicy::HugeFirst => sys::ACL_MEM_MALLOC_HUGE_FIRST,
            MallocPolicy::HugeOnly => sys::ACL_MEM_MALLOC_HUGE_ONLY,
            MallocPolicy::NormalOnly => sys::ACL_MEM_MALLOC_NORMAL_ONLY,
            MallocPolicy::HugeFirstP2p => sys::ACL_MEM_MALLOC_HUGE_FIRST_P2P,
            MallocPolicy::HugeOnlyP2p => sys::ACL_MEM_MALLOC_HUGE_ONLY_P2P,
            MallocPolicy::NormalOnlyP2p => sys::ACL_MEM_MALLOC_NORMAL_ONLY_P2P,
            MallocPolicy::GiantOnly => sys::ACL_MEM_MALLOC_HUGE1G_ONLY,
            MallocPolicy::GiantOnlyP2p => sys::ACL_MEM_MALLOC_HUGE1G_ONLY_P2P,
        }
    }
}

/// Which AscendCL call allocates a [`DeviceBuf`](crate::DeviceBuf).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum AllocCall {
    /// `aclrtMalloc`: size rounded up to 32 bytes plus 32 bytes of padding
    /// (the default).
    #[default]
    Malloc,
    /// `aclrtMallocAlign32`: rounded up to 32 bytes, no padding.
    Align32,
    /// `aclrtMallocCached`: as `Malloc`, cache-coherent where the chip
    /// distinguishes it.
    Cached,
    /// `aclrtMallocWithCfg` with an `ACL_RT_MEM_ATTR_MODULE_ID` attribute
    /// (the documents suggest 33, APP); rounded up to 32 bytes.
    WithModuleId(u16),
}

impl AllocCall {
    /// The C function used.
    pub fn api(self) -> &'static str {
        match self {
            AllocCall::Malloc => "aclrtMalloc",
            AllocCall::Align32 => "aclrtMallocAlign32",
            AllocCall::Cached => "aclrtMallocCached",
            AllocCall::WithModuleId(_) => "aclrtMallocWithCfg",
        }
    }
}

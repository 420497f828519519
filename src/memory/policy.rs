//! [`MallocPolicy`]: how `aclrtMalloc` chooses pages.

use ascend_sys as sys;

/// The page policy of a device allocation (`aclrtMemMallocPolicy`).
///
/// Huge pages are 2 MiB, giant pages 1 GiB. The P2P variants allocate memory
/// other devices can reach with peer access.
///
/// ```
/// use ascend::{Device, DeviceBuf, MallocPolicy};
/// let device = Device::new(0)?;
/// assert_eq!(MallocPolicy::default(), MallocPolicy::HugeFirst);
/// for policy in [MallocPolicy::HugeFirst, MallocPolicy::HugeOnly, MallocPolicy::NormalOnly] {
///     // SAFETY: the buffer is filled before it is read.
///     let mut buf = unsafe { DeviceBuf::<u8>::uninit_with_policy(&device, 2 << 20, policy) }?;
///     buf.fill_bytes(0x11)?;
///     assert_eq!(buf.as_slice().slice(..4)?.to_vec()?, [0x11; 4]);
/// }
/// # Ok::<(), ascend::Error>(())
/// ```
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
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, MallocPolicy, sys};
    /// let _device = Device::new(0)?; // current on this thread
    /// let policy = MallocPolicy::NormalOnly;
    /// assert_eq!(policy.raw(), sys::ACL_MEM_MALLOC_NORMAL_ONLY);
    /// let mut raw = std::ptr::null_mut();
    /// // SAFETY: a valid out-pointer and a non-zero size.
    /// ascend::check("aclrtMalloc", unsafe { sys::aclrtMalloc(&mut raw, 4096, policy.raw()) })?;
    /// // SAFETY: allocated above, freed once.
    /// ascend::check("aclrtFree", unsafe { sys::aclrtFree(raw) })?;
    /// # Ok::<(), ascend::Error>(())
    /// ```
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
///
/// ```
/// use ascend::memory::AllocCall;
/// use ascend::{Device, DeviceBuf, MallocPolicy};
/// let device = Device::new(0)?;
/// let call = AllocCall::WithModuleId(33); // charged to module 33 (APP)
/// // SAFETY: the buffer is written before it is read.
/// let mut buf = unsafe { DeviceBuf::<u16>::uninit_with(&device, 8, MallocPolicy::default(), call) }?;
/// buf.write_from_host(&[3; 8])?;
/// assert_eq!(buf.to_vec()?, [3; 8]);
/// # Ok::<(), ascend::Error>(())
/// ```
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
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::memory::AllocCall;
    /// use ascend::{Device, DeviceBuf, MallocPolicy};
    /// assert_eq!(AllocCall::default().api(), "aclrtMalloc");
    /// assert_eq!(AllocCall::WithModuleId(33).api(), "aclrtMallocWithCfg");
    /// // An allocation's errors name the call that was made.
    /// let device = Device::new(0)?;
    /// // SAFETY: nothing is allocated (the size overflows).
    /// let error = unsafe { DeviceBuf::<u64>::uninit_with(&device, usize::MAX, MallocPolicy::default(), AllocCall::Cached) }
    ///     .unwrap_err();
    /// assert!(matches!(error, ascend::Error::InvalidArgument { api, .. } if api == AllocCall::Cached.api()), "{error}");
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn api(self) -> &'static str {
        match self {
            AllocCall::Malloc => "aclrtMalloc",
            AllocCall::Align32 => "aclrtMallocAlign32",
            AllocCall::Cached => "aclrtMallocCached",
            AllocCall::WithModuleId(_) => "aclrtMallocWithCfg",
        }
    }
}

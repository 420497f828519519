//! [`HostMallocConfig`]: typed attributes for `aclrtMallocHostWithCfg`.

use ascend_sys as sys;

/// Attributes of a page-locked host allocation
/// ([`PinnedHostBuf::zeroed_with_config`](crate::PinnedHostBuf::zeroed_with_config),
/// `aclrtMallocHostWithCfg`). The default sets none, like a plain
/// `aclrtMallocHost`.
///
/// ```
/// use ascend::host_register::HostMallocConfig;
/// let config = HostMallocConfig::new().with_module_id(33);
/// assert_eq!(config.module_id(), Some(33));
/// assert!(!config.same_address());
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct HostMallocConfig {
    module_id: Option<u16>,
    same_address: bool,
}

impl HostMallocConfig {
    /// No attributes.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Charges the memory to module `id` (`ACL_RT_MEM_ATTR_MODULE_ID`; the
    /// documentation suggests 33, "APP").
    #[must_use]
    pub fn with_module_id(mut self, id: u16) -> Self {
        self.module_id = Some(id);
        self
    }

    /// Asks for the same virtual address on host and device once the memory
    /// is registered (`ACL_RT_MEM_ATTR_VA_FLAG`; Atlas A2/A3 only, refused
    /// with `ACL_ERROR_RT_FEATURE_NOT_SUPPORT` elsewhere, including on the
    /// software device).
    #[must_use]
    pub fn with_same_address(mut self, on: bool) -> Self {
        self.same_address = on;
        self
    }

    /// The module id, if set.
    pub fn module_id(&self) -> Option<u16> {
        self.module_id
    }

    /// Whether the same-address flag is set.
    pub fn same_address(&self) -> bool {
        self.same_address
    }

    /// The C attribute list.
    pub(crate) fn attributes(&self) -> Vec<sys::aclrtMallocAttribute> {
        let mut attributes = Vec::new();
        if let Some(id) = self.module_id {
            let mut value = sys::aclrtMallocAttrValue { rsv: [0; 8] };
            value.moduleId = id;
            attributes.push(sys::aclrtMallocAttribute {
                attr: sys::ACL_RT_MEM_ATTR_MODULE_ID,
                value,
            });
        }
        if self.same_address {
            let mut value = sys::aclrtMallocAttrValue { rsv: [0; 8] };
            value.vaFlag = 1;
            attributes.push(sys::aclrtMallocAttribute {
                attr: sys::ACL_RT_MEM_ATTR_VA_FLAG,
                value,
            });
        }
        attributes
    }
}

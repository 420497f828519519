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
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::host_register::HostMallocConfig;
    /// let config = HostMallocConfig::new();
    /// assert_eq!(config, HostMallocConfig::default());
    /// assert_eq!((config.module_id(), config.same_address()), (None, false));
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// Charges the memory to module `id` (`ACL_RT_MEM_ATTR_MODULE_ID`; the
    /// documentation suggests 33, "APP").
    #[must_use]
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, PinnedHostBuf, host_register::HostMallocConfig};
    /// let device = Device::new(0)?;
    /// let config = HostMallocConfig::new().with_module_id(33);
    /// assert_eq!(config.module_id(), Some(33));
    /// let staging = PinnedHostBuf::<f32>::zeroed_with_config(&device, 256, &config)?;
    /// assert_eq!(staging.len(), 256);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn with_module_id(mut self, id: u16) -> Self {
        self.module_id = Some(id);
        self
    }

    /// Asks for the same virtual address on host and device once the memory
    /// is registered (`ACL_RT_MEM_ATTR_VA_FLAG`; Atlas A2/A3 only, refused
    /// with `ACL_ERROR_RT_FEATURE_NOT_SUPPORT` elsewhere, including on the
    /// software device).
    #[must_use]
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, ErrorCode, PinnedHostBuf, host_register::HostMallocConfig};
    /// let device = Device::new(0)?;
    /// let config = HostMallocConfig::new().with_same_address(true);
    /// match PinnedHostBuf::<u8>::zeroed_with_config(&device, 4096, &config) {
    ///     Ok(host) => assert_eq!(host.len(), 4096), // Atlas A2/A3
    ///     Err(error) => assert_eq!(error.code(), Some(ErrorCode::RT_FEATURE_NOT_SUPPORT)),
    /// }
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn with_same_address(mut self, on: bool) -> Self {
        self.same_address = on;
        self
    }

    /// The module id, if set.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::host_register::HostMallocConfig;
    /// assert_eq!(HostMallocConfig::new().module_id(), None);
    /// assert_eq!(HostMallocConfig::new().with_module_id(7).module_id(), Some(7));
    /// ```
    pub fn module_id(&self) -> Option<u16> {
        self.module_id
    }

    /// Whether the same-address flag is set.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::host_register::HostMallocConfig;
    /// let config = HostMallocConfig::new().with_same_address(true);
    /// assert!(config.same_address());
    /// assert!(!config.with_same_address(false).same_address());
    /// ```
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

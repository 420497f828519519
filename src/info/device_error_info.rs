//! [`DeviceErrorInfo`]: a device's fault as [`Device::error_verbose`]
//! reports it (`aclrtGetErrorVerbose`).

use crate::Device;
use crate::error::{Result, check};
use ascend_sys as sys;

/// The kind of a device fault (`aclrtErrorType`).
///
/// ```
/// use ascend::{Device, info::DeviceFaultKind};
/// let device = Device::new(0)?;
/// match device.error_verbose()?.kind {
///     DeviceFaultKind::None => {} // the device is healthy
///     DeviceFaultKind::Memory => eprintln!("uncorrectable memory error"),
///     other => eprintln!("device fault: {other:?}"),
/// }
/// # Ok::<(), ascend::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DeviceFaultKind {
    /// No fault (`ACL_RT_NO_ERROR`).
    None,
    /// A memory fault: uncorrectable ECC error (`ACL_RT_ERROR_MEMORY`).
    Memory,
    /// An L2 cache fault (`ACL_RT_ERROR_L2`).
    L2,
    /// An AI core fault (`ACL_RT_ERROR_AICORE`).
    AiCore,
    /// A link fault (`ACL_RT_ERROR_LINK`).
    Link,
    /// An L3 port fault (`ACL_RT_ERROR_L3_PORT`).
    L3Port,
    /// Another fault (`ACL_RT_ERROR_OTHERS`).
    Other,
    /// A value this crate does not know.
    Unknown(u32),
}

impl DeviceFaultKind {
    fn from_raw(raw: sys::aclrtErrorType) -> Self {
        match raw {
            sys::ACL_RT_NO_ERROR => Self::None,
            sys::ACL_RT_ERROR_MEMORY => Self::Memory,
            sys::ACL_RT_ERROR_L2 => Self::L2,
            sys::ACL_RT_ERROR_AICORE => Self::AiCore,
            sys::ACL_RT_ERROR_LINK => Self::Link,
            sys::ACL_RT_ERROR_L3_PORT => Self::L3Port,
            sys::ACL_RT_ERROR_OTHERS => Self::Other,
            other => Self::Unknown(other),
        }
    }
}

/// The kind of an AI core fault (`aclrtAicoreErrorType`).
///
/// ```
/// use ascend::info::{AiCoreFaultKind, FaultDetail};
/// fn describe(detail: &FaultDetail) -> String {
///     match detail {
///         FaultDetail::AiCore(AiCoreFaultKind::HardwareLocal) => "AI core hardware fault".into(),
///         FaultDetail::AiCore(kind) => format!("AI core fault: {kind:?}"),
///         FaultDetail::Memory(ranges) => format!("{} damaged range(s)", ranges.len()),
///     }
/// }
/// assert_eq!(describe(&FaultDetail::AiCore(AiCoreFaultKind::Software)), "AI core fault: Software");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AiCoreFaultKind {
    /// Unknown (`ACL_RT_AICORE_ERROR_UNKNOWN`).
    Unknown,
    /// A software fault (`ACL_RT_AICORE_ERROR_SW`).
    Software,
    /// A local hardware fault (`ACL_RT_AICORE_ERROR_HW_LOCAL`).
    HardwareLocal,
    /// A value this crate does not know.
    Other(u32),
}

/// One device memory range with an uncorrectable error (`aclrtMemUceInfo`).
///
/// ```
/// use ascend::Device;
/// let device = Device::new(0)?;
/// let damaged = device.uce_info()?; // empty on a healthy device
/// let bytes: usize = damaged.iter().map(|range| range.len).sum();
/// if ascend::backend()?.backend == ascend::Backend::Software {
///     assert_eq!(bytes, 0); // the software device has no uncorrectable errors
/// }
/// # Ok::<(), ascend::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct UceRange {
    /// Start address of the range (device memory; not dereferenceable on
    /// the host).
    pub address: usize,
    /// Length in bytes.
    pub len: usize,
}

/// Details of a fault, when the runtime gives them (`aclrtErrorInfoDetail`).
///
/// ```
/// use ascend::Device;
/// let device = Device::new(0)?;
/// let info = device.error_verbose()?;
/// // A healthy device has no fault, so no details.
/// assert!(info.detail.is_none());
/// # Ok::<(), ascend::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum FaultDetail {
    /// A memory fault's ranges.
    Memory(Vec<UceRange>),
    /// An AI core fault's kind.
    AiCore(AiCoreFaultKind),
}

/// A device's fault (`aclrtErrorInfo`).
///
/// ```
/// use ascend::Device;
/// let device = Device::new(0)?;
/// let info = device.error_verbose()?;
/// if info.is_fault() {
///     eprintln!("device 0: {:?} (repairable: {})", info.kind, info.try_repair);
/// }
/// assert!(!info.is_fault());
/// # Ok::<(), ascend::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct DeviceErrorInfo {
    /// What failed; [`DeviceFaultKind::None`] when the device has no fault.
    pub kind: DeviceFaultKind,
    /// Whether `aclrtRepairError` may repair the fault.
    pub try_repair: bool,
    /// The details, when the runtime gives them.
    pub detail: Option<FaultDetail>,
}

impl DeviceErrorInfo {
    /// Whether the device has a fault (its kind is not
    /// [`DeviceFaultKind::None`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::info::{DeviceErrorInfo, DeviceFaultKind};
    /// let healthy = ascend::Device::new(0)?.error_verbose()?;
    /// assert!(!healthy.is_fault());
    /// let faulted = DeviceErrorInfo { kind: DeviceFaultKind::Memory, ..healthy };
    /// assert!(faulted.is_fault());
    /// # Ok::<(), ascend::Error>(())
    /// ```
    pub fn is_fault(&self) -> bool {
        self.kind != DeviceFaultKind::None
    }

    fn from_raw(raw: &sys::aclrtErrorInfo) -> Self {
        let kind = DeviceFaultKind::from_raw(raw.errorType);
        let detail = (raw.hasDetail == 1).then_some(()).and_then(|()| match kind {
            DeviceFaultKind::Memory => {
                // SAFETY: with `hasDetail` set, a memory fault's detail is
                // its `uceInfo` (plain integers and addresses).
                let uce = unsafe { &raw.detail.uceInfo };
                let used = uce.arraySize.min(uce.memUceInfoArray.len());
                Some(FaultDetail::Memory(
                    uce.memUceInfoArray[..used]
                        .iter()
                        .map(|info| UceRange {
                            address: info.addr as usize,
                            len: info.len,
                        })
                        .collect(),
                ))
            }
            DeviceFaultKind::AiCore => {
                // SAFETY: an AI core fault's detail is its kind (an integer).
                let raw_kind = unsafe { raw.detail.aicoreErrType };
                Some(FaultDetail::AiCore(match raw_kind {
                    sys::ACL_RT_AICORE_ERROR_UNKNOWN => AiCoreFaultKind::Unknown,
                    sys::ACL_RT_AICORE_ERROR_SW => AiCoreFaultKind::Software,
                    sys::ACL_RT_AICORE_ERROR_HW_LOCAL => AiCoreFaultKind::HardwareLocal,
                    other => AiCoreFaultKind::Other(other),
                }))
            }
            _ => None,
        });
        Self {
            kind,
            try_repair: raw.tryRepair == 1,
            detail,
        }
    }
}

impl Device {
    /// The device's fault, if it has one (`aclrtGetErrorVerbose`): after a
    /// task failed on the device, whether it was memory, an AI core, a link
    /// and whether it can be repaired. The software device reports
    /// [`DeviceFaultKind::Other`], without detail, once a copy or memset
    /// task failed on it (memory freed while the task was queued), until its
    /// last reset; a timed-out wait is no device fault.
    ///
    /// # Errors
    ///
    /// The runtime's code (`ACL_ERROR_RT_FEATURE_NOT_SUPPORT` on chips
    /// without the feature).
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, info::DeviceFaultKind};
    /// let device = Device::new(0)?;
    /// let info = device.error_verbose()?;
    /// assert_eq!(info.kind, DeviceFaultKind::None); // nothing failed
    /// assert!(!info.is_fault());
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtGetErrorVerbose")]
    pub fn error_verbose(&self) -> Result<DeviceErrorInfo> {
        // SAFETY: all-zero bytes are a valid `aclrtErrorInfo` (integers, a
        // union of integers and null pointers).
        let mut raw: sys::aclrtErrorInfo = unsafe { std::mem::zeroed() };
        // SAFETY: `raw` is a valid out-pointer.
        check("aclrtGetErrorVerbose", unsafe {
            sys::aclrtGetErrorVerbose(self.id(), &mut raw)
        })?;
        Ok(DeviceErrorInfo::from_raw(&raw))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn zeroed() -> sys::aclrtErrorInfo {
        // SAFETY: all-zero bytes are a valid `aclrtErrorInfo`.
        unsafe { std::mem::zeroed() }
    }

    #[test]
    fn a_memory_fault_lists_its_ranges_and_no_more_than_the_array() {
        let mut raw = zeroed();
        raw.errorType = sys::ACL_RT_ERROR_MEMORY;
        raw.hasDetail = 1;
        raw.tryRepair = 1;
        // SAFETY: writing the union's memory member, then reading it back.
        unsafe {
            raw.detail.uceInfo.arraySize = 2;
            raw.detail.uceInfo.memUceInfoArray[0].addr = 0x1000 as *mut _;
            raw.detail.uceInfo.memUceInfoArray[0].len = 64;
            raw.detail.uceInfo.memUceInfoArray[1].addr = 0x9000 as *mut _;
            raw.detail.uceInfo.memUceInfoArray[1].len = 8;
        }
        let info = DeviceErrorInfo::from_raw(&raw);
        assert!(info.is_fault() && info.try_repair);
        let ranges = vec![
            UceRange {
                address: 0x1000,
                len: 64,
            },
            UceRange {
                address: 0x9000,
                len: 8,
            },
        ];
        assert_eq!(info.detail, Some(FaultDetail::Memory(ranges)));
        // A count past the array is clamped (writing a union field is safe).
        raw.detail.uceInfo.arraySize = 1000;
        match DeviceErrorInfo::from_raw(&raw).detail {
            Some(FaultDetail::Memory(ranges)) => assert_eq!(ranges.len(), 20),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn an_ai_core_fault_and_others() {
        let mut raw = zeroed();
        raw.errorType = sys::ACL_RT_ERROR_AICORE;
        raw.hasDetail = 1;
        raw.detail.aicoreErrType = sys::ACL_RT_AICORE_ERROR_SW;
        let info = DeviceErrorInfo::from_raw(&raw);
        assert_eq!(info.detail, Some(FaultDetail::AiCore(AiCoreFaultKind::Software)));
        raw.hasDetail = 0;
        assert_eq!(DeviceErrorInfo::from_raw(&raw).detail, None);
        raw.errorType = 42;
        assert_eq!(DeviceErrorInfo::from_raw(&raw).kind, DeviceFaultKind::Unknown(42));
    }
}

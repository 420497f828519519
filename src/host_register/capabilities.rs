//! [`host_mem_map_capabilities`]: which accelerators of a device can reach
//! mapped host memory.

use crate::Call;
use crate::Device;
use crate::error::{Error, Result, check};
use ascend_sys as sys;

/// A hardware accelerator kind of a device (`aclrtHacType`).
///
/// ```
/// use ascend::Device;
/// use ascend::host_register::{HacType, host_mem_map_capabilities};
/// let device = Device::new(0)?;
/// let reaching: Vec<HacType> = HacType::ALL
///     .into_iter()
///     .filter(|&hac| host_mem_map_capabilities(&device, hac).unwrap_or(false))
///     .collect();
/// # if ascend::backend()?.backend == ascend::Backend::Software {
/// // On the software device, the DMA engines reach mapped host memory.
/// assert_eq!(reaching, [HacType::PcieDma, HacType::Sdma]);
/// # }
/// # Ok::<(), ascend::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum HacType {
    /// Task scheduler (`ACL_RT_HAC_TYPE_STARS`).
    Stars,
    /// AI CPU (`ACL_RT_HAC_TYPE_AICPU`).
    AiCpu,
    /// AI Cube core (`ACL_RT_HAC_TYPE_AIC`).
    AiCube,
    /// AI Vector core (`ACL_RT_HAC_TYPE_AIV`).
    AiVector,
    /// PCIe DMA engine (`ACL_RT_HAC_TYPE_PCIEDMA`).
    PcieDma,
    /// RDMA engine (`ACL_RT_HAC_TYPE_RDMA`).
    Rdma,
    /// System DMA engine (`ACL_RT_HAC_TYPE_SDMA`).
    Sdma,
    /// Digital vision pre-processing (`ACL_RT_HAC_TYPE_DVPP`).
    Dvpp,
    /// Unified-bus DMA engine (`ACL_RT_HAC_TYPE_UDMA`).
    Udma,
    /// Collective communication unit (`ACL_RT_HAC_TYPE_CCU`).
    Ccu,
}

impl HacType {
    /// Every kind, in the C enum's order.
    pub const ALL: [HacType; 10] = [
        HacType::Stars,
        HacType::AiCpu,
        HacType::AiCube,
        HacType::AiVector,
        HacType::PcieDma,
        HacType::Rdma,
        HacType::Sdma,
        HacType::Dvpp,
        HacType::Udma,
        HacType::Ccu,
    ];

    /// The C value.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::host_register::HacType;
    /// use ascend::sys;
    /// assert_eq!(HacType::Sdma.raw(), sys::ACL_RT_HAC_TYPE_SDMA);
    /// // `ALL` follows the C enum's order.
    /// assert!(HacType::ALL.windows(2).all(|pair| pair[0].raw() < pair[1].raw()));
    /// ```
    pub fn raw(self) -> sys::aclrtHacType {
        match self {
            HacType::Stars => sys::ACL_RT_HAC_TYPE_STARS,
            HacType::AiCpu => sys::ACL_RT_HAC_TYPE_AICPU,
            HacType::AiCube => sys::ACL_RT_HAC_TYPE_AIC,
            HacType::AiVector => sys::ACL_RT_HAC_TYPE_AIV,
            HacType::PcieDma => sys::ACL_RT_HAC_TYPE_PCIEDMA,
            HacType::Rdma => sys::ACL_RT_HAC_TYPE_RDMA,
            HacType::Sdma => sys::ACL_RT_HAC_TYPE_SDMA,
            HacType::Dvpp => sys::ACL_RT_HAC_TYPE_DVPP,
            HacType::Udma => sys::ACL_RT_HAC_TYPE_UDMA,
            HacType::Ccu => sys::ACL_RT_HAC_TYPE_CCU,
        }
    }
}

/// Whether accelerator `hac` of `device` can access mapped host memory
/// (`aclrtHostMemMapCapabilities`).
///
/// ```
/// use ascend::Device;
/// use ascend::host_register::{HacType, host_mem_map_capabilities};
/// let device = Device::new(0)?;
/// for hac in HacType::ALL {
///     println!("{hac:?}: {}", host_mem_map_capabilities(&device, hac)?);
/// }
/// # Ok::<(), ascend::Error>(())
/// ```
///
/// # Errors
///
/// [`Error::InvalidArgument`] for a negative device id; the runtime's code
/// (`ACL_ERROR_RT_FEATURE_NOT_SUPPORT` from runtimes before CANN 9.0, which
/// lack the call).
#[doc(alias = "aclrtHostMemMapCapabilities")]
pub fn host_mem_map_capabilities(device: &Device, hac: HacType) -> Result<bool> {
    const API: &str = "aclrtHostMemMapCapabilities";
    let id = u32::try_from(device.id()).map_err(|_| {
        Error::invalid(
            Call::new("host_register::host_mem_map_capabilities", API),
            format!("device id {} is negative", device.id()),
        )
    })?;
    device.make_current()?;
    let mut capability = sys::ACL_RT_HOST_MEM_MAP_NOT_SUPPORTED;
    // SAFETY: `capability` is a valid out-pointer for the call.
    check(API, unsafe {
        sys::aclrtHostMemMapCapabilities(id, hac.raw(), &mut capability)
    })?;
    Ok(capability == sys::ACL_RT_HOST_MEM_MAP_SUPPORTED)
}

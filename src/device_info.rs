//! Device queries: [`DeviceAttribute`] and [`Device::info`]
//! (`aclrtGetDeviceInfo`), [`Device::status`] (`aclrtQueryDeviceStatus`),
//! [`Device::utilization`] (`aclrtGetDeviceUtilizationRate`) and
//! [`Device::stream_priority_range`] (`aclrtDeviceGetStreamPriorityRange`).

use crate::Device;
use crate::error::{Call, Error, Result, check};
use ascend_sys as sys;

/// An attribute of a device that [`Device::info`] reads (`aclrtDevAttr`).
/// Some attributes exist only on some chips: the others are refused with
/// the runtime's code.
///
/// ```
/// use ascend::{Device, DeviceAttribute};
/// let device = Device::new(0)?;
/// let vector_cores = device.info(DeviceAttribute::VectorCores)?; // to size a kernel's grid
/// assert!(vector_cores > 0);
/// # Ok::<(), ascend::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DeviceAttribute {
    /// AI CPUs. (`ACL_DEV_ATTR_AICPU_CORE_NUM`)
    AiCpuCores,
    /// AI cores. (`ACL_DEV_ATTR_AICORE_CORE_NUM`)
    AiCores,
    /// Cube cores. (`ACL_DEV_ATTR_CUBE_CORE_NUM`)
    CubeCores,
    /// Vector cores. (`ACL_DEV_ATTR_VECTOR_CORE_NUM`)
    VectorCores,
    /// Threads in a warp. (`ACL_DEV_ATTR_WARP_SIZE`)
    WarpSize,
    /// Most threads running at once on one vector core. (`ACL_DEV_ATTR_MAX_THREAD_PER_VECTOR_CORE`)
    MaxThreadsPerVectorCore,
    /// Local (unified buffer) memory of one vector core, in bytes. (`ACL_DEV_ATTR_UBUF_PER_VECTOR_CORE`)
    UbufPerVectorCore,
    /// Largest grid size along x. (`ACL_DEV_ATTR_MAX_GRID_DIM_X`)
    MaxGridDimX,
    /// Largest grid size along y. (`ACL_DEV_ATTR_MAX_GRID_DIM_Y`)
    MaxGridDimY,
    /// Largest grid size along z. (`ACL_DEV_ATTR_MAX_GRID_DIM_Z`)
    MaxGridDimZ,
    /// Most blocks in a grid. (`ACL_DEV_ATTR_MAX_BLOCK_PER_GRID`)
    MaxBlocksPerGrid,
    /// Most threads in a block. (`ACL_DEV_ATTR_MAX_THREADS_PER_BLOCK`)
    MaxThreadsPerBlock,
    /// Largest block size along x. (`ACL_DEV_ATTR_MAX_BLOCK_DIM_X`)
    MaxBlockDimX,
    /// Largest block size along y. (`ACL_DEV_ATTR_MAX_BLOCK_DIM_Y`)
    MaxBlockDimY,
    /// Largest block size along z. (`ACL_DEV_ATTR_MAX_BLOCK_DIM_Z`)
    MaxBlockDimZ,
    /// Global memory of the device, in bytes. (`ACL_DEV_ATTR_TOTAL_GLOBAL_MEM_SIZE`)
    TotalGlobalMemory,
    /// L2 cache size, in bytes. (`ACL_DEV_ATTR_L2_CACHE_SIZE`)
    L2CacheSize,
    /// Identifies the OS the device runs under: devices under one OS report the same. (`ACL_DEV_ATTR_SMP_ID`)
    SmpId,
    /// Physical chip id. (`ACL_DEV_ATTR_PHY_CHIP_ID`)
    PhysicalChipId,
    /// Device id within its super pod. (`ACL_DEV_ATTR_SUPER_POD_DEVICE_ID`)
    SuperPodDeviceId,
    /// Server id within its super pod. (`ACL_DEV_ATTR_SUPER_POD_SERVER_ID`)
    SuperPodServerId,
    /// Super pod id. (`ACL_DEV_ATTR_SUPER_POD_ID`)
    SuperPodId,
    /// 1 when custom operators run privileged. (`ACL_DEV_ATTR_CUST_OP_PRIVILEGE`)
    CustomOpPrivilege,
    /// Mainboard id. (`ACL_DEV_ATTR_MAINBOARD_ID`)
    MainboardId,
    /// How the host reaches the device (0 PCIe, 1 HCCS, 2 UB). (`ACL_DEV_ATTR_HD_CONNECT_TYPE`)
    HostDeviceConnection,
    /// Form factor (0 pod, 1 A.K, 2 A.X, 3 PCIe card). (`ACL_DEV_ATTR_DEVICE_FORM_FACTOR`)
    FormFactor,
    /// Chassis id within its super pod. (`ACL_DEV_ATTR_SUPER_POD_CHASSIS_ID`)
    SuperPodChassisId,
    /// 1 when the device is a compute-power split (virtual) device. (`ACL_DEV_ATTR_IS_VIRTUAL`)
    IsVirtual,
    /// NPU architecture number. (`ACL_DEV_ATTR_NPU_ARCH`)
    NpuArch,
}

impl DeviceAttribute {
    /// The runtime's value.
    ///
    /// ```
    /// use ascend::DeviceAttribute;
    /// assert_eq!(DeviceAttribute::AiCores.to_raw(), ascend::sys::ACL_DEV_ATTR_AICORE_CORE_NUM);
    /// ```
    pub fn to_raw(self) -> sys::aclrtDevAttr {
        match self {
            DeviceAttribute::AiCpuCores => sys::ACL_DEV_ATTR_AICPU_CORE_NUM,
            DeviceAttribute::AiCores => sys::ACL_DEV_ATTR_AICORE_CORE_NUM,
            DeviceAttribute::CubeCores => sys::ACL_DEV_ATTR_CUBE_CORE_NUM,
            DeviceAttribute::VectorCores => sys::ACL_DEV_ATTR_VECTOR_CORE_NUM,
            DeviceAttribute::WarpSize => sys::ACL_DEV_ATTR_WARP_SIZE,
            DeviceAttribute::MaxThreadsPerVectorCore => sys::ACL_DEV_ATTR_MAX_THREAD_PER_VECTOR_CORE,
            DeviceAttribute::UbufPerVectorCore => sys::ACL_DEV_ATTR_UBUF_PER_VECTOR_CORE,
            DeviceAttribute::MaxGridDimX => sys::ACL_DEV_ATTR_MAX_GRID_DIM_X,
            DeviceAttribute::MaxGridDimY => sys::ACL_DEV_ATTR_MAX_GRID_DIM_Y,
            DeviceAttribute::MaxGridDimZ => sys::ACL_DEV_ATTR_MAX_GRID_DIM_Z,
            DeviceAttribute::MaxBlocksPerGrid => sys::ACL_DEV_ATTR_MAX_BLOCK_PER_GRID,
            DeviceAttribute::MaxThreadsPerBlock => sys::ACL_DEV_ATTR_MAX_THREADS_PER_BLOCK,
            DeviceAttribute::MaxBlockDimX => sys::ACL_DEV_ATTR_MAX_BLOCK_DIM_X,
            DeviceAttribute::MaxBlockDimY => sys::ACL_DEV_ATTR_MAX_BLOCK_DIM_Y,
            DeviceAttribute::MaxBlockDimZ => sys::ACL_DEV_ATTR_MAX_BLOCK_DIM_Z,
            DeviceAttribute::TotalGlobalMemory => sys::ACL_DEV_ATTR_TOTAL_GLOBAL_MEM_SIZE,
            DeviceAttribute::L2CacheSize => sys::ACL_DEV_ATTR_L2_CACHE_SIZE,
            DeviceAttribute::SmpId => sys::ACL_DEV_ATTR_SMP_ID,
            DeviceAttribute::PhysicalChipId => sys::ACL_DEV_ATTR_PHY_CHIP_ID,
            DeviceAttribute::SuperPodDeviceId => sys::ACL_DEV_ATTR_SUPER_POD_DEVICE_ID,
            DeviceAttribute::SuperPodServerId => sys::ACL_DEV_ATTR_SUPER_POD_SERVER_ID,
            DeviceAttribute::SuperPodId => sys::ACL_DEV_ATTR_SUPER_POD_ID,
            DeviceAttribute::CustomOpPrivilege => sys::ACL_DEV_ATTR_CUST_OP_PRIVILEGE,
            DeviceAttribute::MainboardId => sys::ACL_DEV_ATTR_MAINBOARD_ID,
            DeviceAttribute::HostDeviceConnection => sys::ACL_DEV_ATTR_HD_CONNECT_TYPE,
            DeviceAttribute::FormFactor => sys::ACL_DEV_ATTR_DEVICE_FORM_FACTOR,
            DeviceAttribute::SuperPodChassisId => sys::ACL_DEV_ATTR_SUPER_POD_CHASSIS_ID,
            DeviceAttribute::IsVirtual => sys::ACL_DEV_ATTR_IS_VIRTUAL,
            DeviceAttribute::NpuArch => sys::ACL_DEV_ATTR_NPU_ARCH,
        }
    }
}

/// Whether a device is usable (`aclrtDeviceStatus`).
///
/// ```
/// use ascend::{Device, DeviceStatus};
/// match Device::new(0)?.status()? {
///     DeviceStatus::Normal => {}
///     other => eprintln!("device 0 is not usable: {other:?}"),
/// }
/// # Ok::<(), ascend::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DeviceStatus {
    /// The device works (`ACL_RT_DEVICE_STATUS_NORMAL`).
    Normal,
    /// The device is faulty (`ACL_RT_DEVICE_STATUS_ABNORMAL`).
    Abnormal,
    /// A value this crate does not know, as the runtime wrote it.
    Other(u32),
}

/// How busy a device's units are, in percent (`aclrtUtilizationInfo`).
///
/// ```
/// let busy = ascend::Device::new(0)?.utilization()?;
/// assert!([busy.cube, busy.vector, busy.aicpu, busy.memory].iter().all(|p| (0..=100).contains(p)));
/// # Ok::<(), ascend::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Utilization {
    /// Cube cores.
    pub cube: i32,
    /// Vector cores.
    pub vector: i32,
    /// AI CPUs.
    pub aicpu: i32,
    /// Device memory.
    pub memory: i32,
}

/// The stream priorities a device accepts
/// (`aclrtDeviceGetStreamPriorityRange`): `greatest` is the highest
/// priority (numerically smallest), `least` the lowest.
///
/// ```
/// let range = ascend::Device::new(0)?.stream_priority_range()?;
/// assert!(range.greatest <= range.least);
/// # Ok::<(), ascend::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PriorityRange {
    /// The lowest priority (numerically largest).
    pub least: i32,
    /// The highest priority (numerically smallest).
    pub greatest: i32,
}

impl Device {
    /// Reads attribute `attribute` of this device (`aclrtGetDeviceInfo`;
    /// no device needs to be current). The software device reports an
    /// Ascend 910B2's values (see `docs/runtime-choices.md`).
    ///
    /// # Errors
    ///
    /// The runtime's code: `ACL_ERROR_RT_FEATURE_NOT_SUPPORT` for an
    /// attribute this chip does not have.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, DeviceAttribute};
    /// let device = Device::new(0)?;
    /// let cube = device.info(DeviceAttribute::CubeCores)?;
    /// let memory = device.info(DeviceAttribute::TotalGlobalMemory)?;
    /// assert!(cube > 0 && memory > 0);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtGetDeviceInfo")]
    pub fn info(&self, attribute: DeviceAttribute) -> Result<i64> {
        let id = u32::try_from(self.id()).map_err(|_| {
            Error::invalid(
                Call::new("Device::info", "aclrtGetDeviceInfo"),
                format!("device id {} is negative", self.id()),
            )
        })?;
        let mut value = 0_i64;
        // SAFETY: `value` is a valid out-pointer; the attribute is valid.
        check("aclrtGetDeviceInfo", unsafe {
            sys::aclrtGetDeviceInfo(id, attribute.to_raw(), &mut value)
        })?;
        Ok(value)
    }

    /// Whether this device is usable (`aclrtQueryDeviceStatus`). The
    /// software device reports [`DeviceStatus::Abnormal`] once a task of
    /// the device failed with a device fault.
    ///
    /// # Errors
    ///
    /// The runtime's code.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{Device, DeviceStatus};
    /// let device = Device::new(0)?;
    /// assert_eq!(device.status()?, DeviceStatus::Normal);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtQueryDeviceStatus")]
    pub fn status(&self) -> Result<DeviceStatus> {
        let mut status = sys::ACL_RT_DEVICE_STATUS_END;
        // SAFETY: `status` is a valid out-pointer.
        check("aclrtQueryDeviceStatus", unsafe {
            sys::aclrtQueryDeviceStatus(self.id(), &mut status)
        })?;
        Ok(match status {
            sys::ACL_RT_DEVICE_STATUS_NORMAL => DeviceStatus::Normal,
            sys::ACL_RT_DEVICE_STATUS_ABNORMAL => DeviceStatus::Abnormal,
            other => DeviceStatus::Other(other),
        })
    }

    /// How busy this device's units are (`aclrtGetDeviceUtilizationRate`).
    /// The software device runs no kernels: its cube, vector and AI CPU
    /// figures are 0, and memory is the share of its capacity in use.
    ///
    /// # Errors
    ///
    /// The runtime's code.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::Device;
    /// let device = Device::new(0)?;
    /// let busy = device.utilization()?;
    /// assert!((0..=100).contains(&busy.memory));
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtGetDeviceUtilizationRate")]
    pub fn utilization(&self) -> Result<Utilization> {
        let mut info = sys::aclrtUtilizationInfo {
            cubeUtilization: 0,
            vectorUtilization: 0,
            aicpuUtilization: 0,
            memoryUtilization: 0,
            utilizationExtend: std::ptr::null_mut(),
        };
        // SAFETY: `info` is a valid out-pointer whose reserved field is NULL.
        check("aclrtGetDeviceUtilizationRate", unsafe {
            sys::aclrtGetDeviceUtilizationRate(self.id(), &mut info)
        })?;
        Ok(Utilization {
            cube: info.cubeUtilization,
            vector: info.vectorUtilization,
            aicpu: info.aicpuUtilization,
            memory: info.memoryUtilization,
        })
    }

    /// The stream priorities the device accepts
    /// (`aclrtDeviceGetStreamPriorityRange`), for
    /// [`StreamPriority::new`](crate::stream::StreamPriority::new): 0 (the highest)
    /// to 7 on the chips the runtime supports.
    ///
    /// # Errors
    ///
    /// The runtime's code.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::Device;
    /// let range = Device::new(0)?.stream_priority_range()?;
    /// assert!(range.greatest <= range.least);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtDeviceGetStreamPriorityRange")]
    pub fn stream_priority_range(&self) -> Result<PriorityRange> {
        self.make_current()?;
        let (mut least, mut greatest) = (0_i32, 0_i32);
        // SAFETY: both are valid out-pointers.
        check("aclrtDeviceGetStreamPriorityRange", unsafe {
            sys::aclrtDeviceGetStreamPriorityRange(&mut least, &mut greatest)
        })?;
        Ok(PriorityRange { least, greatest })
    }
}

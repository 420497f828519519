//! [`CoreKind`] and [`Device::resource_limit`]: how many cores of a kind
//! the calling thread may use (`aclrtGetResInCurrentThread`); the
//! process's limits on a device ([`Device::res_limit`],
//! [`Device::set_res_limit`], [`Device::reset_res_limits`]).

use crate::Device;
use crate::error::{Result, check};
use ascend_sys as sys;

/// A kind of device core whose limit a thread can read
/// (`aclrtDevResLimitType`).
///
/// ```
/// use ascend::{CoreKind, Device};
/// let device = Device::new(0)?;
/// let cube = device.resource_limit(CoreKind::Cube)?;
/// let vector = device.resource_limit(CoreKind::Vector)?;
/// assert!(cube > 0 && vector > 0);
/// # Ok::<(), ascend::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CoreKind {
    /// Cube (AI) cores (`ACL_RT_DEV_RES_CUBE_CORE`).
    Cube,
    /// Vector cores (`ACL_RT_DEV_RES_VECTOR_CORE`).
    Vector,
}

impl CoreKind {
    /// The runtime's value, for a raw call such as
    /// `aclrtGetResInCurrentThread`.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{CoreKind, sys};
    /// assert_eq!(CoreKind::Cube.to_raw(), sys::ACL_RT_DEV_RES_CUBE_CORE);
    /// assert_eq!(CoreKind::Vector.to_raw(), sys::ACL_RT_DEV_RES_VECTOR_CORE);
    /// ```
    pub fn to_raw(self) -> sys::aclrtDevResLimitType {
        match self {
            CoreKind::Cube => sys::ACL_RT_DEV_RES_CUBE_CORE,
            CoreKind::Vector => sys::ACL_RT_DEV_RES_VECTOR_CORE,
        }
    }
}

impl Device {
    /// How many cores of `kind` the calling thread may use on this device
    /// (`aclrtGetResInCurrentThread`, with this device made current): the
    /// device's count, unless a limit narrowed it for the device
    /// ([`set_res_limit`](Self::set_res_limit)) or the thread. The software
    /// device runs no kernels and reports the counts of an Ascend 910B2 (24
    /// cube, 48 vector cores), narrowed by the device's limit.
    ///
    /// # Errors
    ///
    /// The runtime's code.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{CoreKind, Device};
    /// let device = Device::new(0)?;
    /// let cube = device.resource_limit(CoreKind::Cube)?;
    /// assert!(cube > 0);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtGetResInCurrentThread")]
    pub fn resource_limit(&self, kind: CoreKind) -> Result<u32> {
        self.make_current()?;
        let mut value = 0_u32;
        // SAFETY: `value` is a valid out-pointer; `kind` is a valid type.
        check("aclrtGetResInCurrentThread", unsafe {
            sys::aclrtGetResInCurrentThread(kind.to_raw(), &mut value)
        })?;
        Ok(value)
    }

    /// The process's limit of cores of `kind` on this device
    /// (`aclrtGetDeviceResLimit`): the last
    /// [`set_res_limit`](Self::set_res_limit), else the device's count.
    ///
    /// # Errors
    ///
    /// The runtime's code.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{CoreKind, Device};
    /// let device = Device::new(0)?;
    /// assert!(device.res_limit(CoreKind::Vector)? > 0);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtGetDeviceResLimit")]
    pub fn res_limit(&self, kind: CoreKind) -> Result<u32> {
        let mut value = 0_u32;
        // SAFETY: `value` is a valid out-pointer; `kind` is a valid type.
        check("aclrtGetDeviceResLimit", unsafe {
            sys::aclrtGetDeviceResLimit(self.id(), kind.to_raw(), &mut value)
        })?;
        Ok(value)
    }

    /// Limits the cores of `kind` the process's work queued from now on may
    /// use on this device (`aclrtSetDeviceResLimit`; work queued before
    /// keeps its cores). The limit is process-wide: every `Device` handle of
    /// this id sees it. The last setting wins.
    ///
    /// # Errors
    ///
    /// The runtime's code: the software device refuses 0 and values above
    /// the device's count with `ACL_ERROR_RT_PARAM_INVALID`.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{CoreKind, Device};
    /// let device = Device::new(0)?;
    /// device.set_res_limit(CoreKind::Cube, 8)?;
    /// assert_eq!(device.res_limit(CoreKind::Cube)?, 8);
    /// device.reset_res_limits()?;
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtSetDeviceResLimit")]
    pub fn set_res_limit(&self, kind: CoreKind, value: u32) -> Result<()> {
        // SAFETY: plain values.
        check("aclrtSetDeviceResLimit", unsafe {
            sys::aclrtSetDeviceResLimit(self.id(), kind.to_raw(), value)
        })
    }

    /// Removes the process's core limits on this device
    /// (`aclrtResetDeviceResLimit`).
    ///
    /// # Errors
    ///
    /// The runtime's code.
    ///
    /// # Examples
    ///
    /// ```
    /// use ascend::{CoreKind, Device};
    /// let device = Device::new(0)?;
    /// device.reset_res_limits()?;
    /// assert!(device.res_limit(CoreKind::Cube)? > 0);
    /// # Ok::<(), ascend::Error>(())
    /// ```
    #[doc(alias = "aclrtResetDeviceResLimit")]
    pub fn reset_res_limits(&self) -> Result<()> {
        // SAFETY: a plain value.
        check("aclrtResetDeviceResLimit", unsafe {
            sys::aclrtResetDeviceResLimit(self.id())
        })
    }
}

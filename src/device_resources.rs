//! [`CoreKind`] and [`Device::resource_limit`]: how many cores of a kind
//! the calling thread may use (`aclrtGetResInCurrentThread`).

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
    /// device's count, unless a limit narrowed it for the device or the
    /// thread. The software device runs no kernels and reports the counts
    /// of an Ascend 910B2 (24 cube, 48 vector cores).
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
}

//! Device resource limits (`aclrtSetDeviceResLimit` and its kin): how many
//! cores of each kind the process's later work may use on a device.
//!
//! The software device runs no kernels, so a limit changes what the
//! queries report and nothing else. This family's state is behind one leaf
//! lock (nothing is called while it is held), outside the lock order.

use crate::soft::core::soft_result::{SoftResult, fail};
use crate::types::*;
use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard};

/// The cube cores of one software device: an Ascend 910B2's count.
pub(crate) const CUBE_CORES: u32 = 24;
/// The vector cores of one software device: an Ascend 910B2's count.
pub(crate) const VECTOR_CORES: u32 = 48;

/// The limits set, by device and kind (`aclrtDevResLimitType`).
static LIMITS: Mutex<BTreeMap<(i32, aclrtDevResLimitType), u32>> = Mutex::new(BTreeMap::new());

fn limits() -> MutexGuard<'static, BTreeMap<(i32, aclrtDevResLimitType), u32>> {
    LIMITS.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The device's own count of cores of `kind`, or 107000 for a value that
/// is no `aclrtDevResLimitType`.
pub(crate) fn cores(kind: aclrtDevResLimitType) -> SoftResult<u32> {
    match kind {
        ACL_RT_DEV_RES_CUBE_CORE => Ok(CUBE_CORES),
        ACL_RT_DEV_RES_VECTOR_CORE => Ok(VECTOR_CORES),
        other => fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("type {other} is not an aclrtDevResLimitType (0 or 1)"),
        ),
    }
}

/// The cores of `kind` the process may use on `device` (the caller has
/// checked the device): the limit set, else the device's count.
pub(crate) fn limit(device: i32, kind: aclrtDevResLimitType) -> SoftResult<u32> {
    let all = cores(kind)?;
    Ok(limits().get(&(device, kind)).copied().unwrap_or(all))
}

/// Sets the limit of `kind` on `device` (the caller has checked the
/// device): 1 up to the device's count, else 107000 (the software device's
/// choice: the runtime leaves the range to the driver). The last setting
/// wins.
pub(crate) fn set_limit(device: i32, kind: aclrtDevResLimitType, value: u32) -> SoftResult {
    let all = cores(kind)?;
    if value == 0 || value > all {
        return fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("limit {value} is out of range: the device has {all} cores of type {kind} (1 to {all})"),
        );
    }
    limits().insert((device, kind), value);
    Ok(())
}

/// Removes every limit on `device` (the caller has checked the device).
pub(crate) fn reset_limits(device: i32) {
    limits().retain(|&(of, _), _| of != device);
}

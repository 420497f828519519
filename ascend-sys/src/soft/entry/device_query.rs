//! Entry points of the device queries of issue 41: attributes, stream
//! priorities, resource limits, status and utilization. The values the
//! software device reports are listed in `docs/runtime-choices.md`.
#![allow(non_snake_case)]

use super::*;
use crate::soft::compose::streams;
use crate::soft::res_limit;
use crate::soft::started;

/// The software device's value of attribute `attr` of `device` (checked),
/// or 107000 for a value that is no `aclrtDevAttr`, 207000 for attributes
/// of chips it does not model (SIMT limits of the Ascend 950 series,
/// super-pod placement of the Atlas A3 series).
fn device_attribute(device: i32, attr: aclrtDevAttr) -> SoftResult<i64> {
    let core = started::core()?.device(device)?;
    let value = match attr {
        ACL_DEV_ATTR_AICPU_CORE_NUM => 6,
        ACL_DEV_ATTR_AICORE_CORE_NUM | ACL_DEV_ATTR_CUBE_CORE_NUM => i64::from(res_limit::CUBE_CORES),
        ACL_DEV_ATTR_VECTOR_CORE_NUM => i64::from(res_limit::VECTOR_CORES),
        ACL_DEV_ATTR_UBUF_PER_VECTOR_CORE => 192 * 1024,
        ACL_DEV_ATTR_TOTAL_GLOBAL_MEM_SIZE => i64::try_from(core.capacity()).unwrap_or(i64::MAX),
        ACL_DEV_ATTR_L2_CACHE_SIZE => 192 * 1024 * 1024,
        ACL_DEV_ATTR_SMP_ID | ACL_DEV_ATTR_CUST_OP_PRIVILEGE | ACL_DEV_ATTR_MAINBOARD_ID | ACL_DEV_ATTR_IS_VIRTUAL => 0,
        ACL_DEV_ATTR_PHY_CHIP_ID => i64::from(device),
        // PCIe (`ACL_HOST_DEVICE_CONNECT_TYPE_PCIE`), a PCIe card
        // (`ACL_DEVICE_FORM_FACTOR_PCIE_CARD`).
        ACL_DEV_ATTR_HD_CONNECT_TYPE => 0,
        ACL_DEV_ATTR_DEVICE_FORM_FACTOR => 3,
        ACL_DEV_ATTR_NPU_ARCH => 2201,
        ACL_DEV_ATTR_WARP_SIZE
        | ACL_DEV_ATTR_MAX_THREAD_PER_VECTOR_CORE
        | ACL_DEV_ATTR_MAX_GRID_DIM_X..=ACL_DEV_ATTR_MAX_BLOCK_DIM_Z
        | ACL_DEV_ATTR_SUPER_POD_DEVICE_ID
        | ACL_DEV_ATTR_SUPER_POD_SERVER_ID
        | ACL_DEV_ATTR_SUPER_POD_ID
        | ACL_DEV_ATTR_SUPER_POD_CHASSIS_ID => {
            return fail(
                ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                format!("attribute {attr} is not reported by the chip the software device models (Ascend 910B2)"),
            );
        }
        other => {
            return fail(
                ACL_ERROR_RT_PARAM_INVALID,
                format!("attr {other} is not an aclrtDevAttr"),
            );
        }
    };
    Ok(value)
}

/// `aclrtGetDeviceInfo`: NULL value → 100000, the device id → 107001, then
/// the attribute (see [`device_attribute`]). Needs no current device.
pub(crate) unsafe fn aclrtGetDeviceInfo(deviceId: u32, attr: aclrtDevAttr, value: *mut i64) -> aclError {
    let outcome = non_null(value, "value").and_then(|()| {
        let device = i32::try_from(deviceId).unwrap_or(i32::MAX);
        let answer = device_attribute(device, attr)?;
        // SAFETY: checked non-NULL; valid by the call's contract.
        unsafe { put(value, answer) };
        Ok(())
    });
    finish("aclrtGetDeviceInfo", outcome)
}

/// `aclrtDeviceGetStreamPriorityRange`: NULL arguments → 100000; the
/// lowest priority is 7 and the highest 0 (the range the runtime clamps
/// `aclrtCreateStreamWithConfig`'s priority to).
pub(crate) unsafe fn aclrtDeviceGetStreamPriorityRange(
    leastPriority: *mut i32,
    greatestPriority: *mut i32,
) -> aclError {
    let outcome = non_null(leastPriority, "leastPriority")
        .and_then(|()| non_null(greatestPriority, "greatestPriority"))
        .map(|()| {
            let least = i32::try_from(streams::LEAST_PRIORITY).unwrap_or(i32::MAX);
            // SAFETY: both checked non-NULL; valid by the call's contract.
            unsafe {
                put(leastPriority, least);
                put(greatestPriority, 0);
            }
        });
    finish("aclrtDeviceGetStreamPriorityRange", outcome)
}

/// `aclrtGetDeviceResLimit`: NULL value → 100000, the device id → 107001,
/// the type → 107000; the limit set, else the device's count.
pub(crate) unsafe fn aclrtGetDeviceResLimit(deviceId: i32, type_: aclrtDevResLimitType, value: *mut u32) -> aclError {
    let outcome = non_null(value, "value").and_then(|()| {
        started::core()?.device(deviceId)?;
        let limit = res_limit::limit(deviceId, type_)?;
        // SAFETY: checked non-NULL; valid by the call's contract.
        unsafe { put(value, limit) };
        Ok(())
    });
    finish("aclrtGetDeviceResLimit", outcome)
}

/// `aclrtSetDeviceResLimit`: the device id → 107001, the type → 107000, a
/// value of 0 or above the device's count → 107000. The last setting wins.
pub(crate) unsafe fn aclrtSetDeviceResLimit(deviceId: i32, type_: aclrtDevResLimitType, value: u32) -> aclError {
    let outcome = started::core()
        .and_then(|core| core.device(deviceId).map(|_| ()))
        .and_then(|()| res_limit::set_limit(deviceId, type_, value));
    finish("aclrtSetDeviceResLimit", outcome)
}

/// `aclrtResetDeviceResLimit`: the device id → 107001; every limit on the
/// device goes.
pub(crate) unsafe fn aclrtResetDeviceResLimit(deviceId: i32) -> aclError {
    let outcome = started::core()
        .and_then(|core| core.device(deviceId).map(|_| ()))
        .map(|()| res_limit::reset_limits(deviceId));
    finish("aclrtResetDeviceResLimit", outcome)
}

/// `aclrtQueryDeviceStatus`: NULL status → 100000, the device id → 107001;
/// abnormal once a task of the device failed with a device fault (the
/// fault `aclrtGetErrorVerbose` reports), normal otherwise.
pub(crate) unsafe fn aclrtQueryDeviceStatus(deviceId: i32, deviceStatus: *mut aclrtDeviceStatus) -> aclError {
    let outcome = non_null(deviceStatus, "deviceStatus").and_then(|()| {
        started::core()?.device(deviceId)?;
        let status = match streams::device_fault(deviceId) {
            Some(_) => ACL_RT_DEVICE_STATUS_ABNORMAL,
            None => ACL_RT_DEVICE_STATUS_NORMAL,
        };
        // SAFETY: checked non-NULL; valid by the call's contract.
        unsafe { put(deviceStatus, status) };
        Ok(())
    });
    finish("aclrtQueryDeviceStatus", outcome)
}

/// `aclrtGetDeviceUtilizationRate`: NULL info → 100000, a non-NULL
/// `utilizationExtend` (reserved) → 100000, the device id → 107001. Cube,
/// vector and AI CPU utilization are 0 (no kernel runs); memory is the
/// percentage of the device's capacity in use, rounded down.
pub(crate) unsafe fn aclrtGetDeviceUtilizationRate(
    deviceId: i32,
    utilizationInfo: *mut aclrtUtilizationInfo,
) -> aclError {
    let outcome = non_null(utilizationInfo, "utilizationInfo").and_then(|()| {
        // SAFETY: checked non-NULL; valid for reads and writes of an
        // `aclrtUtilizationInfo` by the call's contract.
        let extend = unsafe { (&raw const (*utilizationInfo).utilizationExtend).read() };
        if !extend.is_null() {
            return fail(
                ACL_ERROR_INVALID_PARAM,
                "utilizationInfo->utilizationExtend is reserved and must be NULL",
            );
        }
        let core = started::core()?.device(deviceId)?;
        let capacity = core.capacity().max(1);
        let used = capacity.saturating_sub(core.free_bytes());
        let memory = i32::try_from(used.saturating_mul(100) / capacity).unwrap_or(100);
        // SAFETY: as above; fields written one by one through the pointer.
        unsafe {
            (&raw mut (*utilizationInfo).cubeUtilization).write(0);
            (&raw mut (*utilizationInfo).vectorUtilization).write(0);
            (&raw mut (*utilizationInfo).aicpuUtilization).write(0);
            (&raw mut (*utilizationInfo).memoryUtilization).write(memory);
        }
        Ok(())
    });
    finish("aclrtGetDeviceUtilizationRate", outcome)
}

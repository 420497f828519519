//! Entry points of 3.2 Devices, contexts and peer access.
#![allow(non_snake_case, clippy::too_many_arguments)]

use super::*;
use crate::soft::compose::state_callbacks;
use crate::soft::peer;

/// Runs `change` between the device state callbacks `pre` (for a device id
/// in range) and `post` (when it succeeded).
fn with_device_state(
    device: i32,
    (pre, post): (aclrtDeviceState, aclrtDeviceState),
    change: impl FnOnce() -> SoftResult,
) -> SoftResult {
    let in_range = process::device_count().is_ok_and(|count| u32::try_from(device).is_ok_and(|id| id < count));
    if in_range {
        state_callbacks::device_changed(device, pre);
    }
    let outcome = change();
    if in_range && outcome.is_ok() {
        state_callbacks::device_changed(device, post);
    }
    outcome
}

const SET: (aclrtDeviceState, aclrtDeviceState) = (ACL_RT_DEVICE_STATE_SET_PRE, ACL_RT_DEVICE_STATE_SET_POST);
const RESET: (aclrtDeviceState, aclrtDeviceState) = (ACL_RT_DEVICE_STATE_RESET_PRE, ACL_RT_DEVICE_STATE_RESET_POST);

pub(crate) unsafe fn aclrtSetDevice(deviceId: i32) -> aclError {
    finish(
        "aclrtSetDevice",
        with_device_state(deviceId, SET, || process::set_device(deviceId)),
    )
}

pub(crate) unsafe fn aclrtResetDevice(deviceId: i32) -> aclError {
    finish(
        "aclrtResetDevice",
        with_device_state(deviceId, RESET, || process::reset_device(deviceId, false)),
    )
}

pub(crate) unsafe fn aclrtResetDeviceForce(deviceId: i32) -> aclError {
    finish(
        "aclrtResetDeviceForce",
        with_device_state(deviceId, RESET, || process::reset_device(deviceId, true)),
    )
}

pub(crate) unsafe fn aclrtGetDevice(deviceId: *mut i32) -> aclError {
    finish(
        "aclrtGetDevice",
        non_null(deviceId, "deviceId").and_then(|()| {
            let device = current::require()?;
            // SAFETY: checked non-NULL; valid by the call's contract.
            unsafe { put(deviceId, device) };
            Ok(())
        }),
    )
}

pub(crate) unsafe fn aclrtGetDeviceCount(count: *mut u32) -> aclError {
    finish(
        "aclrtGetDeviceCount",
        non_null(count, "count").and_then(|()| {
            let devices = process::device_count()?;
            // SAFETY: checked non-NULL; valid by the call's contract.
            unsafe { put(count, devices) };
            Ok(())
        }),
    )
}

pub(crate) unsafe fn aclrtGetRunMode(runMode: *mut aclrtRunMode) -> aclError {
    finish(
        "aclrtGetRunMode",
        non_null(runMode, "runMode").map(|()| {
            // SAFETY: checked non-NULL; valid by the call's contract.
            unsafe { put(runMode, ACL_HOST) }
        }),
    )
}

pub(crate) unsafe fn aclrtSynchronizeDevice() -> aclError {
    finish(
        "aclrtSynchronizeDevice",
        crate::soft::compose::streams::synchronize_device(None),
    )
}

pub(crate) unsafe fn aclrtSynchronizeDeviceWithTimeout(timeout: i32) -> aclError {
    finish(
        "aclrtSynchronizeDeviceWithTimeout",
        crate::soft::compose::streams::deadline(timeout).and_then(crate::soft::compose::streams::synchronize_device),
    )
}

pub(crate) unsafe fn aclrtDeviceGetBareTgid(pid: *mut i32) -> aclError {
    finish(
        "aclrtDeviceGetBareTgid",
        non_null(pid, "pid").map(|()| {
            let id = rustix::process::getpid().as_raw_nonzero().get();
            // SAFETY: checked non-NULL; valid by the call's contract.
            unsafe { put(pid, id) }
        }),
    )
}

// ---- 3.4 device memory, copy, set -------------------------------------------

// ---- contexts ----------------------------------------------------------------

pub(crate) unsafe fn aclrtCreateContext(context: *mut aclrtContext, deviceId: i32) -> aclError {
    finish(
        "aclrtCreateContext",
        non_null(context, "context").and_then(|()| {
            let handle = context::create(deviceId)?;
            // SAFETY: checked non-NULL; valid by the call's contract.
            unsafe { put(context, handle as aclrtContext) };
            Ok(())
        }),
    )
}

pub(crate) unsafe fn aclrtDestroyContext(context: aclrtContext) -> aclError {
    finish(
        "aclrtDestroyContext",
        non_null(context, "context").and_then(|()| context::destroy(context as usize)),
    )
}

pub(crate) unsafe fn aclrtSetCurrentContext(context: aclrtContext) -> aclError {
    finish(
        "aclrtSetCurrentContext",
        non_null(context, "context").and_then(|()| context::set_current(context as usize)),
    )
}

pub(crate) unsafe fn aclrtGetCurrentContext(context: *mut aclrtContext) -> aclError {
    finish(
        "aclrtGetCurrentContext",
        non_null(context, "context").and_then(|()| {
            let handle = context::get_current()?;
            // SAFETY: checked non-NULL; valid by the call's contract.
            unsafe { put(context, handle as aclrtContext) };
            Ok(())
        }),
    )
}

pub(crate) unsafe fn aclrtCtxGetCurrentDefaultStream(stream: *mut aclrtStream) -> aclError {
    finish(
        "aclrtCtxGetCurrentDefaultStream",
        non_null(stream, "stream").and_then(|()| {
            let handle = crate::soft::compose::streams::current_default_stream()?;
            // SAFETY: checked non-NULL; valid by the call's contract.
            unsafe { put(stream, handle as aclrtStream) };
            Ok(())
        }),
    )
}

/// `aclrtGetResInCurrentThread`: the ACL layer's NULL check, then the
/// runtime's: a type outside `aclrtDevResLimitType` → 107000, no current
/// context → 107002. The cores of an Ascend 910B2 (24 cube, 48 vector),
/// narrowed by a limit `aclrtSetDeviceResLimit` set on the current device.
pub(crate) unsafe fn aclrtGetResInCurrentThread(type_: aclrtDevResLimitType, value: *mut u32) -> aclError {
    let outcome = non_null(value, "value").and_then(|()| {
        crate::soft::res_limit::cores(type_)?;
        let device = current::require()?;
        let count = crate::soft::res_limit::limit(device, type_)?;
        // SAFETY: checked non-NULL; valid by the call's contract.
        unsafe { put(value, count) };
        Ok(())
    });
    finish("aclrtGetResInCurrentThread", outcome)
}

// ---- peer access ---------------------------------------------------------------

pub(crate) unsafe fn aclrtDeviceCanAccessPeer(canAccessPeer: *mut i32, deviceId: i32, peerDeviceId: i32) -> aclError {
    let outcome = (|| {
        if deviceId == peerDeviceId {
            return fail(
                ACL_ERROR_INVALID_PARAM,
                format!("deviceId {deviceId} is equal to peerDeviceId"),
            );
        }
        let answer = peer::can_access(deviceId, peerDeviceId)?;
        // The ACL layer does not check this pointer; the runtime does, after
        // the device ids, with its "invalid value" code.
        if canAccessPeer.is_null() {
            return fail(ACL_ERROR_RT_PARAM_INVALID, "canAccessPeer is NULL");
        }
        // SAFETY: checked non-NULL; valid by the call's contract.
        unsafe { put(canAccessPeer, answer) };
        Ok(())
    })();
    finish("aclrtDeviceCanAccessPeer", outcome)
}

pub(crate) unsafe fn aclrtDeviceEnablePeerAccess(peerDeviceId: i32, flags: u32) -> aclError {
    let outcome = if flags != 0 {
        fail(
            ACL_ERROR_FEATURE_UNSUPPORTED,
            format!("flags {flags:#x} is reserved and must be 0"),
        )
    } else {
        peer::enable(peerDeviceId)
    };
    finish("aclrtDeviceEnablePeerAccess", outcome)
}

pub(crate) unsafe fn aclrtDeviceDisablePeerAccess(peerDeviceId: i32) -> aclError {
    finish("aclrtDeviceDisablePeerAccess", peer::disable(peerDeviceId))
}

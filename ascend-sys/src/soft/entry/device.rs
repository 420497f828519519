//! Entry points of 3.2 Devices, contexts and peer access.
#![allow(non_snake_case, clippy::too_many_arguments)]

use super::*;

pub(crate) unsafe fn aclrtSetDevice(deviceId: i32) -> aclError {
    finish("aclrtSetDevice", process::set_device(deviceId))
}

pub(crate) unsafe fn aclrtResetDevice(deviceId: i32) -> aclError {
    finish("aclrtResetDevice", process::reset_device(deviceId, false))
}

pub(crate) unsafe fn aclrtResetDeviceForce(deviceId: i32) -> aclError {
    finish("aclrtResetDeviceForce", process::reset_device(deviceId, true))
}

pub(crate) unsafe fn aclrtGetDevice(deviceId: *mut i32) -> aclError {
    finish(
        "aclrtGetDevice",
        non_null(deviceId, "deviceId").and_then(|()| {
            let device = context::require()?;
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
    // No queued work exists yet on the software device: synchronising only
    // needs a current device.
    finish("aclrtSynchronizeDevice", context::require().map(|_| ()))
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

not_emulated! {
    fn aclrtCreateContext(context: *mut aclrtContext, deviceId: i32) -> aclError;
    fn aclrtDestroyContext(context: aclrtContext) -> aclError;
    fn aclrtSetCurrentContext(context: aclrtContext) -> aclError;
    fn aclrtGetCurrentContext(context: *mut aclrtContext) -> aclError;
    fn aclrtSynchronizeDeviceWithTimeout(timeout: i32) -> aclError;
    fn aclrtDeviceCanAccessPeer(canAccessPeer: *mut i32, deviceId: i32, peerDeviceId: i32) -> aclError;
    fn aclrtDeviceEnablePeerAccess(peerDeviceId: i32, flags: u32) -> aclError;
    fn aclrtDeviceDisablePeerAccess(peerDeviceId: i32) -> aclError;
}

//! Helpers shared by the software-device rule tests (`tests/soft_*.rs`):
//! select the software device, run a body on a fresh thread with or without
//! a current device, and read `aclGetRecentErrMsg`.

#![allow(dead_code)]

pub mod peer;
pub mod raw;
pub mod sanitize;

use ascend_sys::*;
use std::ffi::CStr;
use std::process::{Command, Output};

/// Selects the software device for this process.
pub fn software() {
    select_backend(BackendRequest::Software).expect("software device");
}

/// Runs `body` on a fresh thread with device 0 current.
pub fn on_device<R: Send>(body: impl FnOnce() -> R + Send) -> R {
    on_device_id(0, body)
}

/// Runs `body` with `device` retained by this thread (`aclrtSetDevice`
/// before, `aclrtResetDevice` after), so that a reset inside `body` — by a
/// thread of [`on_device_id`], say — is not the last one, which would tear
/// down the device's streams, events and memory as on hardware.
pub fn holding_device<R>(device: i32, body: impl FnOnce() -> R) -> R {
    software();
    // SAFETY: no pointer arguments.
    assert_eq!(unsafe { aclrtSetDevice(device) }, ACL_SUCCESS);
    let result = body();
    // SAFETY: no pointer arguments; balances the retain above.
    assert_eq!(unsafe { aclrtResetDevice(device) }, ACL_SUCCESS);
    result
}

/// Runs `body` on a fresh thread with `device` current.
pub fn on_device_id<R: Send>(device: i32, body: impl FnOnce() -> R + Send) -> R {
    software();
    std::thread::scope(|scope| {
        scope
            .spawn(|| {
                // SAFETY: no pointer arguments.
                assert_eq!(unsafe { aclrtSetDevice(device) }, ACL_SUCCESS);
                let result = body();
                // SAFETY: no pointer arguments.
                assert_eq!(unsafe { aclrtResetDevice(device) }, ACL_SUCCESS);
                result
            })
            .join()
            .expect("test thread panicked")
    })
}

/// Runs `body` on a fresh thread that has no current device.
pub fn without_device<R: Send>(body: impl FnOnce() -> R + Send) -> R {
    software();
    std::thread::scope(|scope| scope.spawn(body).join().expect("test thread panicked"))
}

/// Pinned device memory of `device` with huge pages (`ACL_HBM_MEM_HUGE`),
/// the properties most VMM tests allocate with.
pub fn device_prop(device: u32) -> aclrtPhysicalMemProp {
    aclrtPhysicalMemProp {
        handleType: ACL_MEM_HANDLE_TYPE_NONE,
        allocationType: ACL_MEM_ALLOCATION_TYPE_PINNED,
        memAttr: ACL_HBM_MEM_HUGE,
        location: aclrtMemLocation {
            id: device,
            type_: ACL_MEM_LOCATION_TYPE_DEVICE,
        },
        reserve: 0,
    }
}

/// A physical allocation of `size` bytes on device 0 ([`device_prop`]).
pub fn physical(size: usize) -> aclrtDrvMemHandle {
    let mut handle = std::ptr::null_mut();
    // SAFETY: valid out-pointer and property.
    assert_eq!(
        unsafe { aclrtMallocPhysical(&mut handle, size, &device_prop(0), 0) },
        ACL_SUCCESS,
        "aclrtMallocPhysical of {size} bytes"
    );
    handle
}

/// This thread's `aclGetRecentErrMsg`, which a failure must have set.
pub fn recent() -> String {
    // SAFETY: no arguments; the result is copied at once.
    let text = unsafe { aclGetRecentErrMsg() };
    assert!(!text.is_null(), "a failure must leave a message");
    // SAFETY: non-NULL C string valid until the next call on this thread.
    unsafe { CStr::from_ptr(text) }.to_string_lossy().into_owned()
}

/// Runs the `#[ignore]`d test `name` of this test binary alone in a fresh
/// process on the software device, with `envs` added to its environment,
/// and returns what it did.
pub fn child_output(name: &str, envs: &[(&str, &str)]) -> Output {
    Command::new(std::env::current_exe().expect("test binary"))
        .args(["--exact", name, "--ignored", "--nocapture"])
        .env("ASCEND_BACKEND", "software")
        .envs(envs.iter().copied())
        .output()
        .expect("start the child test")
}

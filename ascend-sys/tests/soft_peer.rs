//! The software device's peer-access rules (`acl-behaviour.md` §11) and the
//! rule that a copy between two devices needs peer access. Peer access is
//! process-wide state, so each test uses its own pair of devices (this file
//! runs the software device with four). Software device only.

mod soft_common;

use ascend_sys::*;
use soft_common::raw::malloc;
use soft_common::{on_device_id as on_device, recent, without_device};
use std::ffi::c_void;
use std::ptr::null_mut;

fn software() {
    select_backend(BackendRequest::Software).expect("software device");
    soft::configure(soft::Config {
        device_count: 4,
        ..soft::Config::default()
    })
    .expect("four devices");
}

fn set_device(device: i32) {
    // SAFETY: no pointer arguments.
    assert_eq!(unsafe { aclrtSetDevice(device) }, ACL_SUCCESS);
}

fn reset_device(device: i32) {
    // SAFETY: no pointer arguments.
    assert_eq!(unsafe { aclrtResetDevice(device) }, ACL_SUCCESS);
}

fn copy(dst: *mut c_void, src: *mut c_void, count: usize) -> aclError {
    // SAFETY: both are live device allocations of at least `count` bytes.
    unsafe { aclrtMemcpy(dst, count, src, count, ACL_MEMCPY_DEVICE_TO_DEVICE) }
}

fn enable(peer: i32) -> aclError {
    // SAFETY: no pointer arguments.
    unsafe { aclrtDeviceEnablePeerAccess(peer, 0) }
}

fn disable(peer: i32) -> aclError {
    // SAFETY: no pointer arguments.
    unsafe { aclrtDeviceDisablePeerAccess(peer) }
}

#[test]
fn can_access_peer_checks_ids_and_answers_yes() {
    // Configure before anything can start the device with the defaults.
    software();
    without_device(|| {
        let mut can = -1;
        // SAFETY: valid out-pointer, or NULL refused before any write.
        unsafe {
            // No context needed.
            assert_eq!(aclrtDeviceCanAccessPeer(&mut can, 0, 1), ACL_SUCCESS);
            assert_eq!(can, 1);
            can = -1;
            assert_eq!(aclrtDeviceCanAccessPeer(&mut can, 3, 2), ACL_SUCCESS);
            assert_eq!(can, 1);
            assert_eq!(aclrtDeviceCanAccessPeer(&mut can, 1, 1), ACL_ERROR_INVALID_PARAM);
            assert!(recent().contains("equal"));
            assert_eq!(aclrtDeviceCanAccessPeer(&mut can, 0, 4), ACL_ERROR_RT_INVALID_DEVICEID);
            assert_eq!(aclrtDeviceCanAccessPeer(&mut can, 0, -1), ACL_ERROR_RT_INVALID_DEVICEID);
            assert_eq!(aclrtDeviceCanAccessPeer(&mut can, 7, 0), ACL_ERROR_RT_INVALID_DEVICEID);
            // The ACL layer does not check the out-pointer; the runtime does,
            // after the ids, with its "invalid value" code.
            assert_eq!(aclrtDeviceCanAccessPeer(null_mut(), 0, 1), ACL_ERROR_RT_PARAM_INVALID);
            assert_eq!(aclrtDeviceCanAccessPeer(null_mut(), 0, 0), ACL_ERROR_INVALID_PARAM);
            assert_eq!(
                aclrtDeviceCanAccessPeer(null_mut(), 0, 9),
                ACL_ERROR_RT_INVALID_DEVICEID
            );
        }
    });
}

#[test]
fn enable_and_disable_check_their_arguments() {
    software();
    // Flags are checked first, even without a context.
    without_device(|| {
        assert_eq!(enable_with_flags(2, 1), ACL_ERROR_FEATURE_UNSUPPORTED);
        assert_eq!(enable(2), ACL_ERROR_RT_CONTEXT_NULL);
        assert_eq!(disable(2), ACL_ERROR_RT_CONTEXT_NULL);
    });
    on_device(3, || {
        assert_eq!(enable_with_flags(2, 0x80), ACL_ERROR_FEATURE_UNSUPPORTED);
        assert_eq!(enable(3), ACL_ERROR_INVALID_PARAM);
        assert!(recent().contains("current device"));
        assert_eq!(disable(3), ACL_ERROR_INVALID_PARAM);
        assert_eq!(enable(4), ACL_ERROR_RT_INVALID_DEVICEID);
        assert_eq!(enable(-1), ACL_ERROR_RT_INVALID_DEVICEID);
        assert_eq!(disable(4), ACL_ERROR_RT_INVALID_DEVICEID);
        // Software-device choices: enabling twice succeeds; disabling what is
        // not enabled is ACL_ERROR_RT_PARAM_INVALID.
        assert_eq!(disable(2), ACL_ERROR_RT_PARAM_INVALID);
        assert!(recent().contains("not enabled"));
        assert_eq!(enable(2), ACL_SUCCESS);
        assert_eq!(enable(2), ACL_SUCCESS);
        assert_eq!(disable(2), ACL_SUCCESS);
        assert_eq!(disable(2), ACL_ERROR_RT_PARAM_INVALID);
    });
}

fn enable_with_flags(peer: i32, flags: u32) -> aclError {
    // SAFETY: no pointer arguments.
    unsafe { aclrtDeviceEnablePeerAccess(peer, flags) }
}

/// Software-device choice: a copy between devices without peer access is
/// ACL_ERROR_RT_PARAM_INVALID. Access is one-directional, from the current
/// device, and lets it copy both ways.
#[test]
fn cross_device_copies_need_peer_access_from_the_current_device() {
    software();
    std::thread::spawn(|| {
        const SIZE: usize = 8192;
        set_device(1);
        let on_1 = malloc(SIZE);
        set_device(0);
        let on_0 = malloc(SIZE);
        let pattern: Vec<u8> = (0..SIZE).map(|i| (i * 7 % 256) as u8).collect();
        let mut back = vec![0u8; SIZE];
        // SAFETY: host buffers of SIZE bytes; device allocations of SIZE.
        unsafe {
            assert_eq!(
                aclrtMemcpy(on_0, SIZE, pattern.as_ptr().cast(), SIZE, ACL_MEMCPY_HOST_TO_DEVICE),
                ACL_SUCCESS
            );
            // Host <-> another device's memory needs no peer access.
            assert_eq!(
                aclrtMemcpy(on_1, SIZE, back.as_ptr().cast(), SIZE, ACL_MEMCPY_HOST_TO_DEVICE),
                ACL_SUCCESS
            );
        }
        // Device 0 current, no access yet: both directions refused.
        assert_eq!(copy(on_1, on_0, SIZE), ACL_ERROR_RT_PARAM_INVALID);
        assert!(recent().contains("aclrtDeviceEnablePeerAccess(1, 0)"));
        assert_eq!(copy(on_0, on_1, 16), ACL_ERROR_RT_PARAM_INVALID);
        // Same-device copies are unaffected.
        let second = malloc(SIZE);
        assert_eq!(copy(second, on_0, SIZE), ACL_SUCCESS);
        assert_eq!(enable(1), ACL_SUCCESS);
        assert_eq!(copy(on_1, on_0, SIZE), ACL_SUCCESS);
        // SAFETY: `back` holds SIZE bytes; `on_1` is a live allocation.
        let code = unsafe { aclrtMemcpy(back.as_mut_ptr().cast(), SIZE, on_1, SIZE, ACL_MEMCPY_DEVICE_TO_HOST) };
        assert_eq!(code, ACL_SUCCESS);
        assert_eq!(back, pattern);
        assert_eq!(copy(second, on_1, SIZE), ACL_SUCCESS);
        // With device 1 current the copy needs 1 -> 0, which is not enabled.
        set_device(1);
        assert_eq!(copy(on_1, on_0, SIZE), ACL_ERROR_RT_PARAM_INVALID);
        assert!(recent().contains("aclrtDeviceEnablePeerAccess(0, 0) with device 1"));
        reset_device(1);
        set_device(0);
        assert_eq!(disable(1), ACL_SUCCESS);
        assert_eq!(copy(on_1, on_0, SIZE), ACL_ERROR_RT_PARAM_INVALID);
        // SAFETY: live allocations, each freed once (no context needed).
        unsafe {
            assert_eq!(aclrtFree(on_0), ACL_SUCCESS);
            assert_eq!(aclrtFree(on_1), ACL_SUCCESS);
            assert_eq!(aclrtFree(second), ACL_SUCCESS);
        }
        reset_device(0);
        reset_device(0);
        reset_device(1);
    })
    .join()
    .unwrap();
}

/// A third device driving a copy between two others needs access to both.
#[test]
fn a_third_device_needs_access_to_both_sides() {
    software();
    std::thread::spawn(|| {
        set_device(0);
        let on_0 = malloc(256);
        // The copy's source is written first (the sanitizer reports reads of
        // memory nothing wrote).
        // SAFETY: a live allocation of 256 bytes.
        assert_eq!(unsafe { aclrtMemset(on_0, 256, 0x5A, 256) }, ACL_SUCCESS);
        set_device(1);
        let on_1 = malloc(256);
        set_device(2);
        assert_eq!(copy(on_1, on_0, 256), ACL_ERROR_RT_PARAM_INVALID);
        assert!(recent().contains("device 2 (current) needs peer access to both"));
        assert_eq!(enable(0), ACL_SUCCESS);
        assert_eq!(copy(on_1, on_0, 256), ACL_ERROR_RT_PARAM_INVALID);
        assert_eq!(enable(1), ACL_SUCCESS);
        assert_eq!(copy(on_1, on_0, 256), ACL_SUCCESS);
        assert_eq!(disable(0), ACL_SUCCESS);
        assert_eq!(disable(1), ACL_SUCCESS);
        // SAFETY: live allocations, each freed once.
        unsafe {
            assert_eq!(aclrtFree(on_0), ACL_SUCCESS);
            assert_eq!(aclrtFree(on_1), ACL_SUCCESS);
        }
        for device in [0, 1, 2] {
            reset_device(device);
        }
    })
    .join()
    .unwrap();
}

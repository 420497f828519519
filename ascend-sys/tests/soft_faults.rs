//! Fault injection on the software device: the Nth call of a named function
//! fails with a chosen code and has no side effects. Software device only;
//! a file of its own because armed faults are process-wide.

mod soft_common;

use ascend_sys::*;
use std::ffi::CStr;
use std::ptr::null_mut;
use std::sync::Mutex;

/// The tests here arm process-wide faults: run them one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

fn software() -> std::sync::MutexGuard<'static, ()> {
    select_backend(BackendRequest::Software).unwrap();
    let guard = SERIAL.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    soft::clear_faults();
    guard
}

#[test]
fn the_nth_call_fails_once_without_side_effects() {
    let _serial = software();
    // SAFETY: valid out-pointers throughout.
    unsafe {
        assert_eq!(aclrtSetDevice(0), ACL_SUCCESS);
        soft::inject_fault("aclrtMalloc", 2, ACL_ERROR_RT_MEMORY_ALLOCATION).unwrap();
        assert_eq!(
            soft::armed_faults(),
            [("aclrtMalloc".to_string(), 2, ACL_ERROR_RT_MEMORY_ALLOCATION)]
        );
        let before = soft::live();
        let mut first = null_mut();
        let mut second = null_mut();
        let mut third = null_mut();
        assert_eq!(aclrtMalloc(&mut first, 64, 0), ACL_SUCCESS);
        assert_eq!(aclrtMalloc(&mut second, 64, 0), ACL_ERROR_RT_MEMORY_ALLOCATION);
        assert!(second.is_null(), "an injected failure writes nothing");
        let message = CStr::from_ptr(aclGetRecentErrMsg()).to_string_lossy().into_owned();
        assert!(message.contains("injected fault"), "{message}");
        assert_eq!(soft::live().device_allocations, before.device_allocations + 1);
        assert_eq!(aclrtMalloc(&mut third, 64, 0), ACL_SUCCESS, "a fault fires once");
        assert!(soft::armed_faults().is_empty());
        assert_eq!(aclrtFree(first), ACL_SUCCESS);
        assert_eq!(aclrtFree(third), ACL_SUCCESS);
        assert_eq!(soft::live(), before);
        assert_eq!(aclrtResetDevice(0), ACL_SUCCESS);
    }
}

#[test]
fn faults_only_count_calls_of_their_function() {
    let _serial = software();
    soft::inject_fault("aclrtFree", 1, ACL_ERROR_RT_INTERNAL_ERROR).unwrap();
    soft::inject_fault("aclrtGetDeviceCount", 2, ACL_ERROR_RT_NO_DEVICE).unwrap();
    let mut count = 0;
    // SAFETY: valid out-pointer; `ptr` is freed once it is accepted.
    unsafe {
        assert_eq!(aclrtGetDeviceCount(&mut count), ACL_SUCCESS);
        assert_eq!(aclrtGetDeviceCount(&mut count), ACL_ERROR_RT_NO_DEVICE);
        assert_eq!(aclrtSetDevice(0), ACL_SUCCESS);
        let mut ptr = null_mut();
        assert_eq!(aclrtMalloc(&mut ptr, 64, 0), ACL_SUCCESS);
        assert_eq!(aclrtFree(ptr), ACL_ERROR_RT_INTERNAL_ERROR);
        // The failed free had no effect: the memory is still live and can be freed.
        assert_eq!(aclrtFree(ptr), ACL_SUCCESS);
        assert_eq!(aclrtResetDevice(0), ACL_SUCCESS);
    }
}

#[test]
fn pointer_results_fail_as_null() {
    let _serial = software();
    soft::inject_fault("aclrtAllocatorCreateDesc", 1, ACL_ERROR_BAD_ALLOC).unwrap();
    // SAFETY: no arguments; NULL is the documented failure value.
    assert!(unsafe { aclrtAllocatorCreateDesc() }.is_null());
    // SAFETY: as above.
    let desc = unsafe { aclrtAllocatorCreateDesc() };
    assert!(!desc.is_null());
    // SAFETY: a descriptor from the call above, destroyed once.
    assert_eq!(unsafe { aclrtAllocatorDestroyDesc(desc) }, ACL_SUCCESS);
}

#[test]
fn bad_specifications_are_refused() {
    let _serial = software();
    assert!(soft::inject_fault("aclrtMalloc", 0, 1).is_err(), "nth counts from 1");
    assert!(
        soft::inject_fault("aclrtMalloc", 1, ACL_SUCCESS).is_err(),
        "success is not a fault"
    );
    let error = soft::inject_fault("aclrtNoSuchThing", 1, 1).unwrap_err();
    assert!(error.to_string().contains("not a bound AscendCL function"), "{error}");
    assert!(soft::armed_faults().is_empty());
}

/// The child half of `faults_can_be_armed_from_the_environment`.
#[test]
#[ignore = "run by its parent test in a child process"]
fn child_with_environment_faults() {
    if std::env::var_os(soft::ENV_FAULTS).is_none() {
        return;
    }
    select_backend(BackendRequest::Software).unwrap();
    let mut count = 0;
    // SAFETY: valid out-pointer.
    unsafe {
        assert_eq!(aclrtGetDeviceCount(&mut count), ACL_SUCCESS);
        assert_eq!(aclrtGetDeviceCount(&mut count), ACL_ERROR_RT_INTERNAL_ERROR);
        assert_eq!(aclrtSetDevice(1), ACL_ERROR_RT_INVALID_DEVICEID);
        assert_eq!(aclrtSetDevice(1), ACL_SUCCESS);
    }
    println!("child checked the environment faults");
}

#[test]
fn faults_can_be_armed_from_the_environment() {
    let output = soft_common::child_output(
        "child_with_environment_faults",
        &[(
            soft::ENV_FAULTS,
            "aclrtGetDeviceCount:2:507000, aclrtSetDevice:1:107001",
        )],
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "child failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout.contains("child checked the environment faults"), "{stdout}");
}

/// The child half of `a_bad_fault_list_stops_the_software_device`: every
/// call fails as a software device that could not start.
#[test]
#[ignore = "run by its parent test in a child process"]
fn child_with_a_bad_fault_list() {
    let Some(value) = std::env::var_os(soft::ENV_FAULTS) else {
        return;
    };
    let value = value.to_string_lossy().into_owned();
    select_backend(BackendRequest::Software).unwrap();
    let entry = std::env::var("BAD_ENTRY").unwrap();
    // backend() says so before the first call.
    match backend() {
        Err(BackendError::SoftwareDevice { reason }) => {
            assert!(reason.contains(soft::ENV_FAULTS), "{reason}");
            assert!(reason.contains(&format!("{entry:?}")), "{reason}");
        }
        other => panic!("expected a software-device error, got {other:?}"),
    }
    let mut count = 0;
    // SAFETY: valid out-pointers; nothing is allocated.
    unsafe {
        for code in [
            aclrtGetDeviceCount(&mut count),
            aclrtSetDevice(0),
            aclInit(std::ptr::null()),
        ] {
            assert_eq!(code, ACL_ERROR_RT_INTERNAL_ERROR, "{value}");
            let message = CStr::from_ptr(aclGetRecentErrMsg()).to_string_lossy().into_owned();
            assert!(message.contains("could not start"), "{message}");
            assert!(message.contains(soft::ENV_FAULTS), "{message}");
            assert!(message.contains(&format!("{entry:?}")), "{message}");
        }
    }
    assert!(soft::armed_faults().is_empty(), "nothing of a bad list is armed");
    println!("child saw the start-up error");
}

#[test]
fn a_bad_fault_list_stops_the_software_device() {
    let cases = [
        ("aclrtMaloc:1:207001", "aclrtMaloc:1:207001"),
        ("aclrtMalloc:1:207001,aclrtFree:x:1", "aclrtFree:x:1"),
        ("aclrtMalloc:1", "aclrtMalloc:1"),
        ("aclrtMalloc:0:207001", "aclrtMalloc:0:207001"),
        ("aclrtMalloc:1:0", "aclrtMalloc:1:0"),
        ("aclrtMalloc:1:2:3", "aclrtMalloc:1:2:3"),
    ];
    for (value, entry) in cases {
        let output = soft_common::child_output(
            "child_with_a_bad_fault_list",
            &[(soft::ENV_FAULTS, value), ("BAD_ENTRY", entry)],
        );
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success(),
            "{value}: child failed:\n{stdout}\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(stdout.contains("child saw the start-up error"), "{value}: {stdout}");
    }
}

/// The child half of `a_bad_device_configuration_is_reported_by_backend`.
#[test]
#[ignore = "run by its parent test in a child process"]
fn child_with_a_bad_device_configuration() {
    let Ok(variable) = std::env::var("BAD_VARIABLE") else {
        return;
    };
    let value = std::env::var(&variable).unwrap();
    select_backend(BackendRequest::Software).unwrap();
    match backend() {
        Err(error @ BackendError::SoftwareDevice { .. }) => {
            let text = error.to_string();
            assert!(text.contains(&variable), "{text}");
            assert!(text.contains(&format!("{value:?}")), "{text}");
        }
        other => panic!("{variable}={value}: expected a software-device error, got {other:?}"),
    }
    let mut count = 0;
    // SAFETY: a valid out-pointer.
    assert_eq!(unsafe { aclrtGetDeviceCount(&mut count) }, ACL_ERROR_RT_INTERNAL_ERROR);
    // The error stays after the failed start.
    assert!(matches!(backend(), Err(BackendError::SoftwareDevice { .. })));
    println!("child saw the configuration error");
}

#[test]
fn a_bad_device_configuration_is_reported_by_backend() {
    for (variable, value) in [
        (soft::ENV_DEVICE_MEMORY, "garbage"),
        (soft::ENV_DEVICE_MEMORY, "1K"),
        (soft::ENV_DEVICE_COUNT, "many"),
        (soft::ENV_GRANULARITY, "3M"),
    ] {
        let output = soft_common::child_output(
            "child_with_a_bad_device_configuration",
            &[(variable, value), ("BAD_VARIABLE", variable)],
        );
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success(),
            "{variable}={value}: child failed:\n{stdout}\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(
            stdout.contains("child saw the configuration error"),
            "{variable}={value}: {stdout}"
        );
    }
}

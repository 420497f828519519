//! Process-wide rules of the software device: `aclInit`/`aclFinalize`,
//! device retain/reset, per-device capacity, and that a host dereference of
//! device memory faults. These need a process of their own (a test file),
//! and some a child process. Software device only.

mod soft_common;

use ascend_sys::*;
use soft_common::software;
use std::ffi::{CString, c_void};
use std::ptr::null_mut;

#[test]
fn init_and_finalize_follow_the_documented_codes() {
    software();
    let config = std::env::temp_dir().join(format!("ascend-init-{}.json", std::process::id()));
    std::fs::write(&config, br#"{"dump": {}}"#).unwrap();
    let config_path = CString::new(config.to_str().unwrap()).unwrap();
    let missing = CString::new("/nonexistent/acl.json").unwrap();
    // SAFETY: every path argument is NULL or a live C string.
    unsafe {
        // The first aclFinalize of a process succeeds even without aclInit.
        assert_eq!(aclFinalize(), ACL_SUCCESS);
        assert_eq!(aclFinalize(), ACL_ERROR_REPEAT_FINALIZE);
        assert_eq!(aclInit(missing.as_ptr()), ACL_ERROR_INVALID_FILE);
        assert_eq!(aclInit(std::ptr::null()), ACL_SUCCESS);
        assert_eq!(aclInit(std::ptr::null()), ACL_ERROR_REPEAT_INITIALIZE);
        // One aclFinalize tears down however many aclInit calls were made.
        assert_eq!(aclFinalize(), ACL_SUCCESS);
        assert_eq!(aclFinalize(), ACL_ERROR_REPEAT_FINALIZE);
        // Re-initialising with a configuration that differs from the first.
        assert_eq!(aclInit(config_path.as_ptr()), ACL_ERROR_INVALID_PARAM);
        assert_eq!(aclInit(c"".as_ptr()), ACL_SUCCESS);
        let mut references = 99;
        assert_eq!(aclFinalizeReference(&mut references), ACL_SUCCESS);
        assert_eq!(references, 0);
        assert_eq!(aclFinalizeReference(&mut references), ACL_ERROR_REPEAT_FINALIZE);
        assert_eq!(aclFinalizeReference(null_mut()), ACL_ERROR_INVALID_PARAM);
    }
    std::fs::remove_file(config).unwrap();
}

#[test]
fn reset_device_balances_set_device() {
    software();
    std::thread::spawn(|| {
        let mut current = -1;
        // SAFETY: valid out-pointer; no other pointers.
        unsafe {
            assert_eq!(aclrtResetDevice(1), ACL_ERROR_RT_CONTEXT_RELEASE_ERROR);
            assert_eq!(aclrtSetDevice(1), ACL_SUCCESS);
            assert_eq!(aclrtSetDevice(1), ACL_SUCCESS);
            assert_eq!(aclrtGetDevice(&mut current), ACL_SUCCESS);
            assert_eq!(current, 1);
            assert_eq!(aclrtResetDevice(1), ACL_SUCCESS);
            assert_eq!(aclrtResetDevice(1), ACL_SUCCESS);
            assert_eq!(aclrtResetDevice(1), ACL_ERROR_RT_CONTEXT_RELEASE_ERROR);
            assert_eq!(aclrtGetDevice(&mut current), ACL_ERROR_RT_CONTEXT_NULL);
            assert_eq!(aclrtSetDevice(1), ACL_SUCCESS);
            assert_eq!(aclrtSetDevice(1), ACL_SUCCESS);
            assert_eq!(aclrtResetDeviceForce(1), ACL_SUCCESS);
            assert_eq!(aclrtResetDeviceForce(1), ACL_ERROR_RT_CONTEXT_RELEASE_ERROR);
        }
    })
    .join()
    .unwrap();
}

/// Software-device only: capacity accounting and introspection counts.
#[test]
fn capacity_is_accounted_and_enforced_per_device() {
    software();
    std::thread::spawn(|| {
        let (mut free, mut total) = (0, 0);
        let mut ptr = null_mut();
        // SAFETY: valid out-pointers; `ptr` is freed once.
        unsafe {
            assert_eq!(aclrtSetDevice(0), ACL_SUCCESS);
            assert_eq!(aclrtGetMemInfo(ACL_HBM_MEM, &mut free, &mut total), ACL_SUCCESS);
            let before = free;
            let live_before = soft::live();
            // 1000 bytes: rounded to 1024, plus 32 bytes of padding.
            assert_eq!(aclrtMalloc(&mut ptr, 1000, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
            assert_eq!(aclrtGetMemInfo(ACL_HBM_MEM, &mut free, &mut total), ACL_SUCCESS);
            assert_eq!(before - free, 1056);
            let live = soft::live();
            assert_eq!(live.device_allocations, live_before.device_allocations + 1);
            assert_eq!(live.device_bytes, live_before.device_bytes + 1056);
            assert!(soft::leak_report().contains("1000 bytes requested (1056 reserved)"));
            // More than the device holds.
            let mut big = null_mut();
            assert_eq!(
                aclrtMalloc(&mut big, total, ACL_MEM_MALLOC_HUGE_FIRST),
                ACL_ERROR_RT_MEMORY_ALLOCATION
            );
            assert!(big.is_null());
            assert_eq!(aclrtFree(ptr), ACL_SUCCESS);
            assert_eq!(aclrtGetMemInfo(ACL_HBM_MEM, &mut free, &mut total), ACL_SUCCESS);
            assert_eq!(free, before);
            assert_eq!(soft::live(), live_before);
            assert_eq!(aclrtResetDevice(0), ACL_SUCCESS);
        }
    })
    .join()
    .unwrap();
}

/// The child half of `host_dereference_of_device_memory_faults`.
#[test]
#[ignore = "run by its parent test in a child process"]
fn child_dereferences_device_memory() {
    software();
    let mut ptr: *mut c_void = null_mut();
    // SAFETY: valid out-pointer.
    unsafe {
        assert_eq!(aclrtSetDevice(0), ACL_SUCCESS);
        assert_eq!(aclrtMalloc(&mut ptr, 4096, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    }
    println!("allocated {ptr:?}; dereferencing it on the host");
    // SAFETY: deliberately unsound: this is the fault the test expects. The
    // address is reserved PROT_NONE, so the read traps before returning.
    let value = unsafe { std::ptr::read_volatile(ptr.cast::<u8>()) };
    println!("read {value} without a fault");
}

#[test]
fn host_dereference_of_device_memory_faults() {
    let output = soft_common::child_output("child_dereferences_device_memory", &[]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("dereferencing it on the host"),
        "child did not get that far:\n{stdout}"
    );
    assert!(!stdout.contains("without a fault"), "the read did not fault:\n{stdout}");
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(
        output.status.signal(),
        Some(11),
        "expected SIGSEGV, got {:?}",
        output.status
    );
}

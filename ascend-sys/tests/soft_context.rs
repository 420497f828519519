//! The software device's contexts (`acl-behaviour.md` §2/§3, as far as the
//! memory API needs them), the last-error calls, package versions and
//! memory-usage reporting. This file runs the software device with three
//! devices: device 1 and 2 are only ever made current through
//! `aclrtCreateContext`, except that `primary_context_handle_dies_with_the_device`
//! alone sets device 2, so their retain counts are predictable; only
//! `memory_usage_reports_current_and_peak` allocates on device 2. Software
//! device only.

mod soft_common;

use ascend_sys::*;
use soft_common::recent;
use std::ffi::{CStr, c_void};
use std::ptr::null_mut;

fn software() {
    select_backend(BackendRequest::Software).expect("software device");
    soft::configure(soft::Config {
        device_count: 3,
        ..soft::Config::default()
    })
    .expect("three devices");
}

/// Runs `body` on a fresh thread that has no current device.
fn fresh_thread<R: Send>(body: impl FnOnce() -> R + Send) -> R {
    software();
    std::thread::scope(|scope| scope.spawn(body).join().expect("test thread panicked"))
}

fn create_context(device: i32) -> aclrtContext {
    let mut context = null_mut();
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { aclrtCreateContext(&mut context, device) }, ACL_SUCCESS);
    assert!(!context.is_null());
    context
}

fn current_context() -> Result<aclrtContext, aclError> {
    let mut context = null_mut();
    // SAFETY: valid out-pointer.
    match unsafe { aclrtGetCurrentContext(&mut context) } {
        ACL_SUCCESS => Ok(context),
        code => Err(code),
    }
}

fn current_device() -> Result<i32, aclError> {
    let mut device = -1;
    // SAFETY: valid out-pointer.
    match unsafe { aclrtGetDevice(&mut device) } {
        ACL_SUCCESS => Ok(device),
        code => Err(code),
    }
}

fn set_current(context: aclrtContext) -> aclError {
    // SAFETY: the handle is only looked up.
    unsafe { aclrtSetCurrentContext(context) }
}

fn destroy(context: aclrtContext) -> aclError {
    // SAFETY: the handle is only looked up.
    unsafe { aclrtDestroyContext(context) }
}

#[test]
fn create_context_makes_a_current_context() {
    fresh_thread(|| {
        let mut context = null_mut();
        // SAFETY: NULL refused before any write; otherwise a valid out-pointer.
        unsafe {
            assert_eq!(aclrtCreateContext(null_mut(), 1), ACL_ERROR_INVALID_PARAM);
            assert_eq!(aclrtCreateContext(&mut context, 3), ACL_ERROR_RT_INVALID_DEVICEID);
            assert_eq!(aclrtCreateContext(&mut context, -1), ACL_ERROR_RT_INVALID_DEVICEID);
            assert!(context.is_null());
            assert_eq!(aclrtGetCurrentContext(null_mut()), ACL_ERROR_INVALID_PARAM);
        }
        assert_eq!(current_context(), Err(ACL_ERROR_RT_CONTEXT_NULL));
        let context = create_context(1);
        assert_eq!(current_context(), Ok(context));
        assert_eq!(current_device(), Ok(1));
        assert!(soft::live().contexts >= 1);
        assert!(soft::leak_report().contains(&format!("context {:#x} on device 1", context as usize)));
        // Memory calls work under it, on its device.
        let mut ptr = null_mut();
        let mut attributes = aclrtPtrAttributes {
            location: aclrtMemLocation { id: 9, type_: 9 },
            pageSize: 0,
            rsv: [0; 4],
        };
        // SAFETY: valid out-pointers; `ptr` is freed once.
        unsafe {
            assert_eq!(aclrtMalloc(&mut ptr, 64, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
            assert_eq!(aclrtPointerGetAttributes(ptr, &mut attributes), ACL_SUCCESS);
            assert_eq!(attributes.location.id, 1);
            assert_eq!(aclrtFree(ptr), ACL_SUCCESS);
        }
        // A created context is not an aclrtSetDevice retain.
        // SAFETY: no pointer arguments.
        assert_eq!(unsafe { aclrtResetDevice(1) }, ACL_ERROR_RT_CONTEXT_RELEASE_ERROR);
        assert_eq!(destroy(context), ACL_SUCCESS);
        assert!(!soft::leak_report().contains(&format!("context {:#x}", context as usize)));
        // Destroying the current context leaves the thread without one.
        assert_eq!(current_context(), Err(ACL_ERROR_RT_CONTEXT_NULL));
        assert_eq!(current_device(), Err(ACL_ERROR_RT_CONTEXT_NULL));
    });
}

#[test]
fn destroy_context_takes_a_live_created_context() {
    fresh_thread(|| {
        assert_eq!(destroy(null_mut()), ACL_ERROR_INVALID_PARAM);
        assert_eq!(destroy(0x1000 as aclrtContext), ACL_ERROR_RT_CONTEXT_NULL);
        let context = create_context(1);
        assert_eq!(destroy(context), ACL_SUCCESS);
        assert_eq!(destroy(context), ACL_ERROR_RT_CONTEXT_NULL);
        assert!(recent().contains("not a live context"));
        // The primary context cannot be destroyed explicitly.
        // SAFETY: no pointer arguments.
        assert_eq!(unsafe { aclrtSetDevice(0) }, ACL_SUCCESS);
        let primary = current_context().unwrap();
        assert_eq!(destroy(primary), ACL_ERROR_RT_CONTEXT_NULL);
        assert!(recent().contains("primary context"));
        // SAFETY: no pointer arguments.
        assert_eq!(unsafe { aclrtResetDevice(0) }, ACL_SUCCESS);
    });
}

#[test]
fn set_current_context_switches_devices() {
    fresh_thread(|| {
        assert_eq!(set_current(null_mut()), ACL_ERROR_INVALID_PARAM);
        assert_eq!(set_current(0x2000 as aclrtContext), ACL_ERROR_RT_PARAM_INVALID);
        let on_1 = create_context(1);
        let on_0 = create_context(0);
        assert_eq!(current_device(), Ok(0));
        assert_eq!(set_current(on_1), ACL_SUCCESS);
        assert_eq!((current_context(), current_device()), (Ok(on_1), Ok(1)));
        assert_eq!(set_current(on_0), ACL_SUCCESS);
        assert_eq!((current_context(), current_device()), (Ok(on_0), Ok(0)));
        // Another thread may make it current too; destroying it there leaves
        // this thread with a dead context.
        let handle = on_0 as usize;
        std::thread::scope(|scope| {
            scope.spawn(move || {
                assert_eq!(set_current(handle as aclrtContext), ACL_SUCCESS);
                assert_eq!(current_device(), Ok(0));
                assert_eq!(destroy(handle as aclrtContext), ACL_SUCCESS);
                assert_eq!(current_context(), Err(ACL_ERROR_RT_CONTEXT_NULL));
            });
        });
        assert_eq!(current_context(), Err(ACL_ERROR_RT_CONTEXT_NULL));
        assert!(recent().contains("destroyed"));
        assert_eq!(set_current(on_0), ACL_ERROR_RT_PARAM_INVALID);
        assert_eq!(set_current(on_1), ACL_SUCCESS);
        assert_eq!(destroy(on_1), ACL_SUCCESS);
    });
}

#[test]
fn primary_context_follows_set_device() {
    fresh_thread(|| {
        // SAFETY: no pointer arguments.
        assert_eq!(unsafe { aclrtSetDevice(0) }, ACL_SUCCESS);
        let primary = current_context().unwrap();
        assert_eq!(current_context(), Ok(primary), "stable");
        // The same handle on every thread; making it current sets the device.
        let handle = primary as usize;
        std::thread::scope(|scope| {
            scope.spawn(move || {
                assert_eq!(current_device(), Err(ACL_ERROR_RT_CONTEXT_NULL));
                assert_eq!(set_current(handle as aclrtContext), ACL_SUCCESS);
                assert_eq!(current_device(), Ok(0));
                assert_eq!(current_context(), Ok(handle as aclrtContext));
            });
        });
        // A created context made current, then back to the primary one.
        let created = create_context(1);
        assert_ne!(created, primary);
        assert_eq!(set_current(primary), ACL_SUCCESS);
        assert_eq!(current_device(), Ok(0));
        assert_eq!(current_context(), Ok(primary));
        // aclrtResetDevice(0) with a created context current leaves it
        // current.
        assert_eq!(set_current(created), ACL_SUCCESS);
        // SAFETY: no pointer arguments.
        assert_eq!(unsafe { aclrtResetDevice(0) }, ACL_SUCCESS);
        assert_eq!(current_context(), Ok(created));
        assert_eq!(destroy(created), ACL_SUCCESS);
    });
}

#[test]
fn primary_context_handle_dies_with_the_device() {
    fresh_thread(|| {
        // SAFETY: no pointer arguments.
        assert_eq!(unsafe { aclrtSetDevice(2) }, ACL_SUCCESS);
        let primary = current_context().unwrap();
        // SAFETY: no pointer arguments.
        assert_eq!(unsafe { aclrtResetDevice(2) }, ACL_SUCCESS);
        assert_eq!(current_context(), Err(ACL_ERROR_RT_CONTEXT_NULL));
        assert_eq!(set_current(primary), ACL_ERROR_RT_PARAM_INVALID);
        assert!(recent().contains("has been reset"));
        // SAFETY: no pointer arguments.
        assert_eq!(unsafe { aclrtSetDevice(2) }, ACL_SUCCESS);
        assert_eq!(current_context(), Ok(primary));
        // SAFETY: no pointer arguments.
        assert_eq!(unsafe { aclrtResetDevice(2) }, ACL_SUCCESS);
    });
}

fn get_last_error() -> aclError {
    // SAFETY: no pointer arguments.
    unsafe { aclrtGetLastError(ACL_RT_THREAD_LEVEL) }
}

fn peek_last_error() -> aclError {
    // SAFETY: no pointer arguments.
    unsafe { aclrtPeekAtLastError(ACL_RT_THREAD_LEVEL) }
}

#[test]
fn last_error_is_per_thread_and_cleared_by_get() {
    fresh_thread(|| {
        assert_eq!(get_last_error(), ACL_SUCCESS);
        // SAFETY: NULL is refused before any write.
        assert_eq!(unsafe { aclrtMalloc(null_mut(), 8, 0) }, ACL_ERROR_INVALID_PARAM);
        // A success does not clear it.
        let context = create_context(0);
        assert_eq!(peek_last_error(), ACL_ERROR_INVALID_PARAM);
        assert_eq!(peek_last_error(), ACL_ERROR_INVALID_PARAM);
        // Another thread has its own.
        std::thread::scope(|scope| {
            scope.spawn(|| assert_eq!(peek_last_error(), ACL_SUCCESS));
        });
        // The most recent failure wins.
        assert_eq!(destroy(0x3000 as aclrtContext), ACL_ERROR_RT_CONTEXT_NULL);
        // A bad level is refused without replacing it.
        // SAFETY: no pointer arguments.
        unsafe {
            assert_eq!(aclrtGetLastError(1), ACL_ERROR_INVALID_PARAM);
            assert!(recent().contains("ACL_RT_THREAD_LEVEL"));
            assert_eq!(aclrtPeekAtLastError(7), ACL_ERROR_INVALID_PARAM);
        }
        assert_eq!(get_last_error(), ACL_ERROR_RT_CONTEXT_NULL);
        assert_eq!(get_last_error(), ACL_SUCCESS);
        assert_eq!(peek_last_error(), ACL_SUCCESS);
        assert_eq!(destroy(context), ACL_SUCCESS);
    });
}

#[test]
fn package_versions() {
    fresh_thread(|| {
        let mut text = [0 as std::ffi::c_char; 128];
        let mut number = 0;
        let runtime = c"runtime".as_ptr().cast_mut();
        let driver = c"driver".as_ptr().cast_mut();
        // SAFETY: C strings and out-buffers of the documented sizes, or NULL
        // refused before any access.
        unsafe {
            assert_eq!(
                aclsysGetVersionStr(null_mut(), text.as_mut_ptr()),
                ACL_ERROR_INVALID_PARAM
            );
            assert_eq!(aclsysGetVersionStr(runtime, null_mut()), ACL_ERROR_INVALID_PARAM);
            assert_eq!(aclsysGetVersionNum(null_mut(), &mut number), ACL_ERROR_INVALID_PARAM);
            assert_eq!(aclsysGetVersionNum(runtime, null_mut()), ACL_ERROR_INVALID_PARAM);
            assert_eq!(aclsysGetVersionStr(runtime, text.as_mut_ptr()), ACL_SUCCESS);
            assert_eq!(CStr::from_ptr(text.as_ptr()).to_str().unwrap(), "1.17.0");
            assert_eq!(aclsysGetVersionNum(runtime, &mut number), ACL_SUCCESS);
            assert_eq!(number, 11_700_000);
            // Software-device choice: other packages are "not installed",
            // the runtime's code for a missing version file.
            assert_eq!(aclsysGetVersionStr(driver, text.as_mut_ptr()), ACL_ERROR_INVALID_FILE);
            assert!(recent().contains("\"driver\""));
            assert_eq!(aclsysGetVersionNum(driver, &mut number), ACL_ERROR_INVALID_FILE);
        }
    });
}

fn usage(device: i32) -> Result<(String, u64, u64), aclError> {
    let mut info = [aclrtMemUsageInfo::default(); 2];
    let mut count = 99;
    // SAFETY: an array of two records and a valid count.
    let code = unsafe { aclrtGetMemUsageInfo(device, info.as_mut_ptr(), info.len(), &mut count) };
    if code != ACL_SUCCESS {
        assert_eq!(count, 0, "the count is zeroed on failure");
        return Err(code);
    }
    assert_eq!(count, 1);
    // SAFETY: the name is NUL-terminated within its 32 bytes.
    let name = unsafe { CStr::from_ptr(info[0].name.as_ptr()) };
    Ok((
        name.to_string_lossy().into_owned(),
        info[0].curMemSize,
        info[0].memPeakSize,
    ))
}

#[test]
fn memory_usage_reports_current_and_peak() {
    fresh_thread(|| {
        let mut info = aclrtMemUsageInfo::default();
        let mut count = 0;
        // SAFETY: NULLs refused before any write; otherwise valid pointers.
        unsafe {
            assert_eq!(
                aclrtGetMemUsageInfo(1, null_mut(), 1, &mut count),
                ACL_ERROR_INVALID_PARAM
            );
            assert_eq!(
                aclrtGetMemUsageInfo(1, &mut info, 1, null_mut()),
                ACL_ERROR_INVALID_PARAM
            );
            count = 5;
            assert_eq!(
                aclrtGetMemUsageInfo(1, &mut info, 0, &mut count),
                ACL_ERROR_RT_PARAM_INVALID
            );
            assert_eq!(count, 0);
        }
        assert_eq!(usage(3), Err(ACL_ERROR_RT_INVALID_DEVICEID));
        assert_eq!(usage(2), Err(ACL_ERROR_RT_CONTEXT_NULL));
        let context = create_context(2);
        // Device 2 has allocations only from this test in this file.
        let (name, before, _) = usage(2).unwrap();
        assert_eq!(name, "software");
        let mut ptr: *mut c_void = null_mut();
        // SAFETY: valid out-pointer; `ptr` is freed once.
        unsafe { assert_eq!(aclrtMalloc(&mut ptr, 1 << 20, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS) };
        let (_, during, peak) = usage(2).unwrap();
        assert_eq!(during, before + (1 << 20) + 32);
        assert!(peak >= during);
        // SAFETY: allocated above.
        unsafe { assert_eq!(aclrtFree(ptr), ACL_SUCCESS) };
        let (_, after, peak_after) = usage(2).unwrap();
        assert_eq!(after, before);
        assert!(peak_after >= during);
        assert_eq!(destroy(context), ACL_SUCCESS);
    });
}

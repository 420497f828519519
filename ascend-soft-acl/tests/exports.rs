//! The built `libascendcl.so`: every bound function is exported under its
//! C name and works, the marker is there, and the `ascend-sys` loader
//! refuses the library (so a program that finds it never runs a second
//! software device behind its own, and nothing recurses).

use ascend_sys::{self as sys, FUNCTION_NAMES, SOFTWARE_LIBRARY_MARKER};
use libloading::{Library, Symbol};
use std::ffi::c_void;
use std::path::PathBuf;
use std::process::Command;

const CHILD_VAR: &str = "ASCEND_SOFT_ACL_CHILD";

/// The library cargo built beside this test (`target/<profile>/`).
fn library_path() -> PathBuf {
    let exe = std::env::current_exe().expect("test binary");
    let profile_dir = exe.parent().and_then(|deps| deps.parent()).expect("target/<profile>");
    let path = profile_dir.join("libascendcl.so");
    assert!(path.exists(), "{} is not built", path.display());
    path
}

fn open() -> Library {
    // SAFETY: the library is this workspace's own; its initialisers are
    // Rust's and set nothing up.
    unsafe { Library::new(library_path()) }.expect("open libascendcl.so")
}

#[test]
fn every_bound_function_and_the_marker_are_exported() {
    let library = open();
    for name in FUNCTION_NAMES {
        // SAFETY: only the symbol's presence is checked.
        let found = unsafe { library.get::<*const c_void>(name.as_bytes()) };
        assert!(found.is_ok(), "{name} is not exported");
    }
    assert_eq!(FUNCTION_NAMES.len(), 106);
    // SAFETY: as above.
    assert!(unsafe { library.get::<*const u8>(SOFTWARE_LIBRARY_MARKER.as_bytes()) }.is_ok());
}

#[test]
fn the_exports_run_the_software_device() {
    let library = open();
    type SetDevice = unsafe extern "C" fn(i32) -> sys::aclError;
    type Malloc = unsafe extern "C" fn(*mut *mut c_void, usize, sys::aclrtMemMallocPolicy) -> sys::aclError;
    type Memcpy = unsafe extern "C" fn(*mut c_void, usize, *const c_void, usize, sys::aclrtMemcpyKind) -> sys::aclError;
    type Free = unsafe extern "C" fn(*mut c_void) -> sys::aclError;
    // SAFETY: the symbols have these C signatures (acl_memory.h), and the
    // arguments below are valid for each call.
    unsafe {
        let set_device: Symbol<SetDevice> = library.get(b"aclrtSetDevice").unwrap();
        let malloc: Symbol<Malloc> = library.get(b"aclrtMalloc").unwrap();
        let memcpy: Symbol<Memcpy> = library.get(b"aclrtMemcpy").unwrap();
        let free: Symbol<Free> = library.get(b"aclrtFree").unwrap();
        assert_eq!(set_device(0), sys::ACL_SUCCESS);
        let mut device = std::ptr::null_mut();
        assert_eq!(
            malloc(&mut device, 64, sys::ACL_MEM_MALLOC_HUGE_FIRST),
            sys::ACL_SUCCESS
        );
        let data: Vec<u8> = (0..64).collect();
        let mut back = vec![0u8; 64];
        let h2d = memcpy(device, 64, data.as_ptr().cast(), 64, sys::ACL_MEMCPY_HOST_TO_DEVICE);
        let d2h = memcpy(back.as_mut_ptr().cast(), 64, device, 64, sys::ACL_MEMCPY_DEVICE_TO_HOST);
        assert_eq!((h2d, d2h), (sys::ACL_SUCCESS, sys::ACL_SUCCESS));
        assert_eq!(back, data);
        assert_eq!(free(device), sys::ACL_SUCCESS);
        // The emulator's rules: a second free is refused with its code.
        assert_eq!(free(device), sys::ACL_ERROR_RT_PARAM_INVALID);
    }
}

/// The child half of the loader tests: prints what `ascend-sys` chose.
#[test]
#[ignore = "run by its parent test in a child process"]
fn child_backend() {
    if std::env::var_os(CHILD_VAR).is_none() {
        return;
    }
    match sys::backend() {
        Ok(info) => println!("chosen: {:?}\n{}", info.backend, info.describe()),
        Err(error) => println!("refused: {error}"),
    }
}

fn child(backend: &str) -> String {
    let output = Command::new(std::env::current_exe().expect("test binary"))
        .args([
            "--exact",
            "child_backend",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_VAR, "1")
        .env("ASCEND_BACKEND", backend)
        .env("ASCEND_ACL_LIB", library_path())
        .output()
        .expect("run the child");
    assert!(output.status.success(), "{output:?}");
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn the_loader_refuses_the_library() {
    let marker = "the ascend-rs software device as a C library";
    // auto: the library is refused and the in-process software device runs.
    let auto = child("auto");
    assert!(auto.contains("chosen: Software"), "{auto}");
    assert!(auto.contains(marker), "the refusal is reported: {auto}");
    // hardware: no runtime was found, and the report says why.
    let hardware = child("hardware");
    assert!(hardware.contains("refused: "), "{hardware}");
    assert!(hardware.contains(marker), "{hardware}");
}

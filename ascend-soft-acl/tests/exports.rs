//! The built C library, as a C program sees it: every bound function is
//! exported under its C name, the marker is there, the SONAME is
//! `libascendcl.so`, and memory round-trips through the C symbols.
//!
//! The library is the cdylib cargo built for this test run, found next to
//! this test binary (`target/<profile>/deps/`) or one directory up.

use ascend_sys::{
    ACL_MEM_MALLOC_HUGE_FIRST, ACL_MEMCPY_DEVICE_TO_HOST, ACL_MEMCPY_HOST_TO_DEVICE, ACL_SUCCESS, FUNCTION_NAMES,
    SOFTWARE_LIBRARY_MARKER, aclError, aclrtMemMallocPolicy, aclrtMemcpyKind,
};
use libloading::Library;
use std::ffi::c_void;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The file cargo builds.
const FILE_NAME: &str = "libascend_soft_acl.so";

/// The path of the built library.
fn library_path() -> &'static Path {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        let exe = std::env::current_exe().expect("the path of this test binary");
        exe.ancestors()
            .skip(1)
            .take(2)
            .map(|dir| dir.join(FILE_NAME))
            .find(|path| path.is_file())
            .unwrap_or_else(|| panic!("{FILE_NAME} not found next to {} or one level up", exe.display()))
    })
}

/// The library, opened once for the whole test process.
fn library() -> &'static Library {
    static LIBRARY: OnceLock<Library> = OnceLock::new();
    LIBRARY.get_or_init(|| {
        // SAFETY: the library is this package's cdylib; its initialisers are
        // Rust's standard ones.
        unsafe { Library::new(library_path()) }.expect("the built library opens")
    })
}

/// A function of the library, by name and C signature.
///
/// # Safety
///
/// `T` must be the C signature of `name`.
unsafe fn function<T: Copy>(name: &str) -> T {
    // SAFETY: guaranteed by the caller; the library stays open for the rest
    // of the process.
    *unsafe { library().get::<T>(name.as_bytes()) }.unwrap_or_else(|error| panic!("{name}: {error}"))
}

#[test]
fn every_bound_function_is_exported() {
    assert_eq!(FUNCTION_NAMES.len(), 209);
    let missing: Vec<&str> = FUNCTION_NAMES
        .iter()
        .copied()
        // SAFETY: only looked up, never called through this type.
        .filter(|name| unsafe { library().get::<*const c_void>(name.as_bytes()) }.is_err())
        .collect();
    assert!(missing.is_empty(), "not exported: {missing:?}");
}

#[test]
fn the_marker_is_exported() {
    // SAFETY: the marker is a `u8` static.
    let marker = unsafe { library().get::<*const u8>(SOFTWARE_LIBRARY_MARKER.as_bytes()) };
    assert!(marker.is_ok(), "{SOFTWARE_LIBRARY_MARKER} is not exported");
}

#[test]
fn the_soname_is_libascendcl() {
    let output = Command::new("readelf")
        .arg("-d")
        .arg(library_path())
        .output()
        .expect("readelf (binutils, installed with gcc) runs");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let text = String::from_utf8_lossy(&output.stdout);
    let soname = text
        .lines()
        .find(|line| line.contains("(SONAME)"))
        .unwrap_or_else(|| panic!("no SONAME in:\n{text}"));
    assert!(soname.contains("[libascendcl.so]"), "{soname}");
}

#[test]
fn memory_round_trips_through_the_c_symbols() {
    type SetDevice = unsafe extern "C" fn(i32) -> aclError;
    type Malloc = unsafe extern "C" fn(*mut *mut c_void, usize, aclrtMemMallocPolicy) -> aclError;
    type Memcpy = unsafe extern "C" fn(*mut c_void, usize, *const c_void, usize, aclrtMemcpyKind) -> aclError;
    type Memset = unsafe extern "C" fn(*mut c_void, usize, i32, usize) -> aclError;
    type Free = unsafe extern "C" fn(*mut c_void) -> aclError;
    // SAFETY: the C signatures of these functions (acl_memory.h).
    let (set_device, reset_device, malloc, memcpy, memset, free) = unsafe {
        (
            function::<SetDevice>("aclrtSetDevice"),
            function::<SetDevice>("aclrtResetDevice"),
            function::<Malloc>("aclrtMalloc"),
            function::<Memcpy>("aclrtMemcpy"),
            function::<Memset>("aclrtMemset"),
            function::<Free>("aclrtFree"),
        )
    };
    const SIZE: usize = 4096;
    let source: Vec<u8> = (0..SIZE).map(|i| (i * 7 % 251) as u8).collect();
    let mut back = vec![0u8; SIZE];
    let mut device = std::ptr::null_mut();
    // SAFETY: valid out-pointers and host buffers of SIZE bytes; the device
    // pointer comes from aclrtMalloc and is freed once.
    unsafe {
        assert_eq!(set_device(0), ACL_SUCCESS);
        assert_eq!(malloc(&mut device, SIZE, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
        assert!(!device.is_null());
        assert_eq!(
            memcpy(device, SIZE, source.as_ptr().cast(), SIZE, ACL_MEMCPY_HOST_TO_DEVICE),
            ACL_SUCCESS
        );
        assert_eq!(
            memcpy(back.as_mut_ptr().cast(), SIZE, device, SIZE, ACL_MEMCPY_DEVICE_TO_HOST),
            ACL_SUCCESS
        );
        assert_eq!(back, source);
        assert_eq!(memset(device, SIZE, 0x5a, SIZE), ACL_SUCCESS);
        assert_eq!(
            memcpy(back.as_mut_ptr().cast(), SIZE, device, SIZE, ACL_MEMCPY_DEVICE_TO_HOST),
            ACL_SUCCESS
        );
        assert!(back.iter().all(|&byte| byte == 0x5a));
        assert_eq!(free(device), ACL_SUCCESS);
        // Freed once: a second free is the software device's refusal, through C.
        assert_ne!(free(device), ACL_SUCCESS);
        assert_eq!(reset_device(0), ACL_SUCCESS);
    }
}

#[test]
fn the_library_runs_its_own_software_device_whatever_the_backend_says() {
    // The library never routes through the backend selection: even with
    // ASCEND_BACKEND=hardware and no library anywhere, its calls succeed.
    // (Checked in a child process: the variable must be set before the
    // library's first call, and this process's library may have run.)
    if std::env::var_os("ASCEND_SOFT_ACL_EXPORTS_CHILD").is_some() {
        type Count = unsafe extern "C" fn(*mut u32) -> aclError;
        // SAFETY: the C signature of aclrtGetDeviceCount.
        let count_fn = unsafe { function::<Count>("aclrtGetDeviceCount") };
        let mut count = 0u32;
        // SAFETY: a valid out-pointer.
        assert_eq!(unsafe { count_fn(&mut count) }, ACL_SUCCESS);
        assert!(count >= 1);
        return;
    }
    let exe = std::env::current_exe().expect("the path of this test binary");
    let output = Command::new(exe)
        .args([
            "--exact",
            "the_library_runs_its_own_software_device_whatever_the_backend_says",
            "--nocapture",
        ])
        .env("ASCEND_SOFT_ACL_EXPORTS_CHILD", "1")
        .env("ASCEND_BACKEND", "hardware")
        .env("ASCEND_ACL_LIB", "/nonexistent/libascendcl.so")
        .output()
        .expect("the child runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && stdout.contains("1 passed"),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

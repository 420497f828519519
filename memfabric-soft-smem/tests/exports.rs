//! The built C library, as a C program sees it: every bound function is
//! exported under its C name, the marker is there, the SONAME is
//! `libmf_smem.so`, and the calls answer as the software fabric does.
//!
//! The library is the cdylib cargo built for this test run, found next to
//! this test binary (`target/<profile>/deps/`) or one directory up.

use libloading::Library;
use memfabric_sys::{
    FUNCTION_NAMES, SMEM_ABI_VERSION_SUPPORTED, SMEM_NOT_INIT, SMEM_OK, SOFTWARE_LIBRARY_MARKER, c_void,
    smem_bm_create_option_t,
};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The file cargo builds.
const FILE_NAME: &str = "libmemfabric_soft_smem.so";

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
fn every_bound_function_and_the_marker_are_exported() {
    assert_eq!(FUNCTION_NAMES.len(), 56);
    let missing: Vec<&str> = FUNCTION_NAMES
        .iter()
        .copied()
        // SAFETY: only looked up, as a plain address.
        .filter(|name| unsafe { library().get::<*const c_void>(name.as_bytes()) }.is_err())
        .collect();
    assert!(missing.is_empty(), "not exported: {missing:?}");
    // SAFETY: only looked up, as a plain address.
    assert!(unsafe { library().get::<*const c_void>(SOFTWARE_LIBRARY_MARKER.as_bytes()) }.is_ok());
}

#[test]
fn the_soname_is_libmf_smem() {
    let Ok(output) = Command::new("readelf").arg("-d").arg(library_path()).output() else {
        eprintln!("readelf is not installed; skipped");
        return;
    };
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.contains("Library soname: [libmf_smem.so]"), "{text}");
}

#[test]
fn the_calls_answer_as_the_software_fabric() {
    // SAFETY: these are the C signatures of the three functions.
    let (abi, init, create2, last_code) = unsafe {
        (
            function::<unsafe extern "C" fn() -> u32>("smem_get_abi_version"),
            function::<unsafe extern "C" fn(u32) -> i32>("smem_init"),
            function::<unsafe extern "C" fn(u32, *const smem_bm_create_option_t) -> *mut c_void>("smem_bm_create2"),
            function::<unsafe extern "C" fn() -> i32>("smem_get_last_err_code"),
        )
    };
    // SAFETY: no arguments, `flags` 0, a zeroed option (valid: plain C data)
    // alive for the call.
    unsafe {
        assert_eq!(abi(), SMEM_ABI_VERSION_SUPPORTED);
        assert_eq!(init(0), SMEM_OK);
        let option: smem_bm_create_option_t = std::mem::zeroed();
        assert!(create2(0, &option).is_null(), "created before smem_bm_init");
        assert_eq!(last_code(), SMEM_NOT_INIT);
    }
}

//! Entry points of 3.1 Init, version and errors.
#![allow(non_snake_case, clippy::too_many_arguments)]

use super::*;

pub(crate) unsafe fn aclInit(configPath: *const c_char) -> aclError {
    let path = if configPath.is_null() {
        None
    } else {
        // SAFETY: a non-NULL configPath is a C string by the call's contract.
        match unsafe { CStr::from_ptr(configPath) }.to_str() {
            Ok(text) => Some(text),
            Err(_) => return finish("aclInit", fail(ACL_ERROR_INVALID_FILE, "configPath is not UTF-8")),
        }
    };
    finish("aclInit", process::init(path))
}

pub(crate) unsafe fn aclFinalize() -> aclError {
    finish("aclFinalize", process::finalize())
}

pub(crate) unsafe fn aclFinalizeReference(refCount: *mut u64) -> aclError {
    finish(
        "aclFinalizeReference",
        non_null(refCount, "refCount").and_then(|()| {
            let mut count = 0;
            process::finalize_reference(&mut count)?;
            // SAFETY: checked non-NULL; valid by the call's contract.
            unsafe { put(refCount, count) };
            Ok(())
        }),
    )
}

pub(crate) unsafe fn aclrtGetVersion(
    majorVersion: *mut i32,
    minorVersion: *mut i32,
    patchVersion: *mut i32,
) -> aclError {
    finish(
        "aclrtGetVersion",
        non_null(majorVersion, "majorVersion")
            .and(non_null(minorVersion, "minorVersion"))
            .and(non_null(patchVersion, "patchVersion"))
            .map(|()| {
                // SAFETY: checked non-NULL; valid by the call's contract.
                unsafe {
                    put(majorVersion, ACL_MAJOR_VERSION);
                    put(minorVersion, ACL_MINOR_VERSION);
                    put(patchVersion, ACL_PATCH_VERSION);
                }
            }),
    )
}

pub(crate) unsafe fn aclGetRecentErrMsg() -> *const c_char {
    crate::error_msg::pending_ptr().unwrap_or(std::ptr::null())
}

pub(crate) unsafe fn aclrtGetSocName() -> *const c_char {
    c"AscendSoftwareDevice".as_ptr()
}

// ---- 3.2 device / context --------------------------------------------------

not_emulated! {
    fn aclsysGetVersionStr(pkgName: *mut c_char, versionStr: *mut c_char) -> aclError;
    fn aclsysGetVersionNum(pkgName: *mut c_char, versionNum: *mut i32) -> aclError;
    fn aclrtGetLastError(level: aclrtLastErrLevel) -> aclError;
    fn aclrtPeekAtLastError(level: aclrtLastErrLevel) -> aclError;
}

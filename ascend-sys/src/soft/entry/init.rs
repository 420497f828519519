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

// ---- package versions ----------------------------------------------------------

/// The one package the software device knows: the runtime, at the ACL
/// interface version of the headers (`ACL_MAJOR/MINOR/PATCH_VERSION`).
const RUNTIME_PACKAGE: &str = "runtime";

/// `ACL_PKG_VERSION_MAX_SIZE`: the buffer callers give `aclsysGetVersionStr`.
const PKG_VERSION_MAX_SIZE: usize = 128;

/// The version of `pkgName`, as the runtime reads it from the package's
/// `version.info`: only `"runtime"` exists on the software device; any other
/// name is `ACL_ERROR_INVALID_FILE`, the runtime's code when the package's
/// version file is missing.
///
/// # Safety
///
/// `pkgName` must be a non-NULL C string.
unsafe fn package_version(pkgName: *const c_char) -> SoftResult<(i32, i32, i32)> {
    // SAFETY: guaranteed by the caller.
    let name = unsafe { CStr::from_ptr(pkgName) }.to_string_lossy();
    if name == RUNTIME_PACKAGE {
        Ok((ACL_MAJOR_VERSION, ACL_MINOR_VERSION, ACL_PATCH_VERSION))
    } else {
        fail(
            ACL_ERROR_INVALID_FILE,
            format!("package {name:?} is not installed (the software device has only {RUNTIME_PACKAGE:?})"),
        )
    }
}

pub(crate) unsafe fn aclsysGetVersionStr(pkgName: *mut c_char, versionStr: *mut c_char) -> aclError {
    let outcome = non_null(versionStr, "versionStr")
        .and(non_null(pkgName, "pkgName"))
        .and_then(|()| {
            // SAFETY: checked non-NULL; a C string by the call's contract.
            let (major, minor, patch) = unsafe { package_version(pkgName) }?;
            let text = format!("{major}.{minor}.{patch}");
            let bytes = text.as_bytes();
            debug_assert!(bytes.len() < PKG_VERSION_MAX_SIZE);
            // SAFETY: the caller provides ACL_PKG_VERSION_MAX_SIZE (128)
            // bytes at `versionStr` (the documented contract); the text and
            // its NUL are far shorter.
            unsafe {
                std::ptr::copy_nonoverlapping(bytes.as_ptr(), versionStr.cast::<u8>(), bytes.len());
                versionStr.add(bytes.len()).write(0);
            }
            Ok(())
        });
    finish("aclsysGetVersionStr", outcome)
}

pub(crate) unsafe fn aclsysGetVersionNum(pkgName: *mut c_char, versionNum: *mut i32) -> aclError {
    let outcome = non_null(versionNum, "versionNum")
        .and(non_null(pkgName, "pkgName"))
        .and_then(|()| {
            // SAFETY: checked non-NULL; a C string by the call's contract.
            let (major, minor, patch) = unsafe { package_version(pkgName) }?;
            // The runtime's encoding of "X.Y.Z": X·10^7 + Y·10^5 + Z·10^3
            // (the last three digits count pre-releases down from a release).
            let number = major * 10_000_000 + minor * 100_000 + patch * 1_000;
            // SAFETY: checked non-NULL; valid by the call's contract.
            unsafe { put(versionNum, number) };
            Ok(())
        });
    finish("aclsysGetVersionNum", outcome)
}

// ---- last error ------------------------------------------------------------------

/// `aclrtGetLastError` / `aclrtPeekAtLastError`: `level` must be
/// `ACL_RT_THREAD_LEVEL`. A bad level is reported through
/// `aclGetRecentErrMsg` but does not replace the recorded last error.
fn last_error(api: &'static str, level: aclrtLastErrLevel, clear: bool) -> aclError {
    if level != ACL_RT_THREAD_LEVEL {
        crate::error_msg::set(format!(
            "{api}: level {level} is not ACL_RT_THREAD_LEVEL ({ACL_RT_THREAD_LEVEL}) (error {ACL_ERROR_INVALID_PARAM})"
        ));
        return ACL_ERROR_INVALID_PARAM;
    }
    crate::soft::core::soft_result::last_error(clear)
}

pub(crate) unsafe fn aclrtGetLastError(level: aclrtLastErrLevel) -> aclError {
    last_error("aclrtGetLastError", level, true)
}

pub(crate) unsafe fn aclrtPeekAtLastError(level: aclrtLastErrLevel) -> aclError {
    last_error("aclrtPeekAtLastError", level, false)
}

/// `aclrtGetErrorVerbose`: the ACL layer's NULL check, then the runtime's
/// device ID check (107001). A device whose stream task failed on it (not a
/// timed-out wait) reports `ACL_RT_ERROR_OTHERS` without detail until its
/// last reset; otherwise `ACL_RT_NO_ERROR`. As the ACL layer, only
/// `tryRepair`, `hasDetail`, `errorType` and `detail.aicoreErrType` are
/// written.
pub(crate) unsafe fn aclrtGetErrorVerbose(deviceId: i32, errorInfo: *mut aclrtErrorInfo) -> aclError {
    let outcome = non_null(errorInfo, "errorInfo").and_then(|()| {
        crate::soft::started::core()?.device(deviceId)?;
        let error_type = match crate::soft::compose::streams::device_fault(deviceId) {
            Some(message) => {
                log::debug!("aclrtGetErrorVerbose: device {deviceId} faulted: {message}");
                ACL_RT_ERROR_OTHERS
            }
            None => ACL_RT_NO_ERROR,
        };
        // SAFETY: checked non-NULL; valid for writes of an `aclrtErrorInfo`
        // by the call's contract. Fields are written one by one through the
        // raw pointer, as the ACL layer does (the rest is left alone).
        unsafe {
            (&raw mut (*errorInfo).tryRepair).write(0);
            (&raw mut (*errorInfo).hasDetail).write(0);
            (&raw mut (*errorInfo).errorType).write(error_type);
            (&raw mut (*errorInfo).detail.aicoreErrType).write(ACL_RT_AICORE_ERROR_UNKNOWN);
        }
        Ok(())
    });
    finish("aclrtGetErrorVerbose", outcome)
}

//! Device memory of the pool, on the software device of `ascend-sys`: a
//! rank's segment is `aclrtMalloc`ed on its device and exported with
//! `aclrtIpcMemGetExportKey` (without a pid whitelist, as any rank may
//! import it); peers import it with `aclrtIpcMemImportByKey`. Every call
//! goes to `ascend_sys::soft::direct`, so the software device's rules,
//! checks and sanitizer apply whatever `ASCEND_BACKEND` says.

use crate::soft::core::result::{SoftResult, fail};
use crate::types::{SMEM_ERROR, SMEM_MALLOC_FAILED, SMEM_NOT_CONNECTED};
use ascend_sys::soft::direct as acl;
use ascend_sys::{ACL_MEM_MALLOC_HUGE_FIRST, ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION, ACL_SUCCESS, aclError};
use core::ffi::{c_char, c_void};
use std::ffi::{CStr, CString};

/// The length of an IPC key buffer (as documented for AscendCL).
const KEY_LEN: usize = 65;

/// The software device's last message, for an error.
fn recent() -> String {
    ascend_sys::soft::recent_error().unwrap_or_default()
}

/// An AscendCL failure as a fabric error with `code`.
fn acl_error<T>(code: i32, what: &str, error: aclError) -> SoftResult<T> {
    fail(
        code,
        format!("{what} failed on the software device: error {error}: {}", recent()),
    )
}

/// Runs `body` with `device` current on this thread. A thread that has it
/// current already runs `body` as it is; otherwise the device is retained
/// before and released after (the caller's retains are untouched; a thread
/// that had another device current has none afterwards).
pub(crate) fn with_device<T>(device: i32, body: impl FnOnce() -> SoftResult<T>) -> SoftResult<T> {
    let mut current = -1;
    // SAFETY: a valid out-pointer.
    if unsafe { acl::aclrtGetDevice(&mut current) } == ACL_SUCCESS && current == device {
        return body();
    }
    // SAFETY: no pointer arguments.
    let set = unsafe { acl::aclrtSetDevice(device) };
    if set != ACL_SUCCESS {
        return acl_error(SMEM_ERROR, &format!("aclrtSetDevice({device})"), set);
    }
    let result = body();
    // SAFETY: no pointer arguments; balances the retain above.
    let reset = unsafe { acl::aclrtResetDevice(device) };
    if reset != ACL_SUCCESS {
        log::warn!("aclrtResetDevice({device}) failed: {reset}");
    }
    result
}

/// This rank's HBM segment, exported to peers. Holds a retain of its device
/// while it lives.
#[derive(Debug)]
pub(crate) struct HbmSegment {
    device: i32,
    address: *mut c_void,
    key: CString,
}

// SAFETY: the device address is an opaque number owned by this value; the
// software device's calls are thread-safe.
unsafe impl Send for HbmSegment {}
// SAFETY: as for `Send`; immutable after creation.
unsafe impl Sync for HbmSegment {}

impl HbmSegment {
    /// Allocates `length` bytes on `device` and exports them.
    pub(crate) fn create(device: i32, length: usize) -> SoftResult<Self> {
        // SAFETY: no pointer arguments; the retain this value keeps.
        let set = unsafe { acl::aclrtSetDevice(device) };
        if set != ACL_SUCCESS {
            return acl_error(SMEM_ERROR, &format!("aclrtSetDevice({device})"), set);
        }
        let mut segment = Self {
            device,
            address: std::ptr::null_mut(),
            key: CString::default(),
        };
        // SAFETY: a valid out-pointer.
        let code = unsafe { acl::aclrtMalloc(&mut segment.address, length, ACL_MEM_MALLOC_HUGE_FIRST) };
        if code != ACL_SUCCESS {
            segment.address = std::ptr::null_mut();
            return acl_error(SMEM_MALLOC_FAILED, &format!("aclrtMalloc of {length} bytes"), code);
        }
        let mut buffer = [0 as c_char; KEY_LEN];
        // SAFETY: `buffer` holds KEY_LEN bytes; the address is the
        // allocation above, of `length` bytes.
        let code = unsafe {
            acl::aclrtIpcMemGetExportKey(
                segment.address,
                length,
                buffer.as_mut_ptr(),
                KEY_LEN,
                ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION,
            )
        };
        if code != ACL_SUCCESS {
            return acl_error(SMEM_ERROR, "aclrtIpcMemGetExportKey", code);
        }
        // SAFETY: the runtime wrote a NUL-terminated key into `buffer`.
        segment.key = unsafe { CStr::from_ptr(buffer.as_ptr()) }.to_owned();
        Ok(segment)
    }

    /// The device address of the first byte.
    pub(crate) fn address(&self) -> *mut c_void {
        self.address
    }

    /// The key peers import.
    pub(crate) fn key(&self) -> &str {
        self.key.to_str().unwrap_or_default()
    }
}

impl Drop for HbmSegment {
    fn drop(&mut self) {
        let (key, address) = (&self.key, self.address);
        let _ = with_device(self.device, || {
            if !key.as_bytes().is_empty() {
                // SAFETY: a key this process exported.
                let code = unsafe { acl::aclrtIpcMemClose(key.as_ptr()) };
                if code != ACL_SUCCESS {
                    log::warn!("aclrtIpcMemClose of the pool's HBM key failed: {code}");
                }
            }
            if !address.is_null() {
                // SAFETY: the allocation of `create`, freed once.
                let code = unsafe { acl::aclrtFree(address) };
                if code != ACL_SUCCESS {
                    log::warn!("aclrtFree of the pool's HBM failed: {code}");
                }
            }
            Ok(())
        });
        // SAFETY: no pointer arguments; releases the retain of `create`.
        let code = unsafe { acl::aclrtResetDevice(self.device) };
        if code != ACL_SUCCESS {
            log::warn!("aclrtResetDevice({}) failed: {code}", self.device);
        }
    }
}

/// A peer's HBM segment, imported into this process.
#[derive(Debug)]
pub(crate) struct HbmImport {
    device: i32,
    address: *mut c_void,
    key: CString,
}

// SAFETY: as for `HbmSegment`.
unsafe impl Send for HbmImport {}
// SAFETY: as for `HbmSegment`.
unsafe impl Sync for HbmImport {}

impl HbmImport {
    /// Imports the segment exported under `key`, on `device`.
    pub(crate) fn open(device: i32, key: &str) -> SoftResult<Self> {
        let Ok(key) = CString::new(key) else {
            return fail(SMEM_ERROR, format!("the HBM key {key:?} holds a NUL"));
        };
        with_device(device, || {
            let mut address = std::ptr::null_mut();
            // SAFETY: a valid out-pointer and C string.
            let code = unsafe { acl::aclrtIpcMemImportByKey(&mut address, key.as_ptr(), 0) };
            if code != ACL_SUCCESS {
                return acl_error(SMEM_NOT_CONNECTED, "aclrtIpcMemImportByKey of a peer's HBM", code);
            }
            Ok(Self {
                device,
                address,
                key: key.clone(),
            })
        })
    }

    /// The local device address of the peer's first byte.
    pub(crate) fn address(&self) -> *mut c_void {
        self.address
    }
}

impl Drop for HbmImport {
    fn drop(&mut self) {
        let key = &self.key;
        let _ = with_device(self.device, || {
            // SAFETY: a key this process imported.
            let code = unsafe { acl::aclrtIpcMemClose(key.as_ptr()) };
            if code != ACL_SUCCESS {
                log::warn!("aclrtIpcMemClose of a peer's HBM failed: {code}");
            }
            Ok(())
        });
    }
}

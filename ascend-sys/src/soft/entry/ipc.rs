//! Entry points of 3.8 Key-based IPC memory.
#![allow(non_snake_case, clippy::too_many_arguments)]

use super::*;
use crate::soft::share;
use crate::soft::vmm;
use std::ffi::c_char;

/// The key as text, or why it is not (the runtime's NULL check: 107000
/// where the ACL layer does not check, 100000 where it does).
///
/// # Safety
///
/// A non-NULL `key` must be a NUL-terminated string.
unsafe fn key_text<'a>(key: *const c_char) -> SoftResult<&'a str> {
    // SAFETY: guaranteed by the caller.
    let text = unsafe { CStr::from_ptr(key) };
    text.to_str()
        .map_or_else(|_| fail(ACL_ERROR_RT_PARAM_INVALID, "key is not valid UTF-8 text"), Ok)
}

/// The runtime's `num ≤ 0` check (after conversion to `int32_t`).
fn check_count(num: usize, name: &str) -> SoftResult<usize> {
    let converted = num as i32;
    if converted <= 0 {
        return fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("{name} {num} is not positive once converted to a 32-bit signed count ({converted})"),
        );
    }
    Ok(converted as usize)
}

/// `aclrtIpcMemGetExportKey`'s key for `[address, address + size)`, which
/// must start a live `aclrtMalloc` allocation: checked here without a lock,
/// then marked exported by the sharing family under its lock.
fn export_key(address: usize, size: usize, flags: u64) -> SoftResult<String> {
    let Some((_, allocation)) = device_mem::find(address).filter(|&(start, _)| start == address) else {
        let why = match device_mem::find(address) {
            Some((start, _)) => format!("devPtr {address:#x} is inside the allocation at {start:#x}, not its start"),
            None if vmm::read()?.reservation_of(address).is_some() => {
                format!("devPtr {address:#x} is a virtual-memory address; IPC keys share aclrtMalloc memory")
            }
            None => format!("devPtr {address:#x} is not a live aclrtMalloc allocation"),
        };
        return fail(ACL_ERROR_RT_PARAM_INVALID, why);
    };
    if size as u64 > allocation.size {
        return fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!(
                "size {size} is larger than the allocation at {address:#x} ({} bytes)",
                allocation.size
            ),
        );
    }
    share::export_key(address, size, flags, || {
        device_mem::mark_exported(address, size as u64).map(|allocation| share::ArenaRange {
            device: allocation.device,
            offset: allocation.offset,
        })
    })
}

pub(crate) unsafe fn aclrtIpcMemGetExportKey(
    devPtr: *mut c_void,
    size: usize,
    key: *mut c_char,
    len: usize,
    flags: u64,
) -> aclError {
    let outcome = (|| {
        non_null(devPtr, "devPtr")?;
        non_null(key, "key")?;
        if size == 0 {
            return fail(ACL_ERROR_RT_PARAM_INVALID, "size is 0");
        }
        // The ACL layer hands the runtime `len` as a 32-bit value.
        let len = len as u32 as usize;
        if len == 0 {
            return fail(ACL_ERROR_RT_PARAM_INVALID, "len is 0 (as a 32-bit value)");
        }
        if flags > ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION {
            return fail(
                ACL_ERROR_RT_PARAM_INVALID,
                format!(
                    "flags {flags:#x} must be ACL_RT_IPC_MEM_EXPORT_FLAG_DEFAULT (0) or _DISABLE_PID_VALIDATION (1)"
                ),
            );
        }
        current::require()?;
        if len < share::KEY_BUFFER_MIN {
            return fail(
                ACL_ERROR_RT_PARAM_INVALID,
                format!("len {len} is too small: the key buffer needs at least 65 bytes"),
            );
        }
        let text = export_key(devPtr as usize, size, flags)?;
        // Another process may write it now, unseen by this one's sanitizer.
        crate::soft::compose::sanitize_ranges::allocated_device(devPtr as usize, size, None);
        // SAFETY: `key` has room for `len` ≥ 65 bytes by the call's
        // contract, and the key is at most 64 bytes long.
        unsafe {
            std::ptr::copy_nonoverlapping(text.as_ptr(), key.cast::<u8>(), text.len());
            key.add(text.len()).write(0);
        }
        Ok(())
    })();
    finish("aclrtIpcMemGetExportKey", outcome)
}

pub(crate) unsafe fn aclrtIpcMemImportByKey(devPtr: *mut *mut c_void, key: *const c_char, flags: u64) -> aclError {
    let outcome = (|| {
        non_null(devPtr, "devPtr")?;
        non_null(key, "key")?;
        if flags > ACL_RT_IPC_MEM_IMPORT_FLAG_ENABLE_PEER_ACCESS {
            return fail(
                ACL_ERROR_RT_PARAM_INVALID,
                format!("flags {flags:#x} must be ACL_RT_IPC_MEM_IMPORT_FLAG_DEFAULT (0) or _ENABLE_PEER_ACCESS (1)"),
            );
        }
        current::require()?;
        // SAFETY: checked non-NULL; a C string by the call's contract.
        let text = unsafe { key_text(key)? };
        let address = share::import(text)?;
        // SAFETY: checked non-NULL; valid by the call's contract.
        unsafe { put(devPtr, address as *mut c_void) };
        Ok(())
    })();
    finish("aclrtIpcMemImportByKey", outcome)
}

pub(crate) unsafe fn aclrtIpcMemClose(key: *const c_char) -> aclError {
    let outcome = (|| {
        non_null(key, "key")?;
        current::require()?;
        // SAFETY: checked non-NULL; a C string by the call's contract.
        share::close(unsafe { key_text(key)? })
    })();
    finish("aclrtIpcMemClose", outcome)
}

pub(crate) unsafe fn aclrtIpcMemSetImportPid(key: *const c_char, pid: *mut i32, num: usize) -> aclError {
    let outcome = (|| {
        non_null(key, "key")?;
        non_null(pid, "pid")?;
        let count = check_count(num, "num")?;
        current::require()?;
        // SAFETY: checked non-NULL; a C string by the call's contract.
        let text = unsafe { key_text(key)? };
        // SAFETY: checked non-NULL; `pid` holds `num` pids by the call's
        // contract.
        let pids = unsafe { std::slice::from_raw_parts(pid, count) };
        share::set_import_pids(text, pids)
    })();
    finish("aclrtIpcMemSetImportPid", outcome)
}

pub(crate) unsafe fn aclrtIpcMemImportPidInterServer(
    key: *const c_char,
    serverPids: *mut aclrtServerPid,
    num: usize,
) -> aclError {
    // No ACL-layer checks: the runtime refuses NULL and 0 with 107000.
    let outcome = (|| {
        if key.is_null() {
            return fail(ACL_ERROR_RT_PARAM_INVALID, "key is NULL");
        }
        // SAFETY: `serverPids` holds `num` entries by the call's contract.
        unsafe { check_server_pids(serverPids, num) }?;
        fail(
            ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
            "whitelisting processes of other servers exists only on Atlas A3; the software device models the common chips",
        )
    })();
    finish("aclrtIpcMemImportPidInterServer", outcome)
}

pub(crate) unsafe fn aclrtIpcMemSetAttr(key: *const c_char, type_: aclrtIpcMemAttrType, attr: u64) -> aclError {
    // No ACL-layer checks: the runtime refuses these with 107000.
    let outcome = (|| {
        if key.is_null() {
            return fail(ACL_ERROR_RT_PARAM_INVALID, "key is NULL");
        }
        if type_ != ACL_RT_IPC_MEM_ATTR_ACCESS_LINK {
            return fail(
                ACL_ERROR_RT_PARAM_INVALID,
                format!("type {type_} is not ACL_RT_IPC_MEM_ATTR_ACCESS_LINK (0)"),
            );
        }
        if attr > ACL_RT_IPC_MEM_ATTR_ACCESS_LINK_UB_MULTI_PORT_PATH {
            return fail(
                ACL_ERROR_RT_PARAM_INVALID,
                format!("attr {attr} is not an ACL_RT_IPC_MEM_ATTR_ACCESS_LINK_* value (0 to 3)"),
            );
        }
        current::require()?;
        fail(
            ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
            "choosing the IPC access link exists only on Atlas A3 and Ascend 950; the software device models the common chips",
        )
    })();
    finish("aclrtIpcMemSetAttr", outcome)
}

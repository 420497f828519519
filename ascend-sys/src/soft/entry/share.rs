//! Entry points of 3.7 Physical-memory sharing (shareable handles).
#![allow(non_snake_case, clippy::too_many_arguments)]

use super::*;
use crate::soft::share;
use crate::soft::started;
use crate::soft::vmm;

/// Exports the physical allocation `handle` (`(shareable handle, full
/// token)`), the VMM tables locked meanwhile so that it is not freed under
/// the export (their lock ranks before the sharing tables').
fn export(handle: usize, flags: u64) -> SoftResult<(u64, u64)> {
    let vmm = vmm::read()?;
    let physical = vmm.physical(handle)?;
    let exportable = share::Exportable {
        memory: &physical.memory,
        kind: physical.kind,
        size: physical.size,
        imported: physical.imported,
    };
    share::export(handle, exportable, flags)
}

/// The runtime's check of a V2 `shareType` (`ACL_ERROR_RT_PARAM_INVALID`).
fn check_share_type(shareType: aclrtMemSharedHandleType) -> SoftResult {
    if shareType == ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT || shareType == ACL_MEM_SHARE_HANDLE_TYPE_FABRIC {
        Ok(())
    } else {
        fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("shareType {shareType} is neither ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT (1) nor _FABRIC (2)"),
        )
    }
}

/// The runtime's check of the export flags.
fn check_export_flags(flags: u64) -> SoftResult {
    if flags > ACL_RT_VMM_EXPORT_FLAG_DISABLE_PID_VALIDATION {
        return fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("flags {flags:#x} must be ACL_RT_VMM_EXPORT_FLAG_DEFAULT (0) or _DISABLE_PID_VALIDATION (1)"),
        );
    }
    Ok(())
}

/// Reads a V2 shareable handle: `(u64 handle, full token of a FABRIC handle)`.
///
/// # Safety
///
/// `shareableHandle` must be non-NULL and point to a `u64` (DEFAULT) or an
/// `aclrtMemFabricHandle` (FABRIC), as `shareType` says.
unsafe fn read_v2(
    shareableHandle: *const c_void,
    shareType: aclrtMemSharedHandleType,
) -> SoftResult<(u64, Option<u64>)> {
    if shareType == ACL_MEM_SHARE_HANDLE_TYPE_FABRIC {
        // SAFETY: guaranteed by the caller; read unaligned, the buffer is
        // the caller's.
        let fabric = unsafe { shareableHandle.cast::<aclrtMemFabricHandle>().read_unaligned() };
        let (handle, token) = share::parse_fabric(&fabric)?;
        Ok((handle, Some(token)))
    } else {
        // SAFETY: guaranteed by the caller.
        Ok((unsafe { shareableHandle.cast::<u64>().read_unaligned() }, None))
    }
}

/// The pids of a SetPid call, with `pidNum` truncated to 32 bits as the
/// runtime does.
///
/// # Safety
///
/// `pid` must be non-NULL and point to `pidNum` (after truncation) pids.
unsafe fn pid_list<'a>(pid: *const i32, pidNum: usize) -> SoftResult<&'a [i32]> {
    let count = pidNum as u32 as usize;
    if count == 0 {
        return fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("pidNum {pidNum} is 0 once truncated to 32 bits"),
        );
    }
    // SAFETY: guaranteed by the caller.
    Ok(unsafe { std::slice::from_raw_parts(pid, count) })
}

/// An exported physical allocation may be written by another process,
/// unseen by this one's sanitizer: what it holds is no longer known.
fn sanitize_exported(handle: usize) {
    if crate::soft::check::sanitize::on()
        && let Ok(vmm) = vmm::read()
        && let Ok(physical) = vmm.physical(handle)
    {
        let (data, size) = (physical.memory.data(0) as usize, physical.size as usize);
        drop(vmm);
        crate::soft::check::sanitize::allocated(data, size, None);
    }
}

pub(crate) unsafe fn aclrtMemExportToShareableHandle(
    handle: aclrtDrvMemHandle,
    handleType: aclrtMemHandleType,
    flags: u64,
    shareableHandle: *mut u64,
) -> aclError {
    let outcome = (|| {
        non_null(handle, "handle")?;
        if handleType != ACL_MEM_HANDLE_TYPE_NONE {
            return fail(
                ACL_ERROR_INVALID_PARAM,
                format!("handleType {handleType} is not ACL_MEM_HANDLE_TYPE_NONE"),
            );
        }
        non_null(shareableHandle, "shareableHandle")?;
        check_export_flags(flags)?;
        let (exported, _) = export(handle as usize, flags)?;
        sanitize_exported(handle as usize);
        // SAFETY: checked non-NULL; valid by the call's contract.
        unsafe { put(shareableHandle, exported) };
        Ok(())
    })();
    finish("aclrtMemExportToShareableHandle", outcome)
}

pub(crate) unsafe fn aclrtMemExportToShareableHandleV2(
    handle: aclrtDrvMemHandle,
    flags: u64,
    shareType: aclrtMemSharedHandleType,
    shareableHandle: *mut c_void,
) -> aclError {
    let outcome = (|| {
        non_null(handle, "handle")?;
        non_null(shareableHandle, "shareableHandle")?;
        check_share_type(shareType)?;
        check_export_flags(flags)?;
        if shareType == ACL_MEM_SHARE_HANDLE_TYPE_FABRIC {
            current::require()?;
        }
        let (exported, token) = export(handle as usize, flags)?;
        sanitize_exported(handle as usize);
        // SAFETY: checked non-NULL; the buffer holds the type's handle by the
        // call's contract (written unaligned: it is the caller's buffer).
        unsafe {
            if shareType == ACL_MEM_SHARE_HANDLE_TYPE_FABRIC {
                shareableHandle
                    .cast::<aclrtMemFabricHandle>()
                    .write_unaligned(share::fabric(exported, token));
            } else {
                shareableHandle.cast::<u64>().write_unaligned(exported);
            }
        }
        Ok(())
    })();
    finish("aclrtMemExportToShareableHandleV2", outcome)
}

pub(crate) unsafe fn aclrtMemSetPidToShareableHandle(shareableHandle: u64, pid: *mut i32, pidNum: usize) -> aclError {
    let outcome = (|| {
        non_null(pid, "pid")?;
        if pidNum == 0 {
            return fail(ACL_ERROR_INVALID_PARAM, "pidNum is 0");
        }
        // SAFETY: checked non-NULL; `pid` holds `pidNum` pids by the call's
        // contract.
        let pids = unsafe { pid_list(pid, pidNum)? };
        share::set_pids(shareableHandle, None, pids)
    })();
    finish("aclrtMemSetPidToShareableHandle", outcome)
}

pub(crate) unsafe fn aclrtMemSetPidToShareableHandleV2(
    shareableHandle: *mut c_void,
    shareType: aclrtMemSharedHandleType,
    pid: *mut i32,
    pidNum: usize,
) -> aclError {
    let outcome = (|| {
        non_null(shareableHandle, "shareableHandle")?;
        non_null(pid, "pid")?;
        if pidNum == 0 {
            return fail(ACL_ERROR_INVALID_PARAM, "pidNum is 0");
        }
        check_share_type(shareType)?;
        // SAFETY: checked non-NULL; the buffer holds the type's handle by
        // the call's contract.
        let (exported, token) = unsafe { read_v2(shareableHandle, shareType)? };
        // SAFETY: checked non-NULL; `pid` holds `pidNum` pids by the call's
        // contract.
        let pids = unsafe { pid_list(pid, pidNum)? };
        share::set_pids(exported, token, pids)
    })();
    finish("aclrtMemSetPidToShareableHandleV2", outcome)
}

/// The shared body of the imports: opens the export (without the lock)
/// and makes it a handle of this process on `device`.
fn import(shareable: u64, token: Option<u64>, device: i32, handle: *mut aclrtDrvMemHandle) -> SoftResult {
    let (kind, size, memory) = share::open_export(shareable, token)?.into_physical(device);
    let imported = vmm::adopt_import(&mut *vmm::write()?, kind, size, memory);
    // SAFETY: checked non-NULL by the caller; valid by the call's contract.
    unsafe { put(handle, imported as aclrtDrvMemHandle) };
    Ok(())
}

pub(crate) unsafe fn aclrtMemImportFromShareableHandle(
    shareableHandle: u64,
    deviceId: i32,
    handle: *mut aclrtDrvMemHandle,
) -> aclError {
    let outcome = (|| {
        non_null(handle, "handle")?;
        started::core()?.device(deviceId)?;
        current::require()?;
        import(shareableHandle, None, deviceId, handle)
    })();
    finish("aclrtMemImportFromShareableHandle", outcome)
}

pub(crate) unsafe fn aclrtMemImportFromShareableHandleV2(
    shareableHandle: *mut c_void,
    shareType: aclrtMemSharedHandleType,
    flags: u64,
    handle: *mut aclrtDrvMemHandle,
) -> aclError {
    let outcome = (|| {
        non_null(shareableHandle, "shareableHandle")?;
        non_null(handle, "handle")?;
        if flags != 0 {
            return fail(ACL_ERROR_INVALID_PARAM, format!("flags {flags:#x} must be 0"));
        }
        let device = current::require()?;
        check_share_type(shareType)?;
        // SAFETY: checked non-NULL; the buffer holds the type's handle by
        // the call's contract.
        let (exported, token) = unsafe { read_v2(shareableHandle, shareType)? };
        import(exported, token, device, handle)
    })();
    finish("aclrtMemImportFromShareableHandleV2", outcome)
}

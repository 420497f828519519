//! The C entry points of the software device, one per bound function, with
//! the same names and signatures as the crate-root functions.
//!
//! Each one does the ACL layer's argument checks (NULL pointers, zero sizes:
//! `ACL_ERROR_INVALID_PARAM`) first, then the runtime's, in the order the
//! real runtime does them (`acl-behaviour.md` §1), and records a message for
//! `aclGetRecentErrMsg` on every failure.
#![allow(non_snake_case, clippy::too_many_arguments)]

use super::device_mem::{self, Rounding};
use super::fail::{SoftResult, fail, finish};
use super::{context, copy, host_mem, process};
use crate::types::*;
use std::ffi::CStr;

/// Fails with `ACL_ERROR_INVALID_PARAM` when `pointer` is NULL.
fn non_null<T>(pointer: *const T, name: &str) -> SoftResult {
    if pointer.is_null() {
        fail(ACL_ERROR_INVALID_PARAM, format!("{name} is NULL"))
    } else {
        Ok(())
    }
}

/// Writes `value` through an out-pointer already checked non-NULL.
///
/// # Safety
///
/// `out` must be valid for a write of `T`.
unsafe fn put<T>(out: *mut T, value: T) {
    // SAFETY: guaranteed by the caller.
    unsafe { out.write(value) }
}

// ---- 3.1 init / version / errors -------------------------------------------

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

pub(crate) unsafe fn aclrtSetDevice(deviceId: i32) -> aclError {
    finish("aclrtSetDevice", process::set_device(deviceId))
}

pub(crate) unsafe fn aclrtResetDevice(deviceId: i32) -> aclError {
    finish("aclrtResetDevice", process::reset_device(deviceId, false))
}

pub(crate) unsafe fn aclrtResetDeviceForce(deviceId: i32) -> aclError {
    finish("aclrtResetDeviceForce", process::reset_device(deviceId, true))
}

pub(crate) unsafe fn aclrtGetDevice(deviceId: *mut i32) -> aclError {
    finish(
        "aclrtGetDevice",
        non_null(deviceId, "deviceId").and_then(|()| {
            let device = context::require()?;
            // SAFETY: checked non-NULL; valid by the call's contract.
            unsafe { put(deviceId, device) };
            Ok(())
        }),
    )
}

pub(crate) unsafe fn aclrtGetDeviceCount(count: *mut u32) -> aclError {
    finish(
        "aclrtGetDeviceCount",
        non_null(count, "count").and_then(|()| {
            let devices = process::device_count()?;
            // SAFETY: checked non-NULL; valid by the call's contract.
            unsafe { put(count, devices) };
            Ok(())
        }),
    )
}

pub(crate) unsafe fn aclrtGetRunMode(runMode: *mut aclrtRunMode) -> aclError {
    finish(
        "aclrtGetRunMode",
        non_null(runMode, "runMode").map(|()| {
            // SAFETY: checked non-NULL; valid by the call's contract.
            unsafe { put(runMode, ACL_HOST) }
        }),
    )
}

pub(crate) unsafe fn aclrtSynchronizeDevice() -> aclError {
    // No queued work exists yet on the software device: synchronising only
    // needs a current device.
    finish("aclrtSynchronizeDevice", context::require().map(|_| ()))
}

pub(crate) unsafe fn aclrtDeviceGetBareTgid(pid: *mut i32) -> aclError {
    finish(
        "aclrtDeviceGetBareTgid",
        non_null(pid, "pid").map(|()| {
            let id = rustix::process::getpid().as_raw_nonzero().get();
            // SAFETY: checked non-NULL; valid by the call's contract.
            unsafe { put(pid, id) }
        }),
    )
}

// ---- 3.4 device memory, copy, set -------------------------------------------

fn malloc_into(devPtr: *mut *mut c_void, size: usize, rounding: Rounding, policy: aclrtMemMallocPolicy) -> SoftResult {
    non_null(devPtr, "devPtr")?;
    let address = device_mem::malloc(size, rounding, policy)?;
    // SAFETY: checked non-NULL; valid by the call's contract.
    unsafe { put(devPtr, address as *mut c_void) };
    Ok(())
}

pub(crate) unsafe fn aclrtMalloc(devPtr: *mut *mut c_void, size: usize, policy: aclrtMemMallocPolicy) -> aclError {
    finish("aclrtMalloc", malloc_into(devPtr, size, Rounding::Padded, policy))
}

pub(crate) unsafe fn aclrtMallocAlign32(
    devPtr: *mut *mut c_void,
    size: usize,
    policy: aclrtMemMallocPolicy,
) -> aclError {
    finish(
        "aclrtMallocAlign32",
        malloc_into(devPtr, size, Rounding::Align32, policy),
    )
}

pub(crate) unsafe fn aclrtMallocCached(
    devPtr: *mut *mut c_void,
    size: usize,
    policy: aclrtMemMallocPolicy,
) -> aclError {
    finish("aclrtMallocCached", malloc_into(devPtr, size, Rounding::Padded, policy))
}

pub(crate) unsafe fn aclrtMallocWithCfg(
    devPtr: *mut *mut c_void,
    size: usize,
    policy: aclrtMemMallocPolicy,
    cfg: *mut aclrtMallocConfig,
) -> aclError {
    let outcome = (|| {
        non_null(devPtr, "devPtr")?;
        // SAFETY: a non-NULL cfg is valid by the call's contract.
        if let Some(config) = unsafe { cfg.as_ref() }
            && config.numAttrs != 0
            && config.attrs.is_null()
        {
            return fail(ACL_ERROR_INVALID_PARAM, "cfg->numAttrs is not 0 but cfg->attrs is NULL");
        }
        if size == 0 {
            return fail(ACL_ERROR_INVALID_PARAM, "size is 0");
        }
        // SAFETY: as above.
        unsafe { device_mem::check_device_cfg(cfg) }?;
        malloc_into(devPtr, size, Rounding::Align32, policy)
    })();
    finish("aclrtMallocWithCfg", outcome)
}

pub(crate) unsafe fn aclrtFree(devPtr: *mut c_void) -> aclError {
    finish(
        "aclrtFree",
        non_null(devPtr, "devPtr").and_then(|()| device_mem::free(devPtr as usize)),
    )
}

pub(crate) unsafe fn aclrtFreeWithDevSync(devPtr: *mut c_void) -> aclError {
    finish(
        "aclrtFreeWithDevSync",
        non_null(devPtr, "devPtr")
            .and_then(|()| context::require())
            .and_then(|_| device_mem::free(devPtr as usize)),
    )
}

pub(crate) unsafe fn aclrtGetMemInfo(attr: aclrtMemAttr, free: *mut usize, total: *mut usize) -> aclError {
    finish(
        "aclrtGetMemInfo",
        non_null(free, "free").and(non_null(total, "total")).and_then(|()| {
            let (available, capacity) = process::mem_info(attr)?;
            // SAFETY: checked non-NULL; valid by the call's contract.
            unsafe {
                put(free, available);
                put(total, capacity);
            }
            Ok(())
        }),
    )
}

pub(crate) unsafe fn aclrtMemcpy(
    dst: *mut c_void,
    destMax: usize,
    src: *const c_void,
    count: usize,
    kind: aclrtMemcpyKind,
) -> aclError {
    if count == 0 {
        return ACL_SUCCESS;
    }
    let outcome = non_null(dst, "dst").and(non_null(src, "src")).and_then(|()| {
        // SAFETY: the caller's contract covers the host sides.
        unsafe { copy::memcpy(dst as usize, destMax, src as usize, count, kind) }
    });
    finish("aclrtMemcpy", outcome)
}

pub(crate) unsafe fn aclrtMemset(devPtr: *mut c_void, maxCount: usize, value: i32, count: usize) -> aclError {
    if count == 0 {
        return ACL_SUCCESS;
    }
    let outcome = non_null(devPtr, "devPtr").and_then(|()| {
        // SAFETY: the caller's contract covers a host range.
        unsafe { copy::memset(devPtr as usize, maxCount, value, count) }
    });
    finish("aclrtMemset", outcome)
}

// ---- 3.5 host memory ---------------------------------------------------------

fn malloc_host_into(hostPtr: *mut *mut c_void, size: u64) -> SoftResult {
    let address = host_mem::malloc_host(size)?;
    // SAFETY: checked non-NULL by the callers; valid by the call's contract.
    unsafe { put(hostPtr, address as *mut c_void) };
    Ok(())
}

pub(crate) unsafe fn aclrtMallocHost(hostPtr: *mut *mut c_void, size: usize) -> aclError {
    finish(
        "aclrtMallocHost",
        non_null(hostPtr, "hostPtr").and_then(|()| malloc_host_into(hostPtr, size as u64)),
    )
}

pub(crate) unsafe fn aclrtMallocHostWithCfg(ptr: *mut *mut c_void, size: u64, cfg: *mut aclrtMallocConfig) -> aclError {
    let outcome = (|| {
        non_null(ptr, "ptr")?;
        if size == 0 {
            return fail(ACL_ERROR_INVALID_PARAM, "size is 0");
        }
        // SAFETY: a non-NULL cfg is valid by the call's contract.
        unsafe { host_mem::check_host_cfg(cfg) }?;
        malloc_host_into(ptr, size)
    })();
    finish("aclrtMallocHostWithCfg", outcome)
}

pub(crate) unsafe fn aclrtFreeHost(hostPtr: *mut c_void) -> aclError {
    finish(
        "aclrtFreeHost",
        non_null(hostPtr, "hostPtr").and_then(|()| host_mem::free_host(hostPtr as usize)),
    )
}

pub(crate) unsafe fn aclrtFreeHostWithDevSync(hostPtr: *mut c_void) -> aclError {
    finish(
        "aclrtFreeHostWithDevSync",
        non_null(hostPtr, "hostPtr")
            .and_then(|()| context::require())
            .and_then(|_| host_mem::free_host(hostPtr as usize)),
    )
}

// ---- not emulated yet ----------------------------------------------------------

/// Declares entry points the software device does not emulate: each returns
/// `ACL_ERROR_API_NOT_SUPPORT` (NULL for pointer results) and says so in
/// `aclGetRecentErrMsg`. Nothing pretends to succeed.
macro_rules! not_emulated {
    ($( fn $name:ident( $($arg:ident : $ty:ty),* $(,)? ) -> $ret:ty; )*) => {$(
        pub(crate) unsafe fn $name($(_: $ty),*) -> $ret {
            crate::dispatch::not_emulated(stringify!($name))
        }
    )*};
}

not_emulated! {
    fn aclsysGetVersionStr(pkgName: *mut c_char, versionStr: *mut c_char) -> aclError;
    fn aclsysGetVersionNum(pkgName: *mut c_char, versionNum: *mut i32) -> aclError;
    fn aclrtGetLastError(level: aclrtLastErrLevel) -> aclError;
    fn aclrtPeekAtLastError(level: aclrtLastErrLevel) -> aclError;
    fn aclrtCreateContext(context: *mut aclrtContext, deviceId: i32) -> aclError;
    fn aclrtDestroyContext(context: aclrtContext) -> aclError;
    fn aclrtSetCurrentContext(context: aclrtContext) -> aclError;
    fn aclrtGetCurrentContext(context: *mut aclrtContext) -> aclError;
    fn aclrtSynchronizeDeviceWithTimeout(timeout: i32) -> aclError;
    fn aclrtDeviceCanAccessPeer(canAccessPeer: *mut i32, deviceId: i32, peerDeviceId: i32) -> aclError;
    fn aclrtDeviceEnablePeerAccess(peerDeviceId: i32, flags: u32) -> aclError;
    fn aclrtDeviceDisablePeerAccess(peerDeviceId: i32) -> aclError;
    fn aclrtCreateStream(stream: *mut aclrtStream) -> aclError;
    fn aclrtCreateStreamWithConfig(stream: *mut aclrtStream, priority: u32, flag: u32) -> aclError;
    fn aclrtDestroyStream(stream: aclrtStream) -> aclError;
    fn aclrtSynchronizeStream(stream: aclrtStream) -> aclError;
    fn aclrtSynchronizeStreamWithTimeout(stream: aclrtStream, timeout: i32) -> aclError;
    fn aclrtCreateEvent(event: *mut aclrtEvent) -> aclError;
    fn aclrtCreateEventWithFlag(event: *mut aclrtEvent, flag: u32) -> aclError;
    fn aclrtCreateEventExWithFlag(event: *mut aclrtEvent, flag: u32) -> aclError;
    fn aclrtDestroyEvent(event: aclrtEvent) -> aclError;
    fn aclrtRecordEvent(event: aclrtEvent, stream: aclrtStream) -> aclError;
    fn aclrtSynchronizeEvent(event: aclrtEvent) -> aclError;
    fn aclrtQueryEventStatus(event: aclrtEvent, status: *mut aclrtEventRecordedStatus) -> aclError;
    fn aclrtStreamWaitEvent(stream: aclrtStream, event: aclrtEvent) -> aclError;
    fn aclrtEventElapsedTime(ms: *mut f32, startEvent: aclrtEvent, endEvent: aclrtEvent) -> aclError;
    fn aclrtMallocForTaskScheduler(devPtr: *mut *mut c_void, size: usize, policy: aclrtMemMallocPolicy, cfg: *mut aclrtMallocConfig) -> aclError;
    fn aclrtGetMemUsageInfo(deviceId: i32, memUsageInfo: *mut aclrtMemUsageInfo, inputNum: usize, outputNum: *mut usize) -> aclError;
    fn aclrtPointerGetAttributes(ptr: *const c_void, attributes: *mut aclrtPtrAttributes) -> aclError;
    fn aclrtMemcpyAsync(dst: *mut c_void, destMax: usize, src: *const c_void, count: usize, kind: aclrtMemcpyKind, stream: aclrtStream) -> aclError;
    fn aclrtMemcpy2d(dst: *mut c_void, dpitch: usize, src: *const c_void, spitch: usize, width: usize, height: usize, kind: aclrtMemcpyKind) -> aclError;
    fn aclrtMemcpy2dAsync(dst: *mut c_void, dpitch: usize, src: *const c_void, spitch: usize, width: usize, height: usize, kind: aclrtMemcpyKind, stream: aclrtStream) -> aclError;
    fn aclrtMemsetAsync(devPtr: *mut c_void, maxCount: usize, value: i32, count: usize, stream: aclrtStream) -> aclError;
    fn aclrtHostRegister(ptr: *mut c_void, size: u64, type: aclrtHostRegisterType, devPtr: *mut *mut c_void) -> aclError;
    fn aclrtHostRegisterV2(ptr: *mut c_void, size: u64, flag: u32) -> aclError;
    fn aclrtHostGetDevicePointer(pHost: *mut c_void, pDevice: *mut *mut c_void, flag: u32) -> aclError;
    fn aclrtHostMemMapCapabilities(deviceId: u32, hacType: aclrtHacType, capabilities: *mut aclrtHostMemMapCapability) -> aclError;
    fn aclrtHostUnregister(ptr: *mut c_void) -> aclError;
    fn aclrtMallocPhysical(handle: *mut aclrtDrvMemHandle, size: usize, prop: *const aclrtPhysicalMemProp, flags: u64) -> aclError;
    fn aclrtFreePhysical(handle: aclrtDrvMemHandle) -> aclError;
    fn aclrtReserveMemAddress(virPtr: *mut *mut c_void, size: usize, alignment: usize, expectPtr: *mut c_void, flags: u64) -> aclError;
    fn aclrtReserveMemAddressNoUCMemory(virPtr: *mut *mut c_void, size: usize, alignment: usize, expectPtr: *mut c_void, flags: u64) -> aclError;
    fn aclrtReleaseMemAddress(virPtr: *mut c_void) -> aclError;
    fn aclrtMapMem(virPtr: *mut c_void, size: usize, offset: usize, handle: aclrtDrvMemHandle, flags: u64) -> aclError;
    fn aclrtMemMapNoAccess(virPtr: *mut c_void, size: usize, offset: usize, handle: aclrtDrvMemHandle, flags: u64) -> aclError;
    fn aclrtUnmapMem(virPtr: *mut c_void) -> aclError;
    fn aclrtMemGetAllocationGranularity(prop: *mut aclrtPhysicalMemProp, option: aclrtMemGranularityOptions, granularity: *mut usize) -> aclError;
    fn aclrtMemSetAccess(virPtr: *mut c_void, size: usize, desc: *mut aclrtMemAccessDesc, count: usize) -> aclError;
    fn aclrtMemGetAccess(virPtr: *mut c_void, location: *mut aclrtMemLocation, flag: *mut u64) -> aclError;
    fn aclrtMemRetainAllocationHandle(virPtr: *mut c_void, handle: *mut aclrtDrvMemHandle) -> aclError;
    fn aclrtMemGetAllocationPropertiesFromHandle(handle: aclrtDrvMemHandle, prop: *mut aclrtPhysicalMemProp) -> aclError;
    fn aclrtMemGetAddressRange(ptr: *mut c_void, pbase: *mut *mut c_void, psize: *mut usize) -> aclError;
    fn aclrtMemMapSelectedLink(virPtrDst: *mut c_void, size: usize, virPtrSrc: *mut c_void, linkIdx: u32) -> aclError;
    fn aclrtMemMapSetLink(handle: aclrtDrvMemHandle, adviceLink: aclrtMemLinkType) -> aclError;
    fn aclrtMemExportToShareableHandle(handle: aclrtDrvMemHandle, handleType: aclrtMemHandleType, flags: u64, shareableHandle: *mut u64) -> aclError;
    fn aclrtMemSetPidToShareableHandle(shareableHandle: u64, pid: *mut i32, pidNum: usize) -> aclError;
    fn aclrtMemImportFromShareableHandle(shareableHandle: u64, deviceId: i32, handle: *mut aclrtDrvMemHandle) -> aclError;
    fn aclrtMemExportToShareableHandleV2(handle: aclrtDrvMemHandle, flags: u64, shareType: aclrtMemSharedHandleType, shareableHandle: *mut c_void) -> aclError;
    fn aclrtMemSetPidToShareableHandleV2(shareableHandle: *mut c_void, shareType: aclrtMemSharedHandleType, pid: *mut i32, pidNum: usize) -> aclError;
    fn aclrtMemImportFromShareableHandleV2(shareableHandle: *mut c_void, shareType: aclrtMemSharedHandleType, flags: u64, handle: *mut aclrtDrvMemHandle) -> aclError;
    fn aclrtIpcMemGetExportKey(devPtr: *mut c_void, size: usize, key: *mut c_char, len: usize, flags: u64) -> aclError;
    fn aclrtIpcMemImportByKey(devPtr: *mut *mut c_void, key: *const c_char, flags: u64) -> aclError;
    fn aclrtIpcMemClose(key: *const c_char) -> aclError;
    fn aclrtIpcMemSetImportPid(key: *const c_char, pid: *mut i32, num: usize) -> aclError;
    fn aclrtIpcMemImportPidInterServer(key: *const c_char, serverPids: *mut aclrtServerPid, num: usize) -> aclError;
    fn aclrtIpcMemSetAttr(key: *const c_char, type: aclrtIpcMemAttrType, attr: u64) -> aclError;
    fn aclrtAllocatorCreateDesc() -> aclrtAllocatorDesc;
    fn aclrtAllocatorDestroyDesc(allocatorDesc: aclrtAllocatorDesc) -> aclError;
    fn aclrtAllocatorSetObjToDesc(allocatorDesc: aclrtAllocatorDesc, allocator: aclrtAllocator) -> aclError;
    fn aclrtAllocatorSetAllocFuncToDesc(allocatorDesc: aclrtAllocatorDesc, func: aclrtAllocatorAllocFunc) -> aclError;
    fn aclrtAllocatorSetFreeFuncToDesc(allocatorDesc: aclrtAllocatorDesc, func: aclrtAllocatorFreeFunc) -> aclError;
    fn aclrtAllocatorSetAllocAdviseFuncToDesc(allocatorDesc: aclrtAllocatorDesc, func: aclrtAllocatorAllocAdviseFunc) -> aclError;
    fn aclrtAllocatorSetGetAddrFromBlockFuncToDesc(allocatorDesc: aclrtAllocatorDesc, func: aclrtAllocatorGetAddrFromBlockFunc) -> aclError;
    fn aclrtAllocatorRegister(stream: aclrtStream, allocatorDesc: aclrtAllocatorDesc) -> aclError;
    fn aclrtAllocatorGetByStream(stream: aclrtStream, allocatorDesc: *mut aclrtAllocatorDesc, allocator: *mut aclrtAllocator, allocFunc: *mut aclrtAllocatorAllocFunc, freeFunc: *mut aclrtAllocatorFreeFunc, allocAdviseFunc: *mut aclrtAllocatorAllocAdviseFunc, getAddrFromBlockFunc: *mut aclrtAllocatorGetAddrFromBlockFunc) -> aclError;
    fn aclrtAllocatorUnregister(stream: aclrtStream) -> aclError;
}

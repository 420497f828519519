//! Entry points of 3.4 Device memory, copies and memsets.
#![allow(non_snake_case, clippy::too_many_arguments)]

use super::*;

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

not_emulated! {
    fn aclrtMallocForTaskScheduler(devPtr: *mut *mut c_void, size: usize, policy: aclrtMemMallocPolicy, cfg: *mut aclrtMallocConfig) -> aclError;
    fn aclrtGetMemUsageInfo(deviceId: i32, memUsageInfo: *mut aclrtMemUsageInfo, inputNum: usize, outputNum: *mut usize) -> aclError;
    fn aclrtPointerGetAttributes(ptr: *const c_void, attributes: *mut aclrtPtrAttributes) -> aclError;
    fn aclrtMemcpyAsync(dst: *mut c_void, destMax: usize, src: *const c_void, count: usize, kind: aclrtMemcpyKind, stream: aclrtStream) -> aclError;
    fn aclrtMemcpy2d(dst: *mut c_void, dpitch: usize, src: *const c_void, spitch: usize, width: usize, height: usize, kind: aclrtMemcpyKind) -> aclError;
    fn aclrtMemcpy2dAsync(dst: *mut c_void, dpitch: usize, src: *const c_void, spitch: usize, width: usize, height: usize, kind: aclrtMemcpyKind, stream: aclrtStream) -> aclError;
    fn aclrtMemsetAsync(devPtr: *mut c_void, maxCount: usize, value: i32, count: usize, stream: aclrtStream) -> aclError;
}

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
    // `aclrtMallocCached` maps only HUGE_FIRST, HUGE_ONLY, NORMAL_ONLY and
    // HUGE1G_ONLY; every other value is the default policy
    // (acl-behaviour.md §4, aclrtMallocCached #4).
    let policy = match policy {
        ACL_MEM_MALLOC_HUGE_FIRST
        | ACL_MEM_MALLOC_HUGE_ONLY
        | ACL_MEM_MALLOC_NORMAL_ONLY
        | ACL_MEM_MALLOC_HUGE1G_ONLY => policy,
        _ => ACL_MEM_MALLOC_HUGE_FIRST,
    };
    finish("aclrtMallocCached", malloc_into(devPtr, size, Rounding::Padded, policy))
}

/// The shared body of `aclrtMallocWithCfg` and `aclrtMallocForTaskScheduler`.
fn malloc_with_cfg(
    devPtr: *mut *mut c_void,
    size: usize,
    policy: aclrtMemMallocPolicy,
    cfg: *mut aclrtMallocConfig,
) -> SoftResult {
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
}

pub(crate) unsafe fn aclrtMallocWithCfg(
    devPtr: *mut *mut c_void,
    size: usize,
    policy: aclrtMemMallocPolicy,
    cfg: *mut aclrtMallocConfig,
) -> aclError {
    finish("aclrtMallocWithCfg", malloc_with_cfg(devPtr, size, policy, cfg))
}

/// Memory for the task scheduler is ordinary device memory on the software
/// device; the call follows `aclrtMallocWithCfg`'s rules.
pub(crate) unsafe fn aclrtMallocForTaskScheduler(
    devPtr: *mut *mut c_void,
    size: usize,
    policy: aclrtMemMallocPolicy,
    cfg: *mut aclrtMallocConfig,
) -> aclError {
    finish(
        "aclrtMallocForTaskScheduler",
        malloc_with_cfg(devPtr, size, policy, cfg),
    )
}

/// `aclrtFree`'s body: managed memory goes back through its own family
/// (which unmaps it from the host first), the rest to device memory. A
/// block of a stream-ordered memory pool is refused (107000, recorded as
/// misuse): it stays the pool's, which would hand it out again while the
/// caller's `aclrtMalloc` could get the same memory (see
/// docs/runtime-choices.md).
fn free_device_or_managed(address: usize, api: &'static str) -> SoftResult {
    if let Some(freed) = crate::soft::compose::managed::free(address) {
        return freed;
    }
    if crate::soft::compose::mem_pool::owns(address) {
        let why =
            format!("{address:#x} is a block of a stream-ordered memory pool: give it back with aclrtMemPoolFreeAsync");
        crate::soft::check::misuse_log::record(api, why.clone());
        return fail(ACL_ERROR_RT_PARAM_INVALID, why);
    }
    crate::soft::compose::device_free::free(address)
}

pub(crate) unsafe fn aclrtFree(devPtr: *mut c_void) -> aclError {
    finish(
        "aclrtFree",
        non_null(devPtr, "devPtr").and_then(|()| free_device_or_managed(devPtr as usize, "aclrtFree")),
    )
}

pub(crate) unsafe fn aclrtFreeWithDevSync(devPtr: *mut c_void) -> aclError {
    finish(
        "aclrtFreeWithDevSync",
        non_null(devPtr, "devPtr")
            .and_then(|()| crate::soft::compose::streams::synchronize_device(None))
            .and_then(|()| free_device_or_managed(devPtr as usize, "aclrtFreeWithDevSync")),
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

/// The one component `aclrtGetMemUsageInfo` reports on the software device.
const USAGE_COMPONENT: &[u8] = b"software";

/// `(current, peak)` bytes of device memory in use on `device`: every
/// `aclrtMalloc*` allocation and VMM physical allocation now, and the
/// highest the allocations have been.
fn memory_usage(device: i32) -> SoftResult<(u64, u64)> {
    crate::soft::device_mem::usage(device)
}

pub(crate) unsafe fn aclrtGetMemUsageInfo(
    deviceId: i32,
    memUsageInfo: *mut aclrtMemUsageInfo,
    inputNum: usize,
    outputNum: *mut usize,
) -> aclError {
    let outcome = non_null(memUsageInfo, "memUsageInfo")
        .and(non_null(outputNum, "outputNum"))
        .and_then(|()| {
            // SAFETY: checked non-NULL; valid by the call's contract. The
            // runtime zeroes the count before its own checks.
            unsafe { put(outputNum, 0) };
            if inputNum == 0 {
                return fail(ACL_ERROR_RT_PARAM_INVALID, "inputNum is 0");
            }
            let (current, peak) = memory_usage(deviceId)?;
            current::require()?;
            let mut info = aclrtMemUsageInfo {
                curMemSize: current,
                memPeakSize: peak,
                ..Default::default()
            };
            for (slot, &byte) in info.name.iter_mut().zip(USAGE_COMPONENT) {
                *slot = byte as c_char;
            }
            // SAFETY: both checked non-NULL; `memUsageInfo` holds at least
            // `inputNum` (≥ 1) entries by the call's contract.
            unsafe {
                put(memUsageInfo, info);
                put(outputNum, 1);
            }
            Ok(())
        });
    finish("aclrtGetMemUsageInfo", outcome)
}

/// What `aclrtPointerGetAttributes` reports for `address`: device memory
/// (allocations, mapped VMM ranges, the device pointer of a host
/// registration) is DEVICE with its device id; `aclrtMallocHost*` memory and
/// registered host ranges are HOST; `aclrtMemAllocManaged` memory is
/// MANAGED with its device id and 2 MiB pages (the runtime's huge pages for
/// it); anything else is UNREGISTERED. The page size is otherwise the 4 KiB
/// the software device uses everywhere.
fn pointer_attributes(address: usize) -> SoftResult<aclrtPtrAttributes> {
    use crate::soft::compose::translate::{Translator, is_pinned_host};
    use crate::soft::core::segments::Side;
    let side = Translator::default().side_of(address)?;
    if let Side::Device(Some(_)) = side
        && let Some(device) = crate::soft::compose::managed::device_of(address)
    {
        return Ok(aclrtPtrAttributes {
            location: aclrtMemLocation {
                id: device as u32,
                type_: ACL_MEM_LOCATION_TYPE_MANAGED,
            },
            pageSize: crate::soft::compose::managed::GRANULE as u32,
            rsv: [0; 4],
        });
    }
    let (kind, id) = match side {
        Side::Device(Some(device)) => (ACL_MEM_LOCATION_TYPE_DEVICE, device as u32),
        // A reserved range with nothing mapped yet has no device: it is
        // whatever host memory says.
        Side::Device(None) if is_pinned_host(address) => (ACL_MEM_LOCATION_TYPE_HOST, 0),
        Side::PinnedHost => (ACL_MEM_LOCATION_TYPE_HOST, 0),
        Side::Device(None) | Side::Pageable => (ACL_MEM_LOCATION_TYPE_UNREGISTERED, 0),
    };
    Ok(aclrtPtrAttributes {
        location: aclrtMemLocation { id, type_: kind },
        pageSize: 4096,
        rsv: [0; 4],
    })
}

pub(crate) unsafe fn aclrtPointerGetAttributes(ptr: *const c_void, attributes: *mut aclrtPtrAttributes) -> aclError {
    let outcome = non_null(ptr, "ptr")
        .and(non_null(attributes, "attributes"))
        .and_then(|()| {
            let answer = pointer_attributes(ptr as usize)?;
            // SAFETY: checked non-NULL; valid by the call's contract.
            unsafe { put(attributes, answer) };
            Ok(())
        });
    finish("aclrtPointerGetAttributes", outcome)
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

/// The ACL layer's checks of `aclrtMemsetD32` and `aclrtMemsetD32Async`, in
/// its order (`hicann/runtime` `src/acl/aclrt_impl/memory.cpp`): `ptr` not
/// NULL, `N` not 0, `ptr` 4-byte aligned, `memSize` at least `N * 4`, and
/// `ptr` device memory or `aclrtMallocHost` memory (what
/// `aclrtPointerGetAttributes` reports as DEVICE or HOST). Every failure is
/// `ACL_ERROR_INVALID_PARAM`; an `N * 4` that overflows counts as larger than
/// `memSize`.
fn check_d32(ptr: *mut c_void, memSize: usize, N: usize) -> SoftResult {
    non_null(ptr, "ptr")?;
    let address = ptr as usize;
    if N == 0 {
        return fail(ACL_ERROR_INVALID_PARAM, "N must be positive");
    }
    if !address.is_multiple_of(4) {
        return fail(
            ACL_ERROR_INVALID_PARAM,
            format!("ptr {address:#x} is not 4-byte aligned"),
        );
    }
    if N.checked_mul(4).is_none_or(|bytes| bytes > memSize) {
        return fail(
            ACL_ERROR_INVALID_PARAM,
            format!("N * 4 must be less than or equal to memSize (N {N}, memSize {memSize})"),
        );
    }
    let kind = pointer_attributes(address)?.location.type_;
    if kind != ACL_MEM_LOCATION_TYPE_DEVICE && kind != ACL_MEM_LOCATION_TYPE_HOST {
        return fail(
            ACL_ERROR_INVALID_PARAM,
            format!("ptr {address:#x}: only memory allocated by aclrtMalloc or aclrtMallocHost is supported"),
        );
    }
    Ok(())
}

pub(crate) unsafe fn aclrtMemsetD32(ptr: *mut c_void, memSize: usize, value: u32, N: usize) -> aclError {
    let outcome = check_d32(ptr, memSize, N).and_then(|()| {
        // SAFETY: the range is device memory or pinned host memory the
        // software device owns; the caller's contract covers the rest.
        unsafe { copy::memset_d32(ptr as usize, value, N) }
    });
    finish("aclrtMemsetD32", outcome)
}

// ---- asynchronous and 2-D copies (streams) -----------------------------------

pub(crate) unsafe fn aclrtMemcpyAsync(
    dst: *mut c_void,
    destMax: usize,
    src: *const c_void,
    count: usize,
    kind: aclrtMemcpyKind,
    stream: aclrtStream,
) -> aclError {
    // SAFETY: the call's contract.
    unsafe { memcpy_async_entry("aclrtMemcpyAsync", dst, destMax, src, count, kind, stream) }
}

/// `aclrtMemcpyAsync`'s ACL-layer checks and copy, under the name of the
/// call that asked for it (`aclrtMemcpyAsyncWithCondition` is this copy).
///
/// # Safety
///
/// The C call's contract: host ranges valid until the copy has run.
pub(crate) unsafe fn memcpy_async_entry(
    api: &'static str,
    dst: *mut c_void,
    destMax: usize,
    src: *const c_void,
    count: usize,
    kind: aclrtMemcpyKind,
    stream: aclrtStream,
) -> aclError {
    if count == 0 {
        return ACL_SUCCESS;
    }
    let outcome = non_null(dst, "dst").and(non_null(src, "src")).and_then(|()| {
        if kind > ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE {
            return fail(
                ACL_ERROR_INVALID_PARAM,
                format!("kind {kind} is not accepted by {api} (0 to 5)"),
            );
        }
        // SAFETY: the caller's contract covers the host sides until the copy
        // has run.
        unsafe {
            crate::soft::compose::streams::memcpy_async(
                api,
                dst as usize,
                destMax,
                src as usize,
                count,
                kind,
                stream as usize,
            )
        }
    });
    finish(api, outcome)
}

pub(crate) unsafe fn aclrtMemsetAsync(
    devPtr: *mut c_void,
    maxCount: usize,
    value: i32,
    count: usize,
    stream: aclrtStream,
) -> aclError {
    if count == 0 {
        return ACL_SUCCESS;
    }
    let outcome = non_null(devPtr, "devPtr").and_then(|()| {
        crate::soft::compose::streams::memset_async(devPtr as usize, maxCount, value, count, stream as usize)
    });
    finish("aclrtMemsetAsync", outcome)
}

pub(crate) unsafe fn aclrtMemsetD32Async(
    ptr: *mut c_void,
    memSize: usize,
    value: u32,
    N: usize,
    stream: aclrtStream,
) -> aclError {
    let outcome = check_d32(ptr, memSize, N)
        .and_then(|()| crate::soft::compose::streams::memset_d32_async(ptr as usize, value, N, stream as usize));
    finish("aclrtMemsetD32Async", outcome)
}

fn rows(
    dst: *mut c_void,
    dpitch: usize,
    src: *const c_void,
    spitch: usize,
    width: usize,
    height: usize,
) -> crate::soft::compose::streams::Rows {
    crate::soft::compose::streams::Rows {
        dst: dst as usize,
        dpitch,
        src: src as usize,
        spitch,
        width,
        height,
    }
}

/// The ACL layer's checks of both 2-D copies; `Ok(false)`: nothing to copy.
fn check_2d_arguments(
    dst: *mut c_void,
    dpitch: usize,
    src: *const c_void,
    spitch: usize,
    width: usize,
    height: usize,
    kind: aclrtMemcpyKind,
) -> SoftResult<bool> {
    if width == 0 || height == 0 {
        return Ok(false);
    }
    non_null(dst, "dst")?;
    non_null(src, "src")?;
    if width > spitch || width > dpitch {
        return fail(
            ACL_ERROR_INVALID_PARAM,
            format!("width {width} is larger than spitch {spitch} or dpitch {dpitch}"),
        );
    }
    if !matches!(
        kind,
        ACL_MEMCPY_HOST_TO_DEVICE | ACL_MEMCPY_DEVICE_TO_HOST | ACL_MEMCPY_DEVICE_TO_DEVICE | ACL_MEMCPY_DEFAULT
    ) {
        return fail(
            ACL_ERROR_INVALID_PARAM,
            format!("kind {kind} is not ACL_MEMCPY_HOST_TO_DEVICE, _DEVICE_TO_HOST, _DEVICE_TO_DEVICE or _DEFAULT"),
        );
    }
    Ok(true)
}

pub(crate) unsafe fn aclrtMemcpy2d(
    dst: *mut c_void,
    dpitch: usize,
    src: *const c_void,
    spitch: usize,
    width: usize,
    height: usize,
    kind: aclrtMemcpyKind,
) -> aclError {
    let outcome = check_2d_arguments(dst, dpitch, src, spitch, width, height, kind).and_then(|copy| {
        if !copy {
            return Ok(());
        }
        // SAFETY: the caller's contract covers the host spans.
        unsafe { crate::soft::compose::streams::memcpy_2d(rows(dst, dpitch, src, spitch, width, height), kind) }
    });
    finish("aclrtMemcpy2d", outcome)
}

pub(crate) unsafe fn aclrtMemcpy2dAsync(
    dst: *mut c_void,
    dpitch: usize,
    src: *const c_void,
    spitch: usize,
    width: usize,
    height: usize,
    kind: aclrtMemcpyKind,
    stream: aclrtStream,
) -> aclError {
    let outcome = check_2d_arguments(dst, dpitch, src, spitch, width, height, kind).and_then(|copy| {
        if !copy {
            return Ok(());
        }
        // SAFETY: the caller's contract covers the host spans until the copy
        // has run.
        unsafe {
            crate::soft::compose::streams::memcpy_2d_async(
                rows(dst, dpitch, src, spitch, width, height),
                kind,
                stream as usize,
            )
        }
    });
    finish("aclrtMemcpy2dAsync", outcome)
}

// ---- 3.5 host memory ---------------------------------------------------------

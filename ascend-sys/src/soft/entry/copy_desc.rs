//! Entry points of the other copies of 3.4: `aclrtMemcpyAsyncWithOffset`,
//! `aclrtGetMemcpyDescSize`, `aclrtSetMemcpyDesc`, `aclrtMemcpyAsyncWithDesc`
//! and `aclrtMemcpyAsyncWithCondition`, with the ACL layer's checks in its
//! order (`hicann/runtime` `src/acl/aclrt_impl/memory.cpp`), then the
//! runtime's first check, the kind: these copies exist for
//! `ACL_MEMCPY_INNER_DEVICE_TO_DEVICE` only (`rtMemcpyAsyncWithOffset`
//! refuses another kind with 107000, the descriptor calls with 207000).
//! The rest of the runtime's checks are in [`crate::soft::compose::streams`].
#![allow(non_snake_case, clippy::too_many_arguments)]

use super::*;
use crate::soft::compose::streams;

/// The runtime's kind enumeration ends here (`RT_MEMCPY_KIND_MAX`); the
/// descriptor calls' ACL layer refuses this and above with 100000.
const KIND_MAX: aclrtMemcpyKind = 8;

/// The ACL layer's kind check of the descriptor calls.
fn kind_in_range(kind: aclrtMemcpyKind) -> SoftResult {
    if kind >= KIND_MAX {
        return fail(
            ACL_ERROR_INVALID_PARAM,
            format!("kind {kind} is outside [ACL_MEMCPY_HOST_TO_HOST, 8)"),
        );
    }
    Ok(())
}

/// The runtime's kind check of the descriptor calls: a kind other than
/// `ACL_MEMCPY_INNER_DEVICE_TO_DEVICE` is not supported.
fn inner_device_kind(kind: aclrtMemcpyKind) -> SoftResult {
    if kind != ACL_MEMCPY_INNER_DEVICE_TO_DEVICE {
        return fail(
            ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
            format!("kind {kind} is not supported: only ACL_MEMCPY_INNER_DEVICE_TO_DEVICE (6)"),
        );
    }
    Ok(())
}

pub(crate) unsafe fn aclrtMemcpyAsyncWithOffset(
    dst: *mut *mut c_void,
    destMax: usize,
    dstDataOffset: usize,
    src: *mut *const c_void,
    count: usize,
    srcDataOffset: usize,
    kind: aclrtMemcpyKind,
    stream: aclrtStream,
) -> aclError {
    if count == 0 {
        return ACL_SUCCESS;
    }
    let outcome = if kind != ACL_MEMCPY_INNER_DEVICE_TO_DEVICE {
        fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("kind {kind} must be ACL_MEMCPY_INNER_DEVICE_TO_DEVICE (6)"),
        )
    } else {
        streams::memcpy_async_with_offset(
            dst as usize,
            destMax,
            dstDataOffset,
            src as usize,
            count,
            srcDataOffset,
            stream as usize,
        )
    };
    finish("aclrtMemcpyAsyncWithOffset", outcome)
}

pub(crate) unsafe fn aclrtGetMemcpyDescSize(kind: aclrtMemcpyKind, descSize: *mut usize) -> aclError {
    let outcome = non_null(descSize, "descSize")
        .and(kind_in_range(kind))
        .and(inner_device_kind(kind))
        .map(|()| {
            // SAFETY: checked non-NULL; valid by the call's contract.
            unsafe { put(descSize, streams::MEMCPY_DESC_SIZE) };
        });
    finish("aclrtGetMemcpyDescSize", outcome)
}

pub(crate) unsafe fn aclrtSetMemcpyDesc(
    desc: *mut c_void,
    kind: aclrtMemcpyKind,
    srcAddr: *mut c_void,
    dstAddr: *mut c_void,
    count: usize,
    config: *mut c_void,
) -> aclError {
    let outcome = non_null(desc, "desc")
        .and_then(|()| kind_in_range(kind))
        .and_then(|()| non_null(srcAddr, "srcAddr"))
        .and_then(|()| non_null(dstAddr, "dstAddr"))
        .and_then(|()| {
            if count == 0 {
                return fail(ACL_ERROR_INVALID_PARAM, "count must be positive");
            }
            if !config.is_null() {
                return fail(
                    ACL_ERROR_INVALID_PARAM,
                    "config is a reserved parameter and must be NULL",
                );
            }
            inner_device_kind(kind)
        })
        .and_then(|()| streams::set_memcpy_desc(desc as usize, srcAddr as usize, dstAddr as usize, count));
    finish("aclrtSetMemcpyDesc", outcome)
}

pub(crate) unsafe fn aclrtMemcpyAsyncWithDesc(
    desc: *mut c_void,
    kind: aclrtMemcpyKind,
    stream: aclrtStream,
) -> aclError {
    let outcome = non_null(desc, "desc")
        .and_then(|()| kind_in_range(kind))
        .and_then(|()| non_null(stream, "stream"))
        .and_then(|()| streams::memcpy_async_with_desc(desc as usize, stream as usize, || inner_device_kind(kind)));
    finish("aclrtMemcpyAsyncWithDesc", outcome)
}

pub(crate) unsafe fn aclrtMemcpyAsyncWithCondition(
    dst: *mut c_void,
    destMax: usize,
    src: *const c_void,
    count: usize,
    kind: aclrtMemcpyKind,
    stream: aclrtStream,
) -> aclError {
    // The ACL layer's checks are aclrtMemcpyAsync's; the runtime is asked
    // to check that host memory is page-locked (CHECK_MEMORY_PINNED), which
    // fails only when the driver cannot tell (207000). The software device
    // always can, so the copy is aclrtMemcpyAsync's, pageable fallback
    // included.
    // SAFETY: the call's contract.
    unsafe { super::memcpy_async_entry("aclrtMemcpyAsyncWithCondition", dst, destMax, src, count, kind, stream) }
}

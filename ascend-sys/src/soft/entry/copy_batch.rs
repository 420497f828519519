//! Entry points of the batch copies (3.4): `aclrtMemcpyBatch`,
//! `aclrtMemcpyBatchV2`, `aclrtMemcpyBatchAsync`, `aclrtMemcpyBatchAsyncV2`.
//!
//! The ACL layer's checks, in its order (`hicann/runtime`
//! `src/acl/aclrt_impl/memory.cpp`, `MemcpyBatchImpl` and
//! `ValidateMemcpyBatchParams`), all `ACL_ERROR_INVALID_PARAM`: `failIndex`
//! not NULL (the variants that have it), `sizes` not NULL, `numBatches` not
//! 0; a batch whose sizes are all 0 then succeeds at once (failing index
//! `SIZE_MAX`) without any other check; then `dsts`, `destMaxs`, `srcs`,
//! `sizes`, `attrs`, `attrsIndexes` not NULL, each `destMaxs[i]` at least
//! `sizes[i]`, and the `rsv` bytes of each of the `numAttrs` attributes 0.
//! The runtime's checks follow in [`crate::soft::compose::streams`].
#![allow(non_snake_case, clippy::too_many_arguments)]

use super::*;
use crate::soft::compose::streams::{self, Batch, BatchEntry};

/// Reads `count` elements the caller passed.
///
/// # Safety
///
/// `pointer` is not NULL and valid for `count` reads (the call's contract).
unsafe fn read<T: Copy>(pointer: *const T, count: usize) -> Vec<T> {
    // SAFETY: guaranteed by the caller.
    unsafe { std::slice::from_raw_parts(pointer, count) }.to_vec()
}

/// The ACL layer's checks after the `failIndex` one: the batch, or `None`
/// when every size is 0 (nothing to do).
unsafe fn acl_checks(
    dsts: *mut *mut c_void,
    destMaxs: *mut usize,
    srcs: *mut *mut c_void,
    sizes: *mut usize,
    numBatches: usize,
    attrs: *mut aclrtMemcpyBatchAttr,
    attrsIndexes: *mut usize,
    numAttrs: usize,
) -> SoftResult<Option<Batch>> {
    non_null(sizes, "sizes")?;
    if numBatches == 0 {
        return fail(ACL_ERROR_INVALID_PARAM, "numBatches must be positive");
    }
    // SAFETY: not NULL; `numBatches` elements by the call's contract.
    let sizes = unsafe { read(sizes, numBatches) };
    if sizes.iter().all(|&size| size == 0) {
        return Ok(None);
    }
    non_null(dsts, "dsts")?;
    non_null(destMaxs, "destMaxs")?;
    non_null(srcs, "srcs")?;
    non_null(attrs, "attrs")?;
    non_null(attrsIndexes, "attrsIndexes")?;
    // SAFETY: not NULL; `numBatches` elements by the call's contract.
    let (dsts, destMaxs, srcs) = unsafe {
        (
            read(dsts, numBatches),
            read(destMaxs, numBatches),
            read(srcs, numBatches),
        )
    };
    for (index, (&size, &dest_max)) in sizes.iter().zip(&destMaxs).enumerate() {
        if dest_max < size {
            return fail(
                ACL_ERROR_INVALID_PARAM,
                format!(
                    "the memory copy size {size} at index {index} exceeds the size {dest_max} of the destination buffer"
                ),
            );
        }
    }
    // More attributes than entries: the runtime refuses the count
    // (`numAttrs <= numBatches`, 107000) before it reads an index. The ACL
    // layer's `rsv` loop would read all `numAttrs` attributes first; the
    // software device reads none (a count such as `SIZE_MAX` names no real
    // array), and the runtime's check refuses the batch.
    let (attrs, starts) = if numAttrs > numBatches {
        (Vec::new(), Vec::new())
    } else {
        // SAFETY: not NULL; `numAttrs` (at most `numBatches`) elements by
        // the call's contract.
        unsafe { (read(attrs, numAttrs), read(attrsIndexes, numAttrs)) }
    };
    if let Some(index) = attrs.iter().position(|attr| attr.rsv.iter().any(|&byte| byte != 0)) {
        return fail(
            ACL_ERROR_INVALID_PARAM,
            format!("rsv field of attrs[{index}] must be 0"),
        );
    }
    let entries = (0..numBatches)
        .map(|i| BatchEntry {
            dst: dsts[i] as usize,
            dest_max: destMaxs[i],
            src: srcs[i] as usize,
            size: sizes[i],
        })
        .collect();
    Ok(Some(Batch {
        entries,
        attrs,
        starts,
        num_attrs: numAttrs,
    }))
}

/// Both layers; `failIndex` (NULL for the V2 calls) gets the failing index
/// once the runtime layer is reached.
unsafe fn run(
    api: &'static str,
    batch: SoftResult<Option<Batch>>,
    failIndex: *mut usize,
    stream: Option<aclrtStream>,
) -> SoftResult {
    let batch = match batch? {
        Some(batch) => batch,
        None => {
            if !failIndex.is_null() {
                // SAFETY: not NULL; valid by the call's contract.
                unsafe { put(failIndex, usize::MAX) };
            }
            return Ok(());
        }
    };
    let mut failed = None;
    let outcome = match stream {
        // SAFETY: host ranges are valid by the C API's contract.
        None => unsafe { streams::memcpy_batch(api, &batch, &mut failed) },
        // SAFETY: as above.
        Some(stream) => unsafe { streams::memcpy_batch_async(api, &batch, stream as usize, &mut failed) },
    };
    if let (Some(index), false) = (failed, failIndex.is_null()) {
        // SAFETY: not NULL; valid by the call's contract.
        unsafe { put(failIndex, index) };
    }
    outcome
}

pub(crate) unsafe fn aclrtMemcpyBatch(
    dsts: *mut *mut c_void,
    destMaxs: *mut usize,
    srcs: *mut *mut c_void,
    sizes: *mut usize,
    numBatches: usize,
    attrs: *mut aclrtMemcpyBatchAttr,
    attrsIndexes: *mut usize,
    numAttrs: usize,
    failIndex: *mut usize,
) -> aclError {
    let outcome = non_null(failIndex, "failIndex").and_then(|()| {
        // SAFETY: the call's contract.
        let batch = unsafe { acl_checks(dsts, destMaxs, srcs, sizes, numBatches, attrs, attrsIndexes, numAttrs) };
        // SAFETY: the call's contract.
        unsafe { run("aclrtMemcpyBatch", batch, failIndex, None) }
    });
    finish("aclrtMemcpyBatch", outcome)
}

pub(crate) unsafe fn aclrtMemcpyBatchV2(
    dsts: *mut *mut c_void,
    destMaxs: *mut usize,
    srcs: *mut *mut c_void,
    sizes: *mut usize,
    numBatches: usize,
    attrs: *mut aclrtMemcpyBatchAttr,
    attrsIndexes: *mut usize,
    numAttrs: usize,
) -> aclError {
    // SAFETY: the call's contract.
    let batch = unsafe { acl_checks(dsts, destMaxs, srcs, sizes, numBatches, attrs, attrsIndexes, numAttrs) };
    // SAFETY: the call's contract.
    let outcome = unsafe { run("aclrtMemcpyBatchV2", batch, std::ptr::null_mut(), None) };
    finish("aclrtMemcpyBatchV2", outcome)
}

pub(crate) unsafe fn aclrtMemcpyBatchAsync(
    dsts: *mut *mut c_void,
    destMaxs: *mut usize,
    srcs: *mut *mut c_void,
    sizes: *mut usize,
    numBatches: usize,
    attrs: *mut aclrtMemcpyBatchAttr,
    attrsIndexes: *mut usize,
    numAttrs: usize,
    failIndex: *mut usize,
    stream: aclrtStream,
) -> aclError {
    let outcome = non_null(failIndex, "failIndex").and_then(|()| {
        // SAFETY: the call's contract.
        let batch = unsafe { acl_checks(dsts, destMaxs, srcs, sizes, numBatches, attrs, attrsIndexes, numAttrs) };
        // SAFETY: the call's contract.
        unsafe { run("aclrtMemcpyBatchAsync", batch, failIndex, Some(stream)) }
    });
    finish("aclrtMemcpyBatchAsync", outcome)
}

pub(crate) unsafe fn aclrtMemcpyBatchAsyncV2(
    dsts: *mut *mut c_void,
    destMaxs: *mut usize,
    srcs: *mut *mut c_void,
    sizes: *mut usize,
    numBatches: usize,
    attrs: *mut aclrtMemcpyBatchAttr,
    attrsIndexes: *mut usize,
    numAttrs: usize,
    stream: aclrtStream,
) -> aclError {
    // SAFETY: the call's contract.
    let batch = unsafe { acl_checks(dsts, destMaxs, srcs, sizes, numBatches, attrs, attrsIndexes, numAttrs) };
    // SAFETY: the call's contract.
    let outcome = unsafe { run("aclrtMemcpyBatchAsyncV2", batch, std::ptr::null_mut(), Some(stream)) };
    finish("aclrtMemcpyBatchAsyncV2", outcome)
}

//! Entry points of 3.11 Managed memory (`hicann/runtime`
//! `src/acl/aclrt_impl/memory.cpp` for the ACL layer,
//! `src/runtime/api/impl/api_error_uvm.cc` and `api_error.cc`
//! `ManagedMemAlloc` for the runtime's checks).
#![allow(non_snake_case, clippy::too_many_arguments)]

use super::*;
use crate::soft::compose::managed::{self, Query};

/// Fails with `ACL_ERROR_INVALID_PARAM` when `value` is 0 (the ACL layer's
/// "must be positive").
fn positive(value: u64, name: &str) -> SoftResult {
    if value == 0 {
        fail(ACL_ERROR_INVALID_PARAM, format!("{name} must be positive"))
    } else {
        Ok(())
    }
}

pub(crate) unsafe fn aclrtMemAllocManaged(ptr: *mut *mut c_void, size: u64, flag: u32) -> aclError {
    let outcome = non_null(ptr, "ptr").and_then(|()| {
        if flag != ACL_RT_MEM_ATTACH_GLOBAL {
            return fail(
                ACL_ERROR_INVALID_PARAM,
                format!("flag {flag:#x} must be ACL_RT_MEM_ATTACH_GLOBAL ({ACL_RT_MEM_ATTACH_GLOBAL:#x})"),
            );
        }
        let address = managed::alloc(size)?;
        // SAFETY: checked non-NULL; valid by the call's contract.
        unsafe { put(ptr, address as *mut c_void) };
        Ok(())
    });
    finish("aclrtMemAllocManaged", outcome)
}

pub(crate) unsafe fn aclrtMemManagedAdvise(
    ptr: *const c_void,
    size: u64,
    advise: aclrtMemManagedAdviseType,
    location: aclrtMemManagedLocation,
) -> aclError {
    let outcome = non_null(ptr, "ptr")
        .and_then(|()| positive(size, "size"))
        .and_then(|()| managed::advise(ptr as usize, size, advise, location));
    finish("aclrtMemManagedAdvise", outcome)
}

pub(crate) unsafe fn aclrtMemManagedGetAttr(
    attribute: aclrtMemManagedRangeAttribute,
    ptr: *const c_void,
    size: usize,
    data: *mut c_void,
    dataSize: usize,
) -> aclError {
    let outcome = non_null(ptr, "ptr")
        .and(non_null(data, "data"))
        .and_then(|()| positive(size as u64, "size"))
        .and_then(|()| managed::check_attribute(attribute))
        .and_then(|()| {
            let query = Query {
                attribute,
                data,
                size: dataSize,
            };
            // SAFETY: `data` holds `dataSize` bytes by the call's contract.
            unsafe { managed::get_attributes(ptr as usize, size, std::slice::from_ref(&query)) }
        });
    finish("aclrtMemManagedGetAttr", outcome)
}

pub(crate) unsafe fn aclrtMemManagedGetAttrs(
    attributes: *mut aclrtMemManagedRangeAttribute,
    numAttributes: usize,
    ptr: *const c_void,
    size: usize,
    data: *mut *mut c_void,
    dataSizes: *mut usize,
) -> aclError {
    let outcome = non_null(ptr, "ptr")
        .and(non_null(attributes, "attributes"))
        .and(non_null(data, "data"))
        .and(non_null(dataSizes, "dataSizes"))
        .and_then(|()| positive(size as u64, "size"))
        .and_then(|()| {
            let queries: Vec<Query> = (0..numAttributes)
                .map(|index| {
                    // SAFETY: the three arrays hold `numAttributes` entries
                    // by the call's contract.
                    unsafe {
                        Query {
                            attribute: *attributes.add(index),
                            data: *data.add(index),
                            size: *dataSizes.add(index),
                        }
                    }
                })
                .collect();
            for query in &queries {
                managed::check_attribute(query.attribute)?;
            }
            // SAFETY: each `data[i]` holds `dataSizes[i]` bytes by the
            // call's contract.
            unsafe { managed::get_attributes(ptr as usize, size, &queries) }
        });
    finish("aclrtMemManagedGetAttrs", outcome)
}

pub(crate) unsafe fn aclrtMemManagedPrefetchAsync(
    ptr: *const c_void,
    size: usize,
    location: aclrtMemManagedLocation,
    flags: u32,
    stream: aclrtStream,
) -> aclError {
    let outcome = non_null(ptr, "ptr")
        .and_then(|()| positive(size as u64, "size"))
        .and_then(|()| {
            if flags != 0 {
                return fail(
                    ACL_ERROR_INVALID_PARAM,
                    format!("flags {flags:#x} is reserved and must be 0"),
                );
            }
            let address = ptr as usize;
            crate::soft::compose::streams::enqueue_prefetch(
                "aclrtMemManagedPrefetchAsync",
                stream as usize,
                (address, 1),
                || {
                    managed::check_device_id(location, "location")?;
                    let target = managed::convert(location, "location")?;
                    managed::prefetched(&[(address, size, target)])
                },
            )
        });
    finish("aclrtMemManagedPrefetchAsync", outcome)
}

/// The runtime's checks of the index array and locations of a batch
/// prefetch, then the ranges with their locations.
///
/// # Safety
///
/// The arrays hold `count` and `numPrefetchLocs` entries.
unsafe fn batch_ranges(
    ptrs: *mut *const c_void,
    sizes: *mut usize,
    count: usize,
    prefetchLocs: *mut aclrtMemManagedLocation,
    prefetchLocIdxs: *mut usize,
    numPrefetchLocs: usize,
) -> SoftResult<Vec<(usize, usize, managed::Location)>> {
    // SAFETY: the caller guarantees the lengths.
    let (ptrs, sizes, locations, indices) = unsafe {
        (
            std::slice::from_raw_parts(ptrs, count),
            std::slice::from_raw_parts(sizes, count),
            std::slice::from_raw_parts(prefetchLocs, numPrefetchLocs),
            std::slice::from_raw_parts(prefetchLocIdxs, numPrefetchLocs),
        )
    };
    if indices[0] != 0 {
        return fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("prefetchLocIdxs[0] is {}, must be 0", indices[0]),
        );
    }
    if let Some(index) = ptrs.iter().position(|ptr| ptr.is_null()) {
        return fail(ACL_ERROR_RT_PARAM_INVALID, format!("ptrs[{index}] is NULL"));
    }
    for (index, &at) in indices.iter().enumerate() {
        if at >= count {
            return fail(
                ACL_ERROR_RT_PARAM_INVALID,
                format!("prefetchLocIdxs[{index}] is {at}, must be less than count {count}"),
            );
        }
        if index >= 1 && at <= indices[index - 1] {
            return fail(
                ACL_ERROR_RT_PARAM_INVALID,
                format!(
                    "prefetchLocIdxs[{index}] ({at}) must be greater than prefetchLocIdxs[{}] ({})",
                    index - 1,
                    indices[index - 1]
                ),
            );
        }
    }
    for (index, &location) in locations.iter().enumerate() {
        managed::check_device_id(location, &format!("prefetchLocs[{index}]"))?;
    }
    let mut targets = Vec::with_capacity(numPrefetchLocs);
    for (index, &location) in locations.iter().enumerate() {
        targets.push(managed::convert(location, &format!("prefetchLocs[{index}]"))?);
    }
    Ok((0..count)
        .map(|range| {
            let group = indices.partition_point(|&at| at <= range) - 1;
            (ptrs[range] as usize, sizes[range], targets[group])
        })
        .collect())
}

pub(crate) unsafe fn aclrtMemManagedPrefetchBatchAsync(
    ptrs: *mut *const c_void,
    sizes: *mut usize,
    count: usize,
    prefetchLocs: *mut aclrtMemManagedLocation,
    prefetchLocIdxs: *mut usize,
    numPrefetchLocs: usize,
    flags: u64,
    stream: aclrtStream,
) -> aclError {
    let outcome = non_null(ptrs, "ptrs")
        .and(non_null(sizes, "sizes"))
        .and(non_null(prefetchLocs, "prefetchLocs"))
        .and(non_null(prefetchLocIdxs, "prefetchLocIdxs"))
        .and_then(|()| positive(count as u64, "count"))
        .and_then(|()| positive(numPrefetchLocs as u64, "numPrefetchLocs"))
        .and_then(|()| {
            if flags != 0 {
                return fail(
                    ACL_ERROR_INVALID_PARAM,
                    format!("flags {flags:#x} is reserved and must be 0"),
                );
            }
            if count < numPrefetchLocs {
                return fail(
                    ACL_ERROR_INVALID_PARAM,
                    format!("count {count} must be greater than or equal to numPrefetchLocs {numPrefetchLocs}"),
                );
            }
            // SAFETY: `ptrs` holds `count` entries (count > 0).
            let first = unsafe { *ptrs } as usize;
            crate::soft::compose::streams::enqueue_prefetch(
                "aclrtMemManagedPrefetchBatchAsync",
                stream as usize,
                (first, count),
                || {
                    // SAFETY: the arrays hold `count` and `numPrefetchLocs`
                    // entries by the call's contract.
                    let ranges =
                        unsafe { batch_ranges(ptrs, sizes, count, prefetchLocs, prefetchLocIdxs, numPrefetchLocs) }?;
                    managed::prefetched(&ranges)
                },
            )
        });
    finish("aclrtMemManagedPrefetchBatchAsync", outcome)
}

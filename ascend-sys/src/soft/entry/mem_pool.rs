//! Entry points of 3.10 Stream-ordered memory pools: the ACL layer's checks
//! (`hicann/runtime` `src/acl/aclrt_impl/memory.cpp`, `aclrtMemPool*Impl`),
//! then the runtime's (`src/runtime/api/impl/api_impl_soma.cc`,
//! `src/runtime/feature/soma/soma.cc`), in their order.
#![allow(non_snake_case)]

use super::*;
use crate::soft::compose::mem_pool;

fn pool_create(memPool: *mut aclrtMemPool, poolProps: *const aclrtMemPoolProps) -> SoftResult {
    non_null(memPool, "memPool")?;
    non_null(poolProps, "poolProps")?;
    // SAFETY: checked non-NULL; valid by the call's contract.
    let props = unsafe { &*poolProps };
    if props.allocType != ACL_MEM_ALLOCATION_TYPE_PINNED {
        return fail(
            ACL_ERROR_INVALID_PARAM,
            format!(
                "poolProps->allocType {} must be MEM_ALLOCATION_TYPE_PINNED(0)",
                props.allocType
            ),
        );
    }
    if props.location.type_ != ACL_MEM_LOCATION_TYPE_DEVICE {
        return fail(
            ACL_ERROR_INVALID_PARAM,
            format!(
                "poolProps->location.type {} must be MEM_LOCATION_TYPE_DEVICE(1)",
                props.location.type_
            ),
        );
    }
    if props.reserved.iter().any(|&byte| byte != 0) {
        return fail(
            ACL_ERROR_INVALID_PARAM,
            "poolProps->reserved is a reserved parameter and must be zero",
        );
    }
    let handle = mem_pool::create(props)?;
    // SAFETY: checked non-NULL; valid by the call's contract.
    unsafe { put(memPool, handle as aclrtMemPool) };
    Ok(())
}

pub(crate) unsafe fn aclrtMemPoolCreate(memPool: *mut aclrtMemPool, poolProps: *const aclrtMemPoolProps) -> aclError {
    finish("aclrtMemPoolCreate", pool_create(memPool, poolProps))
}

pub(crate) unsafe fn aclrtMemPoolDestroy(memPool: aclrtMemPool) -> aclError {
    let outcome = non_null(memPool, "memPool").and_then(|()| mem_pool::destroy(memPool as usize));
    finish("aclrtMemPoolDestroy", outcome)
}

/// The runtime's NULL check of `value` (`RT_ERROR_INVALID_VALUE`).
fn value_non_null(value: *mut c_void) -> SoftResult {
    if value.is_null() {
        fail(ACL_ERROR_RT_PARAM_INVALID, "value is NULL")
    } else {
        Ok(())
    }
}

pub(crate) unsafe fn aclrtMemPoolSetAttr(
    memPool: aclrtMemPool,
    attr: aclrtMemPoolAttr,
    value: *mut c_void,
) -> aclError {
    let outcome = non_null(memPool, "memPool")
        .and_then(|()| value_non_null(value))
        .and_then(|()| {
            // SAFETY: non-NULL; points to a u32 (reuse flags) or a u64 by
            // the call's contract.
            let read = unsafe {
                if mem_pool::is_flag(attr) {
                    u64::from(value.cast::<u32>().read_unaligned())
                } else {
                    value.cast::<u64>().read_unaligned()
                }
            };
            mem_pool::set_attr(memPool as usize, attr, read)
        });
    finish("aclrtMemPoolSetAttr", outcome)
}

pub(crate) unsafe fn aclrtMemPoolGetAttr(
    memPool: aclrtMemPool,
    attr: aclrtMemPoolAttr,
    value: *mut c_void,
) -> aclError {
    let outcome = non_null(memPool, "memPool")
        .and_then(|()| value_non_null(value))
        .and_then(|()| mem_pool::get_attr(memPool as usize, attr))
        .map(|read| {
            // SAFETY: non-NULL; valid for a u32 (reuse flags) or a u64 by
            // the call's contract.
            unsafe {
                if mem_pool::is_flag(attr) {
                    value.cast::<u32>().write_unaligned(read as u32);
                } else {
                    value.cast::<u64>().write_unaligned(read);
                }
            }
        });
    finish("aclrtMemPoolGetAttr", outcome)
}

pub(crate) unsafe fn aclrtMemPoolMallocAsync(
    ptr: *mut *mut c_void,
    size: usize,
    memPool: aclrtMemPool,
    stream: aclrtStream,
) -> aclError {
    let outcome = non_null(ptr, "ptr")
        .and_then(|()| non_null(memPool, "memPool"))
        .and_then(|()| non_null(stream, "stream"))
        .and_then(|()| {
            // As in the ACL layer: size 0 succeeds and writes nothing.
            if size == 0 {
                return Ok(());
            }
            let address = mem_pool::malloc_async(memPool as usize, size, stream as usize)?;
            // SAFETY: checked non-NULL; valid by the call's contract.
            unsafe { put(ptr, address as *mut c_void) };
            Ok(())
        });
    finish("aclrtMemPoolMallocAsync", outcome)
}

pub(crate) unsafe fn aclrtMemPoolFreeAsync(ptr: *mut c_void, stream: aclrtStream) -> aclError {
    let outcome = non_null(ptr, "ptr").and_then(|()| mem_pool::free_async(ptr as usize, stream as usize));
    finish("aclrtMemPoolFreeAsync", outcome)
}

pub(crate) unsafe fn aclrtMemPoolTrimTo(memPool: aclrtMemPool, minBytesToKeep: usize) -> aclError {
    let outcome = non_null(memPool, "memPool").and_then(|()| mem_pool::trim_to(memPool as usize, minBytesToKeep));
    finish("aclrtMemPoolTrimTo", outcome)
}

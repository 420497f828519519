//! Entry points of 3.9 Custom allocator descriptors (no context needed).
#![allow(non_snake_case, clippy::too_many_arguments)]

use super::*;
use crate::soft::allocator_desc::{self, Fields};

pub(crate) unsafe fn aclrtAllocatorCreateDesc() -> aclrtAllocatorDesc {
    match allocator_desc::create() {
        Ok(handle) => handle as aclrtAllocatorDesc,
        Err(failure) => {
            // The documented failure value is NULL; the message says why.
            let _ = finish("aclrtAllocatorCreateDesc", Err(failure));
            std::ptr::null_mut()
        }
    }
}

pub(crate) unsafe fn aclrtAllocatorDestroyDesc(allocatorDesc: aclrtAllocatorDesc) -> aclError {
    finish(
        "aclrtAllocatorDestroyDesc",
        non_null(allocatorDesc, "allocatorDesc").and_then(|()| allocator_desc::destroy(allocatorDesc as usize)),
    )
}

/// The shared shape of the five setters: both arguments non-NULL, then the
/// field is stored.
fn set_to_desc(
    api: &'static str,
    allocatorDesc: aclrtAllocatorDesc,
    value_is_null: bool,
    value_name: &str,
    set: impl FnOnce(&mut Fields),
) -> aclError {
    let outcome = non_null(allocatorDesc, "allocatorDesc").and_then(|()| {
        if value_is_null {
            return fail(ACL_ERROR_INVALID_PARAM, format!("{value_name} is NULL"));
        }
        allocator_desc::set_field(api, allocatorDesc as usize, set)
    });
    finish(api, outcome)
}

pub(crate) unsafe fn aclrtAllocatorSetObjToDesc(
    allocatorDesc: aclrtAllocatorDesc,
    allocator: aclrtAllocator,
) -> aclError {
    set_to_desc(
        "aclrtAllocatorSetObjToDesc",
        allocatorDesc,
        allocator.is_null(),
        "allocator",
        |fields| fields.obj = allocator as usize,
    )
}

pub(crate) unsafe fn aclrtAllocatorSetAllocFuncToDesc(
    allocatorDesc: aclrtAllocatorDesc,
    func: aclrtAllocatorAllocFunc,
) -> aclError {
    set_to_desc(
        "aclrtAllocatorSetAllocFuncToDesc",
        allocatorDesc,
        func.is_none(),
        "func",
        |fields| fields.alloc = func,
    )
}

pub(crate) unsafe fn aclrtAllocatorSetFreeFuncToDesc(
    allocatorDesc: aclrtAllocatorDesc,
    func: aclrtAllocatorFreeFunc,
) -> aclError {
    set_to_desc(
        "aclrtAllocatorSetFreeFuncToDesc",
        allocatorDesc,
        func.is_none(),
        "func",
        |fields| fields.free = func,
    )
}

pub(crate) unsafe fn aclrtAllocatorSetAllocAdviseFuncToDesc(
    allocatorDesc: aclrtAllocatorDesc,
    func: aclrtAllocatorAllocAdviseFunc,
) -> aclError {
    set_to_desc(
        "aclrtAllocatorSetAllocAdviseFuncToDesc",
        allocatorDesc,
        func.is_none(),
        "func",
        |fields| fields.alloc_advise = func,
    )
}

pub(crate) unsafe fn aclrtAllocatorSetGetAddrFromBlockFuncToDesc(
    allocatorDesc: aclrtAllocatorDesc,
    func: aclrtAllocatorGetAddrFromBlockFunc,
) -> aclError {
    set_to_desc(
        "aclrtAllocatorSetGetAddrFromBlockFuncToDesc",
        allocatorDesc,
        func.is_none(),
        "func",
        |fields| fields.get_addr_from_block = func,
    )
}

pub(crate) unsafe fn aclrtAllocatorRegister(stream: aclrtStream, allocatorDesc: aclrtAllocatorDesc) -> aclError {
    finish(
        "aclrtAllocatorRegister",
        non_null(stream, "stream")
            .and(non_null(allocatorDesc, "allocatorDesc"))
            .and_then(|()| allocator_desc::register(stream as usize, allocatorDesc as usize)),
    )
}

pub(crate) unsafe fn aclrtAllocatorGetByStream(
    stream: aclrtStream,
    allocatorDesc: *mut aclrtAllocatorDesc,
    allocator: *mut aclrtAllocator,
    allocFunc: *mut aclrtAllocatorAllocFunc,
    freeFunc: *mut aclrtAllocatorFreeFunc,
    allocAdviseFunc: *mut aclrtAllocatorAllocAdviseFunc,
    getAddrFromBlockFunc: *mut aclrtAllocatorGetAddrFromBlockFunc,
) -> aclError {
    let outcome = non_null(allocatorDesc, "allocatorDesc")
        .and(non_null(stream, "stream"))
        .and_then(|()| {
            let registered = allocator_desc::get(stream as usize)?;
            let fields = registered.fields;
            // SAFETY: `allocatorDesc` was checked non-NULL; the optional
            // out-pointers are written only when non-NULL; all are valid by
            // the call's contract.
            unsafe {
                put(allocatorDesc, registered.descriptor as aclrtAllocatorDesc);
                if !allocator.is_null() {
                    put(allocator, fields.obj as aclrtAllocator);
                }
                if !allocFunc.is_null() {
                    put(allocFunc, fields.alloc);
                }
                if !freeFunc.is_null() {
                    put(freeFunc, fields.free);
                }
                if !allocAdviseFunc.is_null() {
                    put(allocAdviseFunc, fields.alloc_advise);
                }
                if !getAddrFromBlockFunc.is_null() {
                    put(getAddrFromBlockFunc, fields.get_addr_from_block);
                }
            }
            Ok(())
        });
    finish("aclrtAllocatorGetByStream", outcome)
}

pub(crate) unsafe fn aclrtAllocatorUnregister(stream: aclrtStream) -> aclError {
    finish(
        "aclrtAllocatorUnregister",
        non_null(stream, "stream").and_then(|()| allocator_desc::unregister(stream as usize)),
    )
}

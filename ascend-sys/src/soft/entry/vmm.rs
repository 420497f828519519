//! Entry points of 3.6 Virtual memory management.
#![allow(non_snake_case, clippy::too_many_arguments)]

use super::*;
use crate::soft::vmm;

pub(crate) unsafe fn aclrtMallocPhysical(
    handle: *mut aclrtDrvMemHandle,
    size: usize,
    prop: *const aclrtPhysicalMemProp,
    flags: u64,
) -> aclError {
    let outcome = non_null(handle, "handle").and(non_null(prop, "prop")).and_then(|()| {
        // SAFETY: checked non-NULL; valid by the call's contract.
        let prop = unsafe { *prop };
        let created = vmm::malloc_physical(&mut *vmm::write()?, size, &prop, flags, device_mem::reclaim)?;
        // SAFETY: checked non-NULL; valid by the call's contract.
        unsafe { put(handle, created as aclrtDrvMemHandle) };
        Ok(())
    });
    finish("aclrtMallocPhysical", outcome)
}

/// `aclrtFreePhysical`: drops one handle reference; the memory goes when
/// no reference and no mapping is left. The VMM tables and the sharing
/// tables composed in lock order: under the VMM tables' lock (the lower
/// rank) the last reference withdraws the handle's export (taking the
/// sharing tables) before the memory may be kept for reuse.
fn free_physical(handle: usize) -> SoftResult {
    let mut tables = vmm::write()?;
    if vmm::drop_handle_ref(&mut tables, handle)? {
        crate::soft::share::withdraw(handle);
    }
    vmm::release_if_unused(&mut tables, handle);
    Ok(())
}

pub(crate) unsafe fn aclrtFreePhysical(handle: aclrtDrvMemHandle) -> aclError {
    let outcome = non_null(handle, "handle").and_then(|()| free_physical(handle as usize));
    finish("aclrtFreePhysical", outcome)
}

/// The ACL-layer checks of the reserve calls.
fn check_reserve(virPtr: *mut *mut c_void, size: usize, flags: u64) -> SoftResult {
    non_null(virPtr, "virPtr")?;
    if size == 0 {
        return fail(ACL_ERROR_INVALID_PARAM, "size is 0");
    }
    if flags > 1 {
        return fail(
            ACL_ERROR_INVALID_PARAM,
            format!("flags {flags:#x} must be 0 (or 1, kept for compatibility)"),
        );
    }
    Ok(())
}

pub(crate) unsafe fn aclrtReserveMemAddress(
    virPtr: *mut *mut c_void,
    size: usize,
    alignment: usize,
    expectPtr: *mut c_void,
    flags: u64,
) -> aclError {
    let outcome = check_reserve(virPtr, size, flags).and_then(|()| {
        let base = vmm::reserve(&mut *vmm::write()?, size, alignment, expectPtr as usize)?;
        // SAFETY: checked non-NULL; valid by the call's contract.
        unsafe { put(virPtr, base as *mut c_void) };
        Ok(())
    });
    finish("aclrtReserveMemAddress", outcome)
}

pub(crate) unsafe fn aclrtReserveMemAddressNoUCMemory(
    virPtr: *mut *mut c_void,
    size: usize,
    _alignment: usize,
    _expectPtr: *mut c_void,
    flags: u64,
) -> aclError {
    let outcome = check_reserve(virPtr, size, flags).and_then(|()| {
        fail(
            ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
            "reserving without UC memory exists only on Atlas A3; the software device models the common chips",
        )
    });
    finish("aclrtReserveMemAddressNoUCMemory", outcome)
}

pub(crate) unsafe fn aclrtReleaseMemAddress(virPtr: *mut c_void) -> aclError {
    let outcome = non_null(virPtr, "virPtr").and_then(|()| vmm::release(&mut *vmm::write()?, virPtr as usize));
    finish("aclrtReleaseMemAddress", outcome)
}

/// The shared body of `aclrtMapMem` and `aclrtMemMapNoAccess`.
fn map_common(
    virPtr: *mut c_void,
    size: usize,
    offset: usize,
    handle: aclrtDrvMemHandle,
    flags: u64,
    accessible: bool,
) -> SoftResult {
    non_null(virPtr, "virPtr")?;
    non_null(handle, "handle")?;
    if size == 0 {
        return fail(ACL_ERROR_INVALID_PARAM, "size is 0");
    }
    if flags != 0 {
        return fail(ACL_ERROR_INVALID_PARAM, format!("flags {flags:#x} must be 0"));
    }
    vmm::map(
        &mut *vmm::write()?,
        virPtr as usize,
        size,
        offset,
        handle as usize,
        accessible,
    )
}

pub(crate) unsafe fn aclrtMapMem(
    virPtr: *mut c_void,
    size: usize,
    offset: usize,
    handle: aclrtDrvMemHandle,
    flags: u64,
) -> aclError {
    finish("aclrtMapMem", map_common(virPtr, size, offset, handle, flags, true))
}

pub(crate) unsafe fn aclrtMemMapNoAccess(
    virPtr: *mut c_void,
    size: usize,
    offset: usize,
    handle: aclrtDrvMemHandle,
    flags: u64,
) -> aclError {
    finish(
        "aclrtMemMapNoAccess",
        map_common(virPtr, size, offset, handle, flags, false),
    )
}

pub(crate) unsafe fn aclrtUnmapMem(virPtr: *mut c_void) -> aclError {
    let outcome = non_null(virPtr, "virPtr").and_then(|()| vmm::unmap(&mut *vmm::write()?, virPtr as usize));
    finish("aclrtUnmapMem", outcome)
}

pub(crate) unsafe fn aclrtMemGetAllocationGranularity(
    prop: *mut aclrtPhysicalMemProp,
    option: aclrtMemGranularityOptions,
    granularity: *mut usize,
) -> aclError {
    let outcome = non_null(prop, "prop")
        .and(non_null(granularity, "granularity"))
        .and_then(|()| {
            // SAFETY: checked non-NULL; valid by the call's contract.
            let prop = unsafe { *prop };
            let value = vmm::granularity(&prop, option)?;
            // SAFETY: checked non-NULL; valid by the call's contract.
            unsafe { put(granularity, value) };
            Ok(())
        });
    finish("aclrtMemGetAllocationGranularity", outcome)
}

pub(crate) unsafe fn aclrtMemSetAccess(
    virPtr: *mut c_void,
    size: usize,
    desc: *mut aclrtMemAccessDesc,
    count: usize,
) -> aclError {
    // No ACL-layer checks here: the runtime refuses NULL with 107000.
    let outcome = if virPtr.is_null() || desc.is_null() {
        fail(ACL_ERROR_RT_PARAM_INVALID, "virPtr or desc is NULL")
    } else {
        // SAFETY: `desc` points to `count` descriptors by the call's contract.
        let descriptors = unsafe { std::slice::from_raw_parts(desc, count) };
        vmm::write().and_then(|mut tables| vmm::set_access(&mut tables, virPtr as usize, size, descriptors))
    };
    finish("aclrtMemSetAccess", outcome)
}

pub(crate) unsafe fn aclrtMemGetAccess(
    virPtr: *mut c_void,
    location: *mut aclrtMemLocation,
    flag: *mut u64,
) -> aclError {
    let outcome = non_null(virPtr, "virPtr")
        .and(non_null(location, "location"))
        .and(non_null(flag, "flag"))
        .and_then(|()| {
            // SAFETY: checked non-NULL; valid by the call's contract.
            let location = unsafe { *location };
            let value = vmm::get_access(&*vmm::read()?, virPtr as usize, location)?;
            // SAFETY: checked non-NULL; valid by the call's contract.
            unsafe { put(flag, value) };
            Ok(())
        });
    finish("aclrtMemGetAccess", outcome)
}

pub(crate) unsafe fn aclrtMemRetainAllocationHandle(virPtr: *mut c_void, handle: *mut aclrtDrvMemHandle) -> aclError {
    let outcome = non_null(virPtr, "virPtr")
        .and(non_null(handle, "handle"))
        .and_then(|()| {
            let retained = vmm::retain_handle(&mut *vmm::write()?, virPtr as usize)?;
            // SAFETY: checked non-NULL; valid by the call's contract.
            unsafe { put(handle, retained as aclrtDrvMemHandle) };
            Ok(())
        });
    finish("aclrtMemRetainAllocationHandle", outcome)
}

pub(crate) unsafe fn aclrtMemGetAllocationPropertiesFromHandle(
    handle: aclrtDrvMemHandle,
    prop: *mut aclrtPhysicalMemProp,
) -> aclError {
    let outcome = non_null(handle, "handle").and(non_null(prop, "prop")).and_then(|()| {
        let value = vmm::properties_from_handle(&*vmm::read()?, handle as usize)?;
        // SAFETY: checked non-NULL; valid by the call's contract.
        unsafe { put(prop, value) };
        Ok(())
    });
    finish("aclrtMemGetAllocationPropertiesFromHandle", outcome)
}

/// The host page size used for rounding reported sizes.
const PAGE: usize = 4096;

/// `aclrtMemGetAddressRange`'s answer: the allocation containing `address`
/// — `aclrtMalloc*` or `aclrtMallocHost*` memory (size rounded up to whole
/// pages, as the driver reports it) or a VMM mapping. The VMM family's lock
/// is held throughout (it ranks before the other two families' locks).
fn address_range(address: usize) -> SoftResult<(usize, usize)> {
    let vmm = vmm::read()?;
    if let Some((start, allocation)) = device_mem::find(address) {
        return Ok((start, (allocation.size as usize).next_multiple_of(PAGE)));
    }
    if let Some((start, allocation)) = host_mem::find(address) {
        return Ok((start, allocation.size.next_multiple_of(PAGE)));
    }
    vmm::mapped_range(&vmm, address)
}

pub(crate) unsafe fn aclrtMemGetAddressRange(ptr: *mut c_void, pbase: *mut *mut c_void, psize: *mut usize) -> aclError {
    let outcome = non_null(ptr, "ptr").and_then(|()| {
        if pbase.is_null() && psize.is_null() {
            return fail(ACL_ERROR_RT_PARAM_INVALID, "pbase and psize are both NULL");
        }
        let (base, size) = address_range(ptr as usize)?;
        // SAFETY: each non-NULL out-pointer is valid by the call's contract.
        unsafe {
            if !pbase.is_null() {
                put(pbase, base as *mut c_void);
            }
            if !psize.is_null() {
                put(psize, size);
            }
        }
        Ok(())
    });
    finish("aclrtMemGetAddressRange", outcome)
}

pub(crate) unsafe fn aclrtMemMapSelectedLink(
    virPtrDst: *mut c_void,
    size: usize,
    virPtrSrc: *mut c_void,
    linkIdx: u32,
) -> aclError {
    let outcome = non_null(virPtrDst, "virPtrDst")
        .and(non_null(virPtrSrc, "virPtrSrc"))
        .and_then(|()| {
            if size == 0 {
                return fail(ACL_ERROR_INVALID_PARAM, "size is 0");
            }
            if linkIdx != ACL_RT_MEM_LINK_IDX_0 && linkIdx != ACL_RT_MEM_LINK_IDX_1 {
                return fail(
                    ACL_ERROR_INVALID_PARAM,
                    format!("linkIdx {linkIdx} is not ACL_RT_MEM_LINK_IDX_0 or _1"),
                );
            }
            fail(
                ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                "selected-link mapping exists only on Atlas A3; the software device models the common chips",
            )
        });
    finish("aclrtMemMapSelectedLink", outcome)
}

pub(crate) unsafe fn aclrtMemMapSetLink(handle: aclrtDrvMemHandle, _adviceLink: aclrtMemLinkType) -> aclError {
    let outcome = non_null(handle, "handle").and_then(|()| {
        fail(
            ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
            "link selection exists only on Atlas A3 and Ascend 950; the software device models the common chips",
        )
    });
    finish("aclrtMemMapSetLink", outcome)
}

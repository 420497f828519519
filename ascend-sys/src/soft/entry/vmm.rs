//! Entry points of 3.6 Virtual memory management.
#![allow(non_snake_case, clippy::too_many_arguments)]

use super::*;

not_emulated! {
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
}

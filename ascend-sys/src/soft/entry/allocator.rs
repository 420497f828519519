//! Entry points of 3.9 Custom allocator descriptors.
#![allow(non_snake_case, clippy::too_many_arguments)]

use super::*;

not_emulated! {
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

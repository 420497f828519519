//! Entry points of 3.5 Host memory and host registration.
#![allow(non_snake_case, clippy::too_many_arguments)]

use super::*;

fn malloc_host_into(hostPtr: *mut *mut c_void, size: u64) -> SoftResult {
    let address = host_mem::malloc_host(size)?;
    // SAFETY: checked non-NULL by the callers; valid by the call's contract.
    unsafe { put(hostPtr, address as *mut c_void) };
    Ok(())
}

pub(crate) unsafe fn aclrtMallocHost(hostPtr: *mut *mut c_void, size: usize) -> aclError {
    finish(
        "aclrtMallocHost",
        non_null(hostPtr, "hostPtr").and_then(|()| malloc_host_into(hostPtr, size as u64)),
    )
}

pub(crate) unsafe fn aclrtMallocHostWithCfg(ptr: *mut *mut c_void, size: u64, cfg: *mut aclrtMallocConfig) -> aclError {
    let outcome = (|| {
        non_null(ptr, "ptr")?;
        if size == 0 {
            return fail(ACL_ERROR_INVALID_PARAM, "size is 0");
        }
        // SAFETY: a non-NULL cfg is valid by the call's contract.
        unsafe { host_mem::check_host_cfg(cfg) }?;
        malloc_host_into(ptr, size)
    })();
    finish("aclrtMallocHostWithCfg", outcome)
}

pub(crate) unsafe fn aclrtFreeHost(hostPtr: *mut c_void) -> aclError {
    finish(
        "aclrtFreeHost",
        non_null(hostPtr, "hostPtr").and_then(|()| host_mem::free_host(hostPtr as usize)),
    )
}

pub(crate) unsafe fn aclrtFreeHostWithDevSync(hostPtr: *mut c_void) -> aclError {
    finish(
        "aclrtFreeHostWithDevSync",
        non_null(hostPtr, "hostPtr")
            .and_then(|()| context::require())
            .and_then(|_| host_mem::free_host(hostPtr as usize)),
    )
}

not_emulated! {
    fn aclrtHostRegister(ptr: *mut c_void, size: u64, type: aclrtHostRegisterType, devPtr: *mut *mut c_void) -> aclError;
    fn aclrtHostRegisterV2(ptr: *mut c_void, size: u64, flag: u32) -> aclError;
    fn aclrtHostGetDevicePointer(pHost: *mut c_void, pDevice: *mut *mut c_void, flag: u32) -> aclError;
    fn aclrtHostMemMapCapabilities(deviceId: u32, hacType: aclrtHacType, capabilities: *mut aclrtHostMemMapCapability) -> aclError;
    fn aclrtHostUnregister(ptr: *mut c_void) -> aclError;
}

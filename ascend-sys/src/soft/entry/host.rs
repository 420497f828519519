//! Entry points of 3.5 Host memory and host registration.
#![allow(non_snake_case, clippy::too_many_arguments)]

use super::*;
use crate::soft::host_register;

fn malloc_host_into(hostPtr: *mut *mut c_void, size: u64) -> SoftResult {
    let address = host_mem::malloc_host(size)?;
    sanitize::allocated(address, size as usize, None);
    // SAFETY: checked non-NULL by the callers; valid by the call's contract.
    unsafe { put(hostPtr, address as *mut c_void) };
    Ok(())
}

/// Tells the sanitizer that `api` gives back the pinned allocation at
/// `address` (when it is one): queued work on it is reported.
fn sanitize_free_host(address: usize, api: &'static str) {
    if sanitize::on()
        && let Some((start, allocation)) = host_mem::find(address)
        && start == address
    {
        // Pinned host memory is its own bytes.
        sanitize::freeing(address, address, allocation.size, api);
    }
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

/// `aclrtFreeHost*` after the sanitizer's report: the pinned host memory
/// family and the streams composed in lock order. The streams' lock comes
/// first (a lower rank); under it the allocation leaves its family's table,
/// then each queued task that still uses the range is recorded as misuse
/// and cancelled. The free does not wait for queued work, as on hardware:
/// only a task copying the range right now is waited for (without the
/// lock), so no byte is moved through freed memory.
fn free_host(address: usize) -> SoftResult {
    let streams = crate::soft::compose::streams::lock()?;
    let allocation = host_mem::take_host(address)?;
    let in_flight = crate::soft::compose::streams::host_memory_freed(&streams, address, address + allocation.size);
    drop(streams);
    in_flight.wait();
    host_mem::release_host(address, allocation)
}

pub(crate) unsafe fn aclrtFreeHost(hostPtr: *mut c_void) -> aclError {
    finish(
        "aclrtFreeHost",
        non_null(hostPtr, "hostPtr").and_then(|()| {
            sanitize_free_host(hostPtr as usize, "aclrtFreeHost");
            free_host(hostPtr as usize)
        }),
    )
}

pub(crate) unsafe fn aclrtFreeHostWithDevSync(hostPtr: *mut c_void) -> aclError {
    finish(
        "aclrtFreeHostWithDevSync",
        non_null(hostPtr, "hostPtr")
            .and_then(|()| crate::soft::compose::streams::synchronize_device(None))
            .and_then(|()| {
                sanitize_free_host(hostPtr as usize, "aclrtFreeHostWithDevSync");
                free_host(hostPtr as usize)
            }),
    )
}

// ---- host registration ---------------------------------------------------------

pub(crate) unsafe fn aclrtHostRegister(
    ptr: *mut c_void,
    size: u64,
    type_: aclrtHostRegisterType,
    devPtr: *mut *mut c_void,
) -> aclError {
    let outcome = (|| {
        non_null(ptr, "ptr")?;
        non_null(devPtr, "devPtr")?;
        if size == 0 {
            return fail(ACL_ERROR_INVALID_PARAM, "size is 0");
        }
        let device_pointer = host_register::register_v1(ptr as usize, size, type_)?;
        // SAFETY: checked non-NULL; valid by the call's contract.
        unsafe { put(devPtr, device_pointer as *mut c_void) };
        Ok(())
    })();
    finish("aclrtHostRegister", outcome)
}

pub(crate) unsafe fn aclrtHostRegisterV2(ptr: *mut c_void, size: u64, flag: u32) -> aclError {
    let outcome = (|| {
        non_null(ptr, "ptr")?;
        if size == 0 {
            return fail(ACL_ERROR_INVALID_PARAM, "size is 0");
        }
        host_register::register_v2(ptr as usize, size, flag, host_mem::overlapping)
    })();
    finish("aclrtHostRegisterV2", outcome)
}

pub(crate) unsafe fn aclrtHostGetDevicePointer(pHost: *mut c_void, pDevice: *mut *mut c_void, flag: u32) -> aclError {
    let outcome = (|| {
        non_null(pHost, "pHost")?;
        non_null(pDevice, "pDevice")?;
        if flag != 0 {
            return fail(
                ACL_ERROR_INVALID_PARAM,
                format!("flag {flag} is reserved and must be 0"),
            );
        }
        let device_pointer = host_register::device_pointer(pHost as usize)?;
        // SAFETY: checked non-NULL; valid by the call's contract.
        unsafe { put(pDevice, device_pointer as *mut c_void) };
        Ok(())
    })();
    finish("aclrtHostGetDevicePointer", outcome)
}

pub(crate) unsafe fn aclrtHostMemMapCapabilities(
    deviceId: u32,
    hacType: aclrtHacType,
    capabilities: *mut aclrtHostMemMapCapability,
) -> aclError {
    let outcome = non_null(capabilities, "capabilities").and_then(|()| {
        let answer = host_register::map_capabilities(deviceId, hacType)?;
        // SAFETY: checked non-NULL; valid by the call's contract.
        unsafe { put(capabilities, answer) };
        Ok(())
    });
    finish("aclrtHostMemMapCapabilities", outcome)
}

pub(crate) unsafe fn aclrtHostUnregister(ptr: *mut c_void) -> aclError {
    finish(
        "aclrtHostUnregister",
        non_null(ptr, "ptr").and_then(|()| host_register::unregister(ptr as usize)),
    )
}

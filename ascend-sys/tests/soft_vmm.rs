//! The software device's virtual-memory rules (`acl-behaviour.md` §7, and
//! the choices in `docs/runtime-choices.md`): each test breaks one rule and
//! checks the exact code. Software device only.

mod soft_common;

use ascend_sys::*;
use soft_common::on_device;
use std::ffi::{CStr, c_void};
use std::ptr::{null, null_mut};

const MIB: usize = 1 << 20;
const GRANULE: usize = 2 * MIB;

fn recent() -> String {
    // SAFETY: no arguments; copied at once.
    let text = unsafe { aclGetRecentErrMsg() };
    assert!(!text.is_null());
    // SAFETY: a C string valid until the next call on this thread.
    unsafe { CStr::from_ptr(text) }.to_string_lossy().into_owned()
}

fn prop(attr: aclrtMemAttr, type_: aclrtMemLocationType, id: u32) -> aclrtPhysicalMemProp {
    aclrtPhysicalMemProp {
        handleType: ACL_MEM_HANDLE_TYPE_NONE,
        allocationType: ACL_MEM_ALLOCATION_TYPE_PINNED,
        memAttr: attr,
        location: aclrtMemLocation { id, type_ },
        reserve: 0,
    }
}

fn device_prop(id: u32) -> aclrtPhysicalMemProp {
    prop(ACL_MEM_HUGE, ACL_MEM_LOCATION_TYPE_DEVICE, id)
}

fn physical_with(size: usize, prop: &aclrtPhysicalMemProp) -> Result<aclrtDrvMemHandle, aclError> {
    let mut handle = null_mut();
    // SAFETY: valid out-pointer and property.
    match unsafe { aclrtMallocPhysical(&mut handle, size, prop, 0) } {
        ACL_SUCCESS => Ok(handle),
        code => Err(code),
    }
}

fn physical(size: usize) -> aclrtDrvMemHandle {
    physical_with(size, &device_prop(0)).expect("aclrtMallocPhysical")
}

fn reserve(size: usize) -> *mut c_void {
    let mut base = null_mut();
    // SAFETY: valid out-pointer.
    assert_eq!(
        unsafe { aclrtReserveMemAddress(&mut base, size, 0, null_mut(), 0) },
        ACL_SUCCESS
    );
    base
}

fn map(address: *mut c_void, size: usize, handle: aclrtDrvMemHandle) -> aclError {
    // SAFETY: handles and addresses are validated by the runtime.
    unsafe { aclrtMapMem(address, size, 0, handle, 0) }
}

fn at(base: *mut c_void, offset: usize) -> *mut c_void {
    (base as usize + offset) as *mut c_void
}

fn write(dst: *mut c_void, data: &[u8]) -> aclError {
    // SAFETY: `data` is live; the device side is validated.
    unsafe {
        aclrtMemcpy(
            dst,
            data.len(),
            data.as_ptr().cast(),
            data.len(),
            ACL_MEMCPY_HOST_TO_DEVICE,
        )
    }
}

fn read(src: *mut c_void, len: usize) -> Result<Vec<u8>, aclError> {
    let mut out = vec![0u8; len];
    // SAFETY: `out` is live; the device side is validated.
    match unsafe { aclrtMemcpy(out.as_mut_ptr().cast(), len, src, len, ACL_MEMCPY_DEVICE_TO_HOST) } {
        ACL_SUCCESS => Ok(out),
        code => Err(code),
    }
}

fn free_physical(handle: aclrtDrvMemHandle) -> aclError {
    // SAFETY: the runtime validates the handle.
    unsafe { aclrtFreePhysical(handle) }
}

fn unmap(address: *mut c_void) -> aclError {
    // SAFETY: the runtime validates the address.
    unsafe { aclrtUnmapMem(address) }
}

fn release(address: *mut c_void) -> aclError {
    // SAFETY: the runtime validates the address.
    unsafe { aclrtReleaseMemAddress(address) }
}

#[test]
fn full_lifecycle_moves_data_and_cleans_up() {
    on_device(|| {
        let handle = physical(GRANULE);
        let base = reserve(2 * GRANULE);
        assert_eq!(map(base, GRANULE, handle), ACL_SUCCESS);
        let data: Vec<u8> = (0..GRANULE).map(|i| (i % 253) as u8).collect();
        assert_eq!(write(base, &data), ACL_SUCCESS);
        assert_eq!(read(base, GRANULE).unwrap(), data);
        assert_eq!(unmap(base), ACL_SUCCESS);
        assert_eq!(release(base), ACL_SUCCESS);
        assert_eq!(free_physical(handle), ACL_SUCCESS);
    });
}

#[test]
fn malloc_physical_argument_rules() {
    on_device(|| {
        let good = device_prop(0);
        let mut handle = null_mut();
        // SAFETY: every pointer is valid or NULL (refused first).
        unsafe {
            assert_eq!(
                aclrtMallocPhysical(null_mut(), GRANULE, &good, 0),
                ACL_ERROR_INVALID_PARAM
            );
            assert_eq!(
                aclrtMallocPhysical(&mut handle, GRANULE, null(), 0),
                ACL_ERROR_INVALID_PARAM
            );
            assert_eq!(aclrtMallocPhysical(&mut handle, 0, &good, 0), ACL_ERROR_INVALID_PARAM);
            assert_eq!(
                aclrtMallocPhysical(&mut handle, GRANULE, &good, 1),
                ACL_ERROR_INVALID_PARAM
            );
        }
        let mut bad = good;
        bad.handleType = ACL_MEM_HANDLE_TYPE_POSIX;
        assert_eq!(physical_with(GRANULE, &bad), Err(ACL_ERROR_INVALID_PARAM));
        bad = good;
        bad.allocationType = 1;
        assert_eq!(physical_with(GRANULE, &bad), Err(ACL_ERROR_INVALID_PARAM));
        for location in [ACL_MEM_LOCATION_TYPE_UNREGISTERED, ACL_MEM_LOCATION_TYPE_MANAGED] {
            assert_eq!(
                physical_with(GRANULE, &prop(ACL_MEM_HUGE, location, 0)),
                Err(ACL_ERROR_INVALID_PARAM)
            );
        }
        for attr in [
            ACL_DDR_MEM,
            ACL_HBM_MEM,
            ACL_HBM_MEM_P2P_HUGE,
            ACL_HBM_MEM_P2P_NORMAL,
            ACL_HBM_MEM_P2P_HUGE1G,
        ] {
            assert_eq!(
                physical_with(GRANULE, &prop(attr, ACL_MEM_LOCATION_TYPE_DEVICE, 0)),
                Err(ACL_ERROR_INVALID_PARAM),
                "memAttr {attr}"
            );
        }
        // DDR attributes need a host location.
        assert_eq!(
            physical_with(GRANULE, &prop(ACL_DDR_MEM_HUGE, ACL_MEM_LOCATION_TYPE_DEVICE, 0)),
            Err(ACL_ERROR_INVALID_PARAM)
        );
        assert_eq!(
            physical_with(GRANULE, &device_prop(99)),
            Err(ACL_ERROR_RT_INVALID_DEVICEID)
        );
        // Not a multiple of the granularity.
        assert_eq!(physical_with(GRANULE + 4096, &good), Err(ACL_ERROR_RT_PARAM_INVALID));
        assert!(recent().contains("granularity"));
        // More than the device holds (64 GiB by default).
        assert_eq!(physical_with(1 << 40, &good), Err(ACL_ERROR_RT_MEMORY_ALLOCATION));
    });
}

#[test]
fn host_located_physical_memory_maps_and_copies() {
    on_device(|| {
        let host = physical_with(GRANULE, &prop(ACL_DDR_MEM_NORMAL, ACL_MEM_LOCATION_TYPE_HOST, 0)).unwrap();
        let base = reserve(GRANULE);
        assert_eq!(map(base, GRANULE, host), ACL_SUCCESS);
        assert_eq!(write(base, &[9; 64]), ACL_SUCCESS);
        assert_eq!(read(base, 64).unwrap(), vec![9; 64]);
        let mut reported = aclrtPhysicalMemProp::default();
        // SAFETY: valid out-pointer.
        assert_eq!(
            unsafe { aclrtMemGetAllocationPropertiesFromHandle(host, &mut reported) },
            ACL_SUCCESS
        );
        // Not an identity round trip: DDR_NORMAL on the host reads back as ACL_MEM_NORMAL.
        assert_eq!(reported.memAttr, ACL_MEM_NORMAL);
        assert_eq!(reported.location.type_, ACL_MEM_LOCATION_TYPE_HOST);
        assert_eq!((unmap(base), release(base), free_physical(host)), (0, 0, 0));
    });
}

#[test]
fn free_physical_is_deferred_while_mapped() {
    on_device(|| {
        let handle = physical(GRANULE);
        let base = reserve(GRANULE);
        assert_eq!(map(base, GRANULE, handle), ACL_SUCCESS);
        assert_eq!(write(base, &[7; 100]), ACL_SUCCESS);
        assert_eq!(free_physical(handle), ACL_SUCCESS);
        // The bytes stay reachable through the mapping.
        assert_eq!(read(base, 100).unwrap(), vec![7; 100]);
        // But the handle is gone for new work.
        let other = reserve(GRANULE);
        assert_eq!(map(other, GRANULE, handle), ACL_ERROR_RT_INVALID_HANDLE);
        assert_eq!(free_physical(handle), ACL_ERROR_RT_INVALID_HANDLE);
        assert_eq!(unmap(base), ACL_SUCCESS);
        // Now it is released: the address is no longer backed.
        assert_eq!(read(base, 100), Err(ACL_ERROR_RT_PARAM_INVALID));
        assert_eq!((release(base), release(other)), (0, 0));
    });
}

#[test]
fn free_physical_rules() {
    on_device(|| {
        assert_eq!(free_physical(null_mut()), ACL_ERROR_INVALID_PARAM);
        let mut local = 0u64;
        assert_eq!(free_physical((&raw mut local).cast()), ACL_ERROR_RT_INVALID_HANDLE);
        let handle = physical(GRANULE);
        assert_eq!(free_physical(handle), ACL_SUCCESS);
        assert_eq!(free_physical(handle), ACL_ERROR_RT_INVALID_HANDLE);
    });
}

#[test]
fn reserve_argument_rules() {
    on_device(|| {
        let mut base = null_mut();
        // SAFETY: valid out-pointers, or NULL (refused first).
        unsafe {
            assert_eq!(
                aclrtReserveMemAddress(null_mut(), GRANULE, 0, null_mut(), 0),
                ACL_ERROR_INVALID_PARAM
            );
            assert_eq!(
                aclrtReserveMemAddress(&mut base, 0, 0, null_mut(), 0),
                ACL_ERROR_INVALID_PARAM
            );
            assert_eq!(
                aclrtReserveMemAddress(&mut base, GRANULE, 0, null_mut(), 2),
                ACL_ERROR_INVALID_PARAM
            );
            assert_eq!(
                aclrtReserveMemAddress(&mut base, GRANULE, 4096, null_mut(), 0),
                ACL_ERROR_RT_PARAM_INVALID
            );
            assert_eq!(
                aclrtReserveMemAddress(&mut base, GRANULE + 1, 0, null_mut(), 0),
                ACL_ERROR_RT_PARAM_INVALID
            );
            // flags 1 is kept for compatibility.
            assert_eq!(
                aclrtReserveMemAddress(&mut base, GRANULE, 0, null_mut(), 1),
                ACL_SUCCESS
            );
            assert_eq!(base as usize % GRANULE, 0);
            assert_eq!(aclrtReleaseMemAddress(base), ACL_SUCCESS);
        }
    });
}

#[test]
fn expect_ptr_is_honoured_or_refused() {
    on_device(|| {
        let size = 4 * GRANULE;
        // An address in the 16T-24T window the documents name, far from
        // where the kernel places mappings by itself.
        let wanted = (20usize << 40) as *mut c_void;
        let mut got = null_mut();
        let mut again = null_mut();
        // SAFETY: valid out-pointers.
        unsafe {
            assert_eq!(aclrtReserveMemAddress(&mut got, size, 0, wanted, 0), ACL_SUCCESS);
            assert_eq!(got, wanted, "a free, aligned expectPtr is honoured exactly");
            // Occupied now.
            assert_eq!(
                aclrtReserveMemAddress(&mut again, size, 0, wanted, 0),
                ACL_ERROR_RT_PARAM_INVALID
            );
            assert!(recent().contains("not available"));
            // Misaligned for its size (8 MiB needs 8 MiB alignment).
            assert_eq!(
                aclrtReserveMemAddress(&mut again, size, 0, at(wanted, size + GRANULE), 0),
                ACL_ERROR_RT_PARAM_INVALID
            );
            assert!(recent().contains("not aligned"));
            assert_eq!(aclrtReleaseMemAddress(got), ACL_SUCCESS);
        }
    });
}

#[test]
fn release_rules() {
    on_device(|| {
        assert_eq!(release(null_mut()), ACL_ERROR_INVALID_PARAM);
        let base = reserve(2 * GRANULE);
        assert_eq!(release(at(base, GRANULE)), ACL_ERROR_RT_PARAM_INVALID);
        assert!(recent().contains("not its start"));
        let handle = physical(GRANULE);
        assert_eq!(map(at(base, GRANULE), GRANULE, handle), ACL_SUCCESS);
        assert_eq!(release(base), ACL_ERROR_RT_PARAM_INVALID);
        let message = recent();
        assert!(
            message.contains("1 mapping(s)") && message.contains(&format!("{:#x}", base as usize + GRANULE)),
            "the message names the blocking mapping: {message}"
        );
        assert_eq!(unmap(at(base, GRANULE)), ACL_SUCCESS);
        assert_eq!(release(base), ACL_SUCCESS);
        assert_eq!(release(base), ACL_ERROR_RT_PARAM_INVALID);
        assert_eq!(free_physical(handle), ACL_SUCCESS);
    });
}

#[test]
fn map_rules() {
    on_device(|| {
        let handle = physical(GRANULE);
        let base = reserve(4 * GRANULE);
        // SAFETY: the runtime validates every argument.
        unsafe {
            assert_eq!(aclrtMapMem(null_mut(), GRANULE, 0, handle, 0), ACL_ERROR_INVALID_PARAM);
            assert_eq!(aclrtMapMem(base, GRANULE, 0, null_mut(), 0), ACL_ERROR_INVALID_PARAM);
            assert_eq!(aclrtMapMem(base, 0, 0, handle, 0), ACL_ERROR_INVALID_PARAM);
            assert_eq!(aclrtMapMem(base, GRANULE, 0, handle, 1), ACL_ERROR_INVALID_PARAM);
            assert_eq!(aclrtMapMem(base, GRANULE, 4096, handle, 0), ACL_ERROR_RT_PARAM_INVALID);
            assert!(recent().contains("offset"));
        }
        // Size must be the physical size.
        assert_eq!(map(base, 2 * GRANULE, handle), ACL_ERROR_RT_PARAM_INVALID);
        // Aligned to the granularity.
        assert_eq!(map(at(base, 4096), GRANULE, handle), ACL_ERROR_RT_PARAM_INVALID);
        // Inside a reservation, not crossing its end.
        let mut local = [0u8; 64];
        assert_eq!(
            map(local.as_mut_ptr().cast(), GRANULE, handle),
            ACL_ERROR_RT_PARAM_INVALID
        );
        let big = physical(2 * GRANULE);
        assert_eq!(map(at(base, 3 * GRANULE), 2 * GRANULE, big), ACL_ERROR_RT_PARAM_INVALID);
        assert!(recent().contains("past the end"));
        // No overlap.
        assert_eq!(map(at(base, GRANULE), 2 * GRANULE, big), ACL_SUCCESS);
        assert_eq!(map(at(base, 2 * GRANULE), GRANULE, handle), ACL_ERROR_RT_PARAM_INVALID);
        assert!(recent().contains("overlaps"));
        assert_eq!(map(base, GRANULE, handle), ACL_SUCCESS);
        // One physical allocation may be mapped again elsewhere.
        let second = reserve(GRANULE);
        assert_eq!(map(second, GRANULE, handle), ACL_SUCCESS);
        assert_eq!(write(base, &[5; 16]), ACL_SUCCESS);
        assert_eq!(
            read(second, 16).unwrap(),
            vec![5; 16],
            "two mappings of one allocation share bytes"
        );
        for address in [base, at(base, GRANULE), second] {
            assert_eq!(unmap(address), ACL_SUCCESS);
        }
        assert_eq!((release(base), release(second)), (0, 0));
        assert_eq!((free_physical(handle), free_physical(big)), (0, 0));
    });
}

#[test]
fn one_reservation_maps_one_device() {
    on_device(|| {
        let on0 = physical(GRANULE);
        let on1 = physical_with(GRANULE, &device_prop(1)).unwrap();
        let base = reserve(2 * GRANULE);
        assert_eq!(map(base, GRANULE, on0), ACL_SUCCESS);
        assert_eq!(map(at(base, GRANULE), GRANULE, on1), ACL_ERROR_RT_PARAM_INVALID);
        assert!(recent().contains("one range maps one device"));
        assert_eq!(unmap(base), ACL_SUCCESS);
        // Empty again: another device may now use it.
        assert_eq!(map(at(base, GRANULE), GRANULE, on1), ACL_SUCCESS);
        assert_eq!(unmap(at(base, GRANULE)), ACL_SUCCESS);
        assert_eq!((release(base), free_physical(on0), free_physical(on1)), (0, 0, 0));
    });
}

#[test]
fn unmap_rules() {
    on_device(|| {
        assert_eq!(unmap(null_mut()), ACL_ERROR_INVALID_PARAM);
        let handle = physical(GRANULE);
        let base = reserve(GRANULE);
        assert_eq!(unmap(base), ACL_ERROR_RT_PARAM_INVALID);
        assert_eq!(map(base, GRANULE, handle), ACL_SUCCESS);
        assert_eq!(unmap(at(base, 4096)), ACL_ERROR_RT_PARAM_INVALID);
        assert!(recent().contains("not its start"));
        assert_eq!(unmap(base), ACL_SUCCESS);
        assert_eq!(unmap(base), ACL_ERROR_RT_PARAM_INVALID);
        assert_eq!((release(base), free_physical(handle)), (0, 0));
    });
}

fn access(location: aclrtMemLocation, flags: aclrtMemAccessFlags) -> aclrtMemAccessDesc {
    aclrtMemAccessDesc {
        flags,
        location,
        rsv: [0; 12],
    }
}

fn set_access(address: *mut c_void, size: usize, descriptors: &mut [aclrtMemAccessDesc]) -> aclError {
    // SAFETY: the slice is live for the call.
    unsafe { aclrtMemSetAccess(address, size, descriptors.as_mut_ptr(), descriptors.len()) }
}

#[test]
fn map_without_access_blocks_copies_until_set_access() {
    on_device(|| {
        let handle = physical(GRANULE);
        let base = reserve(GRANULE);
        // SAFETY: validated by the runtime.
        assert_eq!(unsafe { aclrtMemMapNoAccess(base, GRANULE, 0, handle, 0) }, ACL_SUCCESS);
        assert_eq!(write(base, &[1; 8]), ACL_ERROR_RT_PARAM_INVALID);
        assert!(recent().contains("aclrtMemSetAccess"));
        let device0 = aclrtMemLocation {
            id: 0,
            type_: ACL_MEM_LOCATION_TYPE_DEVICE,
        };
        let rw = ACL_RT_MEM_ACCESS_FLAGS_READWRITE;
        // SAFETY: NULL pointers are refused by the runtime (no ACL check).
        unsafe {
            assert_eq!(
                aclrtMemSetAccess(null_mut(), GRANULE, null_mut(), 1),
                ACL_ERROR_RT_PARAM_INVALID
            );
        }
        assert_eq!(set_access(base, GRANULE, &mut []), ACL_ERROR_RT_PARAM_INVALID);
        assert_eq!(
            set_access(base, GRANULE / 2, &mut [access(device0, rw)]),
            ACL_ERROR_RT_PARAM_INVALID
        );
        assert_eq!(
            set_access(at(base, 4096), GRANULE, &mut [access(device0, rw)]),
            ACL_ERROR_RT_PARAM_INVALID
        );
        assert_eq!(
            set_access(base, GRANULE, &mut [access(device0, ACL_RT_MEM_ACCESS_FLAGS_READ)]),
            ACL_ERROR_RT_PARAM_INVALID
        );
        let numa = aclrtMemLocation {
            id: 0,
            type_: ACL_MEM_LOCATION_TYPE_HOST_NUMA,
        };
        assert_eq!(
            set_access(base, GRANULE, &mut [access(numa, rw)]),
            ACL_ERROR_RT_PARAM_INVALID
        );
        let no_device = aclrtMemLocation {
            id: 64,
            type_: ACL_MEM_LOCATION_TYPE_DEVICE,
        };
        assert_eq!(
            set_access(base, GRANULE, &mut [access(no_device, rw)]),
            ACL_ERROR_RT_INVALID_DEVICEID
        );
        let mut reserved = access(device0, rw);
        reserved.rsv[3] = 1;
        assert_eq!(set_access(base, GRANULE, &mut [reserved]), ACL_ERROR_RT_PARAM_INVALID);
        // Still inaccessible after all the refusals.
        assert_eq!(write(base, &[1; 8]), ACL_ERROR_RT_PARAM_INVALID);
        let device1 = aclrtMemLocation {
            id: 1,
            type_: ACL_MEM_LOCATION_TYPE_DEVICE,
        };
        assert_eq!(
            set_access(base, GRANULE, &mut [access(device0, rw), access(device1, rw)]),
            ACL_SUCCESS
        );
        assert_eq!(write(base, &[1; 8]), ACL_SUCCESS);
        assert_eq!(read(base, 8).unwrap(), vec![1; 8]);
        let mut flag = 0;
        let mut location = device1;
        let host = aclrtMemLocation {
            id: 0,
            type_: ACL_MEM_LOCATION_TYPE_HOST,
        };
        // SAFETY: valid pointers, or NULL (refused first).
        unsafe {
            assert_eq!(aclrtMemGetAccess(base, &mut location, &mut flag), ACL_SUCCESS);
            assert_eq!(flag, u64::from(rw));
            let mut never = host;
            assert_eq!(aclrtMemGetAccess(at(base, 4096), &mut never, &mut flag), ACL_SUCCESS);
            assert_eq!(flag, 0x7FFF_FFFF, "a location never set reports 0x7FFFFFFF");
            assert_eq!(aclrtMemGetAccess(base, null_mut(), &mut flag), ACL_ERROR_INVALID_PARAM);
            let mut local = 0u8;
            assert_eq!(
                aclrtMemGetAccess((&raw mut local).cast(), &mut location, &mut flag),
                ACL_ERROR_RT_PARAM_INVALID
            );
        }
        assert_eq!((unmap(base), release(base), free_physical(handle)), (0, 0, 0));
    });
}

#[test]
fn map_mem_grants_the_owner_read_write() {
    on_device(|| {
        let handle = physical(GRANULE);
        let base = reserve(GRANULE);
        assert_eq!(map(base, GRANULE, handle), ACL_SUCCESS);
        let mut owner = aclrtMemLocation {
            id: 0,
            type_: ACL_MEM_LOCATION_TYPE_DEVICE,
        };
        let mut flag = 0;
        // SAFETY: valid pointers.
        assert_eq!(unsafe { aclrtMemGetAccess(base, &mut owner, &mut flag) }, ACL_SUCCESS);
        assert_eq!(flag, u64::from(ACL_RT_MEM_ACCESS_FLAGS_READWRITE));
        let rw = ACL_RT_MEM_ACCESS_FLAGS_READWRITE;
        // Setting the owner again with the same type is fine.
        assert_eq!(set_access(base, GRANULE, &mut [access(owner, rw)]), ACL_SUCCESS);
        assert_eq!((unmap(base), release(base), free_physical(handle)), (0, 0, 0));
    });
}

#[test]
fn granularity_by_memory_attribute() {
    on_device(|| {
        let query = |mut prop: aclrtPhysicalMemProp, option| {
            let mut value = 0;
            // SAFETY: valid pointers.
            match unsafe { aclrtMemGetAllocationGranularity(&mut prop, option, &mut value) } {
                ACL_SUCCESS => Ok(value),
                code => Err(code),
            }
        };
        let device = ACL_MEM_LOCATION_TYPE_DEVICE;
        for option in [
            ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM,
            ACL_RT_MEM_ALLOC_GRANULARITY_RECOMMENDED,
        ] {
            assert_eq!(query(prop(ACL_MEM_HUGE, device, 0), option), Ok(GRANULE));
            assert_eq!(query(prop(ACL_HBM_MEM_NORMAL, device, 0), option), Ok(GRANULE));
            assert_eq!(query(prop(ACL_MEM_HUGE1G, device, 0), option), Ok(1 << 30));
            assert_eq!(query(prop(ACL_MEM_P2P_HUGE1G, device, 0), option), Ok(1 << 30));
            assert_eq!(
                query(prop(ACL_DDR_MEM_NORMAL, ACL_MEM_LOCATION_TYPE_HOST, 0), option),
                Ok(GRANULE)
            );
        }
        assert_eq!(
            query(prop(ACL_MEM_HUGE, device, 0), ACL_RT_MEM_ALLOC_GRANULARITY_UNDEF),
            Err(ACL_ERROR_RT_PARAM_INVALID)
        );
        assert_eq!(
            query(prop(ACL_DDR_MEM_HUGE, device, 0), 0),
            Err(ACL_ERROR_INVALID_PARAM)
        );
        assert_eq!(
            query(prop(ACL_MEM_HUGE, device, 9), 0),
            Err(ACL_ERROR_RT_INVALID_DEVICEID)
        );
        let mut value = 0;
        // SAFETY: NULL is refused first.
        unsafe {
            assert_eq!(
                aclrtMemGetAllocationGranularity(null_mut(), 0, &mut value),
                ACL_ERROR_INVALID_PARAM
            );
        }
    });
}

#[test]
fn giant_pages_use_one_gib_granularity() {
    on_device(|| {
        let giant = prop(ACL_MEM_HUGE1G, ACL_MEM_LOCATION_TYPE_DEVICE, 0);
        assert_eq!(physical_with(GRANULE, &giant), Err(ACL_ERROR_RT_PARAM_INVALID));
        let handle = physical_with(1 << 30, &giant).unwrap();
        let base = reserve(1 << 30);
        assert_eq!(base as usize % (1 << 30), 0, "large ranges are 1 GiB aligned");
        assert_eq!(map(base, 1 << 30, handle), ACL_SUCCESS);
        assert_eq!(write(at(base, (1 << 30) - 8), &[3; 8]), ACL_SUCCESS);
        assert_eq!(read(at(base, (1 << 30) - 8), 8).unwrap(), vec![3; 8]);
        assert_eq!((unmap(base), release(base), free_physical(handle)), (0, 0, 0));
    });
}

#[test]
fn retained_handles_are_counted() {
    on_device(|| {
        let handle = physical(GRANULE);
        let base = reserve(GRANULE);
        assert_eq!(map(base, GRANULE, handle), ACL_SUCCESS);
        let mut retained = null_mut();
        // SAFETY: valid pointers, or NULL (refused first).
        unsafe {
            assert_eq!(
                aclrtMemRetainAllocationHandle(null_mut(), &mut retained),
                ACL_ERROR_INVALID_PARAM
            );
            let mut local = 0u8;
            assert_eq!(
                aclrtMemRetainAllocationHandle((&raw mut local).cast(), &mut retained),
                ACL_ERROR_RT_PARAM_INVALID
            );
            // Any address inside the mapping works.
            assert_eq!(
                aclrtMemRetainAllocationHandle(at(base, 12345), &mut retained),
                ACL_SUCCESS
            );
        }
        assert_eq!(retained, handle);
        assert_eq!(free_physical(handle), ACL_SUCCESS);
        assert_eq!(unmap(base), ACL_SUCCESS);
        // One reference is left (the retain): the handle still maps.
        assert_eq!(map(base, GRANULE, retained), ACL_SUCCESS);
        assert_eq!(unmap(base), ACL_SUCCESS);
        assert_eq!(free_physical(retained), ACL_SUCCESS);
        assert_eq!(free_physical(retained), ACL_ERROR_RT_INVALID_HANDLE);
        assert_eq!(release(base), ACL_SUCCESS);
    });
}

#[test]
fn properties_from_handle_rules() {
    on_device(|| {
        let handle = physical_with(GRANULE, &prop(ACL_MEM_NORMAL, ACL_MEM_LOCATION_TYPE_DEVICE, 1)).unwrap();
        let mut out = aclrtPhysicalMemProp::default();
        // SAFETY: valid pointers, or NULL (refused first).
        unsafe {
            assert_eq!(
                aclrtMemGetAllocationPropertiesFromHandle(null_mut(), &mut out),
                ACL_ERROR_INVALID_PARAM
            );
            assert_eq!(
                aclrtMemGetAllocationPropertiesFromHandle(handle, null_mut()),
                ACL_ERROR_INVALID_PARAM
            );
            assert_eq!(aclrtMemGetAllocationPropertiesFromHandle(handle, &mut out), ACL_SUCCESS);
        }
        assert_eq!(
            out.memAttr, ACL_HBM_MEM_NORMAL,
            "device ACL_MEM_NORMAL reads back as ACL_HBM_MEM_NORMAL"
        );
        assert_eq!((out.location.type_, out.location.id), (ACL_MEM_LOCATION_TYPE_DEVICE, 1));
        assert_eq!(
            (out.handleType, out.allocationType),
            (ACL_MEM_HANDLE_TYPE_NONE, ACL_MEM_ALLOCATION_TYPE_PINNED)
        );
        assert_eq!(free_physical(handle), ACL_SUCCESS);
        // SAFETY: a stale handle is validated, not dereferenced.
        assert_eq!(
            unsafe { aclrtMemGetAllocationPropertiesFromHandle(handle, &mut out) },
            ACL_ERROR_RT_INVALID_HANDLE
        );
    });
}

#[test]
fn address_range_of_every_kind_of_memory() {
    on_device(|| {
        let range = |ptr: *mut c_void| {
            let (mut base, mut size) = (null_mut(), 0);
            // SAFETY: valid out-pointers.
            match unsafe { aclrtMemGetAddressRange(ptr, &mut base, &mut size) } {
                ACL_SUCCESS => Ok((base as usize, size)),
                code => Err(code),
            }
        };
        let mut device = null_mut();
        let mut host = null_mut();
        // SAFETY: valid out-pointers.
        unsafe {
            assert_eq!(aclrtMalloc(&mut device, 1000, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
            assert_eq!(aclrtMallocHost(&mut host, 5000), ACL_SUCCESS);
        }
        // Interior pointers; sizes rounded to whole pages as the driver reports.
        assert_eq!(range(at(device, 999)), Ok((device as usize, 4096)));
        assert_eq!(range(at(host, 10)), Ok((host as usize, 8192)));
        let handle = physical(GRANULE);
        let base = reserve(2 * GRANULE);
        assert_eq!(map(at(base, GRANULE), GRANULE, handle), ACL_SUCCESS);
        assert_eq!(range(at(base, GRANULE + 77)), Ok((base as usize + GRANULE, GRANULE)));
        assert_eq!(range(base), Err(ACL_ERROR_RT_PARAM_INVALID), "reserved but unmapped");
        // SAFETY: NULL out-pointers and NULL ptr are refused.
        unsafe {
            assert_eq!(
                aclrtMemGetAddressRange(null_mut(), null_mut(), null_mut()),
                ACL_ERROR_INVALID_PARAM
            );
            assert_eq!(
                aclrtMemGetAddressRange(device, null_mut(), null_mut()),
                ACL_ERROR_RT_PARAM_INVALID
            );
            let mut size = 0;
            assert_eq!(aclrtMemGetAddressRange(device, null_mut(), &mut size), ACL_SUCCESS);
            assert_eq!(size, 4096);
            assert_eq!(aclrtFree(device), ACL_SUCCESS);
            assert_eq!(aclrtFreeHost(host), ACL_SUCCESS);
        }
        assert_eq!(
            (unmap(at(base, GRANULE)), release(base), free_physical(handle)),
            (0, 0, 0)
        );
    });
}

#[test]
fn copies_span_adjacent_mappings_of_one_reservation() {
    on_device(|| {
        let handles = [physical(GRANULE), physical(GRANULE), physical(GRANULE)];
        let base = reserve(3 * GRANULE);
        for (index, handle) in handles.iter().enumerate() {
            assert_eq!(map(at(base, index * GRANULE), GRANULE, *handle), ACL_SUCCESS);
        }
        // Write across both boundaries in one call.
        let start = GRANULE - 1000;
        let data: Vec<u8> = (0..GRANULE + 2000).map(|i| (i * 31 % 256) as u8).collect();
        assert_eq!(write(at(base, start), &data), ACL_SUCCESS);
        assert_eq!(read(at(base, start), data.len()).unwrap(), data);
        // Each physical allocation holds its own part: remap the middle one
        // alone and look.
        let alone = reserve(GRANULE);
        assert_eq!(map(alone, GRANULE, handles[1]), ACL_SUCCESS);
        assert_eq!(read(alone, 1000).unwrap(), &data[1000..2000]);
        // A memset across the boundaries too.
        // SAFETY: the device range is validated.
        assert_eq!(unsafe { aclrtMemset(at(base, start), 4000, 0xEE, 4000) }, ACL_SUCCESS);
        assert_eq!(read(at(base, GRANULE - 1), 2).unwrap(), vec![0xEE, 0xEE]);
        // A hole in the middle stops a copy across it.
        assert_eq!(unmap(at(base, GRANULE)), ACL_SUCCESS);
        assert_eq!(read(at(base, start), data.len()), Err(ACL_ERROR_RT_PARAM_INVALID));
        assert!(recent().contains("reserved but not mapped"));
        assert_eq!((unmap(base), unmap(at(base, 2 * GRANULE)), unmap(alone)), (0, 0, 0));
        assert_eq!((release(base), release(alone)), (0, 0));
        for handle in handles {
            assert_eq!(free_physical(handle), ACL_SUCCESS);
        }
    });
}

#[test]
fn features_of_other_chips_report_not_supported() {
    on_device(|| {
        let mut base = null_mut();
        // SAFETY: valid out-pointer; the other calls are refused before use.
        unsafe {
            assert_eq!(
                aclrtReserveMemAddressNoUCMemory(&mut base, 1 << 30, 0, null_mut(), 0),
                ACL_ERROR_RT_FEATURE_NOT_SUPPORT
            );
            let mut a = 0u8;
            let mut b = 0u8;
            let (pa, pb) = ((&raw mut a).cast(), (&raw mut b).cast());
            assert_eq!(aclrtMemMapSelectedLink(pa, 64, pb, 5), ACL_ERROR_INVALID_PARAM);
            assert_eq!(
                aclrtMemMapSelectedLink(pa, 64, pb, ACL_RT_MEM_LINK_IDX_1),
                ACL_ERROR_RT_FEATURE_NOT_SUPPORT
            );
            assert_eq!(aclrtMemMapSetLink(null_mut(), 0), ACL_ERROR_INVALID_PARAM);
        }
    });
}

// ---- which layer checks a property (acl-behaviour.md §7) --------------------

/// `aclrtMemGetAllocationGranularity` for `prop`, or the code.
fn granularity_of(mut prop: aclrtPhysicalMemProp) -> Result<usize, aclError> {
    let mut value = 0;
    // SAFETY: valid pointers.
    match unsafe { aclrtMemGetAllocationGranularity(&mut prop, ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM, &mut value) } {
        ACL_SUCCESS => Ok(value),
        code => Err(code),
    }
}

/// §7 granularity #2: "handleType ... not validated above the driver" —
/// POSIX is refused by `aclrtMallocPhysical`'s ACL layer only.
#[test]
fn granularity_does_not_check_the_handle_type() {
    on_device(|| {
        let mut posix = device_prop(0);
        posix.handleType = ACL_MEM_HANDLE_TYPE_POSIX;
        assert_eq!(granularity_of(posix), Ok(GRANULE));
        assert_eq!(physical_with(GRANULE, &posix), Err(ACL_ERROR_INVALID_PARAM));
    });
}

/// §7 granularity #2: "allocationType ... not validated above the driver".
#[test]
fn granularity_does_not_check_the_allocation_type() {
    on_device(|| {
        let mut other = device_prop(0);
        other.allocationType = 1;
        assert_eq!(granularity_of(other), Ok(GRANULE));
        assert_eq!(physical_with(GRANULE, &other), Err(ACL_ERROR_INVALID_PARAM));
    });
}

/// §7 granularity #2: "location.type ... not validated above the driver";
/// the driver's answer for MANAGED / UNREGISTERED is not visible: 107000
/// (docs/runtime-choices.md), never the ACL layer's 100000.
#[test]
fn granularity_leaves_the_location_type_to_the_driver() {
    on_device(|| {
        for location in [ACL_MEM_LOCATION_TYPE_MANAGED, ACL_MEM_LOCATION_TYPE_UNREGISTERED, 7] {
            assert_eq!(
                granularity_of(prop(ACL_MEM_HUGE, location, 0)),
                Err(ACL_ERROR_RT_PARAM_INVALID),
                "location type {location}"
            );
            assert!(recent().contains("driver"), "{}", recent());
        }
        // aclrtMallocPhysical's ACL layer refuses exactly UNREGISTERED and
        // MANAGED (§7 aclrtMallocPhysical #2); other unknown types reach the
        // driver as for the granularity query.
        for location in [ACL_MEM_LOCATION_TYPE_MANAGED, ACL_MEM_LOCATION_TYPE_UNREGISTERED] {
            assert_eq!(
                physical_with(GRANULE, &prop(ACL_MEM_HUGE, location, 0)),
                Err(ACL_ERROR_INVALID_PARAM)
            );
        }
        assert_eq!(
            physical_with(GRANULE, &prop(ACL_MEM_HUGE, 7, 0)),
            Err(ACL_ERROR_RT_PARAM_INVALID)
        );
    });
}

/// §7 granularity #1 and the memAttr table: what the ACL layer of the
/// granularity query does check (NULL pointers, DEVICE + DDR, attributes
/// without a handler), then #3 the device id.
#[test]
fn granularity_checks_what_the_acl_layer_checks() {
    on_device(|| {
        let device = ACL_MEM_LOCATION_TYPE_DEVICE;
        for attr in [
            ACL_DDR_MEM,
            ACL_HBM_MEM,
            ACL_HBM_MEM_P2P_HUGE,
            ACL_HBM_MEM_P2P_NORMAL,
            99,
        ] {
            assert_eq!(granularity_of(prop(attr, device, 0)), Err(ACL_ERROR_INVALID_PARAM));
            assert_eq!(
                granularity_of(prop(attr, ACL_MEM_LOCATION_TYPE_HOST, 0)),
                Err(ACL_ERROR_INVALID_PARAM)
            );
        }
        for ddr in [
            ACL_DDR_MEM_HUGE,
            ACL_DDR_MEM_NORMAL,
            ACL_DDR_MEM_P2P_HUGE,
            ACL_DDR_MEM_P2P_NORMAL,
        ] {
            assert_eq!(granularity_of(prop(ddr, device, 0)), Err(ACL_ERROR_INVALID_PARAM));
            assert_eq!(granularity_of(prop(ddr, ACL_MEM_LOCATION_TYPE_HOST, 0)), Ok(GRANULE));
        }
        assert_eq!(
            granularity_of(prop(ACL_MEM_HUGE, device, 9)),
            Err(ACL_ERROR_RT_INVALID_DEVICEID)
        );
        let mut value = 0;
        // SAFETY: NULL is refused first.
        unsafe {
            assert_eq!(
                aclrtMemGetAllocationGranularity(&mut device_prop(0), 0, null_mut()),
                ACL_ERROR_INVALID_PARAM
            );
            assert_eq!(
                aclrtMemGetAllocationGranularity(null_mut(), 0, &mut value),
                ACL_ERROR_INVALID_PARAM
            );
        }
    });
}

/// §7 memAttr table (`ACL_MEM_HUGE1G` at a host location is 1 GiB DDR
/// pages, and the ACL layer accepts it) and §7 aclrtMallocPhysical #5 (the
/// refusal is the runtime's/driver's 207000, never 100000): the software
/// device's chip has 1 GiB pages in device memory only
/// (docs/runtime-choices.md).
#[test]
fn host_giant_pages_pass_the_acl_layer_of_malloc_physical() {
    on_device(|| {
        for attr in [ACL_MEM_HUGE1G, ACL_MEM_P2P_HUGE1G] {
            assert_eq!(
                physical_with(1 << 30, &prop(attr, ACL_MEM_LOCATION_TYPE_HOST, 0)),
                Err(ACL_ERROR_RT_FEATURE_NOT_SUPPORT),
                "memAttr {attr}"
            );
            assert!(recent().contains("device memory only"), "{}", recent());
            assert_eq!(
                physical_with(1 << 30, &prop(attr, ACL_MEM_LOCATION_TYPE_HOST_NUMA, 0)),
                Err(ACL_ERROR_RT_FEATURE_NOT_SUPPORT)
            );
        }
        // The same attribute on the device is served.
        let handle = physical_with(1 << 30, &prop(ACL_MEM_HUGE1G, ACL_MEM_LOCATION_TYPE_DEVICE, 0)).unwrap();
        assert_eq!(free_physical(handle), ACL_SUCCESS);
    });
}

/// §7 memAttr table ("HBM regardless of location": the HBM handler ignores
/// the location) and §7 aclrtMallocPhysical #5: `ACL_HBM_MEM_HUGE1G` at a
/// host location is a 1 GiB request the driver refuses, 207000.
#[test]
fn host_hbm_giant_pages_pass_the_acl_layer_of_malloc_physical() {
    on_device(|| {
        let host_hbm = prop(ACL_HBM_MEM_HUGE1G, ACL_MEM_LOCATION_TYPE_HOST, 0);
        assert_eq!(physical_with(1 << 30, &host_hbm), Err(ACL_ERROR_RT_FEATURE_NOT_SUPPORT));
        // Smaller HBM pages at a host location are served as host memory.
        let host_huge = prop(ACL_HBM_MEM_HUGE, ACL_MEM_LOCATION_TYPE_HOST, 0);
        let handle = physical_with(GRANULE, &host_huge).unwrap();
        assert_eq!(free_physical(handle), ACL_SUCCESS);
    });
}

/// §7 granularity #1/#2 (the memAttr table accepts `ACL_MEM_HUGE1G` and
/// `ACL_HBM_MEM_HUGE1G` at a host location) and #4 (the numbers are the
/// driver's): the same 207000 as `aclrtMallocPhysical`, never 100000.
#[test]
fn host_giant_pages_pass_the_acl_layer_of_the_granularity_query() {
    on_device(|| {
        for attr in [ACL_MEM_HUGE1G, ACL_MEM_P2P_HUGE1G, ACL_HBM_MEM_HUGE1G] {
            for location in [ACL_MEM_LOCATION_TYPE_HOST, ACL_MEM_LOCATION_TYPE_HOST_NUMA] {
                assert_eq!(
                    granularity_of(prop(attr, location, 0)),
                    Err(ACL_ERROR_RT_FEATURE_NOT_SUPPORT),
                    "memAttr {attr} at location type {location}"
                );
            }
            assert_eq!(granularity_of(prop(attr, ACL_MEM_LOCATION_TYPE_DEVICE, 0)), Ok(1 << 30));
        }
    });
}

/// §3 ("aclrtMallocPhysical with HOST_NUMA location" needs a context) comes
/// before the driver's 1 GiB refusal (§7 aclrtMallocPhysical #4 before #5).
#[test]
fn host_numa_giant_pages_need_a_context_first() {
    soft_common::without_device(|| {
        let numa = prop(ACL_MEM_HUGE1G, ACL_MEM_LOCATION_TYPE_HOST_NUMA, 0);
        assert_eq!(physical_with(1 << 30, &numa), Err(ACL_ERROR_RT_CONTEXT_NULL));
        // The granularity query needs none: the driver answers.
        assert_eq!(granularity_of(numa), Err(ACL_ERROR_RT_FEATURE_NOT_SUPPORT));
    });
}

/// Writes `byte` over a fresh `size`-byte physical allocation through a
/// mapping, then (after `before_free`) unmaps and frees it.
fn fill_and_free(size: usize, byte: u8, before_free: impl FnOnce(aclrtDrvMemHandle)) {
    let handle = physical(size);
    let base = reserve(size);
    assert_eq!(map(base, size, handle), ACL_SUCCESS);
    assert_eq!(write(base, &vec![byte; size]), ACL_SUCCESS);
    before_free(handle);
    assert_eq!(unmap(base), ACL_SUCCESS);
    assert_eq!(release(base), ACL_SUCCESS);
    assert_eq!(free_physical(handle), ACL_SUCCESS);
}

/// The bytes of a fresh `size`-byte physical allocation, read through a
/// mapping (freed again before returning).
fn fresh_contents(size: usize) -> Vec<u8> {
    let handle = physical(size);
    let base = reserve(size);
    assert_eq!(map(base, size, handle), ACL_SUCCESS);
    // Reads memory nothing wrote, on purpose (what fresh memory holds is
    // what the callers check): the sanitizer, when on, reports it.
    let watch = soft::MisuseWatch::start();
    let bytes = read(base, size).unwrap();
    if soft::sanitizer_checks().contains(soft::Checks::INIT) {
        let expected = format!(
            "uninitialized read: aclrtMemcpy on the host reads {:#x}..",
            base as usize
        );
        assert!(
            watch
                .seen()
                .iter()
                .any(|misuse| misuse.description.starts_with(&expected)),
            "the sanitizer did not report the read of fresh memory: {:#?}",
            watch.seen()
        );
    }
    drop(watch);
    assert_eq!(unmap(base), ACL_SUCCESS);
    assert_eq!(release(base), ACL_SUCCESS);
    assert_eq!(free_physical(handle), ACL_SUCCESS);
    bytes
}

// Software device only (its page pool): freed physical memory is taken
// back by the next allocation of its size. Its contents are not
// initialised: debug builds fill it with 0xA5, release builds leave the
// last user's bytes. (Sizes no other test of this file uses.)
#[test]
fn freed_physical_memory_is_reused_and_poisoned_in_debug_builds() {
    on_device(|| {
        let size = 7 * GRANULE;
        fill_and_free(size, 0x11, |_| {});
        let expected = if cfg!(debug_assertions) { 0xA5 } else { 0x11 };
        let bytes = fresh_contents(size);
        assert!(
            bytes.iter().all(|&byte| byte == expected),
            "reused, not fresh (fresh reads 0)"
        );
    });
}

// Software device only: memory ever exported is never reused (another
// process may still map it); the next allocation is fresh, zeroed memory.
#[test]
fn exported_physical_memory_is_not_reused() {
    on_device(|| {
        let size = 9 * GRANULE;
        fill_and_free(size, 0x22, |handle| {
            let mut shareable = 0u64;
            // SAFETY: a live handle and a valid out-pointer.
            let code = unsafe { aclrtMemExportToShareableHandle(handle, ACL_MEM_HANDLE_TYPE_NONE, 0, &mut shareable) };
            assert_eq!(code, ACL_SUCCESS, "{}", recent());
        });
        assert!(fresh_contents(size).iter().all(|&byte| byte == 0));
    });
}

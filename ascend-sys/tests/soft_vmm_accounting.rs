//! VMM resources in the software device's accounting: device capacity and
//! live counts. Software device only; a file of its own so that no other
//! test changes the counts meanwhile.

use ascend_sys::*;
use std::ptr::null_mut;

#[test]
fn physical_memory_counts_against_capacity_and_leaks_are_reported() {
    select_backend(BackendRequest::Software).unwrap();
    let granule = 2 << 20;
    // SAFETY: every out-pointer is valid; handles come from the runtime.
    unsafe {
        assert_eq!(aclrtSetDevice(0), ACL_SUCCESS);
        let (mut free, mut total) = (0, 0);
        assert_eq!(aclrtGetMemInfo(ACL_HBM_MEM, &mut free, &mut total), ACL_SUCCESS);
        let before = (free, soft::live());
        let prop = aclrtPhysicalMemProp {
            handleType: ACL_MEM_HANDLE_TYPE_NONE,
            allocationType: ACL_MEM_ALLOCATION_TYPE_PINNED,
            memAttr: ACL_MEM_HUGE,
            location: aclrtMemLocation {
                id: 0,
                type_: ACL_MEM_LOCATION_TYPE_DEVICE,
            },
            reserve: 0,
        };
        let mut handle = null_mut();
        let mut base = null_mut();
        assert_eq!(aclrtMallocPhysical(&mut handle, 2 * granule, &prop, 0), ACL_SUCCESS);
        assert_eq!(
            aclrtReserveMemAddress(&mut base, 4 * granule, 0, null_mut(), 0),
            ACL_SUCCESS
        );
        assert_eq!(aclrtMapMem(base, 2 * granule, 0, handle, 0), ACL_SUCCESS);
        assert_eq!(aclrtGetMemInfo(ACL_HBM_MEM, &mut free, &mut total), ACL_SUCCESS);
        assert_eq!(before.0 - free, 2 * granule);
        let live = soft::live();
        assert_eq!(live.physical_allocations, before.1.physical_allocations + 1);
        assert_eq!(live.physical_bytes, before.1.physical_bytes + 2 * granule as u64);
        assert_eq!(
            (live.reservations, live.mappings),
            (before.1.reservations + 1, before.1.mappings + 1)
        );
        let report = soft::leak_report();
        assert!(
            report.contains("reserved range") && report.contains("1 mapping(s)"),
            "{report}"
        );
        // Freed while mapped: still counted until unmapped.
        assert_eq!(aclrtFreePhysical(handle), ACL_SUCCESS);
        assert_eq!(soft::live().physical_allocations, before.1.physical_allocations + 1);
        assert_eq!(aclrtUnmapMem(base), ACL_SUCCESS);
        assert_eq!(aclrtReleaseMemAddress(base), ACL_SUCCESS);
        assert_eq!(aclrtGetMemInfo(ACL_HBM_MEM, &mut free, &mut total), ACL_SUCCESS);
        assert_eq!(free, before.0);
        assert_eq!(soft::live(), before.1);
        assert_eq!(aclrtResetDevice(0), ACL_SUCCESS);
    }
}

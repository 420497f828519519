//! A failed unmap keeps the mapping's place taken in its range.
//! Software device only (fault injection); a file of its own because
//! injected faults are process-wide.

mod common;

use ascend::Error;
use ascend::sys::{self, soft};
use ascend::vmm::{Granularity, PhysicalAlloc, PhysicalMemProp, VirtualRange};
use common::{device, on_software};

#[test]
fn a_failed_unmap_keeps_the_range_slot_taken() {
    if !on_software() {
        return;
    }
    let prop = PhysicalMemProp::device(&device());
    let granule = prop.granularity(Granularity::Minimum).unwrap();
    let range = VirtualRange::reserve(granule).unwrap();
    let physical = PhysicalAlloc::new(&prop, granule).unwrap();
    let region = range.map(0, &physical).unwrap();
    let address = region.address();
    soft::inject_fault("aclrtUnmapMem", 1, sys::ACL_ERROR_RT_INTERNAL_ERROR).unwrap();
    let failed = region.unmap();
    assert!(
        matches!(
            failed,
            Err(Error::Acl {
                api: "aclrtUnmapMem",
                ..
            })
        ),
        "{failed:?}"
    );
    // The runtime still maps it, and the range still says so.
    assert!(matches!(range.map(0, &physical), Err(Error::InvalidArgument { .. })));
    // Clean up through the raw call so the test leaves nothing behind.
    // SAFETY: the start of the mapping the failed unmap left.
    assert_eq!(unsafe { sys::aclrtUnmapMem(address) }, sys::ACL_SUCCESS);
}

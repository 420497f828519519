//! Failed VMM calls leave the safe layer's bookkeeping right: a failed
//! unmap keeps the mapping's place in its range and keeps the memory marked
//! as mapped; a failed map marks nothing. Software device only (fault
//! injection); a file of its own because injected faults are process-wide.

mod common;

use ascend::Error;
use ascend::sys::{self, soft};
use ascend::vmm::{Granularity, PhysicalAlloc, PhysicalMemProp, VirtualRange};
use common::{device, on_software};
use std::sync::{Mutex, MutexGuard};

/// Injected faults are process-wide: one test at a time.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn granule() -> (PhysicalMemProp, usize) {
    let prop = PhysicalMemProp::device(&device());
    let granule = prop.granularity(Granularity::Minimum).unwrap();
    (prop, granule)
}

#[test]
fn a_failed_unmap_keeps_the_range_slot_and_the_memory_taken() {
    if !on_software() {
        return;
    }
    let _serial = serial();
    let (prop, granule) = granule();
    let range = VirtualRange::reserve(granule).unwrap();
    let elsewhere = VirtualRange::reserve(granule).unwrap();
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
    // The memory may still be mapped, so no second view of it is made.
    let second = elsewhere.map(0, &physical);
    assert!(
        matches!(&second, Err(Error::InvalidArgument { reason, .. }) if reason.contains("already mapped")),
        "{second:?}"
    );
    // Clean up through the raw call so the test leaves nothing behind.
    // SAFETY: the start of the mapping the failed unmap left.
    assert_eq!(unsafe { sys::aclrtUnmapMem(address) }, sys::ACL_SUCCESS);
}

#[test]
fn a_failed_map_does_not_keep_the_memory_mapped() {
    if !on_software() {
        return;
    }
    let _serial = serial();
    let (prop, granule) = granule();
    let physical = PhysicalAlloc::new(&prop, granule).unwrap();
    let range = VirtualRange::reserve(granule).unwrap();
    soft::inject_fault("aclrtMapMem", 1, sys::ACL_ERROR_RT_INTERNAL_ERROR).unwrap();
    let failed = range.map(0, &physical);
    assert!(
        matches!(failed, Err(Error::Acl { api: "aclrtMapMem", .. })),
        "{failed:?}"
    );
    drop(range.map(0, &physical).unwrap());
}

//! Dropping VMM owners in any legal order leaves nothing behind.
//! Software device only (the counts come from its introspection); a file of
//! its own so no other test changes the counts meanwhile.

mod common;

use ascend::sys::soft;
use ascend::vmm::{Granularity, PhysicalAlloc, PhysicalMemProp, VirtualRange};
use common::{device, on_software};

#[test]
fn every_drop_order_releases_everything() {
    if !on_software() {
        return;
    }
    let prop = PhysicalMemProp::device(&device());
    let granule = prop.granularity(Granularity::Minimum).unwrap();
    let before = soft::live();
    for order in 0..3 {
        let range = VirtualRange::reserve(2 * granule).unwrap();
        let a = PhysicalAlloc::new(&prop, granule).unwrap();
        let b = PhysicalAlloc::new(&prop, granule).unwrap();
        let ra = range.map(0, &a).unwrap();
        let rb = range.map(granule, &b).unwrap();
        let live = soft::live();
        assert_eq!(live.mappings, before.mappings + 2);
        assert_eq!(live.physical_allocations, before.physical_allocations + 2);
        match order {
            0 => drop((ra, rb)),
            1 => {
                drop(rb);
                drop(ra);
            }
            _ => {
                rb.unmap().unwrap();
                ra.unmap().unwrap();
            }
        }
        drop((a, b));
        drop(range);
        assert_eq!(soft::live(), before, "order {order} leaked: {}", soft::leak_report());
    }
}

//! The safe VMM layer: lifecycle, data, and the rules checked in Rust.

mod common;

use ascend::Error;
use ascend::vmm::{
    Access, AccessDesc, Granularity, MemAttr, MemLocation, PhysicalAlloc, PhysicalMemProp, VirtualRange,
};
use common::{device, software_only};

fn granule() -> (PhysicalMemProp, usize) {
    let prop = PhysicalMemProp::device(&device());
    let granule = prop.granularity(Granularity::Minimum).unwrap();
    (prop, granule)
}

fn is_invalid_argument<T: std::fmt::Debug>(result: ascend::Result<T>) -> bool {
    matches!(result, Err(Error::InvalidArgument { .. }))
}

/// Issue 10, finding 3: two mappings of one physical allocation gave two
/// exclusive views of the same bytes. A second mapping is refused while the
/// first lives; after it is unmapped the memory maps elsewhere, data intact.
#[test]
fn one_physical_allocation_is_mapped_once_at_a_time() {
    let (prop, granule) = granule();
    let physical = PhysicalAlloc::new(&prop, granule).unwrap();
    let a = VirtualRange::reserve(granule).unwrap();
    let b = VirtualRange::reserve(2 * granule).unwrap();
    let mut first = a.map(0, &physical).unwrap();
    let data: Vec<u64> = (0..(granule / 8) as u64).collect();
    first.as_mut_slice::<u64>().unwrap().write_from_host(&data).unwrap();
    let refused = b.map(0, &physical);
    assert!(
        matches!(&refused, Err(Error::InvalidArgument { reason, .. }) if reason.contains("already mapped")),
        "{refused:?}"
    );
    assert!(
        is_invalid_argument(b.map_no_access(granule, &physical)),
        "no-access second mapping"
    );
    // The refusals left nothing behind: the other range is still free.
    let other = PhysicalAlloc::new(&prop, granule).unwrap();
    drop(b.map(0, &other).unwrap());
    first.unmap().unwrap();
    let second = b.map(granule, &physical).unwrap();
    assert_eq!(second.as_slice::<u64>().unwrap().to_vec().unwrap(), data);
}

/// Issue 10, finding 3: a handle retained from a mapping is the same memory,
/// so it cannot be mapped while that mapping lives.
#[test]
fn a_retained_handle_is_not_a_second_mapping() {
    let (prop, granule) = granule();
    let physical = PhysicalAlloc::new(&prop, granule).unwrap();
    let range = VirtualRange::reserve(2 * granule).unwrap();
    let region = range.map(0, &physical).unwrap();
    let retained = region.retain_physical().unwrap();
    assert!(
        is_invalid_argument(range.map(granule, &retained)),
        "retained handle mapped twice"
    );
    let again = region.retain_physical().unwrap();
    region.unmap().unwrap();
    // One mapping, through any of the three owners.
    let through_retained = range.map(granule, &retained).unwrap();
    assert!(is_invalid_argument(range.map(0, &again)));
    assert!(is_invalid_argument(range.map(0, &physical)));
    drop(through_retained);
    drop(range.map(0, &again).unwrap());
}

#[test]
fn mapping_rules_are_checked_before_any_call() {
    let (prop, granule) = granule();
    let physical = PhysicalAlloc::new(&prop, granule).unwrap();
    let range = VirtualRange::reserve(2 * granule).unwrap();
    assert!(is_invalid_argument(range.map(4096, &physical)), "misaligned offset");
    assert!(is_invalid_argument(range.map(2 * granule, &physical)), "past the end");
    assert!(
        is_invalid_argument(range.map(usize::MAX - granule + 1, &physical)),
        "overflow"
    );
    let region = range.map(granule, &physical).unwrap();
    assert!(is_invalid_argument(range.map(granule, &physical)), "overlap");
    drop(region);
    // Unmapped: the same place can be mapped again.
    let again = range.map(granule, &physical).unwrap();
    assert_eq!(again.offset(), granule);
}

#[test]
fn sizes_must_be_whole_granules() {
    let (prop, granule) = granule();
    assert!(is_invalid_argument(PhysicalAlloc::new(&prop, 0)));
    assert!(is_invalid_argument(PhysicalAlloc::new(&prop, granule + 1)));
    assert!(is_invalid_argument(VirtualRange::reserve(0)));
    assert_eq!(prop.round_up(granule + 1).unwrap(), 2 * granule);
}

#[test]
fn map_without_access_needs_set_access() {
    let (prop, granule) = granule();
    let physical = PhysicalAlloc::new(&prop, granule).unwrap();
    let range = VirtualRange::reserve(granule).unwrap();
    let mut region = range.map_no_access(0, &physical).unwrap();
    assert!(!region.is_accessible());
    let refused = region.as_mut_slice::<u8>().unwrap().fill_bytes(1);
    assert!(
        matches!(refused, Err(Error::Acl { api: "aclrtMemset", .. })),
        "{refused:?}"
    );
    assert!(is_invalid_argument(region.set_access(&[])));
    let owner = MemLocation::Device(0);
    region.set_access(&[AccessDesc::read_write(owner)]).unwrap();
    assert!(region.is_accessible());
    assert_eq!(region.access(owner).unwrap(), Some(Access::ReadWrite));
    region.as_mut_slice::<u8>().unwrap().fill_bytes(1).unwrap();
    assert_eq!(
        region.as_slice::<u8>().unwrap().slice(..3).unwrap().to_vec().unwrap(),
        [1, 1, 1]
    );
}

#[test]
fn retained_physical_memory_outlives_the_original_handle() {
    let (prop, granule) = granule();
    let physical = PhysicalAlloc::new(&prop, granule).unwrap();
    let range = VirtualRange::reserve(granule).unwrap();
    let region = range.map(0, &physical).unwrap();
    region.as_slice::<u8>().unwrap();
    let retained = region.retain_physical().unwrap();
    assert_eq!(retained.size(), granule);
    assert_eq!(retained.as_raw(), physical.as_raw());
    region.unmap().unwrap();
    physical.free().unwrap();
    // Still one reference: it maps again.
    let again = range.map(0, &retained).unwrap();
    drop(again);
    retained.free().unwrap();
}

#[test]
fn reported_properties_come_from_the_runtime() {
    let (prop, granule) = granule();
    let physical = PhysicalAlloc::new(&prop.with_attr(MemAttr::NORMAL), granule).unwrap();
    let reported = physical.reported_prop().unwrap();
    assert_eq!(reported.location(), MemLocation::Device(0));
    software_only(|| assert_eq!(reported.attr(), MemAttr::from_raw(ascend::sys::ACL_HBM_MEM_NORMAL)));
}

#[test]
fn typed_views_need_whole_elements() {
    let (prop, granule) = granule();
    let physical = PhysicalAlloc::new(&prop, granule).unwrap();
    let range = VirtualRange::reserve(granule).unwrap();
    let region = range.map(0, &physical).unwrap();
    assert_eq!(region.as_slice::<u32>().unwrap().len(), granule / 4);
    assert!(is_invalid_argument(region.as_slice::<[u8; 3]>()));
    assert!(is_invalid_argument(region.as_slice::<u64>().unwrap().slice(0..granule)));
}

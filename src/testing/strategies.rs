//! `proptest` strategies for memory properties, sizes and access grants
//! that the software device (and the real runtime) accepts.

use crate::vmm::{AccessDesc, MemAttr, MemLocation, PhysicalMemProp};
use proptest::prelude::*;

/// A device id below `devices` (device 0 when `devices` is 0, so that the
/// strategy is never empty; such a device is then refused by the runtime,
/// as it should be).
///
/// ```
/// use ascend::testing::strategies::device_id;
/// use proptest::strategy::{Strategy, ValueTree};
/// use proptest::test_runner::TestRunner;
/// let mut runner = TestRunner::deterministic();
/// let id = device_id(2).new_tree(&mut runner).unwrap().current();
/// assert!((0..2).contains(&id));
/// ```
pub fn device_id(devices: u32) -> impl Strategy<Value = i32> + Clone {
    let top = i32::try_from(devices).unwrap_or(i32::MAX).max(1);
    0..top
}

/// Where physical memory can live: one of the first `devices` devices, or
/// the host. (`HostNuma` is left out: it needs a current device and a NUMA
/// node, which test machines may not have.)
///
/// ```
/// use ascend::testing::strategies::mem_location;
/// use ascend::vmm::MemLocation;
/// use proptest::prelude::*;
/// proptest!(ProptestConfig::with_cases(32), |(location in mem_location(2))| {
///     prop_assert!(matches!(location, MemLocation::Device(0 | 1) | MemLocation::Host));
/// });
/// ```
pub fn mem_location(devices: u32) -> impl Strategy<Value = MemLocation> + Clone {
    prop_oneof![
        3 => device_id(devices).prop_map(MemLocation::Device),
        1 => Just(MemLocation::Host),
    ]
}

/// The memory attributes accepted for both device and host locations and
/// served with the ordinary granularity: normal and huge pages, with or
/// without peer reachability. 1 GiB pages ([`MemAttr::GIANT`]) are left out
/// on purpose: every allocation would be a gibibyte.
///
/// ```
/// use ascend::testing::strategies::mem_attr;
/// use ascend::vmm::MemAttr;
/// use proptest::prelude::*;
/// proptest!(ProptestConfig::with_cases(16), |(attr in mem_attr())| {
///     prop_assert_ne!(attr, MemAttr::GIANT);
///     prop_assert!([MemAttr::NORMAL, MemAttr::HUGE, MemAttr::P2P_NORMAL, MemAttr::P2P_HUGE].contains(&attr));
/// });
/// ```
pub fn mem_attr() -> impl Strategy<Value = MemAttr> + Clone {
    prop_oneof![
        Just(MemAttr::NORMAL),
        Just(MemAttr::HUGE),
        Just(MemAttr::P2P_NORMAL),
        Just(MemAttr::P2P_HUGE),
    ]
}

/// Physical-memory properties `aclrtMallocPhysical` accepts: a
/// [`mem_location`] with a [`mem_attr`]. All of them share one granularity
/// (2 MiB by default on the software device), so sizes from
/// [`granule_multiple`] fit any of them.
///
/// ```
/// use ascend::testing::strategies::{granule_multiple, physical_mem_prop};
/// use ascend::vmm::{Granularity, PhysicalAlloc};
/// use ascend::Device;
/// use proptest::prelude::*;
/// let devices = Device::count()?;
/// let granule = ascend::vmm::PhysicalMemProp::device(&Device::new(0)?)
///     .granularity(Granularity::Minimum)?;
/// proptest!(ProptestConfig::with_cases(8), |(prop in physical_mem_prop(devices),
///                                           size in granule_multiple(granule, 2))| {
///     let physical = PhysicalAlloc::new(&prop, size).unwrap();
///     prop_assert_eq!(physical.size(), size);
///     prop_assert_eq!(physical.prop(), &prop);
/// });
/// # Ok::<(), ascend::Error>(())
/// ```
pub fn physical_mem_prop(devices: u32) -> impl Strategy<Value = PhysicalMemProp> + Clone {
    (mem_location(devices), mem_attr()).prop_map(|(location, attr)| PhysicalMemProp::new(location, attr))
}

/// A size of 1 to `max_granules` whole granules (`granule` bytes each),
/// shrinking towards one granule. Products that would overflow `usize` are
/// never produced (the strategy only yields sizes that fit).
///
/// ```
/// use ascend::testing::strategies::granule_multiple;
/// use proptest::prelude::*;
/// let granule = 2 << 20;
/// proptest!(ProptestConfig::with_cases(16), |(size in granule_multiple(granule, 4))| {
///     prop_assert_eq!(size % granule, 0);
///     prop_assert!((granule..=4 * granule).contains(&size));
/// });
/// ```
pub fn granule_multiple(granule: usize, max_granules: usize) -> impl Strategy<Value = usize> + Clone {
    let top = max_granules.max(1);
    (1..=top).prop_filter_map("the size overflows usize", move |count| count.checked_mul(granule))
}

/// One read-write access grant for a device below `devices` or for the
/// host, the only kind `aclrtMemSetAccess` accepts today.
///
/// ```
/// use ascend::testing::strategies::access_desc;
/// use ascend::vmm::{AccessDesc, MemLocation};
/// use proptest::prelude::*;
/// proptest!(ProptestConfig::with_cases(16), |(grant in access_desc(1))| {
///     let allowed = [MemLocation::Device(0), MemLocation::Host].map(AccessDesc::read_write);
///     prop_assert!(allowed.contains(&grant));
/// });
/// ```
pub fn access_desc(devices: u32) -> impl Strategy<Value = AccessDesc> + Clone {
    prop_oneof![
        3 => device_id(devices).prop_map(|id| AccessDesc::read_write(MemLocation::Device(id))),
        1 => Just(AccessDesc::read_write(MemLocation::Host)),
    ]
}

/// A non-empty list of up to `max` grants for distinct locations, as
/// [`MappedRegion::set_access`](crate::vmm::MappedRegion::set_access)
/// takes them.
///
/// ```
/// use ascend::testing::strategies::access_descs;
/// use proptest::prelude::*;
/// proptest!(ProptestConfig::with_cases(32), |(grants in access_descs(2, 3))| {
///     prop_assert!((1..=3).contains(&grants.len()));
///     for (i, grant) in grants.iter().enumerate() {
///         prop_assert!(grants[..i].iter().all(|earlier| earlier.location != grant.location)); // distinct
///     }
/// });
/// ```
pub fn access_descs(devices: u32, max: usize) -> impl Strategy<Value = Vec<AccessDesc>> + Clone {
    proptest::collection::vec(access_desc(devices), 1..=max.max(1)).prop_map(|mut grants| {
        let mut seen = Vec::with_capacity(grants.len());
        grants.retain(|grant| {
            let fresh = !seen.contains(&grant.location);
            seen.push(grant.location);
            fresh
        });
        grants
    })
}

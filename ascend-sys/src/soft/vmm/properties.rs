//! The granularity of each page kind, and the properties the runtime
//! reports back (the checks are in `prop_rules`; the kinds themselves are
//! leaf types in [`crate::soft::core::memory_kind`], shared with the
//! sharing family).

pub(crate) use crate::soft::core::memory_kind::{Kind, Pages, Place};
use crate::types::*;

/// The granularity of `pages`: `base` (the configured minimum, 2 MiB by
/// default) for normal and huge pages, 1 GiB for giant pages. MINIMUM and
/// RECOMMENDED are the same on the software device.
pub(crate) fn granularity(pages: Pages, base: u64) -> u64 {
    match pages {
        Pages::Giant => 1 << 30,
        Pages::Normal | Pages::Huge => base,
    }
}

/// The property `aclrtMemGetAllocationPropertiesFromHandle` reports: the
/// runtime rebuilds `memAttr` from the page and memory type, so it is not
/// the attribute given (device memory comes back as an `ACL_HBM_MEM_*`
/// attribute, host memory as an `ACL_MEM_*` one).
pub(crate) fn reported(kind: Kind) -> aclrtPhysicalMemProp {
    let (location, mem_attr) = match kind.place {
        Place::Device(id) => (
            aclrtMemLocation {
                id: id as u32,
                type_: ACL_MEM_LOCATION_TYPE_DEVICE,
            },
            match (kind.pages, kind.p2p) {
                (Pages::Normal, false) => ACL_HBM_MEM_NORMAL,
                (Pages::Huge, false) => ACL_HBM_MEM_HUGE,
                (Pages::Giant, false) => ACL_HBM_MEM_HUGE1G,
                (Pages::Normal, true) => ACL_HBM_MEM_P2P_NORMAL,
                (Pages::Huge, true) => ACL_HBM_MEM_P2P_HUGE,
                (Pages::Giant, true) => ACL_HBM_MEM_P2P_HUGE1G,
            },
        ),
        Place::Host { numa, id } => (
            aclrtMemLocation {
                id,
                type_: if numa {
                    ACL_MEM_LOCATION_TYPE_HOST_NUMA
                } else {
                    ACL_MEM_LOCATION_TYPE_HOST
                },
            },
            match (kind.pages, kind.p2p) {
                (Pages::Normal, false) => ACL_MEM_NORMAL,
                (Pages::Huge, false) => ACL_MEM_HUGE,
                (Pages::Giant, false) => ACL_MEM_HUGE1G,
                (Pages::Normal, true) => ACL_MEM_P2P_NORMAL,
                (Pages::Huge, true) => ACL_MEM_P2P_HUGE,
                (Pages::Giant, true) => ACL_MEM_P2P_HUGE1G,
            },
        ),
    };
    aclrtPhysicalMemProp {
        handleType: ACL_MEM_HANDLE_TYPE_NONE,
        allocationType: ACL_MEM_ALLOCATION_TYPE_PINNED,
        memAttr: mem_attr,
        location,
        reserve: 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reported_properties_are_not_an_identity_round_trip() {
        let device = Kind {
            place: Place::Device(0),
            pages: Pages::Normal,
            p2p: false,
        };
        assert_eq!(reported(device).memAttr, ACL_HBM_MEM_NORMAL);
        let host = Kind {
            place: Place::Host { numa: false, id: 0 },
            pages: Pages::Normal,
            p2p: false,
        };
        assert_eq!(reported(host).memAttr, ACL_MEM_NORMAL);
    }
}

//! `aclrtPhysicalMemProp` validation, page kinds and granularity.

use crate::soft::fail::{SoftResult, fail};
use crate::types::*;

/// The page size class a memory attribute asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Pages {
    /// Normal pages (served as 2 MiB huge pages on the device).
    Normal,
    /// 2 MiB huge pages.
    Huge,
    /// 1 GiB giant pages.
    Giant,
}

/// Where a physical allocation lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Place {
    /// Device memory of device `id`.
    Device(i32),
    /// Host memory (`HOST` or `HOST_NUMA` location, with its id).
    Host { numa: bool, id: u32 },
}

/// A validated property.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Kind {
    pub(crate) place: Place,
    pub(crate) pages: Pages,
    pub(crate) p2p: bool,
}

/// The page class and P2P flag of an attribute, or `None` when
/// `aclrtMallocPhysical` refuses it; `ddr_only` for the DDR attributes that
/// need a host location.
fn attribute(attr: aclrtMemAttr) -> Option<(Pages, bool, bool)> {
    Some(match attr {
        ACL_DDR_MEM_HUGE => (Pages::Huge, false, true),
        ACL_DDR_MEM_NORMAL => (Pages::Normal, false, true),
        ACL_DDR_MEM_P2P_HUGE => (Pages::Huge, true, true),
        ACL_DDR_MEM_P2P_NORMAL => (Pages::Normal, true, true),
        ACL_HBM_MEM_HUGE => (Pages::Huge, false, false),
        ACL_HBM_MEM_NORMAL => (Pages::Normal, false, false),
        ACL_HBM_MEM_HUGE1G => (Pages::Giant, false, false),
        ACL_MEM_NORMAL => (Pages::Normal, false, false),
        ACL_MEM_HUGE => (Pages::Huge, false, false),
        ACL_MEM_HUGE1G => (Pages::Giant, false, false),
        ACL_MEM_P2P_NORMAL => (Pages::Normal, true, false),
        ACL_MEM_P2P_HUGE => (Pages::Huge, true, false),
        ACL_MEM_P2P_HUGE1G => (Pages::Giant, true, false),
        _ => return None,
    })
}

/// Validates `prop` the way `aclrtMallocPhysical` does (ACL-layer checks,
/// `ACL_ERROR_INVALID_PARAM`), except the device-id range, which the caller
/// checks against the device count (`ACL_ERROR_RT_INVALID_DEVICEID`).
pub(crate) fn validate(prop: &aclrtPhysicalMemProp) -> SoftResult<Kind> {
    if prop.handleType != ACL_MEM_HANDLE_TYPE_NONE {
        return fail(
            ACL_ERROR_INVALID_PARAM,
            format!("prop->handleType {} is not ACL_MEM_HANDLE_TYPE_NONE", prop.handleType),
        );
    }
    if prop.allocationType != ACL_MEM_ALLOCATION_TYPE_PINNED {
        return fail(
            ACL_ERROR_INVALID_PARAM,
            format!(
                "prop->allocationType {} is not ACL_MEM_ALLOCATION_TYPE_PINNED",
                prop.allocationType
            ),
        );
    }
    let location = prop.location;
    let place = match location.type_ {
        ACL_MEM_LOCATION_TYPE_DEVICE => Place::Device(location.id as i32),
        ACL_MEM_LOCATION_TYPE_HOST => Place::Host {
            numa: false,
            id: location.id,
        },
        ACL_MEM_LOCATION_TYPE_HOST_NUMA => Place::Host {
            numa: true,
            id: location.id,
        },
        other => {
            return fail(
                ACL_ERROR_INVALID_PARAM,
                format!("prop->location.type {other} is not DEVICE, HOST or HOST_NUMA"),
            );
        }
    };
    let Some((pages, p2p, ddr)) = attribute(prop.memAttr) else {
        return fail(
            ACL_ERROR_INVALID_PARAM,
            format!("prop->memAttr {} is not accepted for physical memory", prop.memAttr),
        );
    };
    if ddr && matches!(place, Place::Device(_)) {
        return fail(
            ACL_ERROR_INVALID_PARAM,
            format!("prop->memAttr {} (DDR) needs a host location, not DEVICE", prop.memAttr),
        );
    }
    if pages == Pages::Giant && !matches!(place, Place::Device(_)) {
        return fail(
            ACL_ERROR_INVALID_PARAM,
            "1 GiB pages (HUGE1G attributes) exist only in device memory",
        );
    }
    Ok(Kind { place, pages, p2p })
}

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

    fn prop(attr: aclrtMemAttr, type_: aclrtMemLocationType) -> aclrtPhysicalMemProp {
        aclrtPhysicalMemProp {
            handleType: ACL_MEM_HANDLE_TYPE_NONE,
            allocationType: ACL_MEM_ALLOCATION_TYPE_PINNED,
            memAttr: attr,
            location: aclrtMemLocation { id: 0, type_ },
            reserve: 0,
        }
    }

    #[test]
    fn attribute_table_follows_the_reference() {
        let device = ACL_MEM_LOCATION_TYPE_DEVICE;
        let host = ACL_MEM_LOCATION_TYPE_HOST;
        for refused in [
            ACL_DDR_MEM,
            ACL_HBM_MEM,
            ACL_HBM_MEM_P2P_HUGE,
            ACL_HBM_MEM_P2P_NORMAL,
            ACL_HBM_MEM_P2P_HUGE1G,
            99,
        ] {
            assert!(validate(&prop(refused, device)).is_err(), "attr {refused}");
            assert!(validate(&prop(refused, host)).is_err(), "attr {refused}");
        }
        for ddr in [
            ACL_DDR_MEM_HUGE,
            ACL_DDR_MEM_NORMAL,
            ACL_DDR_MEM_P2P_HUGE,
            ACL_DDR_MEM_P2P_NORMAL,
        ] {
            assert!(validate(&prop(ddr, device)).is_err());
            assert!(validate(&prop(ddr, host)).is_ok());
        }
        assert_eq!(validate(&prop(ACL_MEM_HUGE1G, device)).unwrap().pages, Pages::Giant);
        assert!(validate(&prop(ACL_MEM_NORMAL, ACL_MEM_LOCATION_TYPE_UNREGISTERED)).is_err());
        assert!(validate(&prop(ACL_MEM_NORMAL, ACL_MEM_LOCATION_TYPE_MANAGED)).is_err());
    }

    #[test]
    fn reported_properties_are_not_an_identity_round_trip() {
        let device = validate(&prop(ACL_MEM_NORMAL, ACL_MEM_LOCATION_TYPE_DEVICE)).unwrap();
        assert_eq!(reported(device).memAttr, ACL_HBM_MEM_NORMAL);
        let host = validate(&prop(ACL_DDR_MEM_NORMAL, ACL_MEM_LOCATION_TYPE_HOST)).unwrap();
        assert_eq!(reported(host).memAttr, ACL_MEM_NORMAL);
    }
}

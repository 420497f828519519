//! The two rule sets that check an `aclrtPhysicalMemProp`, in the layers
//! the real runtime checks them (`acl-behaviour.md` §7):
//!
//! - the ACL layer, `ACL_ERROR_INVALID_PARAM` (100000): `aclrtMallocPhysical`
//!   checks the handle type, the allocation type, two location types and
//!   the memAttr table ([`acl_malloc`]); `aclrtMemGetAllocationGranularity`
//!   checks only the memAttr table ([`acl_granularity`]);
//! - the driver, which both calls reach with the same properties
//!   ([`driver_place`], [`driver_kind`]): a location it does not know
//!   (107000), and 1 GiB pages at a host location (207000) — both decided
//!   in the closed driver, so they are documented choices
//!   (`docs/runtime-choices.md`).
//!
//! The runtime's own checks between the two (device id → 107001, a current
//! context for `HOST_NUMA` → 107002) are the callers'.

use super::properties::{Kind, Pages, Place};
use crate::soft::core::soft_result::{SoftResult, fail};
use crate::types::*;

/// One row of the ACL layer's memAttr table.
struct Row {
    pages: Pages,
    p2p: bool,
    /// The `ACL_DDR_MEM_*` attributes, refused with a DEVICE location.
    ddr: bool,
}

/// The ACL layer's memAttr table: the attributes it has a handler for.
/// `ACL_DDR_MEM`, `ACL_HBM_MEM`, `ACL_HBM_MEM_P2P_*` and unknown values have
/// none.
fn row(attr: aclrtMemAttr) -> Option<Row> {
    let (pages, p2p, ddr) = match attr {
        ACL_DDR_MEM_HUGE => (Pages::Huge, false, true),
        ACL_DDR_MEM_NORMAL => (Pages::Normal, false, true),
        ACL_DDR_MEM_P2P_HUGE => (Pages::Huge, true, true),
        ACL_DDR_MEM_P2P_NORMAL => (Pages::Normal, true, true),
        // The HBM handlers ignore the location.
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
    };
    Some(Row { pages, p2p, ddr })
}

/// The page class and P2P flag the ACL layer reads from `prop`, after its
/// memAttr checks (§7 table; both calls): a DDR attribute with a DEVICE
/// location, or an attribute with no handler → `ACL_ERROR_INVALID_PARAM`.
fn acl_attribute(prop: &aclrtPhysicalMemProp) -> SoftResult<(Pages, bool)> {
    let device = prop.location.type_ == ACL_MEM_LOCATION_TYPE_DEVICE;
    let Some(row) = row(prop.memAttr) else {
        return fail(
            ACL_ERROR_INVALID_PARAM,
            format!("prop->memAttr {} is not accepted for physical memory", prop.memAttr),
        );
    };
    if row.ddr && device {
        return fail(
            ACL_ERROR_INVALID_PARAM,
            format!(
                "prop->memAttr {} (DDR) needs a HOST or HOST_NUMA location, not DEVICE",
                prop.memAttr
            ),
        );
    }
    Ok((row.pages, row.p2p))
}

/// The ACL layer of `aclrtMallocPhysical` (§7 `aclrtMallocPhysical` #2,
/// after size and flags): handle type NONE, allocation type PINNED, a
/// location other than UNREGISTERED and MANAGED, then the memAttr table.
pub(crate) fn acl_malloc(prop: &aclrtPhysicalMemProp) -> SoftResult<(Pages, bool)> {
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
    let location = prop.location.type_;
    if location == ACL_MEM_LOCATION_TYPE_UNREGISTERED || location == ACL_MEM_LOCATION_TYPE_MANAGED {
        return fail(
            ACL_ERROR_INVALID_PARAM,
            format!("prop->location.type {location} (UNREGISTERED or MANAGED) cannot hold physical memory"),
        );
    }
    acl_attribute(prop)
}

/// The ACL layer of `aclrtMemGetAllocationGranularity` (§7 granularity #1
/// and #2): only the memAttr table. The handle type, the allocation type,
/// the location type and the option are not checked there.
pub(crate) fn acl_granularity(prop: &aclrtPhysicalMemProp) -> SoftResult<(Pages, bool)> {
    acl_attribute(prop)
}

/// Where the driver is asked to put the memory. A location type other than
/// DEVICE, HOST and HOST_NUMA gets past the ACL layer of the granularity
/// query (all of them) and of `aclrtMallocPhysical` (all but UNREGISTERED
/// and MANAGED); the driver's answer is not visible, so the software device
/// refuses it as an invalid value (`ACL_ERROR_RT_PARAM_INVALID`).
pub(crate) fn driver_place(prop: &aclrtPhysicalMemProp) -> SoftResult<Place> {
    let location = prop.location;
    match location.type_ {
        ACL_MEM_LOCATION_TYPE_DEVICE => Ok(Place::Device(location.id as i32)),
        ACL_MEM_LOCATION_TYPE_HOST => Ok(Place::Host {
            numa: false,
            id: location.id,
        }),
        ACL_MEM_LOCATION_TYPE_HOST_NUMA => Ok(Place::Host {
            numa: true,
            id: location.id,
        }),
        other => fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("prop->location.type {other}: the driver has physical memory only on DEVICE, HOST or HOST_NUMA"),
        ),
    }
}

/// The driver's answer for `pages` at `place`. The emulated chip has 1 GiB
/// pages (the runtime's chip check passes), in device memory only, as the
/// documents describe them: 1 GiB pages at a host location (an
/// `ACL_MEM_*HUGE1G` attribute, or `ACL_HBM_MEM_HUGE1G`, whose handler
/// ignores the location) get the driver's "not supported",
/// `ACL_ERROR_RT_FEATURE_NOT_SUPPORT`.
pub(crate) fn driver_kind(place: Place, pages: Pages, p2p: bool) -> SoftResult<Kind> {
    if pages == Pages::Giant && matches!(place, Place::Host { .. }) {
        return fail(
            ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
            "1 GiB pages (HUGE1G attributes) at a HOST or HOST_NUMA location: the driver has 1 GiB pages in \
             device memory only",
        );
    }
    Ok(Kind { place, pages, p2p })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Pinned memory with `attr` at location 0 of `type_` (the software
    /// device's unit tests share it).
    pub(crate) fn prop(attr: aclrtMemAttr, type_: aclrtMemLocationType) -> aclrtPhysicalMemProp {
        aclrtPhysicalMemProp {
            handleType: ACL_MEM_HANDLE_TYPE_NONE,
            allocationType: ACL_MEM_ALLOCATION_TYPE_PINNED,
            memAttr: attr,
            location: aclrtMemLocation { id: 0, type_ },
            reserve: 0,
        }
    }

    fn code<T>(outcome: SoftResult<T>) -> aclError {
        outcome.map_or_else(|failure| failure.code, |_| ACL_SUCCESS)
    }

    /// §7 memAttr table: the same for both calls.
    #[test]
    fn memattr_table_follows_the_reference() {
        let device = ACL_MEM_LOCATION_TYPE_DEVICE;
        let host = ACL_MEM_LOCATION_TYPE_HOST;
        for check in [acl_malloc, acl_granularity] {
            for refused in [
                ACL_DDR_MEM,
                ACL_HBM_MEM,
                ACL_HBM_MEM_P2P_HUGE,
                ACL_HBM_MEM_P2P_NORMAL,
                ACL_HBM_MEM_P2P_HUGE1G,
                99,
            ] {
                assert_eq!(code(check(&prop(refused, device))), ACL_ERROR_INVALID_PARAM);
                assert_eq!(code(check(&prop(refused, host))), ACL_ERROR_INVALID_PARAM);
            }
            for ddr in [
                ACL_DDR_MEM_HUGE,
                ACL_DDR_MEM_NORMAL,
                ACL_DDR_MEM_P2P_HUGE,
                ACL_DDR_MEM_P2P_NORMAL,
            ] {
                assert_eq!(code(check(&prop(ddr, device))), ACL_ERROR_INVALID_PARAM);
                assert_eq!(code(check(&prop(ddr, host))), ACL_SUCCESS);
            }
            assert_eq!(check(&prop(ACL_MEM_HUGE1G, host)).ok(), Some((Pages::Giant, false)));
        }
    }

    /// §7 `aclrtMallocPhysical` #2 against §7 granularity #2.
    #[test]
    fn only_malloc_checks_types_and_locations() {
        let mut posix = prop(ACL_MEM_HUGE, ACL_MEM_LOCATION_TYPE_DEVICE);
        posix.handleType = ACL_MEM_HANDLE_TYPE_POSIX;
        let mut allocation = prop(ACL_MEM_HUGE, ACL_MEM_LOCATION_TYPE_DEVICE);
        allocation.allocationType = 1;
        let managed = prop(ACL_MEM_HUGE, ACL_MEM_LOCATION_TYPE_MANAGED);
        let unregistered = prop(ACL_MEM_HUGE, ACL_MEM_LOCATION_TYPE_UNREGISTERED);
        for refused in [posix, allocation, managed, unregistered] {
            assert_eq!(code(acl_malloc(&refused)), ACL_ERROR_INVALID_PARAM);
            assert_eq!(code(acl_granularity(&refused)), ACL_SUCCESS);
        }
    }

    #[test]
    fn the_driver_places_memory_and_keeps_giant_pages_on_the_device() {
        let managed = prop(ACL_MEM_HUGE, ACL_MEM_LOCATION_TYPE_MANAGED);
        assert_eq!(code(driver_place(&managed)), ACL_ERROR_RT_PARAM_INVALID);
        let host = Place::Host { numa: false, id: 0 };
        assert_eq!(
            code(driver_kind(host, Pages::Giant, false)),
            ACL_ERROR_RT_FEATURE_NOT_SUPPORT
        );
        assert_eq!(code(driver_kind(host, Pages::Huge, false)), ACL_SUCCESS);
        assert_eq!(
            driver_kind(Place::Device(0), Pages::Giant, true)
                .ok()
                .map(|kind| kind.pages),
            Some(Pages::Giant)
        );
    }
}

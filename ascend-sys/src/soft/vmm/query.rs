//! `aclrtMemGetAllocationGranularity`, and `aclrtMemGetAddressRange`'s
//! answer for VMM mappings.

use super::Vmm;
use super::{prop_rules, properties};
use crate::soft::core::soft_result::{SoftResult, fail};
use crate::types::*;

/// `aclrtMemGetAllocationGranularity`, after the NULL checks: the ACL
/// layer's memAttr checks only (not `aclrtMallocPhysical`'s), the device id,
/// then the driver's answer.
pub(crate) fn granularity(prop: &aclrtPhysicalMemProp, option: aclrtMemGranularityOptions) -> SoftResult<usize> {
    let (pages, p2p) = prop_rules::acl_granularity(prop)?;
    let place = prop_rules::driver_place(prop)?;
    if let properties::Place::Device(id) = place {
        crate::soft::started::core()?.device(id)?;
    }
    let kind = prop_rules::driver_kind(place, pages, p2p)?;
    if option != ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM && option != ACL_RT_MEM_ALLOC_GRANULARITY_RECOMMENDED {
        return fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("option {option} is neither MINIMUM (0) nor RECOMMENDED (1)"),
        );
    }
    Ok(properties::granularity(kind.pages, crate::soft::started::core()?.config.granularity) as usize)
}

/// `aclrtMemGetAddressRange` for an address that is neither `aclrtMalloc*`
/// nor `aclrtMallocHost*` memory: the VMM mapping containing `address`, or
/// `ACL_ERROR_RT_PARAM_INVALID` saying whether it is reserved but unmapped.
pub(crate) fn mapped_range(vmm: &Vmm, address: usize) -> SoftResult<(usize, usize)> {
    if let Some((start, mapping)) = vmm.mapping_of(address) {
        return Ok((start, mapping.size));
    }
    let why = if vmm.reservation_of(address).is_some() {
        format!("{address:#x} is reserved but not mapped")
    } else {
        format!("{address:#x} is not inside any allocation")
    };
    fail(ACL_ERROR_RT_PARAM_INVALID, why)
}

//! `aclrtMapMem`, `aclrtMemMapNoAccess`, `aclrtUnmapMem`,
//! `aclrtMemSetAccess`, `aclrtMemGetAccess`.

use super::Mapping;
use super::Vmm;
use super::physical::release_if_unused;
use super::properties::{self, Place};
use crate::soft::core::soft_result::{SoftResult, fail};
use crate::types::*;

/// The flag `aclrtMemGetAccess` reports for a location never set.
const ACCESS_NEVER_SET: u64 = 0x7FFF_FFFF;

/// `aclrtMapMem` (`accessible`) or `aclrtMemMapNoAccess` (not), after the
/// ACL checks (NULL pointers, size 0, flags).
pub(crate) fn map(
    vmm: &mut Vmm,
    address: usize,
    size: usize,
    offset: usize,
    handle: usize,
    accessible: bool,
) -> SoftResult {
    if offset != 0 {
        return fail(ACL_ERROR_RT_PARAM_INVALID, format!("offset {offset} must be 0"));
    }
    let granularity_base = crate::soft::started::core()?.config.granularity;
    let physical = vmm.physical(handle)?;
    if size as u64 != physical.size {
        return fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!(
                "size {size} is not the size of the physical allocation ({} bytes); a mapping maps a whole allocation",
                physical.size
            ),
        );
    }
    let granularity = properties::granularity(physical.kind.pages, granularity_base) as usize;
    let device = match physical.kind.place {
        Place::Device(id) => Some(id),
        Place::Host { .. } => None,
    };
    let imported = physical.imported;
    let memory = physical.memory.clone();
    let owner = match physical.kind.place {
        Place::Device(id) => (ACL_MEM_LOCATION_TYPE_DEVICE, id as u32),
        Place::Host { numa: false, id } => (ACL_MEM_LOCATION_TYPE_HOST, id),
        Place::Host { numa: true, id } => (ACL_MEM_LOCATION_TYPE_HOST_NUMA, id),
    };
    if !address.is_multiple_of(granularity) {
        return fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("virPtr {address:#x} is not aligned to the allocation granularity {granularity:#x}"),
        );
    }
    let Some((base, reservation)) = vmm.reservation_of(address) else {
        return fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("virPtr {address:#x} is not inside a range from aclrtReserveMemAddress"),
        );
    };
    if address + size > base + reservation.size {
        return fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!(
                "virPtr {address:#x}+{size} runs past the end of the reserved range at {base:#x} ({} bytes)",
                reservation.size
            ),
        );
    }
    if let (Some(mapped), Some(new)) = (reservation.device, device)
        && mapped != new
    {
        return fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("the range at {base:#x} already maps memory of device {mapped}; one range maps one device"),
        );
    }
    if let Some(mixed) = reservation.imported
        && mixed != imported
    {
        return fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("the range at {base:#x} cannot mix imported and local allocations"),
        );
    }
    let overlap = vmm
        .mappings
        .range(..address + size)
        .next_back()
        .filter(|(start, mapping)| *start + mapping.size > address);
    if let Some((start, mapping)) = overlap {
        return fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!(
                "virPtr {address:#x}+{size} overlaps the mapping at {start:#x}+{:#x}",
                mapping.size
            ),
        );
    }
    if let Some(reservation) = vmm.reservations.get_mut(&base) {
        reservation.mappings += 1;
        reservation.device = reservation.device.or(device);
        reservation.imported = Some(imported);
    }
    if let Some(physical) = vmm.physicals.get_mut(&handle) {
        physical.mappings += 1;
    }
    vmm.mappings.insert(
        address,
        Mapping {
            size,
            physical: handle,
            reservation: base,
            memory,
            accessible,
            access: if accessible {
                vec![(owner, u64::from(ACL_RT_MEM_ACCESS_FLAGS_READWRITE))]
            } else {
                Vec::new()
            },
            created: crate::soft::core::sequence::next(),
        },
    );
    Ok(())
}

/// `aclrtUnmapMem`: only a mapping's start.
pub(crate) fn unmap(vmm: &mut Vmm, address: usize) -> SoftResult {
    let Some(mapping) = vmm.mappings.remove(address) else {
        let why = match vmm.mapping_of(address) {
            Some((start, _)) => format!("{address:#x} is inside the mapping at {start:#x}, not its start"),
            None => format!("{address:#x} is not the start of a mapping"),
        };
        return fail(ACL_ERROR_RT_PARAM_INVALID, why);
    };
    if let Some(reservation) = vmm.reservations.get_mut(&mapping.reservation) {
        reservation.mappings -= 1;
        if reservation.mappings == 0 {
            reservation.device = None;
            reservation.imported = None;
        }
    }
    if let Some(physical) = vmm.physicals.get_mut(&mapping.physical) {
        physical.mappings -= 1;
    }
    let handle = mapping.physical;
    // The mapping's hold on the memory goes first, so a release can keep it.
    drop(mapping);
    release_if_unused(vmm, handle);
    Ok(())
}

/// `aclrtMemSetAccess`: `address` and `size` must be exactly a mapping's;
/// each descriptor grants READWRITE to a HOST or DEVICE location.
pub(crate) fn set_access(vmm: &mut Vmm, address: usize, size: usize, descriptors: &[aclrtMemAccessDesc]) -> SoftResult {
    if descriptors.is_empty() {
        return fail(ACL_ERROR_RT_PARAM_INVALID, "count is 0");
    }
    let device_count = crate::soft::started::core()?.devices.len() as u32;
    let Some(mapping) = vmm.mappings.get(address) else {
        return fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("virPtr {address:#x} is not the start of a mapping (it must equal the aclrtMapMem address)"),
        );
    };
    if mapping.size != size {
        return fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!(
                "size {size} is not the mapping's size {} (it must equal the aclrtMapMem size)",
                mapping.size
            ),
        );
    }
    let mut grants = Vec::with_capacity(descriptors.len());
    for (index, descriptor) in descriptors.iter().enumerate() {
        if descriptor.rsv.iter().any(|&byte| byte != 0) {
            return fail(ACL_ERROR_RT_PARAM_INVALID, format!("desc[{index}].rsv must be zero"));
        }
        if descriptor.flags != ACL_RT_MEM_ACCESS_FLAGS_READWRITE {
            return fail(
                ACL_ERROR_RT_PARAM_INVALID,
                format!(
                    "desc[{index}].flags {} is not supported: only ACL_RT_MEM_ACCESS_FLAGS_READWRITE",
                    descriptor.flags
                ),
            );
        }
        let location = descriptor.location;
        match location.type_ {
            ACL_MEM_LOCATION_TYPE_DEVICE if location.id >= device_count => {
                return fail(
                    ACL_ERROR_RT_INVALID_DEVICEID,
                    format!("desc[{index}].location.id {} is not a device", location.id),
                );
            }
            ACL_MEM_LOCATION_TYPE_DEVICE | ACL_MEM_LOCATION_TYPE_HOST => {}
            other => {
                return fail(
                    ACL_ERROR_RT_PARAM_INVALID,
                    format!("desc[{index}].location.type {other} is not supported: only HOST or DEVICE"),
                );
            }
        }
        let key = (location.type_, location.id);
        if let Some((_, flags)) = mapping.access.iter().find(|(existing, _)| *existing == key)
            && *flags != u64::from(descriptor.flags)
        {
            return fail(
                ACL_ERROR_RT_DRV_INTERNAL_ERROR,
                format!("desc[{index}]: the location already has a different access type (driver busy)"),
            );
        }
        grants.push((key, u64::from(descriptor.flags)));
    }
    if let Some(mapping) = vmm.mappings.get_mut(address) {
        for (key, flags) in grants {
            if !mapping.access.iter().any(|(existing, _)| *existing == key) {
                mapping.access.push((key, flags));
            }
        }
        mapping.accessible = true;
    }
    Ok(())
}

/// `aclrtMemGetAccess`: the flags of `location` on the mapping containing
/// `address`; a location never set reports 0x7FFFFFFF, as the driver does.
pub(crate) fn get_access(vmm: &Vmm, address: usize, location: aclrtMemLocation) -> SoftResult<u64> {
    let Some((_, mapping)) = vmm.mapping_of(address) else {
        return fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("virPtr {address:#x} is not inside a mapping"),
        );
    };
    let key = (location.type_, location.id);
    Ok(mapping
        .access
        .iter()
        .find(|(existing, _)| *existing == key)
        .map_or(ACCESS_NEVER_SET, |(_, flags)| *flags))
}

//! `aclrtMallocPhysical`, `aclrtFreePhysical`, retaining handles and
//! reading their properties.

use super::Vmm;
use super::prop_rules;
use super::properties::{self, Kind, Place};
use super::{Physical, PhysicalMemory};
use crate::soft::core::soft_result::{SoftResult, fail};
use crate::soft::started;
use crate::soft::started::current;
use crate::types::*;
use std::sync::Arc;

/// Makes memory imported from another process (`kind`, `size` bytes) a
/// physical allocation of this process, and returns its handle. The import
/// does not count against the device's capacity.
pub(crate) fn adopt_import(vmm: &mut Vmm, kind: Kind, size: u64, memory: PhysicalMemory) -> usize {
    let handle = vmm.new_handle();
    vmm.physicals.insert(
        handle,
        Physical {
            kind,
            size,
            memory: Arc::new(memory),
            handle_refs: 1,
            mappings: 0,
            imported: true,
            created: crate::soft::core::sequence::next(),
        },
    );
    handle
}

/// `aclrtMallocPhysical`, after the NULL checks: returns the new handle.
/// When device memory is short, `reclaim` makes what `aclrtMalloc`'s
/// shards of the device set aside free (the caller asks the device-memory
/// family; its locks rank after this family's), and the count is tried
/// once more.
pub(crate) fn malloc_physical(
    vmm: &mut Vmm,
    size: usize,
    prop: &aclrtPhysicalMemProp,
    flags: u64,
    reclaim: impl FnOnce(i32) -> SoftResult,
) -> SoftResult<usize> {
    if size == 0 {
        return fail(ACL_ERROR_INVALID_PARAM, "size is 0");
    }
    if flags != 0 {
        return fail(ACL_ERROR_INVALID_PARAM, format!("flags {flags:#x} must be 0"));
    }
    let (pages, p2p) = prop_rules::acl_malloc(prop)?;
    let place = prop_rules::driver_place(prop)?;
    match place {
        Place::Device(id) => {
            started::core()?.device(id)?;
        }
        Place::Host { numa: true, .. } => {
            current::require()?;
        }
        Place::Host { numa: false, .. } => {}
    }
    let kind = prop_rules::driver_kind(place, pages, p2p)?;
    let granularity = properties::granularity(kind.pages, started::core()?.config.granularity);
    if !(size as u64).is_multiple_of(granularity) {
        return fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("size {size} is not a multiple of the allocation granularity {granularity}"),
        );
    }
    let size = size as u64;
    if let Place::Device(id) = kind.place {
        let device = started::core()?.device(id)?;
        // What `aclrtMalloc`'s shards set aside is free for this too.
        let counted = device.commit(size) || (reclaim(id).is_ok() && device.commit(size));
        if !counted {
            return fail(
                ACL_ERROR_RT_MEMORY_ALLOCATION,
                format!(
                    "out of device memory on device {id}: {size} bytes requested, {} free",
                    device.free_bytes()
                ),
            );
        }
    }
    let made = match vmm.kept.take(size) {
        Some(memory) => Ok(memory),
        // The host may be short of memory that the kept allocations hold.
        None => PhysicalMemory::create(size).or_else(|_| {
            vmm.kept.clear();
            PhysicalMemory::create(size)
        }),
    };
    let memory = match made {
        Ok(memory) => Arc::new(memory),
        Err(failure) => {
            if let Place::Device(id) = kind.place
                && let Ok(device) = started::core()?.device(id)
            {
                device.uncommit(size);
            }
            return Err(failure);
        }
    };
    crate::soft::check::sanitize::allocated(memory.data(0) as usize, size as usize, Some("aclrtMallocPhysical"));
    let handle = vmm.new_handle();
    vmm.physicals.insert(
        handle,
        Physical {
            kind,
            size,
            memory,
            handle_refs: 1,
            mappings: 0,
            imported: false,
            created: crate::soft::core::sequence::next(),
        },
    );
    Ok(handle)
}

/// The first step of `aclrtFreePhysical`: drops one handle reference.
/// `true` when it was the last one: the caller (`entry/vmm.rs`) then
/// withdraws the handle's export, still under this family's lock, before
/// [`release_if_unused`] lets the memory go (when no mapping is left).
pub(crate) fn drop_handle_ref(vmm: &mut Vmm, handle: usize) -> SoftResult<bool> {
    vmm.physical(handle)?;
    let Some(physical) = vmm.physicals.get_mut(&handle) else {
        return fail(ACL_ERROR_RT_INVALID_HANDLE, "handle vanished");
    };
    physical.handle_refs -= 1;
    Ok(physical.handle_refs == 0)
}

/// Releases the physical allocation `handle` if nothing refers to it.
pub(crate) fn release_if_unused(vmm: &mut Vmm, handle: usize) {
    let unused = vmm
        .physicals
        .get(&handle)
        .is_some_and(|physical| physical.handle_refs == 0 && physical.mappings == 0);
    if !unused {
        return;
    }
    let Some(physical) = vmm.physicals.remove(&handle) else {
        return;
    };
    crate::soft::check::sanitize::forget(physical.memory.data(0) as usize, physical.size as usize);
    if physical.imported {
        return;
    }
    if let Place::Device(id) = physical.kind.place
        && let Some(device) = started::core_if_started().and_then(|core| core.device(id).ok())
    {
        device.uncommit(physical.size);
    }
    // The last reference (mappings are gone): kept for reuse unless another
    // process may map it.
    if let Ok(memory) = Arc::try_unwrap(physical.memory)
        && !memory.was_exported()
        && let Some(core) = started::core_if_started()
    {
        vmm.kept.keep(memory, super::kept::budget(core.config.device_memory));
    }
}

/// `aclrtMemRetainAllocationHandle`: the handle of the allocation mapped at
/// `address` (any address inside the mapping), with one more reference.
pub(crate) fn retain_handle(vmm: &mut Vmm, address: usize) -> SoftResult<usize> {
    let Some((_, mapping)) = vmm.mapping_of(address) else {
        return fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("{address:#x} is not inside a mapped range"),
        );
    };
    let handle = mapping.physical;
    match vmm.physicals.get_mut(&handle) {
        Some(physical) => {
            physical.handle_refs += 1;
            Ok(handle)
        }
        None => fail(ACL_ERROR_RT_INTERNAL_ERROR, "mapping of a missing allocation"),
    }
}

/// `aclrtMemGetAllocationPropertiesFromHandle`.
pub(crate) fn properties_from_handle(vmm: &Vmm, handle: usize) -> SoftResult<aclrtPhysicalMemProp> {
    Ok(properties::reported(vmm.physical(handle)?.kind))
}

//! `aclrtMallocHost*` / `aclrtFreeHost*`: page-locked host memory, a family
//! with its own lock.
//!
//! On the software device host memory is ordinary process memory, 64-byte
//! aligned as documented, tracked so that only pointers it handed out can be
//! freed and so that copies can tell it from pageable memory (each
//! allocation is also noted in the core's map of host ranges).

use crate::soft::core::lock_order::{self, Rank, Ranked};
use crate::soft::core::resource::{LiveResource, ResourceKind};
use crate::soft::core::soft_result::{SoftResult, fail};
use crate::soft::started;
use crate::soft::started::current;
use crate::types::*;
use std::alloc::Layout;
use std::collections::BTreeMap;
use std::sync::Mutex;

/// One pinned host allocation (`aclrtMallocHost*`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct HostAllocation {
    pub(crate) size: usize,
    /// Whether it is a mapping of its own (large sizes) rather than a
    /// block of the process allocator.
    pub(crate) mapped: bool,
    /// Creation sequence number ([`crate::soft::sequence_now`]).
    pub(crate) created: u64,
}

/// The live allocations by address: this family's state.
static ALLOCATIONS: Mutex<BTreeMap<usize, HostAllocation>> = Mutex::new(BTreeMap::new());

/// The family's state, locked ([`Rank::HostMemory`]).
fn allocations() -> Ranked<'static, BTreeMap<usize, HostAllocation>> {
    lock_order::lock(&ALLOCATIONS, Rank::HostMemory)
}

/// The documented alignment of `aclrtMallocHost` memory.
pub(crate) const HOST_ALIGN: usize = 64;

/// From this size on, host memory is a private mapping of its own (page
/// aligned, so 64-byte aligned too): one `mmap`/`munmap` pair. Here the
/// process allocator would map anyway, and pays extra for the alignment;
/// smaller sizes come from the process allocator, which reuses its memory.
const MAPPED_FROM: usize = 32 << 20;

fn layout(size: usize) -> Option<Layout> {
    Layout::from_size_align(size, HOST_ALIGN).ok()
}

/// Allocates `size` bytes (rounded up to 32) of host memory.
pub(crate) fn malloc_host(size: u64) -> SoftResult<usize> {
    if size == 0 {
        return fail(ACL_ERROR_INVALID_PARAM, "size is 0");
    }
    current::require()?;
    let Some(layout) = usize::try_from(size)
        .ok()
        .and_then(|size| size.checked_next_multiple_of(32))
        .and_then(layout)
    else {
        return fail(ACL_ERROR_RT_MEMORY_ALLOCATION, format!("size {size} is too large"));
    };
    started::core()?;
    let mut allocations = allocations();
    let mapped = layout.size() >= MAPPED_FROM;
    let pointer = if mapped {
        // SAFETY: a fresh private mapping at an address the kernel picks.
        unsafe {
            rustix::mm::mmap_anonymous(
                std::ptr::null_mut(),
                layout.size(),
                rustix::mm::ProtFlags::READ | rustix::mm::ProtFlags::WRITE,
                rustix::mm::MapFlags::PRIVATE,
            )
        }
        .map_or(std::ptr::null_mut(), |pointer| {
            // Pinned memory of this size is staging memory for large
            // copies: transparent huge pages fault it in 512 times fewer
            // steps. Advice only; a kernel without them ignores it.
            // SAFETY: the range is the mapping just made.
            let _ = unsafe { rustix::mm::madvise(pointer, layout.size(), rustix::mm::Advice::LinuxHugepage) };
            pointer.cast::<u8>()
        })
    } else {
        // SAFETY: `layout` has a non-zero size.
        unsafe { std::alloc::alloc(layout) }
    };
    if pointer.is_null() {
        return fail(
            ACL_ERROR_RT_MEMORY_ALLOCATION,
            format!("out of host memory ({} bytes)", layout.size()),
        );
    }
    crate::soft::core::address_map::insert(pointer as usize, layout.size());
    allocations.insert(
        pointer as usize,
        HostAllocation {
            size: layout.size(),
            mapped,
            created: crate::soft::core::sequence::next(),
        },
    );
    Ok(pointer as usize)
}

/// Checks an `aclrtMallocHostWithCfg` configuration.
///
/// # Safety
///
/// As [`crate::soft::device_mem::check_device_cfg`].
pub(crate) unsafe fn check_host_cfg(cfg: *const aclrtMallocConfig) -> SoftResult {
    // SAFETY: the caller guarantees `cfg` is NULL or valid.
    let Some(cfg) = (unsafe { cfg.as_ref() }) else {
        return Ok(());
    };
    if cfg.attrs.is_null() {
        return fail(ACL_ERROR_RT_PARAM_INVALID, "cfg->attrs is NULL");
    }
    // SAFETY: the caller guarantees `attrs` holds `numAttrs` entries.
    let attrs = unsafe { std::slice::from_raw_parts(cfg.attrs, cfg.numAttrs) };
    for attr in attrs {
        match attr.attr {
            ACL_RT_MEM_ATTR_MODULE_ID => {}
            ACL_RT_MEM_ATTR_VA_FLAG => {
                // SAFETY: the union member named by `attr.attr`.
                if unsafe { attr.value.vaFlag } != 0 {
                    return fail(
                        ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                        "ACL_RT_MEM_ATTR_VA_FLAG=1 (same host and device address) is not supported by the software device",
                    );
                }
            }
            other => {
                return fail(
                    ACL_ERROR_RT_PARAM_INVALID,
                    format!("attribute kind {other} is not accepted for host memory"),
                );
            }
        }
    }
    Ok(())
}

/// The first step of `aclrtFreeHost`: takes the allocation starting at
/// `address` out of the table (and the core's address map), so it cannot
/// be handed out again. Only a pointer `aclrtMallocHost*` returned: a
/// device pointer is refused with `ACL_ERROR_RT_PARAM_INVALID` as on
/// hardware; so is any other pointer (on hardware the driver decides; its
/// code is not public). The caller (`entry/host.rs`) holds the streams'
/// lock (a lower rank), and after this settles the queued work on the
/// range before [`release_host`].
pub(crate) fn take_host(address: usize) -> SoftResult<HostAllocation> {
    let removed = {
        let mut allocations = allocations();
        let removed = allocations.remove(&address);
        if removed.is_some() {
            // Under this family's lock: the range cannot be handed out
            // again meanwhile.
            crate::soft::core::address_map::remove(address);
        }
        removed
    };
    match removed {
        Some(allocation) => Ok(allocation),
        None => {
            let why = if started::core()?.device_of(address).is_some() {
                format!("{address:#x} is a device address, not host memory")
            } else {
                format!("{address:#x} was not returned by aclrtMallocHost (or was already freed)")
            };
            fail(ACL_ERROR_RT_PARAM_INVALID, why)
        }
    }
}

/// The last step of `aclrtFreeHost`: gives back the bytes of `allocation`
/// (at `address`), which [`take_host`] took out of the table and no stream
/// task touches any more.
pub(crate) fn release_host(address: usize, allocation: HostAllocation) -> SoftResult {
    if allocation.mapped {
        // SAFETY: `address` is a mapping of `size` bytes made by
        // `malloc_host`, taken out of the table by `take_host`, so unmapped
        // once; no stream task touches it any more (the caller's promise).
        if let Err(error) = unsafe { rustix::mm::munmap(address as *mut std::ffi::c_void, allocation.size) } {
            return fail(
                ACL_ERROR_RT_INTERNAL_ERROR,
                format!("munmap of host memory failed: {error}"),
            );
        }
        return Ok(());
    }
    match layout(allocation.size) {
        // SAFETY: `address` was returned by `alloc` with this layout and was
        // taken out of the table by `take_host`, so it is freed once; no
        // stream task touches it any more (the caller's promise).
        Some(layout) => unsafe { std::alloc::dealloc(address as *mut u8, layout) },
        None => return fail(ACL_ERROR_RT_INTERNAL_ERROR, "host allocation with an invalid layout"),
    }
    Ok(())
}

/// The host allocation containing `address`, with its start address.
pub(crate) fn find(address: usize) -> Option<(usize, HostAllocation)> {
    let allocations = allocations();
    let (&start, allocation) = allocations.range(..=address).next_back()?;
    (address < start + allocation.size).then_some((start, *allocation))
}

/// The start of a host allocation overlapping `[address, end)`, if any.
pub(crate) fn overlapping(address: usize, end: usize) -> Option<usize> {
    let allocations = allocations();
    let (&start, allocation) = allocations.range(..end).next_back()?;
    (start + allocation.size > address).then_some(start)
}

/// Every live allocation, by address.
pub(crate) fn all() -> Vec<(usize, HostAllocation)> {
    allocations()
        .iter()
        .map(|(&address, &allocation)| (address, allocation))
        .collect()
}

/// The pinned allocations made at or after sequence number `since`.
pub(crate) fn created_since(since: u64) -> impl Iterator<Item = LiveResource> {
    all()
        .into_iter()
        .filter(move |(_, allocation)| allocation.created >= since)
        .map(|(address, allocation)| {
            LiveResource::new(
                ResourceKind::HostMemory,
                address,
                allocation.size as u64,
                allocation.created,
            )
        })
}

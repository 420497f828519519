//! `aclrtMalloc*` / `aclrtFree*`: device memory.

use super::context;
use super::fail::{SoftResult, fail};
use super::resource::{LiveResource, ResourceKind};
use super::runtime::{self, DEVICE_ALIGN, DeviceAllocation};
use crate::types::*;

/// How a variant rounds the requested size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Rounding {
    /// `round_up(size, 32) + 32` (`aclrtMalloc`, `aclrtMallocCached`).
    Padded,
    /// `round_up(size, 32)` (`aclrtMallocAlign32`, `aclrtMallocWithCfg`, and
    /// the 1 GiB-page policies of `aclrtMalloc`).
    Align32,
}

/// The padding `aclrtMalloc` adds (the SoC spec's value on A2/A3/310P/910).
const PAD: u64 = 32;

/// The size actually reserved for a request of `size` bytes.
pub(crate) fn rounded_size(size: usize, rounding: Rounding, policy: aclrtMemMallocPolicy) -> SoftResult<u64> {
    // The padded calls map only the exact policy values: anything else,
    // bit-ORs included, is the default policy and padded
    // (acl-behaviour.md §4, #4). Only the 1 GiB-page policies are not.
    let pad = match rounding {
        Rounding::Padded if policy != ACL_MEM_MALLOC_HUGE1G_ONLY && policy != ACL_MEM_MALLOC_HUGE1G_ONLY_P2P => PAD,
        _ => 0,
    };
    (size as u64)
        .checked_next_multiple_of(32)
        .and_then(|rounded| rounded.checked_add(pad))
        .filter(|&total| total <= usize::MAX as u64)
        .map_or_else(
            || {
                fail(
                    ACL_ERROR_INVALID_PARAM,
                    format!("size {size} overflows when rounded up"),
                )
            },
            Ok,
        )
}

/// Allocates `size` bytes on the current device; returns the device address.
pub(crate) fn malloc(size: usize, rounding: Rounding, policy: aclrtMemMallocPolicy) -> SoftResult<usize> {
    if size == 0 {
        return fail(ACL_ERROR_INVALID_PARAM, "size is 0");
    }
    let reserved = rounded_size(size, rounding, policy)?;
    let device = context::require()?;
    let mut state = runtime::lock()?;
    let slot = state.device(device)?;
    let placed = (reserved <= slot.free_bytes())
        .then(|| slot.space.allocate(reserved, DEVICE_ALIGN))
        .flatten();
    let Some(offset) = placed else {
        let free = slot.free_bytes();
        return fail(
            ACL_ERROR_RT_MEMORY_ALLOCATION,
            format!("out of device memory on device {device}: {reserved} bytes requested, {free} free"),
        );
    };
    let address = slot.arena.device_base() + offset as usize;
    state.device_allocations.insert(
        address,
        DeviceAllocation {
            device,
            offset,
            size: reserved,
            requested: size as u64,
            created: super::sequence::next(),
        },
    );
    Ok(address)
}

/// Checks an `aclrtMallocWithCfg` configuration the way the runtime does.
///
/// # Safety
///
/// `cfg`, when not NULL, must point to a valid `aclrtMallocConfig` whose
/// `attrs` points to `numAttrs` attributes.
pub(crate) unsafe fn check_device_cfg(cfg: *const aclrtMallocConfig) -> SoftResult {
    // SAFETY: the caller guarantees `cfg` is NULL or valid.
    let Some(cfg) = (unsafe { cfg.as_ref() }) else {
        return Ok(());
    };
    if cfg.attrs.is_null() {
        return fail(ACL_ERROR_RT_PARAM_INVALID, "cfg->attrs is NULL");
    }
    let device = context::require()?;
    // SAFETY: the caller guarantees `attrs` holds `numAttrs` entries.
    let attrs = unsafe { std::slice::from_raw_parts(cfg.attrs, cfg.numAttrs) };
    for attr in attrs {
        match attr.attr {
            ACL_RT_MEM_ATTR_RSV | ACL_RT_MEM_ATTR_MODULE_ID => {}
            ACL_RT_MEM_ATTR_DEVICE_ID => {
                // SAFETY: the union member named by `attr.attr`.
                let wanted = unsafe { attr.value.deviceId };
                if i64::from(wanted) != i64::from(device) {
                    return fail(
                        ACL_ERROR_RT_PARAM_INVALID,
                        format!("ACL_RT_MEM_ATTR_DEVICE_ID {wanted} is not the current device {device}"),
                    );
                }
            }
            other => {
                return fail(
                    ACL_ERROR_RT_PARAM_INVALID,
                    format!("attribute kind {other} is not accepted for device memory"),
                );
            }
        }
    }
    Ok(())
}

/// `aclrtFree`: only the start address of a live `aclrtMalloc*` allocation.
/// (The real runtime leaves a bad pointer to the driver, whose code is not
/// public; the software device refuses it with `ACL_ERROR_RT_PARAM_INVALID`.)
pub(crate) fn free(address: usize) -> SoftResult {
    let mut state = runtime::lock()?;
    let Some(allocation) = state.device_allocations.remove(&address) else {
        let why = match state.device_allocations.range(..address).next_back() {
            Some((&start, found)) if address < start + found.size as usize => {
                format!("{address:#x} is inside the allocation at {start:#x}, not its start")
            }
            _ if state.device_of(address).is_some() => {
                format!("{address:#x} is not a live device allocation (never allocated, or already freed)")
            }
            _ => format!("{address:#x} is not a device address"),
        };
        return fail(ACL_ERROR_RT_PARAM_INVALID, why);
    };
    super::share::forget_allocation(&mut state, address);
    release_space(&mut state, &allocation)
}

/// Gives the space of an allocation taken out of the table back to its
/// device (and its pages back to the host).
fn release_space(state: &mut runtime::State, allocation: &DeviceAllocation) -> SoftResult {
    let device = state.device(allocation.device)?;
    let merged = device.space.release(allocation.offset, allocation.size);
    let freed = (allocation.offset, allocation.size);
    let space = &device.space;
    device.arena.after_free(freed, merged, || space.free_ranges());
    Ok(())
}

/// The allocation containing `address`, with its start address.
pub(crate) fn find(state: &runtime::State, address: usize) -> Option<(usize, DeviceAllocation)> {
    let (&start, allocation) = state.device_allocations.range(..=address).next_back()?;
    (address < start + allocation.size as usize).then_some((start, *allocation))
}

/// Frees every `aclrtMalloc*` allocation of `device` (a torn-down primary
/// context: later `aclrtFree` of them fails as for freed memory). Returns
/// how many there were.
pub(crate) fn free_device(state: &mut runtime::State, device: i32) -> usize {
    let starts: Vec<usize> = state
        .device_allocations
        .iter()
        .filter(|(_, allocation)| allocation.device == device)
        .map(|(&start, _)| start)
        .collect();
    for &start in &starts {
        if let Some(allocation) = state.device_allocations.remove(&start) {
            super::share::forget_allocation(state, start);
            // The device came from the table, so it exists: nothing to report.
            let _ = release_space(state, &allocation);
        }
    }
    starts.len()
}

/// The allocations made at or after sequence number `since`.
pub(crate) fn created_since(state: &runtime::State, since: u64) -> impl Iterator<Item = LiveResource> + '_ {
    state
        .device_allocations
        .iter()
        .filter(move |(_, allocation)| allocation.created >= since)
        .map(|(&address, allocation)| {
            LiveResource::new(ResourceKind::DeviceMemory, address, allocation.size, allocation.created)
                .on(allocation.device)
                .detail(format!("{} bytes requested", allocation.requested))
        })
}

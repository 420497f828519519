//! `aclrtMalloc*` / `aclrtFree*`: device memory, a family with its own
//! locks.
//!
//! Each device's memory is split into shards ([`shard`]) that hold whole
//! slabs of its space ([`space`]); a thread allocates small buffers from its
//! own shard, so threads allocating, freeing and copying independently do
//! not wait for each other. Capacity is counted in the core
//! ([`crate::soft::started::DeviceCore`]), shared with VMM physical memory.
//! Lock order: the sharing tables (taken by the caller, only to withdraw
//! IPC keys, or to reset a device; see `compose/device_free.rs`) → a shard
//! → the space. The family names no other family.

mod credit;
mod last;
mod recent;
mod rounding;
mod shard;
mod space;
mod stale;
mod table;

pub(crate) use rounding::{Rounding, check_device_cfg, rounded_size};

use crate::soft::check::sanitize;
#[cfg(debug_assertions)]
use crate::soft::core::lock_order::{self, Rank};
use crate::soft::core::resource::{LiveResource, ResourceKind};
use crate::soft::core::soft_result::{SoftResult, fail};
use crate::soft::started::current;
use crate::soft::started::{self, Core};
use crate::types::*;
use space::DeviceMemory;
use std::sync::OnceLock;

/// One device-memory allocation (`aclrtMalloc*`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct DeviceAllocation {
    pub(crate) device: i32,
    /// Physical offset in the device's arena.
    pub(crate) offset: u64,
    /// Bytes reserved (after the documented rounding and padding).
    pub(crate) size: u64,
    /// Bytes the caller asked for.
    pub(crate) requested: u64,
    /// Creation sequence number ([`crate::soft::sequence_now`]).
    pub(crate) created: u64,
    /// Whether an IPC key was exported for it (its free withdraws them).
    exported: bool,
}

/// Every device's memory, created with the software device's core.
static FAMILY: OnceLock<Vec<DeviceMemory>> = OnceLock::new();

fn family(core: &Core) -> &'static [DeviceMemory] {
    FAMILY.get_or_init(|| {
        core.devices
            .iter()
            .map(|device| DeviceMemory::new(device.arena.device_base(), device.arena.view_at(0), device.capacity()))
            .collect()
    })
}

/// Allocates `size` bytes on the current device; returns the device address.
pub(crate) fn malloc(size: usize, rounding: Rounding, policy: aclrtMemMallocPolicy) -> SoftResult<usize> {
    if size == 0 {
        return fail(ACL_ERROR_INVALID_PARAM, "size is 0");
    }
    let reserved = rounded_size(size, rounding, policy)?;
    let device = current::require()?;
    place_on(
        device,
        reserved,
        size as u64,
        started::DEVICE_ALIGN,
        Some("aclrtMalloc"),
    )
    .map(|(address, _)| address)
}

/// Places an allocation of `reserved` bytes (`requested` asked for) on
/// `device` at a physical offset that is a multiple of `align`; returns its
/// device address and physical offset. For the sanitizer the memory starts
/// unwritten when `origin` names the allocating call, or with unknown
/// contents (`None`: memory the host writes unseen, managed memory). Managed memory is placed this way: it is device memory
/// of this family, freed by `aclrtFree` like any other.
pub(crate) fn place_on(
    device: i32,
    reserved: u64,
    requested: u64,
    align: u64,
    origin: Option<&'static str>,
) -> SoftResult<(usize, u64)> {
    let core = started::core()?;
    let slot = core.device(device)?;
    let memory = &family(core)[device as usize];
    let allocation = DeviceAllocation {
        device,
        offset: 0,
        size: reserved,
        requested,
        created: crate::soft::core::sequence::next(),
        exported: false,
    };
    let placed = memory.place(allocation, slot, align).or_else(|| {
        // Room may be held by other threads' shards: credit, empty slabs.
        memory.reclaim(slot);
        memory.place(allocation, slot, align)
    });
    match placed {
        Some(address) => {
            let offset = (address - slot.arena.device_base()) as u64;
            if sanitize::on() {
                let view = slot.arena.view_at(offset);
                sanitize::allocated(view as usize, reserved as usize, origin);
            }
            Ok((address, offset))
        }
        None => fail(
            ACL_ERROR_RT_MEMORY_ALLOCATION,
            format!(
                "out of device memory on device {device}: {reserved} bytes requested, {} free",
                memory.free_bytes(slot)
            ),
        ),
    }
}

/// What [`free`] did.
#[must_use]
pub(crate) enum Freed {
    /// The allocation is gone.
    Done,
    /// Nothing: the allocation is exported through an IPC key, so its free
    /// also withdraws the keys. The caller takes the sharing tables' lock
    /// (a lower rank) and calls [`free_exported`].
    Exported,
}

/// `aclrtFree`: only the start address of a live `aclrtMalloc*` allocation.
/// (The real runtime leaves a bad pointer to the driver, whose code is not
/// public; the software device refuses it with `ACL_ERROR_RT_PARAM_INVALID`.)
/// An exported allocation is left alone ([`Freed::Exported`]).
pub(crate) fn free(address: usize) -> SoftResult<Freed> {
    let core = started::core()?;
    let (device, slot) = slot_of(core, address)?;
    let memory = &family(core)[device as usize];
    match memory.remove(address, slot, |allocation| !allocation.exported) {
        Err(Some(_)) => Ok(Freed::Exported),
        removed => finish_free(memory, slot, address, removed).map(|()| Freed::Done),
    }
}

/// [`free`] of an allocation that may be exported, with the sharing tables
/// locked by the caller, who then forgets the allocation's keys (so no
/// importer opens a key to memory already given back).
pub(crate) fn free_exported(address: usize) -> SoftResult {
    #[cfg(debug_assertions)]
    assert!(
        lock_order::holds(Rank::Share),
        "free_exported needs the sharing tables locked"
    );
    let core = started::core()?;
    let (device, slot) = slot_of(core, address)?;
    let memory = &family(core)[device as usize];
    let removed = memory.remove(address, slot, |_| true);
    finish_free(memory, slot, address, removed)
}

/// The device and core slot of the device address `address`.
fn slot_of(core: &Core, address: usize) -> SoftResult<(i32, &crate::soft::started::DeviceCore)> {
    let Some(device) = core.device_of(address) else {
        return fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("{address:#x} is not a device address"),
        );
    };
    Ok((device, &core.devices[device as usize]))
}

/// The end of a free: the sanitizer forgets the bytes, or the refusal says
/// why nothing was freed.
fn finish_free<E>(
    memory: &'static DeviceMemory,
    slot: &crate::soft::started::DeviceCore,
    address: usize,
    removed: Result<DeviceAllocation, E>,
) -> SoftResult {
    match removed {
        Ok(allocation) => {
            if sanitize::on() {
                let view = slot.arena.view_at(allocation.offset);
                sanitize::freeing(address, view as usize, allocation.size as usize, "aclrtFree");
            }
            Ok(())
        }
        Err(_) => {
            let why = match memory.find(address) {
                Some((start, _)) => format!("{address:#x} is inside the allocation at {start:#x}, not its start"),
                None => format!("{address:#x} is not a live device allocation (never allocated, or already freed)"),
            };
            fail(ACL_ERROR_RT_PARAM_INVALID, why)
        }
    }
}

/// The device view of `[address, address + length)` and its device when
/// the range lies inside this thread's last allocation (the one it placed
/// or found last) and that allocation is live: a translation that takes no
/// lock. `None` otherwise: the caller translates as usual.
pub(crate) fn remembered_view(address: usize, length: usize) -> Option<(*mut u8, i32)> {
    last::view(address, length)
}

/// The allocation containing `address`, with its start address.
pub(crate) fn find(address: usize) -> Option<(usize, DeviceAllocation)> {
    let core = started::core_if_started()?;
    let device = core.device_of(address)?;
    family(core)[device as usize].find(address)
}

/// Marks the allocation starting at `address` as exported through an IPC
/// key, with the sharing tables locked by the caller (its free then
/// withdraws the keys). `None` when no allocation of at least `bytes`
/// starts there.
pub(crate) fn mark_exported(address: usize, bytes: u64) -> Option<DeviceAllocation> {
    #[cfg(debug_assertions)]
    assert!(
        lock_order::holds(Rank::Share),
        "mark_exported needs the sharing tables locked"
    );
    let core = started::core_if_started()?;
    let device = core.device_of(address)?;
    family(core)[device as usize].mark_exported(address, bytes)
}

/// Frees every `aclrtMalloc*` allocation of `device` (a torn-down primary
/// context: later `aclrtFree` of them fails as for freed memory), with the
/// sharing tables locked by the caller, who then forgets their keys.
/// Returns the start addresses freed.
pub(crate) fn free_device(device: i32) -> Vec<usize> {
    #[cfg(debug_assertions)]
    assert!(
        lock_order::holds(Rank::Share),
        "free_device needs the sharing tables locked"
    );
    let Some(core) = started::core_if_started() else {
        return Vec::new();
    };
    let Some(slot) = usize::try_from(device).ok().and_then(|index| core.devices.get(index)) else {
        return Vec::new();
    };
    let memory = &family(core)[device as usize];
    let mut freed = Vec::new();
    for (start, _) in memory.allocations() {
        if memory.remove(start, slot, |_| true).is_ok() {
            freed.push(start);
        }
    }
    freed
}

/// Bytes of `device` not yet allocated (by `aclrtMalloc*` or
/// `aclrtMallocPhysical`), and its capacity.
pub(crate) fn free_bytes(device: i32) -> SoftResult<(u64, u64)> {
    let core = started::core()?;
    let slot = core.device(device)?;
    Ok((family(core)[device as usize].free_bytes(slot), slot.capacity()))
}

/// Bytes of `device` allocated now, and the highest that has been (an
/// upper bound: it counts the capacity shards set aside for their next
/// allocations, up to 2 MiB per shard).
pub(crate) fn usage(device: i32) -> SoftResult<(u64, u64)> {
    let core = started::core()?;
    let slot = core.device(device)?;
    let (free, capacity) = (family(core)[device as usize].free_bytes(slot), slot.capacity());
    let current = capacity.saturating_sub(free);
    Ok((current, slot.peak().max(current)))
}

/// Makes the capacity and space the shards of `device` set aside available
/// (before an allocation of another family is refused for lack of room).
pub(crate) fn reclaim(device: i32) -> SoftResult {
    let core = started::core()?;
    family(core)[device as usize].reclaim(core.device(device)?);
    Ok(())
}

/// Every live allocation of every device, by address.
pub(crate) fn all() -> Vec<(usize, DeviceAllocation)> {
    let Some(core) = started::core_if_started() else {
        return Vec::new();
    };
    let mut all: Vec<(usize, DeviceAllocation)> = family(core).iter().flat_map(DeviceMemory::allocations).collect();
    all.sort_unstable_by_key(|&(address, _)| address);
    all
}

/// The number of live allocations and the bytes they reserve.
pub(crate) fn live() -> (usize, u64) {
    let all = all();
    (all.len(), all.iter().map(|(_, allocation)| allocation.size).sum())
}

/// The allocations made at or after sequence number `since`, by address.
pub(crate) fn created_since(since: u64) -> impl Iterator<Item = LiveResource> {
    all()
        .into_iter()
        .filter(move |(_, allocation)| allocation.created >= since)
        .map(|(address, allocation)| {
            LiveResource::new(ResourceKind::DeviceMemory, address, allocation.size, allocation.created)
                .on(allocation.device)
                .detail(format!("{} bytes requested", allocation.requested))
        })
}

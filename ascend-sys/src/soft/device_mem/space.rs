//! One device's `aclrtMalloc` memory: its space, which hands whole slabs to
//! the shards and places large allocations itself, and the table saying
//! which shard owns each slab.
//!
//! Small allocations (under [`RELEASE_AT_ONCE`]) are placed by the
//! allocating thread's shard inside the slabs it holds; larger ones, and
//! small ones when no whole slab is free, by the space. Translation finds an
//! address's owner in the table without a lock, then asks that owner.

use super::DeviceAllocation;
use super::last::{self, Removals};
use super::shard::Shard;
use super::stale::Stale;
use super::table::Allocations;
use crate::soft::core::device_arena::{Arena, RELEASE_AT_ONCE};
use crate::soft::core::lock_order::{Rank, Ranked, lock};
use crate::soft::core::range_alloc::RangeAllocator;
use crate::soft::started::{DEVICE_ALIGN, DeviceCore};
use crossbeam_utils::CachePadded;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};

/// Bytes in a slab: the unit the space hands to a shard (one byte-lock
/// chunk, so copies into different shards' slabs never share a byte lock).
pub(crate) const SLAB: u64 = crate::soft::core::byte_locks::CHUNK as u64;

/// Shards per device: threads are spread over them in turn.
const SHARDS: usize = 8;

/// Owner-table value of a region that is not a shard's slab.
const SPACE: u8 = 0;

/// The space's part: free ranges outside the slabs, and the allocations it
/// placed.
pub(crate) struct Space {
    free: RangeAllocator,
    allocations: Allocations,
    /// Bytes of small frees whose pages stay resident.
    stale: Stale,
}

/// Which of a device's locks holds an allocation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Owner {
    Space,
    Shard(usize),
}

/// One device's `aclrtMalloc` memory.
pub(crate) struct DeviceMemory {
    base: usize,
    /// The device view of offset 0 (an address: the view lives as long as
    /// the process).
    view: usize,
    space: Mutex<Space>,
    /// The space's removals (see [`last`]).
    space_removals: Removals,
    /// Per slab-sized region: [`SPACE`], or 1 + the index of the shard whose
    /// slab it is. Written with the shard's and the space's locks held.
    owners: Box<[AtomicU8]>,
    shards: Box<[CachePadded<ShardCell>]>,
}

/// A shard's lock, and its count of removals beside it (bumped under the
/// lock, read without it: see [`last`]).
struct ShardCell {
    lock: Mutex<Shard>,
    removals: Removals,
}

/// The shard this thread allocates from.
fn my_shard() -> usize {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    thread_local! {
        static MINE: usize = NEXT.fetch_add(1, Ordering::Relaxed) % SHARDS;
    }
    MINE.try_with(|mine| *mine).unwrap_or(0)
}

impl DeviceMemory {
    pub(super) fn new(base: usize, view: *mut u8, capacity: u64) -> Self {
        Self {
            base,
            view: view as usize,
            space: Mutex::new(Space {
                free: RangeAllocator::new(capacity),
                allocations: Allocations::new(),
                stale: Stale::default(),
            }),
            space_removals: Removals::default(),
            owners: (0..capacity / SLAB).map(|_| AtomicU8::new(SPACE)).collect(),
            shards: (0..SHARDS)
                .map(|_| {
                    CachePadded::new(ShardCell {
                        lock: Mutex::new(Shard::new(base)),
                        removals: Removals::default(),
                    })
                })
                .collect(),
        }
    }

    fn space(&self) -> Ranked<'_, Space> {
        lock(&self.space, Rank::DeviceSpace)
    }

    fn shard(&self, index: usize) -> Ranked<'_, Shard> {
        lock(&self.shards[index].lock, Rank::DeviceShard)
    }

    fn owner_of(&self, offset: u64) -> Owner {
        let value = usize::try_from(offset / SLAB)
            .ok()
            .and_then(|region| self.owners.get(region))
            .map_or(SPACE, |owner| owner.load(Ordering::Acquire));
        match value {
            SPACE => Owner::Space,
            shard => Owner::Shard(usize::from(shard) - 1),
        }
    }

    fn set_owner(&self, slab: u64, owner: Owner) {
        let value = match owner {
            Owner::Space => SPACE,
            Owner::Shard(index) => index as u8 + 1,
        };
        if let Some(entry) = self.owners.get((slab / SLAB) as usize) {
            entry.store(value, Ordering::Release);
        }
    }

    /// The device view of `allocation`'s bytes.
    fn view_of(&self, allocation: &DeviceAllocation) -> *mut u8 {
        (self.view + allocation.offset as usize) as *mut u8
    }

    /// The removal count of `owner` (see [`last`]).
    fn removals(&self, owner: Owner) -> &Removals {
        match owner {
            Owner::Space => &self.space_removals,
            Owner::Shard(index) => &self.shards[index].removals,
        }
    }

    /// The allocation containing `address` (one of this device's
    /// addresses), with its start: this thread's last allocation without
    /// a lock if it is still live ([`last`]), else looked up under its
    /// owner's lock (and remembered).
    pub(super) fn find(&'static self, address: usize) -> Option<(usize, DeviceAllocation)> {
        if let Some(found) = last::lookup(address) {
            return Some(found);
        }
        self.in_owner(address, |allocations, removals| {
            let (start, allocation) = allocations.find(address)?;
            last::remember(start, allocation, self.view_of(&allocation), removals);
            Some((start, allocation))
        })
    }

    /// Counts and places `allocation.size` bytes: in this thread's shard
    /// if small (paid from the shard's credit), else (or when no slab is
    /// free) in the space; at a physical offset that is a multiple of
    /// `align` (more than the device's 512 bytes: always in the space).
    /// Returns the device address, or `None` when the device's capacity or
    /// its free ranges have no room.
    pub(super) fn place(
        &'static self,
        mut allocation: DeviceAllocation,
        device: &DeviceCore,
        align: u64,
    ) -> Option<usize> {
        let size = allocation.size;
        if size < RELEASE_AT_ONCE && align <= DEVICE_ALIGN {
            let index = my_shard();
            let mut shard = self.shard(index);
            if !shard.credit.cover(size, device) {
                return None;
            }
            let offset = shard.place(size).or_else(|| {
                let slab = self.space().free.allocate(SLAB, SLAB)?;
                self.set_owner(slab, Owner::Shard(index));
                shard.add_slab(slab);
                shard.place(size)
            });
            if let Some(offset) = offset {
                shard.credit.spend(size);
                shard.stale.allocated(size);
                allocation.offset = offset;
                let address = self.base + offset as usize;
                shard.allocations.insert(address, allocation);
                last::remember(
                    address,
                    allocation,
                    self.view_of(&allocation),
                    &self.shards[index].removals,
                );
                return Some(address);
            }
            // No slab for it: the space places it, and counts it itself, so
            // the credit just taken must not hold the same bytes.
            shard.credit.give_back(device);
        }
        if !device.commit(size) {
            return None;
        }
        let mut space = self.space();
        let Some(offset) = space.free.allocate(size, align.max(DEVICE_ALIGN)) else {
            device.uncommit(size);
            return None;
        };
        if size < RELEASE_AT_ONCE {
            space.stale.allocated(size);
        }
        allocation.offset = offset;
        let address = self.base + offset as usize;
        space.allocations.insert(address, allocation);
        last::remember(address, allocation, self.view_of(&allocation), &self.space_removals);
        Some(address)
    }

    /// The bytes not yet allocated: the device's uncommitted capacity and
    /// the shards' credit.
    pub(super) fn free_bytes(&self, device: &DeviceCore) -> u64 {
        let credit: u64 = (0..self.shards.len())
            .map(|index| self.shard(index).credit.bytes())
            .sum();
        // The shards are read one after another while other threads move
        // credit: never report more than the capacity.
        (device.free_bytes() + credit).min(device.capacity())
    }

    /// Gives every shard's credit back to the device and its empty slabs
    /// back to the space (before an allocation that found no room is
    /// refused).
    pub(super) fn reclaim(&self, device: &DeviceCore) {
        for index in 0..self.shards.len() {
            let mut shard = self.shard(index);
            shard.credit.give_back(device);
            let mut spare = shard.release_recent();
            spare.extend(shard.take_empty_slabs());
            for slab in spare {
                self.return_slab(&mut shard, slab, &device.arena);
            }
        }
    }

    /// Hands `slab`, taken out of `shard`, back to the space, its pages
    /// given back first (nobody can reach it meanwhile).
    fn return_slab(&self, _shard: &mut Ranked<'_, Shard>, slab: u64, arena: &Arena) {
        arena.release_pages(slab, SLAB);
        let mut space = self.space();
        self.set_owner(slab, Owner::Space);
        space.free.release(slab, SLAB);
    }

    /// Removes the allocation starting at `address` if `allowed` accepts
    /// it, and gives its space and its bytes back. `Err(None)`: no allocation starts
    /// there; `Err(Some(_))`: refused by `allowed`.
    pub(super) fn remove(
        &self,
        address: usize,
        device: &DeviceCore,
        allowed: impl Fn(&DeviceAllocation) -> bool,
    ) -> Result<DeviceAllocation, Option<DeviceAllocation>> {
        let arena = &device.arena;
        let offset = (address - self.base) as u64;
        loop {
            let owner = self.owner_of(offset);
            let removed = match owner {
                Owner::Space => {
                    let mut space = self.space();
                    let removed = take_if(&mut space.allocations, address, &allowed);
                    if let Ok(allocation) = removed {
                        self.space_removals.bump();
                        device.uncommit(allocation.size);
                        let merged = space.free.release(allocation.offset, allocation.size);
                        // Under the lock: once released, a range may be
                        // handed out and written.
                        if allocation.size >= RELEASE_AT_ONCE {
                            arena.release_freed((allocation.offset, allocation.size), merged);
                        } else if space.stale.freed(allocation.size) {
                            release_free_pages(space.free.free_ranges(), arena);
                        }
                    }
                    removed
                }
                Owner::Shard(index) => {
                    let mut shard = self.shard(index);
                    // Its entry is parked or removed by `release`.
                    let removed = shard.allocations.starting_at(address, &allowed);
                    if let Ok(allocation) = removed {
                        self.shards[index].removals.bump();
                        shard.credit.refund(allocation.size, device);
                        if let Some(slab) = shard.release(allocation.offset, allocation.size) {
                            self.return_slab(&mut shard, slab, arena);
                        }
                        if shard.stale.freed(allocation.size) {
                            for slab in shard.release_recent() {
                                self.return_slab(&mut shard, slab, arena);
                            }
                            release_free_pages(shard.free_ranges(), arena);
                        }
                    }
                    removed
                }
            };
            match removed {
                Ok(allocation) => return Ok(allocation),
                Err(None) if self.owner_of(offset) != owner => continue,
                Err(refused) => return Err(refused),
            }
        }
    }

    /// Every live allocation, in no particular order.
    pub(super) fn allocations(&self) -> Vec<(usize, DeviceAllocation)> {
        let mut all: Vec<(usize, DeviceAllocation)> = Vec::new();
        for index in 0..self.shards.len() {
            all.extend(self.shard(index).allocations.iter());
        }
        all.extend(self.space().allocations.iter());
        all
    }

    /// Marks the allocation starting at `address` as exported (its free
    /// then also withdraws its IPC keys); `None` when there is none, or it
    /// is smaller than `bytes`.
    pub(super) fn mark_exported(&'static self, address: usize, bytes: u64) -> Option<DeviceAllocation> {
        self.in_owner(address, |allocations, _| {
            let allocation = allocations
                .get_mut(address)
                .filter(|allocation| bytes <= allocation.size)?;
            allocation.exported = true;
            Some(*allocation)
        })
    }

    /// Runs `visit` on the allocations of the owner of `address`'s region,
    /// with the owner's removal count, under the owner's lock (a slab that
    /// changes hands meanwhile was empty: then it looks again).
    fn in_owner<T>(
        &'static self,
        address: usize,
        mut visit: impl FnMut(&mut Allocations, &'static Removals) -> Option<T>,
    ) -> Option<T> {
        let offset = (address - self.base) as u64;
        loop {
            let owner = self.owner_of(offset);
            let removals = self.removals(owner);
            let found = match owner {
                Owner::Space => visit(&mut self.space().allocations, removals),
                Owner::Shard(index) => visit(&mut self.shard(index).allocations, removals),
            };
            if found.is_some() || self.owner_of(offset) == owner {
                return found;
            }
        }
    }
}

/// Gives back the pages of an owner's free ranges (with its lock held, so
/// none is handed out meanwhile).
fn release_free_pages(free: impl Iterator<Item = (u64, u64)>, arena: &Arena) {
    for (start, length) in free {
        arena.release_pages(start, length);
    }
}

/// Takes the allocation at `address` out of `allocations` if `allowed`
/// accepts it.
fn take_if(
    allocations: &mut Allocations,
    address: usize,
    allowed: impl Fn(&DeviceAllocation) -> bool,
) -> Result<DeviceAllocation, Option<DeviceAllocation>> {
    let allocation = allocations.starting_at(address, allowed)?;
    allocations.remove(address);
    Ok(allocation)
}

//! An owner's allocations by device address (a shard's or the space's).
//!
//! A block a shard keeps whole for reuse ([`super::recent`]) stays in the
//! table, parked: it is not found, listed or freed again, and the next
//! allocation of its size takes the same entry back. So a small allocation
//! and free that reuse a block change one flag instead of adding and
//! removing a node (an empty map frees its last node, and the next insert
//! allocates it again).

use super::DeviceAllocation;
use std::collections::BTreeMap;

#[derive(Clone, Copy)]
struct Entry {
    allocation: DeviceAllocation,
    parked: bool,
}

/// Allocations by the device address they start at; their ranges are
/// disjoint.
pub(super) struct Allocations {
    entries: BTreeMap<usize, Entry>,
}

impl Allocations {
    pub(super) const fn new() -> Self {
        Self {
            entries: BTreeMap::new(),
        }
    }

    /// Records `allocation` at `address` (over the parked block there, if
    /// any).
    pub(super) fn insert(&mut self, address: usize, allocation: DeviceAllocation) {
        // Over an existing key the map replaces the value in place.
        self.entries.insert(
            address,
            Entry {
                allocation,
                parked: false,
            },
        );
    }

    /// The live allocation containing `address`, with its start.
    pub(super) fn find(&self, address: usize) -> Option<(usize, DeviceAllocation)> {
        let (&start, entry) = self.entries.range(..=address).next_back()?;
        (!entry.parked && address < start + entry.allocation.size as usize).then_some((start, entry.allocation))
    }

    /// The live allocation starting at `address`, to change.
    pub(super) fn get_mut(&mut self, address: usize) -> Option<&mut DeviceAllocation> {
        self.entries
            .get_mut(&address)
            .filter(|entry| !entry.parked)
            .map(|entry| &mut entry.allocation)
    }

    /// The live allocation starting at `address` if `allowed` accepts it:
    /// `Err(None)` when none starts there, `Err(Some(_))` when refused.
    pub(super) fn starting_at(
        &self,
        address: usize,
        allowed: impl Fn(&DeviceAllocation) -> bool,
    ) -> Result<DeviceAllocation, Option<DeviceAllocation>> {
        match self.entries.get(&address) {
            Some(entry) if !entry.parked && allowed(&entry.allocation) => Ok(entry.allocation),
            Some(entry) if !entry.parked => Err(Some(entry.allocation)),
            _ => Err(None),
        }
    }

    /// Parks the allocation at `address`: freed, its entry kept for reuse.
    pub(super) fn park(&mut self, address: usize) {
        if let Some(entry) = self.entries.get_mut(&address) {
            entry.parked = true;
        }
    }

    /// Forgets the entry at `address`, live or parked.
    pub(super) fn remove(&mut self, address: usize) {
        self.entries.remove(&address);
    }

    /// The live allocations, by address.
    pub(super) fn iter(&self) -> impl Iterator<Item = (usize, DeviceAllocation)> + '_ {
        self.entries
            .iter()
            .filter(|(_, entry)| !entry.parked)
            .map(|(&address, entry)| (address, entry.allocation))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn allocation(size: u64) -> DeviceAllocation {
        DeviceAllocation {
            device: 0,
            offset: 0,
            size,
            requested: size,
            created: 0,
            exported: false,
        }
    }

    #[test]
    fn a_parked_block_is_neither_found_nor_freed_until_taken_again() {
        let mut table = Allocations::new();
        table.insert(0x1000, allocation(512));
        table.insert(0x2000, allocation(512));
        assert_eq!(table.find(0x1100).map(|(start, _)| start), Some(0x1000));
        table.park(0x1000);
        assert!(table.find(0x1100).is_none());
        assert!(table.get_mut(0x1000).is_none());
        assert!(matches!(table.starting_at(0x1000, |_| true), Err(None)));
        assert_eq!(table.iter().map(|(address, _)| address).collect::<Vec<_>>(), [0x2000]);
        // Taken again by the next allocation of its size.
        table.insert(0x1000, allocation(512));
        assert!(table.starting_at(0x1000, |_| true).is_ok());
        assert!(matches!(table.starting_at(0x1000, |_| false), Err(Some(_))));
        table.remove(0x1000);
        assert!(table.find(0x1000).is_none());
        assert_eq!(table.iter().count(), 1);
    }
}

//! [`MapSlot`]: one mapping at a time per physical allocation in this
//! process.
//!
//! A mapping hands out an exclusive view ([`MappedRegion::as_mut_slice`]).
//! Two mappings of the same physical memory would give two exclusive views
//! of the same bytes, so every owner of one allocation in this process — the
//! [`PhysicalAlloc`] that allocated it, each handle retained from its
//! mapping, each import of the same export — shares one slot, and a mapping
//! takes it. A second mapping is refused before any runtime call until the
//! first is unmapped.
//!
//! [`MappedRegion::as_mut_slice`]: super::MappedRegion::as_mut_slice
//! [`PhysicalAlloc`]: super::PhysicalAlloc

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Whether one physical allocation is mapped in this process.
#[derive(Debug, Default)]
pub(crate) struct MapSlot {
    taken: AtomicBool,
}

impl MapSlot {
    /// A free slot for a new allocation.
    pub(crate) fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// Takes the slot for a new mapping; `false` when a mapping holds it.
    pub(crate) fn take(&self) -> bool {
        self.taken
            .compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    }

    /// Frees the slot once the mapping that took it is gone (a mapping whose
    /// unmap failed keeps it: the runtime may still map the memory).
    pub(crate) fn give_back(&self) {
        self.taken.store(false, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_taker_at_a_time() {
        let slot = MapSlot::new();
        assert!(slot.take());
        assert!(!slot.take());
        slot.give_back();
        assert!(slot.take());
    }
}

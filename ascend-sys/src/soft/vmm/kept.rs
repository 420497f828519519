//! Freed physical memory kept for reuse, as a driver keeps its page pool.
//!
//! On hardware, device memory exists before it is allocated: freeing a
//! physical allocation and allocating one again changes page tables only.
//! The software device's physical memory is host RAM that the kernel hands
//! out page by page on first touch, which costs far more than copying the
//! page (a fault, zeroing, the page cache). So a freed allocation's `memfd`
//! is kept, pages and all, and an `aclrtMallocPhysical` of the same size
//! takes it back. Physical memory is not initialised, on hardware either:
//! release builds leave the last user's bytes, debug builds (tests) fill
//! it with [`POISON`](crate::soft::core::physical_memory::POISON) so that code reading
//! bytes it never wrote (a restore that did not happen) fails there.
//!
//! Only memory this process made and never exported is kept (another
//! process may still map an export). What is kept is bounded
//! ([`budget`]): past it, the oldest goes back to the kernel. The device's
//! capacity counts none of it: it is free memory, as the runtime reports.

use super::PhysicalMemory;
use std::collections::VecDeque;

/// The most bytes kept: an eighth of one device's memory, at most 2 GiB.
pub(super) fn budget(device_memory: u64) -> u64 {
    (device_memory / 8).min(2 << 30)
}

/// Freed allocations' memory, oldest first.
#[derive(Default)]
pub(super) struct Kept {
    memories: VecDeque<PhysicalMemory>,
    bytes: u64,
}

impl Kept {
    /// The memory of a freed allocation of `size` bytes, if one is kept
    /// (the most recently freed).
    pub(super) fn take(&mut self, size: u64) -> Option<PhysicalMemory> {
        let index = self.memories.iter().rposition(|memory| memory.size() == size)?;
        let memory = self.memories.remove(index)?;
        self.bytes -= size;
        if cfg!(debug_assertions) {
            memory.poison();
        }
        Some(memory)
    }

    /// Keeps `memory` for reuse, giving the oldest back to the kernel while
    /// more than `budget` bytes are kept.
    pub(super) fn keep(&mut self, memory: PhysicalMemory, budget: u64) {
        if memory.size() > budget {
            return; // dropped: kept, it would push out everything else
        }
        self.bytes += memory.size();
        self.memories.push_back(memory);
        while self.bytes > budget {
            let Some(oldest) = self.memories.pop_front() else {
                break;
            };
            self.bytes -= oldest.size();
        }
    }

    /// Gives everything kept back to the kernel (before an allocation that
    /// found no room in the host's memory is tried again).
    pub(super) fn clear(&mut self) {
        self.memories.clear();
        self.bytes = 0;
    }

    /// Bytes kept.
    #[cfg(test)]
    fn bytes(&self) -> u64 {
        self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_comes_back_by_size_within_the_budget() {
        let mut kept = Kept::default();
        let memory = |size| PhysicalMemory::create(size).unwrap();
        kept.keep(memory(8192), 1 << 20);
        kept.keep(memory(4096), 1 << 20);
        assert_eq!(kept.bytes(), 12288);
        assert!(kept.take(16384).is_none());
        let back = kept.take(8192).unwrap();
        assert_eq!(back.size(), 8192);
        assert_eq!(kept.bytes(), 4096);
        // Past the budget the oldest goes.
        kept.keep(back, 10000);
        assert_eq!(kept.bytes(), 8192);
        assert!(kept.take(4096).is_none(), "the oldest was given back");
        assert!(kept.take(8192).is_some());
        assert_eq!(kept.bytes(), 0);
        // Larger than the budget: not kept, and nothing else pushed out.
        kept.keep(memory(4096), 10000);
        kept.keep(memory(16384), 10000);
        assert_eq!(kept.bytes(), 4096);
        kept.clear();
        assert_eq!(kept.bytes(), 0);
        assert!(kept.take(4096).is_none());
    }
}

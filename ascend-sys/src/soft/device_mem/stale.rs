//! Freed bytes whose pages stay resident, and when to give them back.

/// What an owner (a shard, or the space) freed since it last gave back the
/// pages of its free ranges. A small free (under
/// [`RELEASE_AT_ONCE`](crate::soft::core::device_arena::RELEASE_AT_ONCE)) leaves its
/// pages resident, so the next allocation of the same space reuses them
/// without faulting them in again, and they keep their bytes, as freed
/// memory does on hardware. The owner gives back every free range in one
/// batch once the bytes freed and not allocated again pass
/// [`NET_BUDGET`] — a thread that allocates and frees the same buffer over
/// and over never gets there — or, whatever was allocated meanwhile, once
/// [`FREED_BUDGET`] bytes were freed (allocations may land on pages that
/// were never resident, so the net count alone does not bound the RAM).
#[derive(Default)]
pub(super) struct Stale {
    /// Bytes freed minus bytes allocated since the last batch (floored at
    /// 0): about the freed bytes still resident.
    net: u64,
    /// Bytes freed since the last batch: at least the freed bytes still
    /// resident.
    freed: u64,
}

/// See [`Stale`]: 4 MiB per owner.
const NET_BUDGET: u64 = 4 << 20;

/// See [`Stale`]: 64 MiB per owner.
const FREED_BUDGET: u64 = 64 << 20;

impl Stale {
    /// Counts a small free of `size` bytes; `true` when a batch is due
    /// (and the counts start again).
    pub(super) fn freed(&mut self, size: u64) -> bool {
        self.net += size;
        self.freed += size;
        if self.net < NET_BUDGET && self.freed < FREED_BUDGET {
            return false;
        }
        *self = Self::default();
        true
    }

    /// Counts a small allocation of `size` bytes, which may reuse freed
    /// pages.
    pub(super) fn allocated(&mut self, size: u64) {
        self.net = self.net.saturating_sub(size);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_buffer_over_and_over_waits_for_the_freed_budget() {
        let mut stale = Stale::default();
        let size = 4096;
        let cycles = (0..).find(|_| {
            stale.allocated(size);
            stale.freed(size)
        });
        assert_eq!(cycles, Some(FREED_BUDGET / size - 1));
    }

    #[test]
    fn frees_without_reuse_reach_the_net_budget() {
        let mut stale = Stale::default();
        let size = 64 << 10;
        let frees = (1..).find(|_| stale.freed(size));
        assert_eq!(frees, Some(NET_BUDGET / size));
    }
}

//! Freed bytes whose pages stay resident, and when to give them back.

/// Bytes of small frees whose pages stay resident since the owner last
/// gave back the pages of its free ranges. A small free (under
/// [`RELEASE_AT_ONCE`](crate::soft::arena::RELEASE_AT_ONCE)) leaves its pages resident, so the next allocation
/// of the same space reuses them without faulting them in again, and they
/// keep their bytes, as freed memory does on hardware; once
/// [`STALE_BUDGET`] bytes were freed that way, the owner gives back every
/// free range in one batch. So each owner (a shard, the space) keeps at
/// most that much host RAM behind freed memory.
#[derive(Default)]
pub(super) struct Stale(u64);

/// See [`Stale`]: 4 MiB per owner, 36 MiB per device at most.
const STALE_BUDGET: u64 = 4 << 20;

impl Stale {
    /// Counts a small free of `size` bytes; `true` when the budget is
    /// spent (and the count starts again).
    pub(super) fn note(&mut self, size: u64) -> bool {
        self.0 += size;
        if self.0 < STALE_BUDGET {
            return false;
        }
        self.0 = 0;
        true
    }
}

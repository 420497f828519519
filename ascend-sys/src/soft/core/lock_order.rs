//! The software device's one lock order.
//!
//! Each family keeps its state behind its own lock, and an operation that
//! needs two of them takes them in the order of [`Rank`], lowest first:
//!
//! 1. [`Rank::Init`]: `aclInit` / `aclFinalize`.
//! 2. [`Rank::Streams`]: streams, events and notifies (an enqueue
//!    translates its addresses under the stream's lock).
//! 3. [`Rank::Managed`]: managed memory (`aclrtMemAllocManaged`): held
//!    over a managed allocation's whole life cycle step (placing it in
//!    device memory and mapping it for the host, or unmapping and freeing
//!    it, or a device reset's free of the device's memory), so it comes
//!    before every lock those steps take (contexts, the sharing tables when
//!    an exported allocation is freed, the device memory's shards and
//!    space); a prefetch takes it under the streams' lock.
//! 4. [`Rank::Vmm`]: physical allocations, reservations and mappings.
//! 5. [`Rank::Share`]: exports, IPC keys and IPC imports (freeing a
//!    physical allocation withdraws its export; exporting one reads it).
//! 6. [`Rank::Contexts`]: contexts and the primary contexts' retains.
//! 7. [`Rank::Registrations`]: host registrations.
//! 8. [`Rank::HostMemory`]: pinned host memory.
//! 9. [`Rank::Allocators`]: custom allocator descriptors.
//! 10. [`Rank::Peers`]: peer access between devices.
//! 11. [`Rank::MemPools`]: stream-ordered memory pools (`aclrtMemPool*`):
//!     taken after a call has looked its stream up and the current device
//!     (the streams' and contexts' locks are let go first). A pool lets it
//!     go before it takes or gives back device memory for a block (which
//!     may take the sharing tables), then takes it again; `aclrtFree`
//!     takes it alone, to refuse a pool's block.
//! 12. [`Rank::DeviceShard`]: one shard of a device's `aclrtMalloc` memory.
//! 13. [`Rank::DeviceSpace`]: a device's space (slabs and large
//!     allocations).
//! 14. [`Rank::Bytes`]: the byte stripes of one copy or fill step (a step
//!     takes its one or two stripes together, lower stripe first).
//! 15. [`Rank::Mbufs`]: message buffers (`aclrtAllocBuf` & co). Their data
//!     areas are the family's own host memory, so the lock calls no other
//!     family while held; it is last so any call may take it.
//!
//! A thread never takes a lock of a rank at or below one it holds. Debug
//! builds check this on every acquisition and panic with both ranks named,
//! so a test run catches an inversion before it can deadlock. Leaf locks
//! that never call out while held (the fault list, the misuse sink, a
//! stream's queue, an event's records, a notify's word, the devices whose stream tasks
//! failed, the core's map of host ranges, the sanitizer's clocks and
//! shadow, the callback subscriptions and their threads' inboxes, the
//! state callback registries) are outside the order.

use crossbeam_utils::sync::{ShardedLock, ShardedLockReadGuard, ShardedLockWriteGuard};
use std::ops::{Deref, DerefMut};
use std::sync::{Mutex, MutexGuard};

/// The place of a lock in the order: a thread holding a lock of one rank
/// takes only locks of higher ranks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Rank {
    /// `aclInit` / `aclFinalize` state.
    Init = 0,
    /// Streams and events.
    Streams = 1,
    /// Managed memory (`aclrtMemAllocManaged` and its advice).
    Managed = 2,
    /// Virtual memory management: physical allocations, reservations and
    /// mappings.
    Vmm = 3,
    /// Memory shared with other processes.
    Share = 4,
    /// Contexts and the primary contexts' retains.
    Contexts = 5,
    /// Host registrations (`aclrtHostRegister*`).
    Registrations = 6,
    /// Pinned host memory (`aclrtMallocHost`).
    HostMemory = 7,
    /// Custom allocator descriptors and their registrations on streams.
    Allocators = 8,
    /// Peer access between devices.
    Peers = 9,
    /// Stream-ordered memory pools (`aclrtMemPool*`).
    MemPools = 10,
    /// One shard of a device's `aclrtMalloc` memory.
    DeviceShard = 11,
    /// One device's space: slabs handed to shards, and large allocations.
    DeviceSpace = 12,
    /// The byte stripes of one copy or fill step.
    Bytes = 13,
    /// Message buffers: headers, data areas and chains.
    Mbufs = 14,
}

#[cfg(debug_assertions)]
thread_local! {
    /// The ranks this thread holds, one bit each.
    static HELD: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// Proof that this thread entered `rank`; leaving it happens on drop. Take
/// it *before* blocking on the lock, so an inversion panics instead of
/// deadlocking.
#[must_use]
pub(crate) struct Entered {
    #[cfg(debug_assertions)]
    rank: Rank,
}

/// Notes that this thread is about to take a lock of `rank`.
///
/// # Panics
///
/// In debug builds, when this thread already holds a lock of `rank` or of a
/// higher rank: a lock-order violation, a bug of the software device.
pub(crate) fn enter(rank: Rank) -> Entered {
    #[cfg(debug_assertions)]
    {
        let held = HELD.with(std::cell::Cell::get);
        let at_or_above = held >> (rank as u32);
        assert!(
            at_or_above == 0,
            "software device lock order violated: taking {rank:?} while holding {:?}",
            highest(held)
        );
        HELD.with(|cell| cell.set(held | 1 << rank as u32));
        Entered { rank }
    }
    #[cfg(not(debug_assertions))]
    {
        let _ = rank;
        Entered {}
    }
}

/// Whether this thread holds a lock of `rank` (debug builds only): for a
/// family that requires its caller to hold another family's lock without
/// naming that family.
#[cfg(debug_assertions)]
pub(crate) fn holds(rank: Rank) -> bool {
    HELD.with(std::cell::Cell::get) & (1 << rank as u32) != 0
}

/// A lock's guard with its place in the lock order (left when dropped).
pub(crate) struct Held<G> {
    guard: G,
    _entered: Entered,
}

/// A mutex's guard with its place in the lock order.
pub(crate) type Ranked<'a, T> = Held<MutexGuard<'a, T>>;

impl<G: Deref> Deref for Held<G> {
    type Target = G::Target;
    fn deref(&self) -> &G::Target {
        &self.guard
    }
}

impl<G: DerefMut> DerefMut for Held<G> {
    fn deref_mut(&mut self) -> &mut G::Target {
        &mut self.guard
    }
}

/// Enters `rank`, then takes the lock with `take` (so an inversion panics
/// instead of deadlocking).
pub(crate) fn hold<G>(rank: Rank, take: impl FnOnce() -> G) -> Held<G> {
    let entered = enter(rank);
    Held {
        guard: take(),
        _entered: entered,
    }
}

/// A family's tables behind a sharded reader-writer lock of one rank:
/// readers on different threads touch different cache lines; a writer
/// takes every shard.
pub(crate) struct RankedRw<T> {
    lock: ShardedLock<T>,
    rank: Rank,
}

impl<T> RankedRw<T> {
    pub(crate) fn new(value: T, rank: Rank) -> Self {
        Self {
            lock: ShardedLock::new(value),
            rank,
        }
    }

    /// The tables, locked for writing.
    pub(crate) fn write(&self) -> Held<ShardedLockWriteGuard<'_, T>> {
        // A panic while holding the lock (a bug) must not take every later
        // call down with it: the tables are updated in single steps.
        hold(self.rank, || {
            self.lock.write().unwrap_or_else(|poisoned| poisoned.into_inner())
        })
    }

    /// The tables, locked for reading.
    pub(crate) fn read(&self) -> Held<ShardedLockReadGuard<'_, T>> {
        hold(self.rank, || {
            self.lock.read().unwrap_or_else(|poisoned| poisoned.into_inner())
        })
    }
}

/// Locks `mutex`, a lock of `rank`.
pub(crate) fn lock<T>(mutex: &Mutex<T>, rank: Rank) -> Ranked<'_, T> {
    // A panic while holding the lock (a bug) must not take every later
    // call down with it: the bookkeeping is updated in single steps.
    hold(rank, || mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner()))
}

#[cfg(debug_assertions)]
fn highest(held: u32) -> Option<Rank> {
    [
        Rank::Mbufs,
        Rank::Bytes,
        Rank::DeviceSpace,
        Rank::DeviceShard,
        Rank::MemPools,
        Rank::Peers,
        Rank::Allocators,
        Rank::HostMemory,
        Rank::Registrations,
        Rank::Contexts,
        Rank::Share,
        Rank::Vmm,
        Rank::Managed,
        Rank::Streams,
        Rank::Init,
    ]
    .into_iter()
    .find(|&rank| held & (1 << rank as u32) != 0)
}

impl Drop for Entered {
    fn drop(&mut self) {
        #[cfg(debug_assertions)]
        {
            let bit = 1 << self.rank as u32;
            // `try_with`: a guard may be dropped while the thread's locals
            // are being torn down.
            let _ = HELD.try_with(|cell| cell.set(cell.get() & !bit));
        }
    }
}

#[cfg(all(test, debug_assertions))]
mod tests {
    use super::*;

    #[test]
    fn increasing_ranks_are_allowed_and_released() {
        let vmm = enter(Rank::Vmm);
        let share = enter(Rank::Share);
        let shard = enter(Rank::DeviceShard);
        let bytes = enter(Rank::Bytes);
        drop((bytes, shard));
        // Released ranks may be taken again.
        let again = enter(Rank::DeviceSpace);
        drop((again, share, vmm));
        let _fresh = enter(Rank::Vmm);
    }

    #[test]
    #[should_panic(expected = "taking Vmm while holding Some(Share)")]
    fn a_lower_rank_under_a_higher_one_panics() {
        let _share = enter(Rank::Share);
        let _vmm = enter(Rank::Vmm);
    }

    #[test]
    #[should_panic(expected = "taking DeviceShard while holding Some(DeviceShard)")]
    fn the_same_rank_twice_panics() {
        let _one = enter(Rank::DeviceShard);
        let _two = enter(Rank::DeviceShard);
    }
}

//! This thread's last allocation: the one it placed or found last, found
//! again without its owner's lock.
//!
//! A thread that allocates a buffer and then fills or copies into it (a
//! zeroed buffer: `aclrtMalloc`, then `aclrtMemset`) would otherwise take
//! the owner's lock twice (to place the allocation, then to find it) on
//! top of the byte lock of the fill. The entry remembers the allocation
//! and the owner's count of removals when it was read under the owner's
//! lock; while the count is unchanged no allocation of that owner was
//! freed (nor parked for reuse) since, so the allocation is still live
//! and the same. A free bumps the count under the owner's lock, so a
//! lookup that happens after the free (in any thread) misses and takes the
//! lock as before: freed memory is refused as it always was.
//!
//! An allocation's owner never changes while it is live (a slab changes
//! hands only when empty), and every removal goes through the owner's
//! lock, so the owner's count covers every way the allocation can go.
//! The answer is a snapshot, as a translation under the lock is: a free
//! racing with the lookup (a caller's error) may come just after either.
//! (The remembered copy's `exported` flag may be out of date: only the
//! free reads that flag, from the owner's table under its lock.)

use super::DeviceAllocation;
use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};

/// One owner's count of removed allocations: bumped under the owner's lock
/// by every removal, read without it.
#[derive(Default)]
pub(super) struct Removals(AtomicU64);

impl Removals {
    /// The count, with the owner's lock held (so no removal runs).
    pub(super) fn now(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }

    /// Counts one removal, with the owner's lock held: a plain store, as
    /// no other thread writes the count meanwhile.
    pub(super) fn bump(&self) {
        self.0
            .store(self.0.load(Ordering::Relaxed).wrapping_add(1), Ordering::Release);
    }
}

#[derive(Clone, Copy)]
struct Entry {
    start: usize,
    allocation: DeviceAllocation,
    /// The device view of `start`.
    view: *mut u8,
    removals: &'static Removals,
    /// `removals` when the entry was read under the owner's lock.
    seen: u64,
}

thread_local! {
    static LAST: Cell<Option<Entry>> = const { Cell::new(None) };
}

/// Remembers `allocation` at `start` (its bytes at `view` in the device
/// view), read under the lock of the owner whose count is `removals` (so
/// `removals.now()` is its state then).
pub(super) fn remember(start: usize, allocation: DeviceAllocation, view: *mut u8, removals: &'static Removals) {
    let entry = Entry {
        start,
        allocation,
        view,
        removals,
        seen: removals.now(),
    };
    // A thread being torn down has no entry: then nothing is remembered.
    let _ = LAST.try_with(|last| last.set(Some(entry)));
}

/// The remembered entry if `address` lies inside it and no allocation of
/// its owner was removed since it was remembered.
fn live_entry(address: usize) -> Option<Entry> {
    let entry = LAST.try_with(Cell::get).ok().flatten()?;
    let inside = address.wrapping_sub(entry.start) < entry.allocation.size as usize;
    (inside && entry.removals.0.load(Ordering::Acquire) == entry.seen).then_some(entry)
}

/// The remembered allocation containing `address`, with its start, if it
/// is still live.
pub(super) fn lookup(address: usize) -> Option<(usize, DeviceAllocation)> {
    live_entry(address).map(|entry| (entry.start, entry.allocation))
}

/// The device view of `[address, address + length)` and its device, if
/// the range lies inside the remembered allocation and it is still live
/// (otherwise the caller translates as usual, and refuses what it
/// refuses).
pub(super) fn view(address: usize, length: usize) -> Option<(*mut u8, i32)> {
    let entry = live_entry(address)?;
    let into = address - entry.start;
    (length <= entry.allocation.size as usize - into).then(|| {
        // SAFETY: `into` is less than the allocation's size, so the pointer
        // stays inside its bytes of the device view.
        (unsafe { entry.view.add(into) }, entry.allocation.device)
    })
}

//! [`CacheSlot`]: where one thread cache lives in its pool, held by the
//! thread that owns it without an atomic read-modify-write.
//!
//! A pool hit holds the calling thread's cache twice: to take a block and
//! to put it back. Holding it by an atomic swap costs a locked instruction
//! each time (a full fence on x86), a fifth of a hit. So a slot belongs to
//! the first thread that uses it, and that thread holds it with plain
//! stores: it raises `in_use`, then checks that no one else announced a
//! hold in `foreign`. Anyone else (a flush, a thread that shares the slot)
//! raises `foreign`, sets `taken` by a swap (which keeps such holders
//! apart), makes every thread of the process pass a full memory barrier
//! (`membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED)`), then waits until
//! `in_use` is down. That barrier is the half of a fence the owner leaves
//! out: after it, either the other holder sees the owner's `in_use`, or
//! the owner sees `foreign` and lets go (an asymmetric fence, as in
//! userspace RCU).
//!
//! A thread that meets a slot owned by another thread turns it *shared*
//! for good (one barrier): from then on a hit only sets `taken` by a swap
//! (a flush still announces itself, and needs no barrier), as all do when
//! the kernel offers no `membarrier` (the slots are shared from the
//! start).

use std::cell::UnsafeCell;
use std::marker::PhantomData;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering, compiler_fence};

/// `owner` of a slot no thread owns yet.
const UNOWNED: usize = 0;
/// `owner` of a slot that every holder takes by a swap of `taken`.
const SHARED: usize = usize::MAX;

/// A value (a thread cache) on cache lines of its own, with who may hold
/// it how, and a part `S` that anyone may read while the value is held
/// (atomics its holders write). Threads are named by tokens: unique,
/// neither 0 nor `usize::MAX`.
#[repr(align(128))]
pub(in crate::pool) struct CacheSlot<T, S = ()> {
    /// The value, in the slot itself: a hit reaches it without loading a
    /// pointer first (a hit is a chain of dependent loads).
    value: UnsafeCell<T>,
    /// Set while a holder other than the owner has the value: what keeps
    /// those holders apart.
    taken: AtomicBool,
    /// The owner's token, [`UNOWNED`] or [`SHARED`].
    owner: AtomicUsize,
    /// Raised by the owner for the length of its hold, and for a moment by
    /// each attempt that finds `foreign` raised (plain stores).
    in_use: AtomicBool,
    /// How many other holders announced themselves: the owner lets go
    /// while any has.
    foreign: AtomicUsize,
    /// Readable without a hold.
    shared: S,
}

/// How a [`SlotHold`] holds its slot.
#[derive(Clone, Copy, PartialEq, Eq)]
enum HoldKind {
    /// The owner's hold, by `in_use`.
    Owner,
    /// A hold of a shared slot, by `taken`.
    Taken,
    /// A hold by `taken` that announced itself in `foreign`.
    Announced,
}

/// The owner's hold in [`CacheSlot::with_held`]: lets go when dropped,
/// also while unwinding. A raw pointer to the slot's `in_use`: the store
/// may let a flush free the slot, so nothing of it is borrowed across.
struct OwnerHold(*const AtomicBool);

impl Drop for OwnerHold {
    #[inline(always)]
    fn drop(&mut self) {
        // SAFETY: the slot is live until this store lets go of it
        // (`CacheSlot::with_held`'s promise); the reference made for it
        // lasts for the store alone, as in `Arc::drop`.
        unsafe { (*self.0).store(false, Ordering::Release) };
    }
}

/// Exclusive access to a slot's value until dropped.
pub(in crate::pool) struct SlotHold<'a, T, S = ()> {
    slot: &'a CacheSlot<T, S>,
    /// Not `Send` (as a `MutexGuard`): an owner's hold is the owner
    /// thread's, which would hold again on `in_use` if the hold moved.
    _not_send: PhantomData<*const ()>,
    kind: HoldKind,
}

/// Whether this process can make every thread pass a memory barrier
/// (registered once; the kernel refuses the barrier without it).
fn barriers_available() -> bool {
    // Miri runs no system calls of rustix's (inline assembly): it checks
    // the shared slots' protocol, which the process falls back to.
    if cfg!(miri) {
        return false;
    }
    static AVAILABLE: OnceLock<bool> = OnceLock::new();
    *AVAILABLE.get_or_init(|| {
        use rustix::thread::{MembarrierCommand, membarrier, membarrier_query};
        let offered = membarrier_query();
        let usable = offered.contains_command(MembarrierCommand::PrivateExpedited)
            && offered.contains_command(MembarrierCommand::RegisterPrivateExpedited)
            && membarrier(MembarrierCommand::RegisterPrivateExpedited).is_ok();
        if !usable {
            log::debug!("pool caches: no membarrier; every cache hold is an atomic swap");
        }
        usable
    })
}

/// Makes every running thread of the process pass a full memory barrier.
fn heavy_barrier() {
    use rustix::thread::{MembarrierCommand, membarrier};
    let barrier = || membarrier(MembarrierCommand::PrivateExpedited);
    // A forked child may not inherit its parent's registration: register
    // again once before giving up.
    let passed = barrier().or_else(|_| {
        membarrier(MembarrierCommand::RegisterPrivateExpedited)?;
        barrier()
    });
    if let Err(error) = passed {
        // The kernel offered the barrier and took the registration, so it
        // has no ground to refuse. If it does, no order between an owner
        // and this holder can be proven, and going on could give one cache
        // to two threads at once.
        log::error!("pool caches: membarrier failed after registering ({error}); aborting");
        std::process::abort();
    }
}

/// Waits a little, then yields, while another holder finishes.
fn back_off(spins: &mut u32) {
    *spins += 1;
    if *spins < 64 {
        std::hint::spin_loop();
    } else {
        std::thread::yield_now();
    }
}

impl<T, S> CacheSlot<T, S> {
    /// A slot holding `value` and `shared`: unowned, or shared from the
    /// start when the kernel offers no barrier for the owner's side.
    pub(in crate::pool) fn new(value: T, shared: S) -> Self {
        Self::with_owner(value, shared, if barriers_available() { UNOWNED } else { SHARED })
    }

    fn with_owner(value: T, shared: S, owner: usize) -> Self {
        Self {
            value: UnsafeCell::new(value),
            taken: AtomicBool::new(false),
            owner: AtomicUsize::new(owner),
            in_use: AtomicBool::new(false),
            foreign: AtomicUsize::new(0),
            shared,
        }
    }

    /// The value, through a unique borrow of the slot (no other holder can
    /// exist: a pool's state being dropped).
    pub(in crate::pool) fn get_mut(&mut self) -> &mut T {
        self.value.get_mut()
    }

    /// The part anyone may read, held or not.
    #[inline]
    pub(in crate::pool) fn shared(&self) -> &S {
        &self.shared
    }

    /// Runs `work` on the value (and the shared part) held by `thread`, with
    /// `input`; gives `input` back, without running `work`, when someone
    /// else holds it. What a pool hit calls: the owner's hold is inlined
    /// and let go by a plain store, every other kind of hold is out of
    /// line ([`CacheSlot::try_hold`]).
    ///
    /// The slot is reached through a raw pointer, as `Arc::drop` reaches
    /// its counts: the store that lets go may let a flush free the slot
    /// (when `work` moved the last hold on the pool into the value), so no
    /// reference to the slot may outlive it. References made here end
    /// with `work`; the store is the last access.
    ///
    /// # Safety
    ///
    /// `this` points to a live slot, which stays live until this thread
    /// lets go of it.
    #[inline(always)]
    pub(in crate::pool) unsafe fn with_held<I, R>(
        this: *const Self,
        thread: usize,
        input: I,
        work: impl FnOnce(&mut T, &S, I) -> R,
    ) -> Result<R, I> {
        // SAFETY: live until this thread lets go (the caller's promise),
        // which it does last.
        if unsafe { (*this).owner.load(Ordering::Relaxed) } != thread {
            // SAFETY: as above.
            return unsafe { Self::with_held_slowly(this, thread, input, work) };
        }
        // SAFETY: as above; owned by `thread`, as just read.
        unsafe { Self::with_owner_hold(this, thread, input, work) }
    }

    /// [`CacheSlot::with_held`] for the slot's owner alone: gives `input`
    /// back when `thread` does not own the slot (or someone else holds
    /// it). A pool hit's fast path: no call on any path, so the caller
    /// keeps its values in registers that need no saving.
    ///
    /// # Safety
    ///
    /// As [`CacheSlot::with_held`].
    #[inline(always)]
    pub(in crate::pool) unsafe fn with_owned<I, R>(
        this: *const Self,
        thread: usize,
        input: I,
        work: impl FnOnce(&mut T, &S, I) -> R,
    ) -> Result<R, I> {
        // SAFETY: live (the caller's promise).
        if unsafe { (*this).owner.load(Ordering::Relaxed) } != thread {
            return Err(input);
        }
        // SAFETY: as above; owned by `thread`, as just read.
        unsafe { Self::with_owner_hold(this, thread, input, work) }
    }

    /// The owner's hold of [`CacheSlot::with_held`].
    ///
    /// # Safety
    ///
    /// As [`CacheSlot::with_held`], and `thread` was seen owning the slot
    /// (a thread that never owned it would lower the owner's `in_use`).
    #[inline(always)]
    unsafe fn with_owner_hold<I, R>(
        this: *const Self,
        thread: usize,
        input: I,
        work: impl FnOnce(&mut T, &S, I) -> R,
    ) -> Result<R, I> {
        // SAFETY: live (the caller's promise); the reference ends with the
        // call.
        if !unsafe { &*this }.enter_owned(thread) {
            return Err(input);
        }
        // Lets go also while `work` unwinds.
        // SAFETY: as above; `in_use` is reached by a raw pointer, so the
        // guard holds no reference across its store.
        let owner_hold = OwnerHold(unsafe { &raw const (*this).in_use });
        // SAFETY: held by the owner (`enter_owned`) until `owner_hold`
        // drops after `work`, the last use of these references.
        let result = unsafe { work(&mut *(*this).value.get(), &(*this).shared, input) };
        drop(owner_hold);
        Ok(result)
    }

    /// [`CacheSlot::with_held`] by any other hold than the owner's.
    ///
    /// # Safety
    ///
    /// As [`CacheSlot::with_held`].
    #[cold]
    #[inline(never)]
    unsafe fn with_held_slowly<I, R>(
        this: *const Self,
        thread: usize,
        input: I,
        work: impl FnOnce(&mut T, &S, I) -> R,
    ) -> Result<R, I> {
        // SAFETY: live until the hold is let go (the caller's promise);
        // the hold's drop makes its store the last access (`SlotHold`'s
        // reference is not used after it).
        let Some(mut held) = (unsafe { &*this }).try_hold(thread) else {
            return Err(input);
        };
        let (value, shared) = held.parts();
        Ok(work(value, shared, input))
    }

    /// The value held by `thread`, unless someone else holds it (a miss
    /// for a pool hit). It waits only once in a slot's life: when it turns
    /// a slot owned by another thread shared, for that owner's hold (a few
    /// instructions of a hit) to end.
    #[inline]
    pub(in crate::pool) fn try_hold(&self, thread: usize) -> Option<SlotHold<'_, T, S>> {
        match self.owner.load(Ordering::Relaxed) {
            owner if owner == thread => self.try_hold_owned(thread),
            SHARED => self.try_take(HoldKind::Taken),
            _ => self.try_hold_unowned(thread),
        }
    }

    /// The value held by `thread`, once the holder before lets go. Holders
    /// wait only for holds that never wait: a hit's, or (a flush, a turn
    /// to shared) an owner's, under the pool's state lock, which a hit
    /// never takes.
    pub(in crate::pool) fn hold(&self, thread: usize) -> SlotHold<'_, T, S> {
        let mut spins = 0;
        loop {
            if let Some(held) = self.try_hold(thread) {
                return held;
            }
            back_off(&mut spins);
        }
    }

    /// The owner's hold: no read-modify-write.
    #[inline]
    fn try_hold_owned(&self, thread: usize) -> Option<SlotHold<'_, T, S>> {
        self.enter_owned(thread).then_some(SlotHold {
            slot: self,
            _not_send: PhantomData,
            kind: HoldKind::Owner,
        })
    }

    /// Raises `in_use` for `thread`, the owner: `true` when it holds the
    /// slot (let go by lowering `in_use`), `false` (lowered again) when
    /// another holder announced itself or the slot turned shared.
    #[inline(always)]
    fn enter_owned(&self, thread: usize) -> bool {
        // Holds are never nested on one thread.
        debug_assert!(!self.in_use.load(Ordering::Relaxed), "a cache hold nested");
        self.in_use.store(true, Ordering::Relaxed);
        // The owner's half of the fence: the compiler keeps the store above
        // before the loads below; another holder's barrier does the rest.
        compiler_fence(Ordering::SeqCst);
        // Still the owner: a slot turned shared after this thread looked is
        // left to the swaps.
        if self.foreign.load(Ordering::Acquire) == 0 && self.owner.load(Ordering::Relaxed) == thread {
            return true;
        }
        self.in_use.store(false, Ordering::Release);
        false
    }

    /// A hold by a thread that does not own the slot: the first thread
    /// claims an unowned slot; another thread turns an owned one shared.
    #[cold]
    fn try_hold_unowned(&self, thread: usize) -> Option<SlotHold<'_, T, S>> {
        match self.owner.load(Ordering::Relaxed) {
            SHARED => self.try_take(HoldKind::Taken),
            UNOWNED => match self
                .owner
                .compare_exchange(UNOWNED, thread, Ordering::SeqCst, Ordering::Relaxed)
            {
                Ok(_) => self.try_hold_owned(thread),
                Err(_) => self.try_hold(thread),
            },
            _ => {
                self.announce();
                let Some(held) = self.try_take(HoldKind::Announced) else {
                    self.withdraw();
                    return None;
                };
                heavy_barrier();
                self.wait_for_owner();
                self.owner.store(SHARED, Ordering::Relaxed);
                Some(held)
            }
        }
    }

    /// Takes the value from the other holders that are not its owner.
    #[inline]
    fn try_take(&self, kind: HoldKind) -> Option<SlotHold<'_, T, S>> {
        if self.taken.swap(true, Ordering::AcqRel) {
            return None;
        }
        Some(SlotHold {
            slot: self,
            _not_send: PhantomData,
            kind,
        })
    }

    /// Tells the owner to let go and not hold again until withdrawn.
    fn announce(&self) {
        self.foreign.fetch_add(1, Ordering::SeqCst);
    }

    fn withdraw(&self) {
        self.foreign.fetch_sub(1, Ordering::Release);
    }

    /// Waits until the owner's hold, if any, is over.
    fn wait_for_owner(&self) {
        let mut spins = 0;
        while self.in_use.load(Ordering::Acquire) {
            back_off(&mut spins);
        }
    }

    /// Whether an owner may hold the slot by `in_use` (read after
    /// announcing).
    fn may_have_owner(&self) -> bool {
        self.owner.load(Ordering::SeqCst) != SHARED
    }
}

/// Holds every slot of `slots` (a flush, under the pool's state lock):
/// each is announced and taken in order, then one barrier serves them all.
pub(in crate::pool) fn hold_all<T, S>(slots: &[CacheSlot<T, S>]) -> Vec<SlotHold<'_, T, S>> {
    let held: Vec<SlotHold<'_, T, S>> = slots
        .iter()
        .map(|slot| {
            slot.announce();
            let mut spins = 0;
            loop {
                if let Some(held) = slot.try_take(HoldKind::Announced) {
                    return held;
                }
                back_off(&mut spins);
            }
        })
        .collect();
    if slots.iter().any(CacheSlot::may_have_owner) {
        heavy_barrier();
        slots.iter().for_each(CacheSlot::wait_for_owner);
    }
    held
}

impl<T, S> SlotHold<'_, T, S> {
    /// The held value and the slot's part that anyone may read, for as
    /// long as the hold lasts.
    #[inline]
    pub(in crate::pool) fn parts(&mut self) -> (&mut T, &S) {
        let shared = &self.slot.shared;
        (&mut **self, shared)
    }
}

impl<T, S> std::ops::Deref for SlotHold<'_, T, S> {
    type Target = T;

    #[inline]
    fn deref(&self) -> &T {
        // SAFETY: this holder is the only one until it lets go in `drop`:
        // other holders find `taken` set, the owner finds `foreign` raised
        // (or, raised too late, is waited for); the value lives as long as
        // the slot.
        unsafe { &*self.slot.value.get() }
    }
}

impl<T, S> std::ops::DerefMut for SlotHold<'_, T, S> {
    #[inline]
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: as in `deref`; `&mut self` makes this access exclusive.
        unsafe { &mut *self.slot.value.get() }
    }
}

impl<T, S> Drop for SlotHold<'_, T, S> {
    /// Lets go; the store that lets the next holder of its kind in is the
    /// last access to the slot (for an announced hold, the withdrawal may
    /// let the owner in first: it finds the slot shared, or is the pool's
    /// own flush, which keeps the pool alive).
    #[inline]
    fn drop(&mut self) {
        match self.kind {
            HoldKind::Owner => self.slot.in_use.store(false, Ordering::Release),
            HoldKind::Taken => self.slot.taken.store(false, Ordering::Release),
            HoldKind::Announced => {
                // `taken` last: once it is down, the slot may be gone (the
                // value may hold the last reference to the pool that owns
                // the slot, and a flush waiting for `taken` may free it).
                self.slot.withdraw();
                self.slot.taken.store(false, Ordering::Release);
            }
        }
    }
}

// SAFETY: the slot hands its value to one holder at a time, on whichever
// thread holds it, so it is shareable when the value can move between
// threads; its shared part is reached through `&` only.
unsafe impl<T: Send, S: Sync> Sync for CacheSlot<T, S> {}
// SAFETY: as above; the slot owns its value and its shared part.
unsafe impl<T: Send, S: Send> Send for CacheSlot<T, S> {}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Barrier;

    /// A value that notices two holders at once: each hold marks it with
    /// its holder, writes its count, and checks the mark is still its own
    /// (volatile accesses, so the compiler cannot fold them away).
    #[derive(Default)]
    struct Checked {
        holder: usize,
        count: u64,
    }

    /// Writes per hold: long enough for a second holder to land in the
    /// middle of one.
    const WRITES: u64 = 64;

    fn visit(value: &mut Checked, who: usize) {
        let (holder, count) = (&raw mut value.holder, &raw mut value.count);
        // SAFETY: both point into `value`, borrowed mutably for the call.
        unsafe {
            assert_eq!(holder.read_volatile(), 0, "two holders at once");
            holder.write_volatile(who);
            for _ in 0..WRITES {
                count.write_volatile(count.read_volatile() + 1);
            }
            assert_eq!(holder.read_volatile(), who, "two holders at once");
            holder.write_volatile(0);
        }
    }

    /// Ends the test process if the test that armed it runs past a minute:
    /// a broken protocol hangs (a holder spinning for a hold that never
    /// ends) more often than it fails, and a hang must not stall the suite.
    struct Watchdog(std::sync::Arc<AtomicBool>);

    impl Watchdog {
        fn arm(test: &'static str) -> Self {
            let done = std::sync::Arc::new(AtomicBool::new(false));
            let watched = std::sync::Arc::clone(&done);
            std::thread::spawn(move || {
                let start = std::time::Instant::now();
                while !watched.load(Ordering::Relaxed) {
                    if start.elapsed() > std::time::Duration::from_secs(60) {
                        eprintln!("{test}: still running after a minute: a hold never ended");
                        std::process::abort();
                    }
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
            });
            Self(done)
        }
    }

    impl Drop for Watchdog {
        fn drop(&mut self) {
            self.0.store(true, Ordering::Relaxed);
        }
    }

    /// Whether the owner's side of the protocol runs here; the tests of
    /// owned slots say so when it does not (a sandbox without membarrier),
    /// and then check the shared slots the process falls back to.
    fn owners_here() -> bool {
        let here = barriers_available();
        if !here {
            eprintln!("no membarrier here: slots are shared from the start");
        }
        here
    }

    /// One hold by `thread` for a visit: through `try_hold` on even
    /// rounds, through `with_held` (the pool hit's way) on odd ones.
    /// Whether it held.
    fn owner_visit(slot: &CacheSlot<Checked>, thread: usize, round: u64) -> bool {
        if round.is_multiple_of(2) {
            slot.try_hold(thread)
                .map(|mut value| visit(&mut value, thread))
                .is_some()
        } else {
            // SAFETY: `slot` outlives the call.
            unsafe { CacheSlot::with_held(slot, thread, (), |value, (), ()| visit(value, thread)) }.is_ok()
        }
    }

    /// Thread 1 holds through `try_hold` and `with_held` until it held
    /// `HOLDS` times,
    /// while `flushers` threads hold by `hold_all` and, with `share`,
    /// thread 2 holds by `try_hold` (turning an owned slot shared); every
    /// hold that succeeded is counted exactly once.
    fn race(slot: &CacheSlot<Checked>, share: bool, flushers: usize) {
        let _watchdog = Watchdog::arm("race");
        // Fewer under Miri, which runs them a thousand times slower.
        const HOLDS: u64 = if cfg!(miri) { 300 } else { 50_000 };
        const OTHER_ROUNDS: u64 = if cfg!(miri) { 30 } else { 1_000 };
        let start = Barrier::new(1 + flushers + usize::from(share));
        let others: u64 = std::thread::scope(|scope| {
            scope.spawn(|| {
                start.wait();
                let (mut held, mut round) = (0u64, 0u64);
                while held < HOLDS {
                    round += 1;
                    if owner_visit(slot, 1, round) {
                        held += 1;
                    }
                }
            });
            let sharer = share.then(|| {
                scope.spawn(|| {
                    start.wait();
                    // Goes on past its rounds until it has held once: a
                    // flusher may hold the slot through all of them (it
                    // sleeps in a system call while holding), and the
                    // turn to shared is the first hold.
                    let (mut held, mut rounds) = (0u64, 0u64);
                    while rounds < OTHER_ROUNDS || held == 0 {
                        rounds += 1;
                        if let Some(mut value) = slot.try_hold(2) {
                            visit(&mut value, 2);
                            held += 1;
                        } else {
                            std::hint::spin_loop();
                        }
                    }
                    held
                })
            });
            let flushers: Vec<_> = (0..flushers)
                .map(|flusher| {
                    let start = &start;
                    scope.spawn(move || {
                        start.wait();
                        let mut held = 0u64;
                        for _ in 0..OTHER_ROUNDS {
                            for mut value in hold_all(std::slice::from_ref(slot)) {
                                visit(&mut value, 10 + flusher);
                                held += 1;
                            }
                        }
                        held
                    })
                })
                .collect();
            sharer
                .into_iter()
                .chain(flushers)
                .map(|other| other.join().expect("another holder"))
                .sum()
        });
        if share {
            // Turned shared by thread 2, not by the final hold below.
            assert_eq!(slot.owner.load(Ordering::Relaxed), SHARED);
        }
        let value = slot.try_hold(3).expect("free at the end");
        assert_eq!(value.count, WRITES * (HOLDS + others));
    }

    #[test]
    fn an_owned_slot_is_held_by_one_holder_at_a_time() {
        owners_here();
        race(&CacheSlot::new(Checked::default(), ()), false, 1);
    }

    #[test]
    fn two_flushes_and_the_owner_hold_one_at_a_time() {
        owners_here();
        race(&CacheSlot::new(Checked::default(), ()), false, 2);
    }

    #[test]
    fn a_slot_met_by_a_second_thread_turns_shared_and_stays_exclusive() {
        let slot = CacheSlot::new(Checked::default(), ());
        drop(slot.try_hold(1));
        race(&slot, true, 1);
    }

    /// Raises its flag when dropped, panicking or not.
    struct StopOnDrop<'a>(&'a AtomicBool);

    impl Drop for StopOnDrop<'_> {
        fn drop(&mut self) {
            self.0.store(true, Ordering::Relaxed);
        }
    }

    /// The turn to shared races with the owner's holds, many times: each
    /// round a fresh slot, its owner holding in a loop, and a second
    /// thread turning it shared in the middle.
    #[test]
    fn turning_shared_races_with_the_owner() {
        if !owners_here() {
            return;
        }
        let _watchdog = Watchdog::arm("turning_shared_races_with_the_owner");
        for _ in 0..200 {
            let slot = CacheSlot::new(Checked::default(), ());
            drop(slot.try_hold(1).expect("the first hold claims the slot"));
            let (stop, holding) = (AtomicBool::new(false), AtomicBool::new(false));
            let owner_holds = std::thread::scope(|scope| {
                let owner = scope.spawn(|| {
                    let (mut held, mut round) = (0u64, 0u64);
                    while !stop.load(Ordering::Relaxed) {
                        round += 1;
                        if owner_visit(&slot, 1, round) {
                            held += 1;
                            holding.store(true, Ordering::Relaxed);
                        }
                    }
                    held
                });
                // The turn starts once the owner is holding in its loop.
                while !holding.load(Ordering::Relaxed) {
                    std::hint::spin_loop();
                }
                // Stops the owner even when the visit below fails, so the
                // scope can end.
                let stopper = StopOnDrop(&stop);
                let mut value = slot.hold(2);
                visit(&mut value, 2);
                drop(value);
                drop(stopper);
                owner.join().expect("the owner")
            });
            assert_eq!(slot.owner.load(Ordering::Relaxed), SHARED);
            let value = slot.try_hold(3).expect("free at the end");
            assert_eq!(value.count, WRITES * (owner_holds + 1));
        }
    }

    #[test]
    fn a_shared_slot_without_barriers_is_held_by_swaps() {
        let slot = CacheSlot::with_owner(Checked::default(), (), SHARED);
        race(&slot, true, 1);
        assert_eq!(slot.owner.load(Ordering::Relaxed), SHARED);
    }

    /// What may own a slot: a value of the slot may hold the last
    /// reference to it (as a cached block holds its pool).
    struct SlotOwner {
        /// With a part that never changes, as the pool has (Miri protects
        /// the frozen bytes a call's reference covers).
        slot: CacheSlot<Vec<std::sync::Arc<SlotOwner>>, u64>,
    }

    /// A hold may move the last reference to the slot's owner into the
    /// value; a flush may then take it and free the slot right after the
    /// hold's last store. The freeing thread must find the hold over, and
    /// `with_held` must keep no reference to the slot across that store
    /// (Miri reports memory freed while a call holds a reference to it;
    /// the interleaving is rare, so a clean run is evidence, not proof:
    /// 100 rounds under Miri did not catch a `&self` form of the slow
    /// path either). Under Miri the slots are shared (no `membarrier`),
    /// so this runs the slow path; the owner's reaches the slot the same
    /// way, by raw pointers.
    #[test]
    fn a_slot_freed_right_after_a_hold_lets_go_is_not_borrowed() {
        let rounds = if cfg!(miri) { 100 } else { 1_000 };
        for _ in 0..rounds {
            let owner = std::sync::Arc::new(SlotOwner {
                slot: CacheSlot::new(Vec::new(), 7),
            });
            let flusher_hold = std::sync::Arc::clone(&owner);
            std::thread::scope(|scope| {
                scope.spawn(move || {
                    let this = std::sync::Arc::as_ptr(&owner);
                    let mut input = owner;
                    // Moves its hold into the slot (retrying while the
                    // flush holds it).
                    loop {
                        // SAFETY: `input` keeps the slot alive until the
                        // hold lets go, after moving it into the value.
                        let held = unsafe {
                            CacheSlot::with_held(&raw const (*this).slot, 1, input, |value, _, owner| value.push(owner))
                        };
                        match held {
                            Ok(()) => break,
                            Err(back) => input = back,
                        }
                    }
                });
                scope.spawn(move || {
                    let mut taken = Vec::new();
                    while taken.is_empty() {
                        for mut held in hold_all(std::slice::from_ref(&flusher_hold.slot)) {
                            taken.append(&mut held);
                        }
                    }
                    drop(flusher_hold);
                    // The last reference: frees the slot, maybe while the
                    // other thread is still in `with_held`.
                    drop(taken);
                });
            });
        }
    }

    #[test]
    fn the_owner_lets_go_while_another_holder_has_the_value() {
        let slot = CacheSlot::new(Checked::default(), ());
        drop(slot.try_hold(1));
        let flush = hold_all(std::slice::from_ref(&slot));
        assert!(slot.try_hold(1).is_none(), "the owner held a flushed slot");
        assert!(
            // SAFETY: `slot` outlives the call.
            unsafe { CacheSlot::with_held(&slot, 1, 7, |_, (), _| ()) } == Err(7),
            "the owner's hit held a flushed slot, or lost its input"
        );
        drop(flush);
        assert!(slot.try_hold(1).is_some());
    }

    /// While thread 1 holds its slot, `other` (run on another thread)
    /// must not get the value; once thread 1 lets go, it must. (This
    /// checks the wait for the owner; the barrier before it, which orders
    /// the owner's store with the other holder's load, shows only as a
    /// rare race in the tests above.)
    fn waits_for_the_owner(other: impl FnOnce(&CacheSlot<Checked>) -> bool + Send) {
        if !owners_here() {
            return;
        }
        let _watchdog = Watchdog::arm("waits_for_the_owner");
        let slot = CacheSlot::new(Checked::default(), ());
        let held = slot.try_hold(1).expect("the first hold claims the slot");
        assert_eq!(slot.owner.load(Ordering::Relaxed), 1);
        let (started, done) = (Barrier::new(2), AtomicBool::new(false));
        std::thread::scope(|scope| {
            let waiter = scope.spawn(|| {
                started.wait();
                let got = other(&slot);
                done.store(true, Ordering::SeqCst);
                got
            });
            // The waiter is running; give it time to get past the owner if
            // it wrongly could.
            started.wait();
            std::thread::sleep(std::time::Duration::from_millis(50));
            assert!(!done.load(Ordering::SeqCst), "held while the owner held it");
            drop(held);
            assert!(waiter.join().expect("the other holder"), "never held");
        });
    }

    #[test]
    fn a_flush_waits_for_the_owners_hold() {
        waits_for_the_owner(|slot| hold_all(std::slice::from_ref(slot)).len() == 1);
    }

    #[test]
    fn turning_a_slot_shared_waits_for_the_owners_hold() {
        waits_for_the_owner(|slot| slot.try_hold(2).is_some());
    }
}

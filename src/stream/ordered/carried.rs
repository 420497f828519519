//! [`Carried`]: a counted reference to a pool's state that moves with each
//! owner the pool hands out, so that a hand-out and a recycle count
//! nothing.
//!
//! A pool whose owners cannot name it themselves (a
//! [`PinnedHostBuf`](crate::PinnedHostBuf) does not know its pool) puts a
//! [`Carrier`] first in its state and gives each owner it hands out one
//! counted reference to that state, by a pointer to the carrier: made when
//! the owner is first allocated, then moved from the pool's cache into the
//! [`Ordered`](super::Ordered), back into the cache with the recycled
//! owner, and so on, never counted again. The carrier's functions take the
//! reference over: `give_back` with the recycled owner, `release` when the
//! owner leaves the pool another way (`into_inner`).

use super::Tracks;
use std::mem::ManuallyDrop;
use std::ptr::NonNull;

/// What a pool's state starts with (`#[repr(C)]`, first field) when its
/// owners carry a [`Carried`] reference to it.
pub(crate) struct Carrier<S> {
    /// Takes the owner back, with the uses that may still be queued on it
    /// and the reference it carried.
    pub(crate) give_back: unsafe fn(NonNull<Carrier<S>>, S, Tracks),
    /// Lets go of a reference carried by an owner that left the pool.
    pub(crate) release: unsafe fn(NonNull<Carrier<S>>),
}

/// One counted reference to the state a [`Carrier`] heads: released by
/// [`Carrier::release`] when dropped, handed to [`Carrier::give_back`] by
/// [`Carried::give_back`].
pub(crate) struct Carried<S>(NonNull<Carrier<S>>);

impl<S> Carried<S> {
    /// The reference `carrier` stands for.
    ///
    /// # Safety
    ///
    /// `carrier` heads a live state, kept alive by one counted reference
    /// that the caller owns and gives to this value; the state is `Send`
    /// and `Sync` (the reference moves with owners between threads); its
    /// carrier's functions take such a reference over.
    pub(crate) unsafe fn from_raw(carrier: NonNull<Carrier<S>>) -> Self {
        Self(carrier)
    }

    /// Hands `storage` and `tracks` back to the pool, with this reference.
    #[inline]
    pub(crate) fn give_back(self, storage: S, tracks: Tracks) {
        let this = ManuallyDrop::new(self);
        // SAFETY: the state is live while this reference is (`from_raw`'s
        // promise); the function pointer is read by value, and the call
        // takes the reference over (it is not released here).
        unsafe { ((*this.0.as_ptr()).give_back)(this.0, storage, tracks) }
    }
}

impl<S> Drop for Carried<S> {
    fn drop(&mut self) {
        // SAFETY: as in `give_back`; the reference is released once, here.
        unsafe { ((*self.0.as_ptr()).release)(self.0) }
    }
}

// SAFETY: the reference is to a `Send` and `Sync` state (`from_raw`'s
// promise), which its functions reach from any thread.
unsafe impl<S> Send for Carried<S> {}
// SAFETY: as above; `&Carried` gives no access to the state.
unsafe impl<S> Sync for Carried<S> {}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::sync::{Arc, Mutex};

    /// A pool's state as the `PinnedPool` keeps it: the carrier first,
    /// owners cached with their counts implicit, `closed` when the pool's
    /// handle is gone.
    #[repr(C)]
    struct State {
        carrier: Carrier<Vec<u64>>,
        cache: Mutex<Vec<Vec<u64>>>,
        closed: AtomicBool,
        freed: Arc<AtomicUsize>,
    }

    fn state_of(carrier: NonNull<Carrier<Vec<u64>>>) -> *const State {
        carrier.as_ptr().cast_const().cast()
    }

    /// Caches the owner (its count stays, implicit in the cache) or, the
    /// pool closed, drops it and lets go of the count last.
    unsafe fn give_back(carrier: NonNull<Carrier<Vec<u64>>>, owner: Vec<u64>, _: Tracks) {
        let this = state_of(carrier);
        let owner = {
            // SAFETY: live: the count this call took over.
            let state = unsafe { &*this };
            let mut cache = state.cache.lock().expect("the cache");
            if !state.closed.load(Ordering::Relaxed) {
                cache.push(owner);
                return;
            }
            owner
        };
        drop(owner);
        // SAFETY: a count of an `Arc<State>`, let go last.
        let state = unsafe { Arc::from_raw(this) };
        state.freed.fetch_add(1, Ordering::Relaxed);
    }

    unsafe fn release(carrier: NonNull<Carrier<Vec<u64>>>) {
        // SAFETY: a count of an `Arc<State>`.
        drop(unsafe { Arc::from_raw(state_of(carrier)) });
    }

    /// An owner with a new count of `state`.
    fn carried(state: &Arc<State>) -> Carried<Vec<u64>> {
        let count = Arc::into_raw(Arc::clone(state));
        let carrier = NonNull::new(count.cast_mut().cast()).expect("not null");
        // SAFETY: a count made for it, at the state's carrier.
        unsafe { Carried::from_raw(carrier) }
    }

    fn new_state(freed: &Arc<AtomicUsize>) -> Arc<State> {
        Arc::new(State {
            carrier: Carrier { give_back, release },
            cache: Mutex::new(Vec::new()),
            closed: AtomicBool::new(false),
            freed: Arc::clone(freed),
        })
    }

    /// Every drop order of the pinned pool's, on a state Miri can follow
    /// (`cargo +nightly miri test --lib stream::ordered::carried`): an
    /// owner given back into the cache keeps its count there; an owner
    /// given back on another thread after the pool closed frees the state
    /// with its last count; an owner that leaves lets go of its count.
    #[test]
    fn a_carried_count_keeps_the_state_until_the_last_owner_is_back() {
        let freed = Arc::new(AtomicUsize::new(0));
        let state = new_state(&freed);
        carried(&state).give_back(vec![1], Tracks::default());
        assert_eq!(Arc::strong_count(&state), 2, "the cached owner's count");
        drop(carried(&state)); // left the pool (`into_inner`)
        assert_eq!(Arc::strong_count(&state), 2);
        let out = carried(&state);
        // The pool's drop: closed, the cache emptied with its counts.
        state.closed.store(true, Ordering::Relaxed);
        let cached = std::mem::take(&mut *state.cache.lock().expect("the cache"));
        for owner in cached {
            drop(owner);
            // SAFETY: the cached owner's count; the handle keeps the state.
            unsafe { Arc::decrement_strong_count(Arc::as_ptr(&state)) };
        }
        let weak = Arc::downgrade(&state);
        drop(state);
        std::thread::spawn(move || out.give_back(vec![2], Tracks::default()))
            .join()
            .expect("given back on another thread");
        assert!(weak.upgrade().is_none(), "freed with the last owner");
        assert_eq!(freed.load(Ordering::Relaxed), 1);
    }
}

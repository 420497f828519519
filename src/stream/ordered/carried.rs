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

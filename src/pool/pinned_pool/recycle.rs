//! How a [`PinnedPool`](super::PinnedPool) buffer comes back: its
//! `Ordered` carries a counted reference to the pool's state
//! ([`Carried`](crate::stream::Carried)), which the give-back moves into
//! the thread's shard with the buffer, or lets go once the buffer is
//! freed. Neither way counts anything on a hit.
//!
//! **Drop orders.** The reference a give-back holds keeps the state alive
//! until the give-back's last step, whatever else runs:
//!
//! - *The pool dropped first, its buffers out (on any thread):* each
//!   buffer's reference keeps the state; its give-back holds its shard,
//!   sees `closed` (set before the pool's drop held every shard), frees
//!   the buffer and lets go of the reference last, with no reference to
//!   the state left (it may be the last count).
//! - *The pool dropped while a give-back runs:* the drop sets `closed`,
//!   then holds every shard, which waits for the give-back's hold to end.
//!   Either the give-back held its shard first and the buffer is in it
//!   (the drop frees it and lets go of its count, while the pool's own
//!   count keeps the state), or it holds after the drop's hold and sees
//!   `closed`. Once the buffer is in a shard, the store that lets go of
//!   the shard is the give-back's last access to the state
//!   ([`CacheSlot::with_owned`](crate::pool::per_thread::cache_slot::CacheSlot::with_owned)
//!   reaches it by a raw pointer; the other holds' drop stores last too).
//! - *A buffer taken out of its `Ordered`* (`into_inner`): the reference
//!   is let go then (`Carrier::release`); the buffer has left the pool.

use super::Shard;
use super::shards::{Cached, Counts, ShardState, shard_of};
use super::state::Shared;
use crate::memory::PinnedHostBuf;
use crate::pool::per_thread::cache_slot::CacheSlot;
use crate::pool::per_thread::thread_token::token;
use crate::stream::{Carrier, Settled, Tracks};
use std::ptr::NonNull;
use std::sync::Arc;
use std::sync::atomic::Ordering;

/// The functions a [`Shared`] starts with.
pub(super) const CARRIER: Carrier<PinnedHostBuf<u8>> = Carrier {
    give_back: carried_give_back,
    release: carried_release,
};

/// The carrier of the state at `shared` (its first field, `repr(C)`),
/// by a pointer that keeps `shared`'s reach over the whole state.
///
/// # Safety
///
/// `shared` is from `Arc::as_ptr` or `Arc::into_raw` of an `Arc<Shared>`.
pub(super) unsafe fn carrier_of(shared: *const Shared) -> NonNull<Carrier<PinnedHostBuf<u8>>> {
    // SAFETY: `Arc::as_ptr` and `Arc::into_raw` are never null (the
    // caller's promise).
    unsafe { NonNull::new_unchecked(shared.cast_mut().cast()) }
}

/// The state a carrier pointer of [`carrier_of`] heads.
fn state_of(carrier: NonNull<Carrier<PinnedHostBuf<u8>>>) -> *const Shared {
    carrier.as_ptr().cast_const().cast()
}

/// [`Carrier::give_back`] of the pool.
///
/// # Safety
///
/// `carrier` is the carrier of a live state (from [`carrier_of`]), with a
/// count of it that this call takes over.
unsafe fn carried_give_back(
    carrier: NonNull<Carrier<PinnedHostBuf<u8>>>,
    buffer: PinnedHostBuf<u8>,
    mut tracks: Tracks,
) {
    // The buffer goes back whole, for any request of its bucket: its uses
    // cover all of it from here.
    tracks.widen();
    // SAFETY: as this function's promise.
    unsafe { give_back(state_of(carrier), buffer, tracks) }
}

/// [`Carrier::release`] of the pool.
///
/// # Safety
///
/// As [`carried_give_back`]: the count is let go here.
unsafe fn carried_release(carrier: NonNull<Carrier<PinnedHostBuf<u8>>>) {
    // SAFETY: the count was made by an `Arc<Shared>` (`Arc::into_raw`, or
    // a cached buffer's, made so) at this address.
    drop(unsafe { Arc::from_raw(state_of(carrier)) });
}

/// Takes a buffer back into the calling thread's shard, or frees it
/// (once its copies are proven finished; leaked if they cannot be) when
/// it is over the cache cap or the pool is gone.
///
/// # Safety
///
/// `this` is a live state, with a count of it that this call takes over
/// (it moves into the shard with the buffer, or is let go last).
unsafe fn give_back(this: *const Shared, buffer: PinnedHostBuf<u8>, tracks: Tracks) {
    let (size, bytes) = (buffer.capacity(), buffer.len());
    let token = token();
    let (shard, cache) = {
        // SAFETY: live (the count this call holds); the reference ends
        // in this block.
        let shared = unsafe { &*this };
        shared.watch_back(buffer.as_ptr() as usize);
        let shard: *const Shard = &shared.shards[shard_of(token)];
        (shard, size <= shared.max_cached.load(Ordering::Relaxed))
    };
    let cached = if cache {
        // The buffer goes in through `given`, not as the hold's input (as
        // in `Shared::take_owned`: a word off its alignment otherwise);
        // left there when not kept.
        let mut given = Some((buffer, tracks));
        // `closed` is read under the hold (see the module's notes).
        let keep = |state: &mut ShardState, counts: &Counts, ()| {
            // SAFETY: live while the shard is held: the count moves into
            // the shard with the buffer, where no one can take it before
            // the hold ends; the reference ends with this call.
            let shared = unsafe { &*this };
            if shared.closed.load(Ordering::Relaxed) {
                return;
            }
            if let Some(cached) = given.take() {
                state.keep_given_back(counts, &shared.allocated, cached, bytes);
            }
        };
        // The owner's hold alone (as in `Shared::take_owned`); the other
        // holds are `keep_waiting`'s.
        // SAFETY: the shard is in the state, live until the hold ends
        // (above); its store is the last access.
        let held = unsafe { CacheSlot::with_owned(shard, token, (), keep) };
        let Some(cached) = given else { return };
        if held.is_ok() {
            cached // the pool is closed
        } else {
            // SAFETY: as above.
            match unsafe { keep_waiting(this, shard, token, cached, bytes) } {
                Ok(()) => return,
                Err(cached) => cached,
            }
        }
    } else {
        (buffer, tracks)
    };
    // SAFETY: live (the count this call still holds); the reference ends
    // with the call.
    unsafe { &*this }.free_given_back(token, cached, bytes);
    // SAFETY: the count this call took over, let go last: no reference to
    // the state is left.
    drop(unsafe { Arc::from_raw(this) });
}

/// The give-back's keep past the owner's hold: a shared shard, or one
/// someone else holds, which it waits for (no holder waits while holding
/// one shard), so the counts stay with this thread's headroom. Gives the
/// buffer back when the pool is closed.
///
/// # Safety
///
/// As [`give_back`], and `shard` is the state's shard of `token`.
#[cold]
#[inline(never)]
unsafe fn keep_waiting(
    this: *const Shared,
    shard: *const Shard,
    token: usize,
    cached: Cached,
    bytes: usize,
) -> Result<(), Cached> {
    // SAFETY: live until the hold ends (the count moves into the shard
    // only under it); the hold's drop stores last, and its reference is
    // not used after.
    let mut held = unsafe { &*shard }.hold(token);
    let (state, counts) = held.parts();
    // SAFETY: as above; the reference ends before the hold does.
    let shared = unsafe { &*this };
    if shared.closed.load(Ordering::Relaxed) {
        return Err(cached);
    }
    state.keep_given_back(counts, &shared.allocated, cached, bytes);
    Ok(())
}

impl Shared {
    /// Frees a buffer given back for a request of `bytes` (or leaks it if
    /// its copies cannot be proven finished), counted in the shard of
    /// `token`.
    fn free_given_back(&self, token: usize, (buffer, mut tracks): Cached, bytes: usize) {
        let size = buffer.capacity();
        let settled = tracks.settle("PinnedPool buffer freed on its return");
        {
            let mut held = self.shards[shard_of(token)].hold(token);
            let (state, counts) = held.parts();
            state.count_back(counts, &self.allocated, size, bytes);
        }
        match settled {
            Settled::Proven(_) => {
                drop(buffer);
                self.count_freed(size);
            }
            Settled::Unproven(_) => std::mem::forget(buffer),
        }
    }
}

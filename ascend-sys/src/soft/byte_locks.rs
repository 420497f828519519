//! Serialising the data path: two copies or fills never move the same
//! bytes at the same time.
//!
//! Raw callers may queue copies into the same device bytes on two streams,
//! or map one physical allocation twice and write both mappings. On
//! hardware that is a race with an unspecified result; in this library,
//! two worker threads `memcpy`-ing the same bytes would be undefined
//! behaviour. So an operation moves its bytes in steps that stay inside one
//! 2 MiB chunk on each side, and locks the stripe of each side's chunk for
//! the step: every chunk-sized part of every operation is written by one
//! operation at a time, and concurrent writers leave, in each part, one
//! writer's bytes, never a mixture.
//!
//! Chunks are those of the address the bytes are reached through (a device
//! view, or host memory). One physical allocation has one view in a
//! process, whatever the number of its mappings, so its aliases share
//! stripes. Copies stay `memcpy` fast; an uncontended step costs one or two
//! locks. A step takes at most two stripes, lower first, and nothing else is
//! locked while they are held, so they cannot deadlock; a large copy never
//! holds up other operations for more than one chunk. Bytes shared with
//! another process are not covered: that process writes them at will, as
//! with any shared memory.

use std::sync::{Mutex, MutexGuard};

/// Number of stripes.
const STRIPES: usize = 64;

/// Bytes in one chunk: an operation moves at most one chunk of each side
/// under one lock.
pub(crate) const CHUNK: usize = 1 << 21;

static LOCKS: [Mutex<()>; STRIPES] = [const { Mutex::new(()) }; STRIPES];

/// The stripes of one step (one or two chunks), held until dropped.
pub(crate) struct HeldBytes {
    _guards: [Option<MutexGuard<'static, ()>>; 2],
}

/// The bytes from `address` to the end of its chunk: a step that starts at
/// `address` may move at most this many.
pub(crate) fn room(address: usize) -> usize {
    CHUNK - address % CHUNK
}

fn stripe_of(address: usize) -> usize {
    (address / CHUNK) % STRIPES
}

/// Locks the stripes of the chunks holding `first` and `second` (the two
/// sides of a copy step, or one address twice for a fill), lower stripe
/// first.
pub(crate) fn lock(first: usize, second: usize) -> HeldBytes {
    let (low, high) = {
        let (a, b) = (stripe_of(first), stripe_of(second));
        (a.min(b), a.max(b))
    };
    // A holder never panics while the bytes move; if one did, the bytes
    // are as it left them, which is all a lock can promise.
    let take = |stripe: usize| LOCKS[stripe].lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let low_guard = take(low);
    let high_guard = (high != low).then(|| take(high));
    HeldBytes {
        _guards: [Some(low_guard), high_guard],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn room_ends_at_the_chunk_boundary() {
        assert_eq!(room(0), CHUNK);
        assert_eq!(room(CHUNK - 1), 1);
        assert_eq!(room(5 * CHUNK + 10), CHUNK - 10);
        // Chunks 64 apart share a stripe.
        assert_eq!(stripe_of(64 * CHUNK), stripe_of(0));
        assert_ne!(stripe_of(CHUNK), stripe_of(0));
    }

    #[test]
    fn the_same_chunk_excludes_and_other_chunks_do_not() {
        let held = lock(5 * CHUNK, 9 * CHUNK + 3);
        let (sender, receiver) = std::sync::mpsc::channel();
        let waiter = std::thread::spawn(move || {
            let _held = lock(7 * CHUNK, 5 * CHUNK + 4);
            sender.send(()).unwrap();
        });
        assert!(receiver.recv_timeout(std::time::Duration::from_millis(100)).is_err());
        // A chunk on another stripe is free meanwhile; one address twice
        // takes its stripe once.
        drop(lock(6 * CHUNK, 6 * CHUNK));
        drop(held);
        receiver.recv_timeout(std::time::Duration::from_secs(10)).unwrap();
        waiter.join().unwrap();
    }
}

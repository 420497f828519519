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
//! A chunk's stripe is its number hashed, so that chunks at regular
//! strides (thread heaps, device slabs) do not pile onto a few stripes, and
//! each stripe's lock has a cache line of its own.
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

use crate::soft::core::lock_order::{self, Entered, Rank};
use crossbeam_utils::CachePadded;
use std::sync::{Mutex, MutexGuard};

/// Number of stripes: two threads copying independently touch four
/// chunks, which then share a stripe by chance about 2% of the time (9%
/// with 64 stripes); 16 KiB of locks.
const STRIPES: usize = 256;

/// Bytes in one chunk: an operation moves at most one chunk of each side
/// under one lock.
pub(crate) const CHUNK: usize = 1 << 21;

/// One lock per cache line: locks of different stripes never share one.
static LOCKS: [CachePadded<Mutex<()>>; STRIPES] = [const { CachePadded::new(Mutex::new(())) }; STRIPES];

/// The stripes of one step (one or two chunks), held until dropped.
pub(crate) struct HeldBytes {
    _guards: [Option<MutexGuard<'static, ()>>; 2],
    _entered: Entered,
}

/// The bytes from `address` to the end of its chunk: a step that starts at
/// `address` may move at most this many.
pub(crate) fn room(address: usize) -> usize {
    CHUNK - address % CHUNK
}

/// The stripe of `address`'s chunk: the chunk number mixed (the finaliser
/// of MurmurHash3), so chunks at regular strides — thread heaps 64 MiB
/// apart, device slabs — spread over the stripes instead of sharing a few.
fn stripe_of(address: usize) -> usize {
    let mut chunk = (address / CHUNK) as u64;
    chunk ^= chunk >> 33;
    chunk = chunk.wrapping_mul(0xff51_afd7_ed55_8ccd);
    chunk ^= chunk >> 33;
    chunk = chunk.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    chunk ^= chunk >> 33;
    chunk as usize % STRIPES
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
    let entered = lock_order::enter(Rank::Bytes);
    let take = |stripe: usize| LOCKS[stripe].lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let low_guard = take(low);
    let high_guard = (high != low).then(|| take(high));
    HeldBytes {
        _guards: [Some(low_guard), high_guard],
        _entered: entered,
    }
}

/// The stripe of one chunk (a fill step), held until dropped.
pub(crate) struct HeldChunk {
    _guard: MutexGuard<'static, ()>,
    _entered: Entered,
}

/// Locks the stripe of the chunk holding `address` (one side: a fill
/// step); the same as [`lock`] of `address` twice.
#[inline]
pub(crate) fn lock_one(address: usize) -> HeldChunk {
    let entered = lock_order::enter(Rank::Bytes);
    let guard = LOCKS[stripe_of(address)]
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    HeldChunk {
        _guard: guard,
        _entered: entered,
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
        // Every address of a chunk has the chunk's stripe.
        assert_eq!(stripe_of(5 * CHUNK), stripe_of(6 * CHUNK - 1));
        assert!((0..1000).all(|chunk| stripe_of(chunk * CHUNK) < STRIPES));
    }

    #[test]
    fn chunks_at_regular_strides_spread_over_the_stripes() {
        // Heaps of glibc's thread arenas lie 64 MiB (32 chunks) apart.
        for stride in [1, 2, 32, 64] {
            let used: std::collections::HashSet<usize> =
                (0..STRIPES).map(|index| stripe_of(index * stride * CHUNK)).collect();
            assert!(used.len() >= STRIPES / 2, "stride {stride}: {} stripes", used.len());
        }
    }

    #[test]
    fn the_same_chunk_excludes_and_other_chunks_do_not() {
        let held = lock(5 * CHUNK, 9 * CHUNK + 3);
        let taken = [stripe_of(5 * CHUNK), stripe_of(9 * CHUNK)];
        let Some(other) = (10..).find(|&chunk| !taken.contains(&stripe_of(chunk * CHUNK))) else {
            unreachable!("the range is endless");
        };
        let (sender, receiver) = std::sync::mpsc::channel();
        let waiter = std::thread::spawn(move || {
            let _held = lock(7 * CHUNK, 5 * CHUNK + 4);
            sender.send(()).unwrap();
        });
        assert!(receiver.recv_timeout(std::time::Duration::from_millis(100)).is_err());
        // A chunk on another stripe is free meanwhile (for another thread:
        // a step holds one lock at a time); one address twice takes its
        // stripe once.
        std::thread::spawn(move || drop(lock(other * CHUNK, other * CHUNK)))
            .join()
            .unwrap();
        drop(held);
        receiver.recv_timeout(std::time::Duration::from_secs(10)).unwrap();
        waiter.join().unwrap();
    }
}

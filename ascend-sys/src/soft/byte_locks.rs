//! Serialising the data path: two copies or fills that touch the same bytes
//! never run at the same time.
//!
//! Raw callers may queue copies into the same device bytes on two streams,
//! or map one physical allocation twice and write both mappings. On
//! hardware that is a race with an unspecified result; in this library,
//! two worker threads `memcpy`-ing the same bytes would be undefined
//! behaviour. So before bytes move, the operation locks every stripe its
//! ranges fall in, and the bytes move as one unit against every other
//! operation on those stripes: concurrent writers of the same bytes leave
//! one writer's bytes, never a mixture.
//!
//! Ranges are hashed to stripes by 2 MiB chunk of the address the bytes are
//! reached through (a device view, or host memory). One physical allocation
//! has one view in a process, whatever the number of its mappings, so its
//! aliases share stripes. Copies stay `memcpy` fast; an uncontended stripe
//! costs one lock. Stripes are taken in ascending order and nothing else is
//! locked while they are held, so they cannot deadlock. Bytes shared with
//! another process are not covered: that process writes them at will, as
//! with any shared memory.

use std::sync::{Mutex, MutexGuard};

/// Number of stripes.
const STRIPES: usize = 64;

/// log2 of the bytes one stripe covers in a row.
const CHUNK_SHIFT: u32 = 21;

static LOCKS: [Mutex<()>; STRIPES] = [const { Mutex::new(()) }; STRIPES];

/// The stripes of a set of ranges, held until dropped. The first two are
/// kept inline: a copy usually touches one or two stripes, and a heap
/// allocation would cost as much as the locks.
pub(crate) struct HeldBytes {
    inline: [Option<MutexGuard<'static, ()>>; 2],
    more: Vec<MutexGuard<'static, ()>>,
}

/// The stripe mask of `len` bytes at `start`.
fn mask_of(start: usize, len: usize) -> u64 {
    if len == 0 {
        return 0;
    }
    let first = start >> CHUNK_SHIFT;
    let last = start.saturating_add(len - 1) >> CHUNK_SHIFT;
    if last - first >= STRIPES - 1 {
        return u64::MAX;
    }
    (first..=last).fold(0, |mask, chunk| mask | 1 << (chunk % STRIPES))
}

/// Locks the stripes of every `(start, len)` range, in ascending order.
pub(crate) fn lock(ranges: impl IntoIterator<Item = (usize, usize)>) -> HeldBytes {
    let mask = ranges
        .into_iter()
        .fold(0u64, |mask, (start, len)| mask | mask_of(start, len));
    let mut held = HeldBytes {
        inline: [None, None],
        more: Vec::new(),
    };
    let mut rest = mask;
    let mut count = 0;
    while rest != 0 {
        let stripe = rest.trailing_zeros() as usize;
        rest &= rest - 1;
        // A holder never panics while the bytes move; if one did, the bytes
        // are as it left them, which is all a lock can promise.
        let guard = LOCKS[stripe].lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        match held.inline.get_mut(count) {
            Some(slot) => *slot = Some(guard),
            None => held.more.push(guard),
        }
        count += 1;
    }
    held
}

#[cfg(test)]
mod tests {
    use super::*;

    const CHUNK: usize = 1 << CHUNK_SHIFT;

    #[test]
    fn ranges_map_to_the_stripes_of_their_chunks() {
        assert_eq!(mask_of(0, 0), 0);
        assert_eq!(mask_of(0, 1), 1);
        assert_eq!(mask_of(CHUNK - 1, 2), 0b11);
        assert_eq!(mask_of(3 * CHUNK, CHUNK), 0b1000);
        // Chunks 64 apart share a stripe.
        assert_eq!(mask_of(64 * CHUNK, 1), mask_of(0, 1));
        assert_eq!(mask_of(0, STRIPES * CHUNK), u64::MAX);
        assert_eq!(mask_of(usize::MAX, 1), 1 << ((usize::MAX >> CHUNK_SHIFT) % STRIPES));
    }

    #[test]
    fn overlapping_ranges_exclude_each_other() {
        let held = lock([(5 * CHUNK, 10), (9 * CHUNK, 10)]);
        let (sender, receiver) = std::sync::mpsc::channel();
        let waiter = std::thread::spawn(move || {
            let _held = lock([(5 * CHUNK + 4, 1)]);
            sender.send(()).unwrap();
        });
        assert!(receiver.recv_timeout(std::time::Duration::from_millis(100)).is_err());
        // A range on another stripe is free meanwhile.
        drop(lock([(6 * CHUNK, 1)]));
        drop(held);
        receiver.recv_timeout(std::time::Duration::from_secs(10)).unwrap();
        waiter.join().unwrap();
    }
}

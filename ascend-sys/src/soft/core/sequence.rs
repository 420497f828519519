//! Creation order: one process-wide counter that numbers every resource the
//! software device creates and every misuse it records, so that a test can
//! ask what appeared after a given moment ([`crate::soft::live_since`],
//! [`crate::soft::MisuseWatch`]).
//!
//! Part of the core: the families call [`next`] when they create a
//! resource; it takes no lock. Each thread takes numbers in blocks, so
//! threads creating resources at once do not all write one counter; a
//! [`sequence_now`] call makes every thread start a fresh block, which is
//! what keeps its promise.

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};

/// The first number of the next block handed out. Starts at 1, so that 0
/// means "before anything".
static NEXT: AtomicU64 = AtomicU64::new(1);

/// Bumped by every [`sequence_now`]: a thread's block taken before the bump
/// is not used after it.
static GENERATION: AtomicU64 = AtomicU64::new(0);

/// Numbers in a thread's block.
const BLOCK: u64 = 64;

/// A thread's block: the generation it was taken in, the next number, and
/// the end.
#[derive(Clone, Copy)]
struct Block {
    generation: u64,
    next: u64,
    end: u64,
}

thread_local! {
    static MINE: Cell<Block> = const { Cell::new(Block { generation: u64::MAX, next: 0, end: 0 }) };
}

/// A fresh sequence number (never reused in the process).
pub(crate) fn next() -> u64 {
    let generation = GENERATION.load(Ordering::SeqCst);
    let taken = MINE.try_with(|mine| {
        let mut block = mine.get();
        if block.generation != generation || block.next == block.end {
            let start = NEXT.fetch_add(BLOCK, Ordering::SeqCst);
            block = Block {
                generation,
                next: start,
                end: start + BLOCK,
            };
        }
        let number = block.next;
        block.next += 1;
        mine.set(block);
        number
    });
    // A thread whose locals are gone takes a block of one.
    taken.unwrap_or_else(|_| NEXT.fetch_add(1, Ordering::SeqCst))
}

/// The sequence number the next resource created (or misuse recorded) will
/// get: everything made from now on has a number at least this one, and
/// everything live now has a smaller one.
///
/// ```
/// use ascend_sys::*;
/// select_backend(BackendRequest::Software).unwrap();
/// let start = soft::sequence_now();
/// let mut ptr = std::ptr::null_mut();
/// unsafe {
///     assert_eq!(aclrtSetDevice(0), ACL_SUCCESS);
///     assert_eq!(aclrtMalloc(&mut ptr, 64, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
///     let made = soft::live_since(start);
///     assert!(made.iter().any(|r| r.id == ptr as u64 && r.created >= start));
///     assert_eq!(aclrtFree(ptr), ACL_SUCCESS);
///     assert!(!soft::live_since(start).iter().any(|r| r.id == ptr as u64));
///     assert_eq!(aclrtResetDevice(0), ACL_SUCCESS);
/// }
/// ```
pub fn sequence_now() -> u64 {
    // Read first, then retire the blocks: a block taken before the read
    // ends at or below it, and one tagged with the new generation is taken
    // after the read, so it starts at or above it.
    let now = NEXT.load(Ordering::SeqCst);
    GENERATION.fetch_add(1, Ordering::SeqCst);
    now
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_unique_and_later_than_the_moment_asked() {
        let first = next();
        let moment = sequence_now();
        assert!(first < moment);
        let after: Vec<u64> = (0..3 * BLOCK).map(|_| next()).collect();
        assert!(after.iter().all(|&number| number >= moment));
        assert!(after.windows(2).all(|pair| pair[0] < pair[1]));
        let others = std::thread::spawn(|| (0..3 * BLOCK).map(|_| next()).collect::<Vec<u64>>())
            .join()
            .unwrap();
        assert!(others.iter().all(|number| !after.contains(number)));
        assert!(others.iter().all(|&number| number >= moment));
    }
}

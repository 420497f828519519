//! Thread tokens: the names by which a [`CacheSlot`](super::cache_slot::CacheSlot)
//! knows its owner, and by which a pool picks a thread's slot.
//!
//! A token names one live thread at a time. When a thread ends, its token
//! goes back to a free list and the next thread that needs a token takes
//! the lowest there, with what it owned: the slots the ended thread claimed stay owned
//! (held with plain stores) by its successor, instead of being turned
//! shared (an atomic swap per hold, for good) by a thread with a new
//! token. Programs that start a thread per task (a benchmark's samples, a
//! scoped worker per batch) keep their hits free of atomic
//! read-modify-writes that way. Taking the lowest keeps the live threads'
//! tokens dense (a new token is made only when every one made is in use),
//! so up to as many threads as a pool has slots get slots of their own.
//!
//! **Soundness.** The owner's protocol needs one thread at a time acting
//! for a token, and the successor's holds ordered after its predecessor's:
//! the token is given back when the thread's locals are torn down (no
//! hold is in progress then: a hold lasts within one call), after which
//! the thread never uses it again (a thread's later uses, from other
//! locals' destructors, find the give-back gone and get a new token,
//! never given back); the free list's lock orders the predecessor's last
//! hold before the successor's first.

use std::cell::Cell;
use std::collections::BTreeSet;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A thread without a token yet.
const UNNAMED: usize = 0;

thread_local! {
    /// This thread's token: unique among live threads, fixed at first use.
    static TOKEN: Cell<usize> = const { Cell::new(UNNAMED) };
    /// Gives the token back when the thread ends.
    static GIVE_BACK: GiveBack = const { GiveBack };
}

/// The last token made.
static LAST_TOKEN: AtomicUsize = AtomicUsize::new(UNNAMED);

/// Tokens of ended threads.
static FREE_TOKENS: Mutex<BTreeSet<usize>> = Mutex::new(BTreeSet::new());

/// The calling thread's token: its name as a slot's owner, and its slot
/// in a pool's slots (masked by their count, a power of two). Never
/// [`UNNAMED`] nor `usize::MAX`; shared by every pool that keeps slots,
/// so a thread is named once.
#[inline]
pub(in crate::pool) fn token() -> usize {
    match TOKEN.get() {
        UNNAMED => name_thread(),
        named => named,
    }
}

/// The calling thread's token if it has one already (`None` before its
/// first [`token`]): no call on any path.
#[inline(always)]
pub(in crate::pool) fn named_token() -> Option<usize> {
    match TOKEN.get() {
        UNNAMED => None,
        named => Some(named),
    }
}

/// A token never made before.
fn new_token() -> usize {
    // Tokens would run out after 2^64 - 2 threads: the count stays below.
    LAST_TOKEN.fetch_add(1, Ordering::Relaxed) + 1
}

fn free_tokens() -> std::sync::MutexGuard<'static, BTreeSet<usize>> {
    FREE_TOKENS.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Names the calling thread: an ended thread's token, or a new one.
#[cold]
fn name_thread() -> usize {
    // The give-back is armed first. A thread whose locals are being torn
    // down cannot arm it: it gets a new token, which is never given back.
    let token = if GIVE_BACK.try_with(|_| ()).is_ok() {
        free_tokens().pop_first().unwrap_or_else(new_token)
    } else {
        new_token()
    };
    TOKEN.set(token);
    token
}

/// Gives its thread's token back when dropped (with the thread's locals).
struct GiveBack;

impl Drop for GiveBack {
    fn drop(&mut self) {
        // Later uses on this thread (other locals' destructors) name it
        // again and, this give-back being gone, get a new token that is
        // never given back: no two live threads ever share one.
        let token = TOKEN.replace(UNNAMED);
        if token != UNNAMED {
            free_tokens().insert(token);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rounds of two threads at once, as a benchmark's samples: the
    /// ended threads' tokens name the next rounds' (100 new tokens
    /// without the give-back; other tests' threads may hold a few).
    #[test]
    fn ended_threads_tokens_name_the_next_threads() {
        let mine = token();
        let mut seen = BTreeSet::new();
        for _ in 0..50 {
            std::thread::scope(|scope| {
                let pair = [scope.spawn(token), scope.spawn(token)];
                for thread in pair {
                    let token = thread.join().expect("a thread");
                    assert_ne!(token, mine, "a live thread's token reused");
                    seen.insert(token);
                }
            });
        }
        assert!(seen.len() < 40, "{} tokens for 100 threads, two at a time", seen.len());
    }

    #[test]
    fn live_threads_have_distinct_tokens() {
        let start = std::sync::Barrier::new(8);
        let mut tokens: Vec<usize> = std::thread::scope(|scope| {
            let threads: Vec<_> = (0..8)
                .map(|_| {
                    scope.spawn(|| {
                        let token = token();
                        start.wait(); // all alive at once
                        token
                    })
                })
                .collect();
            threads
                .into_iter()
                .map(|thread| thread.join().expect("a thread"))
                .collect()
        });
        tokens.sort_unstable();
        tokens.dedup();
        assert_eq!(tokens.len(), 8);
    }
}

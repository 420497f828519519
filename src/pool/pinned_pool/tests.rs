//! The `PinnedPool`'s paths past a hit: a give-back that waits for its
//! shard, a steal, and the state's counts held by its buffers (the same
//! bodies run on hardware; the pool's internals are read directly).

use super::PinnedPool;
use super::shards::shard_of;
use crate::Device;
use crate::pool::per_thread::cache_slot::hold_all;
use crate::pool::per_thread::thread_token::token;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

fn device() -> Device {
    Device::new(0).expect("device 0")
}

#[test]
fn a_give_back_to_a_shard_held_by_another_thread_waits_for_it() {
    let pool = PinnedPool::new(&device());
    let buffer = pool.alloc(4096).expect("a buffer");
    let done = AtomicBool::new(false);
    std::thread::scope(|scope| {
        // Every shard held here, as a flush holds them.
        let held = hold_all(&pool.shared.shards);
        let giver = scope.spawn(|| {
            drop(buffer);
            done.store(true, Ordering::SeqCst);
        });
        std::thread::sleep(Duration::from_millis(50));
        assert!(
            !done.load(Ordering::SeqCst),
            "given back into a shard someone else held"
        );
        // The statistics are read without holding the shards.
        assert_eq!(pool.stats().cached_bytes, 0);
        drop(held);
        giver.join().expect("the giving thread");
    });
    // Kept (not freed) once the shard was let go.
    let stats = pool.stats();
    assert_eq!((stats.cached_bytes, stats.allocated), (4096, 0));
}

#[test]
fn a_steal_moves_the_whole_bucket_to_the_stealing_thread() {
    let pool = PinnedPool::new(&device());
    let theirs = std::thread::scope(|scope| {
        scope
            .spawn(|| {
                let buffers: Vec<_> = (0..3).map(|_| pool.alloc(4096).expect("a buffer")).collect();
                drop(buffers); // three buffers in this thread's shard
                shard_of(token())
            })
            .join()
            .expect("the other thread")
    });
    let mine = shard_of(token());
    if mine == theirs {
        // Another test's threads took the tokens between: one shard, no steal.
        return;
    }
    let buffer = pool.alloc(4000).expect("stolen");
    let stats = pool.stats();
    assert_eq!((stats.hits, stats.misses), (1, 3));
    // The other two came along: this thread's next two hits are its own.
    let cached = |shard: usize| pool.shared.shards[shard].shared().cached_bytes();
    assert_eq!((cached(mine), cached(theirs)), (2 * 4096, 0));
    drop(buffer);
    assert_eq!(pool.stats().cached_bytes, 3 * 4096);
}

#[test]
fn each_buffer_holds_one_count_of_the_state_and_a_hit_counts_none() {
    let pool = PinnedPool::new(&device());
    let counts = || Arc::strong_count(&pool.shared);
    assert_eq!(counts(), 1);
    let buffer = pool.alloc(4096).expect("a new buffer");
    assert_eq!(counts(), 2, "a new buffer holds the state");
    drop(buffer);
    assert_eq!(counts(), 2, "a cached buffer holds it too");
    let buffer = pool.alloc(4096).expect("a hit");
    assert_eq!(counts(), 2, "a hit moves the count");
    let taken = buffer.into_inner().expect("out of its Ordered");
    assert_eq!(counts(), 1, "a buffer that left the pool lets go");
    drop(taken);
    drop(pool.alloc(1 << 20).expect("another"));
    assert_eq!(counts(), 2);
    pool.empty_cache().expect("free the cache");
    assert_eq!(counts(), 1, "a freed buffer lets go");
}

#[test]
fn the_state_outlives_its_pool_until_the_last_buffer_is_back() {
    let pool = PinnedPool::new(&device());
    let buffer = pool.alloc(4096).expect("a buffer");
    drop(pool.alloc(4096).expect("another, cached"));
    let state = Arc::downgrade(&pool.shared);
    drop(pool);
    assert!(state.upgrade().is_some(), "the buffer out keeps the state");
    std::thread::spawn(move || drop(buffer))
        .join()
        .expect("given back on another thread");
    assert!(state.upgrade().is_none(), "freed with the last buffer back");
}

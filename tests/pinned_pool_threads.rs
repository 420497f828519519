//! A `PinnedPool` shared by threads: each thread caches in a shard of its
//! own, a buffer given back on one thread still serves another (with the
//! copies that may still use it), and the statistics add up across the
//! shards. The same bodies run on hardware.

mod common;

use ascend::pool::PinnedPool;
use ascend::stream::{Ordered, Stream};
use ascend::{Device, DeviceBuf};
use std::sync::Arc;

#[test]
fn a_buffer_given_back_on_another_thread_is_a_hit_behind_its_copy() {
    let device: Device = common::device();
    let pool = PinnedPool::new(&device);
    let stream = Arc::new(Stream::new(&device).expect("a stream"));
    let data: Vec<u8> = (0..4096u32).map(|i| (i * 13 % 251) as u8).collect();
    let source = Ordered::new(DeviceBuf::from_slice(&device, &data).expect("the source"));
    let address = std::thread::scope(|scope| {
        scope
            .spawn(|| {
                let buffer = pool.alloc(4096).expect("a buffer");
                buffer.copy_from_device(&source, &stream).expect("queue a download");
                let address = buffer.host_ptr() as usize;
                drop(buffer); // back to this thread's shard, its copy maybe queued
                address
            })
            .join()
            .expect("the other thread")
    });
    let mut again = pool.alloc(3000).expect("from the other thread's shard");
    assert_eq!(again.host_ptr() as usize, address, "the cached buffer, not a new one");
    // Host access waits for the download its former owner queued.
    assert_eq!(again.get_mut().expect("host access")[..3000], data[..3000]);
    let stats = pool.stats();
    assert_eq!((stats.hits, stats.misses), (1, 1));
    assert_eq!((stats.allocated, stats.requested, stats.cached_bytes), (4096, 3000, 0));
}

#[test]
fn the_statistics_add_up_across_threads() {
    let device: Device = common::device();
    let pool = PinnedPool::new(&device);
    const ROUNDS: u64 = 200;
    std::thread::scope(|scope| {
        for _ in 0..2 {
            scope.spawn(|| {
                for _ in 0..ROUNDS {
                    let buffer = pool.alloc(4000).expect("a buffer");
                    assert_eq!(buffer.capacity(), 4096);
                }
            });
        }
    });
    let stats = pool.stats();
    assert_eq!(stats.hits + stats.misses, 2 * ROUNDS);
    assert!((1..=2).contains(&stats.misses), "at most one new buffer per thread");
    assert_eq!((stats.allocated, stats.requested), (0, 0));
    assert_eq!(stats.cached_bytes, 4096 * stats.misses as usize);
    assert_eq!(stats.reserved_peak, stats.cached_bytes);
    // Exact on one thread; with two, above the true peak by at most the
    // other thread's headroom (one buffer here), never below it.
    assert!(
        (4096..=3 * 4096).contains(&stats.allocated_peak),
        "{}",
        stats.allocated_peak
    );
    pool.empty_cache().expect("free the cache");
    assert_eq!(pool.stats().cached_bytes, 0);
}

#[test]
fn a_buffer_out_when_its_pool_is_dropped_is_freed_on_its_return() {
    let device: Device = common::device();
    let pool = PinnedPool::new(&device);
    let mut buffer = pool.alloc(4096).expect("a buffer");
    drop(pool);
    // Still usable: its pool's state lives until it is back.
    buffer.get_mut().expect("host access").fill(5);
    assert!(buffer.get_mut().expect("host access").iter().all(|&byte| byte == 5));
    std::thread::spawn(move || drop(buffer))
        .join()
        .expect("freed on another thread");
}

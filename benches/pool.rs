//! Pool hits: a `DevicePool` allocation + free of a size already cached,
//! beside glibc `malloc` + `free` of the same size, from 256 B to 1 MiB
//! (issue 15 goal ≤ 2×; issue 29 ≤ 1.0× at 4 KiB and 1 MiB; issue 39
//! ≤ 1.0× at every size),
//! and a `PinnedPool` hit; and the cost of recording the memory history
//! (a 4 KiB hit with `record_memory_history` off and on).

mod common;

use ascend::Device;
use ascend::pool::{DevicePool, HistoryOptions, PinnedPool, PoolConfig};
use common::{config, glibc_malloc_free, label, on_threads, software_device};
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use std::alloc::Layout;
use std::hint::black_box;

fn pool_hits(c: &mut Criterion) {
    software_device();
    let device = Device::new(0).expect("device");
    let pool = DevicePool::new(&device, PoolConfig::default()).expect("pool");
    let pinned = PinnedPool::new(&device);
    let mut group = c.benchmark_group("pool_hit");
    // Both sides at every size, with the same loop: one allocation and its
    // free per iteration, the allocation through `black_box`. glibc serves
    // up to 1032 bytes from its per-thread cache (tcache), larger sizes
    // from its bins.
    for size in [256, 512, 1 << 10, 4 << 10, 64 << 10, 1 << 20] {
        drop(pool.alloc(size).expect("warm the cache"));
        group.bench_with_input(BenchmarkId::new("device_pool", label(size)), &size, |b, &size| {
            b.iter(|| drop(black_box(pool.alloc(size).expect("alloc"))));
        });
        if size == 4 << 10 || size == 1 << 20 {
            drop(pinned.alloc(size).expect("warm the cache"));
            group.bench_with_input(BenchmarkId::new("pinned_pool", label(size)), &size, |b, &size| {
                b.iter(|| drop(black_box(pinned.alloc(size).expect("alloc"))));
            });
        }
        group.bench_with_input(BenchmarkId::new("glibc_malloc", label(size)), &size, |b, &size| {
            let layout = Layout::from_size_align(size, 16).expect("layout");
            b.iter(|| glibc_malloc_free(layout));
        });
    }
    group.finish();
}

/// A 4 KiB allocation + free with the memory history off and on (two
/// pools, the same work): on, every hit goes through the pool's lock and
/// records three events (the ring full at its default bound, so each also
/// drops the oldest ones).
fn pool_hit_recording(c: &mut Criterion) {
    software_device();
    let device = Device::new(0).expect("device");
    let mut group = c.benchmark_group("pool_hit_recording_4KiB");
    // "bypassed": recording off, but another tag asleep, which bypasses
    // the caches too: the cost of the locked path without the events.
    for name in ["off", "bypassed", "on"] {
        let pool = DevicePool::new(&device, PoolConfig::default()).expect("pool");
        if name == "on" {
            pool.record_memory_history(Some(HistoryOptions::default()))
                .expect("recording");
        }
        let other = pool.alloc_tagged(4096, "other").expect("alloc");
        if name == "bypassed" {
            pool.sleep(&[]).expect("sleep");
            pool.wake_tags(&[DevicePool::DEFAULT_TAG]).expect("wake");
        }
        drop(pool.alloc(4096).expect("warm the cache"));
        group.bench_function(BenchmarkId::from_parameter(name), |b| {
            b.iter(|| drop(black_box(pool.alloc(4096).expect("alloc"))));
        });
        drop(other);
    }
    group.finish();
}

/// Two threads allocating and freeing independently against one thread
/// (issue 15 goal: ≥ 1.5× the throughput); each iteration is one 4 KiB
/// hit per thread.
fn pool_threads(c: &mut Criterion) {
    software_device();
    let device = Device::new(0).expect("device");
    let pool = DevicePool::new(&device, PoolConfig::default()).expect("pool");
    let mut group = c.benchmark_group("pool_threads_4KiB");
    for threads in [1usize, 2] {
        group.bench_function(BenchmarkId::from_parameter(threads), |b| {
            // Time per iteration of all threads together: throughput is
            // threads ÷ this.
            b.iter_custom(|iterations| {
                on_threads(threads, iterations, |n| {
                    for _ in 0..n {
                        drop(black_box(pool.alloc(4096).expect("alloc")));
                    }
                })
            });
        });
    }
    group.finish();
}

criterion_group! { name = benches; config = config(); targets = pool_hits, pool_hit_recording, pool_threads }
criterion_main!(benches);

//! Pool hits: a `DevicePool` allocation + free of a size already cached,
//! beside glibc `malloc` + `free` of the same size (issue 15 goal ≤ 2×),
//! and a `PinnedPool` hit.

mod common;

use ascend::Device;
use ascend::pool::{DevicePool, PinnedPool, PoolConfig};
use common::{config, label, software_device};
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;

fn pool_hits(c: &mut Criterion) {
    software_device();
    let device = Device::new(0).expect("device");
    let pool = DevicePool::new(&device, PoolConfig::default()).expect("pool");
    let pinned = PinnedPool::new(&device);
    let mut group = c.benchmark_group("pool_hit");
    for size in [4 << 10, 1 << 20] {
        drop(pool.alloc(size).expect("warm the cache"));
        group.bench_with_input(BenchmarkId::new("device_pool", label(size)), &size, |b, &size| {
            b.iter(|| drop(black_box(pool.alloc(size).expect("alloc"))));
        });
        drop(pinned.alloc(size).expect("warm the cache"));
        group.bench_with_input(BenchmarkId::new("pinned_pool", label(size)), &size, |b, &size| {
            b.iter(|| drop(black_box(pinned.alloc(size).expect("alloc"))));
        });
        group.bench_with_input(BenchmarkId::new("glibc_malloc", label(size)), &size, |b, &size| {
            let layout = Layout::from_size_align(size, 16).expect("layout");
            b.iter(|| {
                // SAFETY: a non-zero size; freed with its layout.
                unsafe {
                    let block = System.alloc(layout);
                    assert!(!block.is_null());
                    System.dealloc(black_box(block), layout);
                }
            });
        });
    }
    group.finish();
}

criterion_group! { name = benches; config = config(); targets = pool_hits }
criterion_main!(benches);

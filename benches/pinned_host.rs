//! Pinned host allocation and free latency by size, beside `mmap` +
//! `munmap` of the same size; and a `PinnedPool` hit (4 KiB) beside glibc
//! `malloc` + `free` (issue 29 goal ≤ 2×), on one thread and on two
//! threads sharing the pool (goal: two ≥ 1.5× one's throughput; reported
//! per hit of each thread, so the ratio is 2 × one ÷ two).

mod common;

use ascend::Device;
use ascend::pool::PinnedPool;
use ascend_sys as sys;
use common::{config, glibc_malloc_free, label, ok, on_threads, software_device};
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use rustix::mm::{MapFlags, ProtFlags, mmap_anonymous, munmap};
use std::alloc::Layout;
use std::hint::black_box;

const SIZES: [usize; 4] = [4 << 10, 1 << 20, 64 << 20, 256 << 20];

fn pinned(c: &mut Criterion) {
    software_device();
    let mut group = c.benchmark_group("pinned_host");
    for size in SIZES {
        group.bench_with_input(BenchmarkId::new("malloc_free_host", label(size)), &size, |b, &size| {
            b.iter(|| {
                let mut ptr = std::ptr::null_mut();
                // SAFETY: valid out-pointer; freed at once.
                unsafe {
                    ok(sys::aclrtMallocHost(&mut ptr, size), "malloc host");
                    ok(sys::aclrtFreeHost(ptr), "free host");
                }
            });
        });
        group.bench_with_input(BenchmarkId::new("host_mmap_munmap", label(size)), &size, |b, &size| {
            b.iter(|| {
                // SAFETY: a fresh private mapping, unmapped at once.
                unsafe {
                    let ptr = mmap_anonymous(
                        std::ptr::null_mut(),
                        size,
                        ProtFlags::READ | ProtFlags::WRITE,
                        MapFlags::PRIVATE,
                    )
                    .expect("mmap");
                    munmap(ptr, size).expect("munmap");
                }
            });
        });
    }
    group.finish();
}

fn pinned_pool(c: &mut Criterion) {
    software_device();
    let device = Device::new(0).expect("device");
    let pool = PinnedPool::new(&device);
    let size = 4 << 10;
    let mut group = c.benchmark_group("pinned_pool_hit");
    group.bench_function(BenchmarkId::new("glibc_malloc", label(size)), |b| {
        let layout = Layout::from_size_align(size, 16).expect("layout");
        b.iter(|| glibc_malloc_free(layout));
    });
    for threads in [1usize, 2] {
        group.bench_function(BenchmarkId::new("threads", threads), |b| {
            b.iter_custom(|iterations| {
                on_threads(threads, iterations, |n| {
                    for _ in 0..n {
                        drop(black_box(pool.alloc(size).expect("alloc")));
                    }
                })
            });
        });
    }
    group.finish();
}

criterion_group! { name = benches; config = config(); targets = pinned, pinned_pool }
criterion_main!(benches);

//! Pinned host allocation and free latency by size, beside `mmap` +
//! `munmap` of the same size.

mod common;

use ascend_sys as sys;
use common::{config, label, ok, software_device};
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use rustix::mm::{MapFlags, ProtFlags, mmap_anonymous, munmap};

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

criterion_group! { name = benches; config = config(); targets = pinned }
criterion_main!(benches);

//! VMM latency at 2 MiB, 64 MiB and 1 GiB, beside a raw `mmap`/`munmap`
//! pair of the same size. Goal: map + unmap ≤ 2×.

mod common;

use ascend_sys as sys;
use common::{config, device_prop, label, ok, software_device};
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use rustix::mm::{MapFlags, ProtFlags, mmap_anonymous, munmap};

const SIZES: [usize; 3] = [2 << 20, 64 << 20, 1 << 30];

fn latency(c: &mut Criterion) {
    software_device();
    let prop = device_prop();
    let mut group = c.benchmark_group("vmm");
    for size in SIZES {
        group.bench_with_input(BenchmarkId::new("reserve_release", label(size)), &size, |b, &size| {
            b.iter(|| {
                let mut base = std::ptr::null_mut();
                // SAFETY: valid out-pointer; the range is released at once.
                unsafe {
                    ok(
                        sys::aclrtReserveMemAddress(&mut base, size, 0, std::ptr::null_mut(), 0),
                        "reserve",
                    );
                    ok(sys::aclrtReleaseMemAddress(base), "release");
                }
            });
        });
        group.bench_with_input(
            BenchmarkId::new("physical_alloc_free", label(size)),
            &size,
            |b, &size| {
                b.iter(|| {
                    let mut handle = std::ptr::null_mut();
                    // SAFETY: valid out-pointer; the handle is freed at once.
                    unsafe {
                        ok(sys::aclrtMallocPhysical(&mut handle, size, &prop, 0), "malloc physical");
                        ok(sys::aclrtFreePhysical(handle), "free physical");
                    }
                });
            },
        );
        let mut handle = std::ptr::null_mut();
        let mut base = std::ptr::null_mut();
        // SAFETY: valid out-pointers.
        unsafe {
            ok(sys::aclrtMallocPhysical(&mut handle, size, &prop, 0), "malloc physical");
            ok(
                sys::aclrtReserveMemAddress(&mut base, size, 0, std::ptr::null_mut(), 0),
                "reserve",
            );
        }
        group.bench_with_input(BenchmarkId::new("map_unmap", label(size)), &size, |b, &size| {
            b.iter(|| {
                // SAFETY: a live reservation and handle of this size.
                unsafe {
                    ok(sys::aclrtMapMem(base, size, 0, handle, 0), "map");
                    ok(sys::aclrtUnmapMem(base), "unmap");
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
                        MapFlags::PRIVATE | MapFlags::NORESERVE,
                    )
                    .expect("mmap");
                    munmap(ptr, size).expect("munmap");
                }
            });
        });
        // SAFETY: unmapped; both freed once.
        unsafe {
            ok(sys::aclrtReleaseMemAddress(base), "release");
            ok(sys::aclrtFreePhysical(handle), "free physical");
        }
    }
    group.finish();
}

criterion_group! { name = benches; config = config(); targets = latency }
criterion_main!(benches);

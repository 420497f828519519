//! Copy and memset bandwidth of the software device, each beside a plain
//! host copy (`copy_nonoverlapping`) or fill (`write_bytes`) of the same
//! bytes in the same run. Goal: ≥ 0.9× from 1 MiB up.

mod common;

use ascend_sys as sys;
use common::{config, device_buffer, host_buffer, label, ok, software_device};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;

const SIZES: [usize; 6] = [4 << 10, 64 << 10, 1 << 20, 16 << 20, 64 << 20, 256 << 20];

fn copies(c: &mut Criterion) {
    software_device();
    for size in SIZES {
        let host_a = host_buffer(size);
        let host_b = host_buffer(size);
        let dev_a = device_buffer(size);
        let dev_b = device_buffer(size);
        let mut group = c.benchmark_group("copy");
        group.throughput(Throughput::Bytes(size as u64));
        let cases = [
            ("h2d", dev_a, host_a.cast_const()),
            ("d2h", host_b, dev_a.cast_const()),
            ("d2d", dev_b, dev_a.cast_const()),
            ("h2h", host_b, host_a.cast_const()),
        ];
        for (name, dst, src) in cases {
            group.bench_with_input(BenchmarkId::new(name, label(size)), &size, |b, &size| {
                // SAFETY: both buffers hold `size` bytes.
                b.iter(|| {
                    ok(
                        unsafe { sys::aclrtMemcpy(dst, size, src, size, sys::ACL_MEMCPY_DEFAULT) },
                        "memcpy",
                    )
                });
            });
        }
        group.bench_with_input(BenchmarkId::new("host_memcpy", label(size)), &size, |b, &size| {
            // SAFETY: two distinct live host buffers of `size` bytes.
            b.iter(|| unsafe {
                std::ptr::copy_nonoverlapping(black_box(host_a.cast::<u8>()), host_b.cast::<u8>(), size)
            });
        });
        group.finish();

        let mut group = c.benchmark_group("memset");
        group.throughput(Throughput::Bytes(size as u64));
        group.bench_with_input(BenchmarkId::new("device", label(size)), &size, |b, &size| {
            // SAFETY: `dev_a` holds `size` bytes.
            b.iter(|| ok(unsafe { sys::aclrtMemset(dev_a, size, 7, size) }, "memset"));
        });
        group.bench_with_input(BenchmarkId::new("host_write_bytes", label(size)), &size, |b, &size| {
            // SAFETY: `host_a` holds `size` bytes.
            b.iter(|| unsafe { black_box(host_a.cast::<u8>()).write_bytes(7, size) });
        });
        group.finish();
        // SAFETY: each buffer is freed once.
        unsafe {
            ok(sys::aclrtFree(dev_a), "free");
            ok(sys::aclrtFree(dev_b), "free");
            ok(sys::aclrtFreeHost(host_a), "free host");
            ok(sys::aclrtFreeHost(host_b), "free host");
        }
    }
}

criterion_group! { name = benches; config = config(); targets = copies }
criterion_main!(benches);

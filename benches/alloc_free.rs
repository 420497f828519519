//! Device allocation + free on the software device beside the host
//! allocator (glibc `malloc` + `free`, through `std::alloc::System`) of the
//! same size, and a zeroed buffer beside an uninitialised one. Goals
//! (issue 14): alloc+free of 64 B to 64 KiB ≤ 10× `malloc`+`free`; a zeroed
//! 4 KiB buffer ≤ 2× an uninitialised one.

mod common;

use ascend::{Device, DeviceBuf};
use common::{config, glibc_malloc_free, label, software_device};
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use std::alloc::Layout;
use std::hint::black_box;

const SIZES: [usize; 3] = [64, 4 << 10, 64 << 10];

fn alloc_free(c: &mut Criterion) {
    software_device();
    let device = Device::new(0).expect("device");
    let mut group = c.benchmark_group("alloc_free");
    for size in SIZES {
        group.bench_with_input(BenchmarkId::new("device_uninit", label(size)), &size, |b, &size| {
            // SAFETY: the bytes are never read.
            b.iter(|| {
                drop(black_box(
                    unsafe { DeviceBuf::<u8>::uninit(&device, size) }.expect("alloc"),
                ))
            });
        });
        group.bench_with_input(BenchmarkId::new("glibc_malloc", label(size)), &size, |b, &size| {
            let layout = Layout::from_size_align(size, 16).expect("layout");
            b.iter(|| glibc_malloc_free(layout));
        });
    }
    group.finish();

    let mut group = c.benchmark_group("zeroed_vs_uninit");
    let size = 4 << 10;
    group.bench_function(BenchmarkId::new("uninit", label(size)), |b| {
        // SAFETY: the bytes are never read.
        b.iter(|| {
            drop(black_box(
                unsafe { DeviceBuf::<u8>::uninit(&device, size) }.expect("alloc"),
            ))
        });
    });
    group.bench_function(BenchmarkId::new("zeroed", label(size)), |b| {
        b.iter(|| drop(black_box(DeviceBuf::<u8>::zeroed(&device, size).expect("alloc"))));
    });
    // What the zeroing costs, piece by piece: a fill of a buffer kept
    // alive through the safe API, the raw `aclrtMemset` under it, and a
    // host memset of the same bytes.
    let mut kept = DeviceBuf::<u8>::zeroed(&device, size).expect("alloc");
    group.bench_function(BenchmarkId::new("fill_only", label(size)), |b| {
        b.iter(|| kept.fill_bytes(0).expect("fill"));
    });
    let raw = kept.as_raw();
    group.bench_function(BenchmarkId::new("raw_memset", label(size)), |b| {
        // SAFETY: `raw` is a live device buffer of `size` bytes.
        b.iter(|| unsafe { ascend_sys::aclrtMemset(raw, size, 0, size) });
    });
    let mut host = vec![1u8; size];
    group.bench_function(BenchmarkId::new("host_memset", label(size)), |b| {
        b.iter(|| black_box(&mut host).fill(0));
    });
    group.finish();
}

criterion_group! { name = benches; config = config(); targets = alloc_free }
criterion_main!(benches);

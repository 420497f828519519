//! The software device on one thread and on two (issue 14, item 2): each
//! thread allocates and frees 4 KiB of device memory, or copies 4 KiB from
//! the host into a device buffer of its own, independently of the other.
//! The same 4 KiB allocation + free through the safe layer
//! (`DeviceBuf::uninit` + drop, issue 29), the threads sharing one
//! `Device`. Reported per operation of each thread, so throughput on two
//! threads ÷ one = 2 × (time for one) ÷ (time for two). Goal ≥ 1.6×.
//! Run: `cargo bench -p ascend-benches --bench soft_threads`.

mod common;

use ascend::{Device, DeviceBuf};
use ascend_sys as sys;
use common::{config, ok, software_device};
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use std::ffi::c_void;
use std::hint::black_box;
use std::time::Duration;

const SIZE: usize = 4096;

/// [`common::on_threads`], each thread setting the device first.
fn on_threads(threads: usize, iterations: u64, body: impl Fn(u64) + Sync) -> Duration {
    common::on_threads(threads, iterations, |iterations| {
        // SAFETY: no pointer arguments.
        ok(unsafe { sys::aclrtSetDevice(0) }, "aclrtSetDevice");
        body(iterations);
    })
}

fn alloc_free(iterations: u64) {
    for _ in 0..iterations {
        let mut pointer = std::ptr::null_mut();
        // SAFETY: a valid out-pointer; the allocation is freed at once.
        unsafe {
            ok(
                sys::aclrtMalloc(&mut pointer, SIZE, sys::ACL_MEM_MALLOC_HUGE_FIRST),
                "aclrtMalloc",
            );
            ok(sys::aclrtFree(black_box(pointer)), "aclrtFree");
        }
    }
}

/// `DeviceBuf::uninit` + drop, every thread sharing the one `Device`.
fn safe_alloc_free(device: &Device, iterations: u64) {
    for _ in 0..iterations {
        // SAFETY: the bytes are never read.
        drop(black_box(
            unsafe { DeviceBuf::<u8>::uninit(device, SIZE) }.expect("alloc"),
        ));
    }
}

fn copies(iterations: u64) {
    let host = vec![7u8; SIZE];
    let mut device: *mut c_void = std::ptr::null_mut();
    // SAFETY: valid pointers and lengths; the buffer is this thread's own.
    unsafe {
        ok(
            sys::aclrtMalloc(&mut device, SIZE, sys::ACL_MEM_MALLOC_HUGE_FIRST),
            "aclrtMalloc",
        );
        for _ in 0..iterations {
            ok(
                sys::aclrtMemcpy(device, SIZE, host.as_ptr().cast(), SIZE, sys::ACL_MEMCPY_HOST_TO_DEVICE),
                "aclrtMemcpy",
            );
        }
        ok(sys::aclrtFree(device), "aclrtFree");
    }
}

fn soft_threads(c: &mut Criterion) {
    software_device();
    let mut group = c.benchmark_group("soft_threads");
    for (name, body) in [("alloc_free_4KiB", alloc_free as fn(u64)), ("copy_h2d_4KiB", copies)] {
        for threads in [1usize, 2] {
            group.bench_function(BenchmarkId::new(name, threads), |b| {
                b.iter_custom(|iterations| on_threads(threads, iterations, body));
            });
        }
    }
    let device = Device::new(0).expect("device");
    for threads in [1usize, 2] {
        group.bench_function(BenchmarkId::new("safe_alloc_free_4KiB", threads), |b| {
            b.iter_custom(|iterations| on_threads(threads, iterations, |n| safe_alloc_free(&device, n)));
        });
    }
    group.finish();
}

criterion_group! { name = benches; config = config(); targets = soft_threads }
criterion_main!(benches);

//! The stream-hazard sanitizer's cost (issue 26), in one run:
//!
//! - `sanitizer/*/off` beside `sanitizer/*/on`: the same 4 KiB raw calls
//!   with the sanitizer off, then on (`start_sanitizer(Checks::all())`).
//!   Goal: a 4 KiB async copy and an alloc + free on ≤ 3× off.
//! - `sanitizer_working_set/*/10` beside `…/10000`: a 4 KiB async copy
//!   with the sanitizer on and a working set of 10 or of 10,000 distinct
//!   ranges (as many separate 4 KiB device allocations, each written once
//!   by an `aclrtMemsetAsync`, so that the shadow holds at least as many
//!   runs: asserted). Goal: 10,000 ≤ 2× 10.
//!
//! "copy_async_sync" is a copy and a stream synchronisation, most of it
//! the hand-over to the stream's worker thread and back; "copy_async_queued"
//! is the time per call of queuing copies, one synchronisation per 64
//! (`common::queued_copies`), where the sanitizer's own work shows. The
//! comparison with the build before the sanitizer is `raw_calls.rs`.
//!
//! `cargo bench -p ascend-benches --bench sanitizer -- --warm-up-time 1
//! --measurement-time 3`; figures in `docs/performance.md`
//! ("Stream-hazard sanitizer").

mod common;

use ascend_sys as sys;
use common::{
    config, copy_async, device_buffer, host_buffer, malloc_free, memcpy_h2d, ok, queued_copies, raw_stream,
    software_device, synchronize,
};
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use std::ffi::c_void;
use sys::soft::{self, Checks};

const SIZE: usize = 4 << 10;

/// Stops the sanitizer and checks that it reported nothing: the benches
/// order every access.
fn stop_quiet() {
    let summary = soft::stop_sanitizer();
    assert_eq!(summary.total(), 0, "the sanitizer reported: {summary}");
}

fn on_off(c: &mut Criterion) {
    software_device();
    // Off even when `ASCEND_SOFT_SANITIZE` says otherwise.
    soft::stop_sanitizer();
    let host = host_buffer(SIZE).cast_const();
    let dev = device_buffer(SIZE);
    let stream = raw_stream();
    let mut group = c.benchmark_group("sanitizer");
    for on in [false, true] {
        let state = if on { "on" } else { "off" };
        if on {
            soft::start_sanitizer(Checks::all());
        }
        assert_eq!(soft::sanitizer_checks().is_empty(), !on);
        group.bench_function(BenchmarkId::new("copy_async_sync_4KiB", state), |b| {
            b.iter(|| {
                // SAFETY: both buffers hold `SIZE` bytes and outlive the
                // synchronisation.
                unsafe { copy_async(dev, host, SIZE, stream) };
                synchronize(stream);
            });
        });
        group.bench_function(BenchmarkId::new("copy_async_queued_4KiB", state), |b| {
            // SAFETY: as above; `queued_copies` synchronises before returning.
            b.iter_custom(|iterations| unsafe { queued_copies(iterations, (dev, host, SIZE), stream) });
        });
        group.bench_function(BenchmarkId::new("memcpy_h2d_4KiB", state), |b| {
            // SAFETY: both buffers hold `SIZE` bytes.
            b.iter(|| unsafe { memcpy_h2d(dev, host, SIZE) });
        });
        group.bench_function(BenchmarkId::new("malloc_free_4KiB", state), |b| {
            b.iter(|| malloc_free(SIZE))
        });
    }
    group.finish();
    // SAFETY: the stream's work is over; each buffer is freed once.
    unsafe {
        ok(sys::aclrtDestroyStream(stream), "aclrtDestroyStream");
        ok(sys::aclrtFree(dev), "aclrtFree");
        ok(sys::aclrtFreeHost(host.cast_mut()), "aclrtFreeHost");
    }
    stop_quiet();
}

/// `count` separate device allocations of `SIZE` bytes, each written once
/// on `stream`, then the host synchronised with it.
fn working_set(count: usize, stream: sys::aclrtStream) -> Vec<*mut c_void> {
    let buffers: Vec<*mut c_void> = (0..count)
        .map(|_| {
            let mut ptr = std::ptr::null_mut();
            // SAFETY: valid out-pointer; the memset covers the allocation,
            // which lives until `free_all`, after a synchronisation.
            unsafe {
                ok(
                    sys::aclrtMalloc(&mut ptr, SIZE, sys::ACL_MEM_MALLOC_HUGE_FIRST),
                    "aclrtMalloc",
                );
                ok(sys::aclrtMemsetAsync(ptr, SIZE, 1, SIZE, stream), "aclrtMemsetAsync");
            }
            ptr
        })
        .collect();
    synchronize(stream);
    buffers
}

fn free_all(buffers: Vec<*mut c_void>) {
    for buffer in buffers {
        // SAFETY: each buffer is freed once, after its work.
        ok(unsafe { sys::aclrtFree(buffer) }, "aclrtFree");
    }
}

fn ranges(c: &mut Criterion) {
    software_device();
    soft::stop_sanitizer();
    let host = host_buffer(SIZE).cast_const();
    let stream = raw_stream();
    let mut group = c.benchmark_group("sanitizer_working_set");
    for count in [10, 10_000] {
        soft::start_sanitizer(Checks::all());
        let buffers = working_set(count, stream);
        let runs = soft::sanitizer_tracked_runs();
        assert!(runs >= count, "{count} ranges, but only {runs} shadow runs");
        println!("working set of {count} ranges: {runs} shadow runs");
        let dev = buffers[count / 2];
        group.bench_function(BenchmarkId::new("copy_async_queued_4KiB", count), |b| {
            // SAFETY: both buffers hold `SIZE` bytes and live until after
            // the synchronisation `queued_copies` ends with.
            b.iter_custom(|iterations| unsafe { queued_copies(iterations, (dev, host, SIZE), stream) });
        });
        group.bench_function(BenchmarkId::new("copy_async_sync_4KiB", count), |b| {
            b.iter(|| {
                // SAFETY: as above.
                unsafe { copy_async(dev, host, SIZE, stream) };
                synchronize(stream);
            });
        });
        assert!(soft::sanitizer_tracked_runs() >= count);
        free_all(buffers);
        stop_quiet();
    }
    group.finish();
    // SAFETY: the stream's work is over; the buffer is freed once.
    unsafe {
        ok(sys::aclrtDestroyStream(stream), "aclrtDestroyStream");
        ok(sys::aclrtFreeHost(host.cast_mut()), "aclrtFreeHost");
    }
}

criterion_group! { name = benches; config = config(); targets = on_off, ranges }
criterion_main!(benches);

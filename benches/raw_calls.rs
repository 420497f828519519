//! Small raw `ascend-sys` calls of the software device, through nothing
//! but the raw API (the same since 6d54c24, the build before the
//! stream-hazard sanitizer), so that this file, with `common.rs`, builds in
//! both and the two builds can be compared. Goal (issue 26): with the
//! sanitizer off, after ÷ before ≤ 1.05×.
//!
//! Compared by running it in turn in each build (before, after, before,
//! after, …), one build per worktree and target directory;
//! `docs/performance.md` ("Stream-hazard sanitizer") has the recipe and
//! the figures. In one build alone it only gives absolute times.

mod common;

use common::{
    config, copy_async, device_buffer, host_buffer, malloc_free, memcpy_h2d, ok, queued_copies, raw_stream,
    software_device, synchronize,
};
use criterion::{Criterion, criterion_group, criterion_main};

const SIZE: usize = 4 << 10;

fn raw_calls(c: &mut Criterion) {
    software_device();
    let host = host_buffer(SIZE).cast_const();
    let dev = device_buffer(SIZE);
    let stream = raw_stream();
    let mut group = c.benchmark_group("raw_calls");
    group.bench_function("memcpy_async_sync/4KiB", |b| {
        b.iter(|| {
            // SAFETY: both buffers hold `SIZE` bytes and outlive the
            // synchronisation.
            unsafe { copy_async(dev, host, SIZE, stream) };
            synchronize(stream);
        });
    });
    group.bench_function("memcpy_async_queued/4KiB", |b| {
        // SAFETY: as above; `queued_copies` synchronises before returning.
        b.iter_custom(|iterations| unsafe { queued_copies(iterations, (dev, host, SIZE), stream) });
    });
    group.bench_function("memcpy_h2d/4KiB", |b| {
        // SAFETY: both buffers hold `SIZE` bytes.
        b.iter(|| unsafe { memcpy_h2d(dev, host, SIZE) });
    });
    group.bench_function("malloc_free/4KiB", |b| b.iter(|| malloc_free(SIZE)));
    group.finish();
    // SAFETY: the stream's work is over; each buffer is freed once.
    unsafe {
        ok(ascend_sys::aclrtDestroyStream(stream), "aclrtDestroyStream");
        ok(ascend_sys::aclrtFree(dev), "aclrtFree");
        ok(ascend_sys::aclrtFreeHost(host.cast_mut()), "aclrtFreeHost");
    }
}

criterion_group! { name = benches; config = config(); targets = raw_calls }
criterion_main!(benches);

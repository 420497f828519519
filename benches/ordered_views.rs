//! Views of `Ordered` storages (issue 25):
//!
//! - `view_write_4KiB`: a 4 KiB host-to-device copy plus a stream
//!   synchronisation into a 4 KiB view in the middle of a 64 MiB storage,
//!   against the same copy into a whole 4 KiB `Ordered` buffer. Goal
//!   ≤ 1.2×: the cost is that of the view, not of the storage.
//! - `disjoint_view_writes`: one thread, or two at once, each writing
//!   `WRITES` views of 4 KiB or 64 KiB of its own half of one shared
//!   storage: `host`
//!   with synchronous copies (`OrderedView::write_from_host`), `queued`
//!   with copies queued on its own stream from its own pinned buffer, then
//!   a synchronisation; `raw`, for the software device's own limit, the
//!   same synchronous copies as raw `aclrtMemcpy` calls into the halves of
//!   one `aclrtMalloc` allocation, and `raw_queued` the queued copies as
//!   raw `aclrtMemcpyAsync` calls, each thread on its own raw stream from
//!   its own `aclrtMallocHost` buffer. Reported per iteration, so throughput
//!   on two threads ÷ one = 2 × (time for one) ÷ (time for two). Goal
//!   ≥ 1.6×.
//!
//! Run: `cargo bench -p ascend-benches --bench ordered_views`.

mod common;

use ascend::stream::{Ordered, Stream};
use ascend::{Device, DeviceBuf, PinnedHostBuf};
use common::{config, software_device};
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use std::ffi::c_void;
use std::sync::Arc;
use std::time::{Duration, Instant};

const SMALL: usize = 4096;
const STORAGE: usize = 64 << 20;
const WRITES: usize = 64;

fn view_write(c: &mut Criterion) {
    software_device();
    let device = Device::new(0).expect("device");
    let stream = Arc::new(Stream::new(&device).expect("stream"));
    let staging = Ordered::new(PinnedHostBuf::from_slice(&device, &[3u8; SMALL]).expect("host"));
    let whole = Ordered::new(DeviceBuf::<u8>::zeroed(&device, SMALL).expect("buffer"));
    let storage = Ordered::new(DeviceBuf::<u8>::zeroed(&device, STORAGE).expect("storage"));
    let mut group = c.benchmark_group("view_write_4KiB");
    group.bench_function("whole_buffer", |b| {
        b.iter(|| {
            whole.copy_from_host(&staging, &stream).expect("copy");
            stream.synchronize().expect("synchronize");
        });
    });
    let middle = STORAGE / 2;
    group.bench_function("view_of_64MiB", |b| {
        b.iter(|| {
            let view = storage.bytes(middle..middle + SMALL).expect("view");
            view.copy_from_host(&staging, &stream).expect("copy");
            stream.synchronize().expect("synchronize");
        });
    });
    group.finish();
}

/// `threads` threads at once, each writing `WRITES` views of `part` bytes of its own half
/// of `storage` (on its own stream if `queued`, else from the host),
/// `iterations` times; the time until all are done.
fn on_threads(
    (threads, part): (usize, usize),
    queued: bool,
    iterations: u64,
    storage: &Arc<Ordered<DeviceBuf<u8>>>,
    device: &Device,
) -> Duration {
    let streams: Vec<Arc<Stream>> = (0..threads)
        .map(|_| Arc::new(Stream::new(device).expect("stream")))
        .collect();
    let staging: Vec<_> = (0..threads)
        .map(|_| Ordered::new(PinnedHostBuf::from_slice(device, &vec![5u8; part]).expect("host")))
        .collect();
    let start = Instant::now();
    std::thread::scope(|scope| {
        for (thread, (stream, staging)) in streams.iter().zip(&staging).enumerate() {
            let storage = Arc::clone(storage);
            scope.spawn(move || {
                let half = storage
                    .bytes(thread * STORAGE / 2..(thread + 1) * STORAGE / 2)
                    .expect("half");
                let host = vec![7u8; part];
                for _ in 0..iterations {
                    for write in 0..WRITES {
                        let at = write * part;
                        let view = half.bytes(at..at + part).expect("part");
                        if queued {
                            view.copy_from_host(staging, stream).expect("copy");
                        } else {
                            view.write_from_host(&host).expect("host write");
                        }
                    }
                    if queued {
                        stream.synchronize().expect("synchronize");
                    }
                }
            });
        }
    });
    start.elapsed()
}

/// [`on_threads`] with raw calls into the halves of one allocation at
/// `device`: synchronous `aclrtMemcpy` from a host `Vec`, or if `queued`
/// `aclrtMemcpyAsync` from an `aclrtMallocHost` buffer on a raw stream per
/// thread, then a synchronisation.
fn raw_on_threads((threads, part): (usize, usize), queued: bool, iterations: u64, device: usize) -> Duration {
    let start = Instant::now();
    std::thread::scope(|scope| {
        for thread in 0..threads {
            scope.spawn(move || {
                // SAFETY: no pointer arguments.
                common::ok(unsafe { ascend::sys::aclrtSetDevice(0) }, "aclrtSetDevice");
                let (host_vec, pinned) = (vec![7u8; part], queued.then(|| common::host_buffer(part)));
                let host: *const c_void = pinned.map_or(host_vec.as_ptr().cast(), |pinned| pinned.cast_const());
                let mut stream: ascend::sys::aclrtStream = std::ptr::null_mut();
                if queued {
                    // SAFETY: `stream` is a valid out-pointer.
                    common::ok(
                        unsafe { ascend::sys::aclrtCreateStream(&mut stream) },
                        "aclrtCreateStream",
                    );
                }
                for _ in 0..iterations {
                    for write in 0..WRITES {
                        let at = (device + thread * STORAGE / 2 + write * part) as *mut c_void;
                        // SAFETY: `at..at + part` lies in this thread's half
                        // of a live allocation of `STORAGE` bytes; `host`
                        // holds `part` bytes (pinned when queued) that
                        // outlive the synchronisation below.
                        let code = unsafe {
                            if queued {
                                ascend::sys::aclrtMemcpyAsync(
                                    at,
                                    part,
                                    host,
                                    part,
                                    ascend::sys::ACL_MEMCPY_HOST_TO_DEVICE,
                                    stream,
                                )
                            } else {
                                ascend::sys::aclrtMemcpy(at, part, host, part, ascend::sys::ACL_MEMCPY_HOST_TO_DEVICE)
                            }
                        };
                        common::ok(code, "a raw copy");
                    }
                    if queued {
                        // SAFETY: a live stream.
                        common::ok(
                            unsafe { ascend::sys::aclrtSynchronizeStream(stream) },
                            "aclrtSynchronizeStream",
                        );
                    }
                }
                if let Some(pinned) = pinned {
                    // SAFETY: the stream's work is over; the buffer is unused
                    // from here.
                    unsafe {
                        common::ok(ascend::sys::aclrtDestroyStream(stream), "aclrtDestroyStream");
                        common::ok(ascend::sys::aclrtFreeHost(pinned), "aclrtFreeHost");
                    }
                }
            });
        }
    });
    start.elapsed()
}

fn disjoint_writes(c: &mut Criterion) {
    software_device();
    let device = Device::new(0).expect("device");
    let storage = Arc::new(Ordered::new(
        DeviceBuf::<u8>::zeroed(&device, STORAGE).expect("storage"),
    ));
    let mut group = c.benchmark_group("disjoint_view_writes");
    let raw = common::device_buffer(STORAGE) as usize;
    for part in [4 << 10, 64 << 10] {
        for threads in [1, 2] {
            let input = (threads, part);
            let id = |kind: &str| BenchmarkId::new(format!("{kind}_{}KiB", part >> 10), threads);
            for (kind, queued) in [("host", false), ("queued", true)] {
                group.bench_with_input(id(kind), &input, |b, &input| {
                    b.iter_custom(|iterations| on_threads(input, queued, iterations, &storage, &device));
                });
            }
            group.bench_with_input(id("raw"), &input, |b, &input| {
                b.iter_custom(|iterations| raw_on_threads(input, false, iterations, raw));
            });
            group.bench_with_input(id("raw_queued"), &input, |b, &input| {
                b.iter_custom(|iterations| raw_on_threads(input, true, iterations, raw));
            });
        }
    }
    group.finish();
}

criterion_group! { name = benches; config = config(); targets = view_write, disjoint_writes }
criterion_main!(benches);

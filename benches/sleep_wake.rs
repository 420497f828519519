//! Sleep and wake of a device pool (issue 15, benchmark d): a pool whose
//! offloaded tag holds 1 GiB of live blocks sleeps (copies the 1 GiB to
//! pinned host memory, unmaps and frees its physical memory) and wakes
//! (maps new memory at the same addresses, copies the 1 GiB back). Beside
//! it, in the same run, the physical limit: a host `memcpy` of 1 GiB out
//! and back (2 GiB moved) between buffers already resident.
//!
//! Goal: sleep + wake ≤ 1.25× the memcpy. Run:
//! `cargo bench -p ascend-benches --bench sleep_wake`
//! (then `python3 scripts/bench-report.py`).

mod common;

use ascend::Device;
use ascend::pool::{DevicePool, PoolConfig};
use ascend::stream::Stream;
use common::software_device;
use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

const SIZE: usize = 1 << 30;

fn bench(c: &mut Criterion) {
    software_device();
    let mut group = c.benchmark_group("sleep_wake");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(10));

    let mut out = vec![1u8; SIZE];
    let mut back = vec![2u8; SIZE];
    group.bench_function("host_memcpy_out_and_back_1GiB", |b| {
        b.iter(|| {
            back.copy_from_slice(black_box(&out));
            out.copy_from_slice(black_box(&back));
        })
    });
    drop((out, back));

    let device = Device::new(0).expect("device 0");
    let stream = Arc::new(Stream::new(&device).expect("stream"));
    let pool = DevicePool::new(&device, PoolConfig::default()).expect("pool");
    let weights = pool.alloc_tagged(SIZE, "weights").expect("1 GiB block");
    weights.fill_bytes(3, &stream).expect("fill");
    stream.synchronize().expect("synchronize");
    group.bench_function("pool_sleep_wake_1GiB", |b| {
        b.iter(|| {
            pool.sleep(&["weights"]).expect("sleep");
            pool.wake().expect("wake");
        })
    });
    group.finish();
    drop(weights);
}

criterion_group! {
    name = benches;
    config = common::config();
    targets = bench
}
criterion_main!(benches);

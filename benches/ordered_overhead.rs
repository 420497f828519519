//! A stored buffer's 64-byte asynchronous copy plus synchronisation,
//! through `Ordered` (no scope) against the same inside `Stream::scope`.
//! Goal: ≤ 1.2× on one stream, where `Ordered` creates no event.

mod common;

use ascend::stream::{Ordered, Stream};
use ascend::{Device, DeviceBuf, PinnedHostBuf};
use common::{config, software_device};
use criterion::{Criterion, criterion_group, criterion_main};
use std::sync::Arc;

fn ordered_overhead(c: &mut Criterion) {
    software_device();
    let device = Device::new(0).expect("device");
    let stream = Arc::new(Stream::new(&device).expect("stream"));
    let host = PinnedHostBuf::from_slice(&device, &[3u8; 64]).expect("host");
    let mut on_device = DeviceBuf::<u8>::zeroed(&device, 64).expect("buffer");
    let mut group = c.benchmark_group("async_copy_64B");
    group.bench_function("scope", |b| {
        b.iter(|| {
            stream
                .scope(|s| s.copy_to_device(&host, &mut on_device))
                .expect("scoped copy")
        });
    });
    let staging = Ordered::new(host);
    let stored = Ordered::new(on_device);
    group.bench_function("ordered", |b| {
        b.iter(|| {
            stored.copy_from_host(&staging, &stream).expect("ordered copy");
            stream.synchronize().expect("synchronize");
        });
    });
    group.finish();
}

criterion_group! { name = benches; config = config(); targets = ordered_overhead }
criterion_main!(benches);

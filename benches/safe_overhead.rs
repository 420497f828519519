//! The safe layer against the raw `ascend-sys` call it wraps, for small
//! operations. Goal: ≤ 1.2×.

mod common;

use ascend::vmm::{PhysicalAlloc, PhysicalMemProp, VirtualRange};
use ascend::{Device, DeviceBuf};
use ascend_sys as sys;
use common::{config, device_prop, ok, software_device};
use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;

fn overhead(c: &mut Criterion) {
    software_device();
    let device = Device::new(0).expect("device");

    // A 64-byte host-to-device copy.
    let data = [3u8; 64];
    let mut buf = DeviceBuf::<u8>::zeroed(&device, 64).expect("buffer");
    let raw = buf.as_raw();
    let mut group = c.benchmark_group("copy_64B");
    group.bench_function("raw", |b| {
        // SAFETY: `raw` holds 64 bytes; `data` is live.
        b.iter(|| {
            ok(
                unsafe {
                    sys::aclrtMemcpy(
                        raw,
                        64,
                        black_box(data.as_ptr()).cast(),
                        64,
                        sys::ACL_MEMCPY_HOST_TO_DEVICE,
                    )
                },
                "memcpy",
            )
        });
    });
    group.bench_function("safe", |b| {
        b.iter(|| buf.write_from_host(black_box(&data)).expect("copy"))
    });
    group.finish();

    // Memory info.
    let mut group = c.benchmark_group("memory_info");
    group.bench_function("raw", |b| {
        b.iter(|| {
            let (mut free, mut total) = (0, 0);
            // SAFETY: valid out-pointers.
            ok(
                unsafe { sys::aclrtGetMemInfo(sys::ACL_HBM_MEM, &mut free, &mut total) },
                "meminfo",
            );
            black_box((free, total))
        });
    });
    group.bench_function("safe", |b| b.iter(|| black_box(device.memory_info().expect("meminfo"))));
    group.finish();

    // A 2 MiB map + unmap.
    let prop = PhysicalMemProp::device(&device);
    let granule = prop.round_up(1).expect("granule");
    let physical = PhysicalAlloc::new(&prop, granule).expect("physical");
    let range = VirtualRange::reserve(granule).expect("range");
    let raw_prop = device_prop();
    let mut raw_handle = std::ptr::null_mut();
    let mut raw_base = std::ptr::null_mut();
    // SAFETY: valid out-pointers.
    unsafe {
        ok(
            sys::aclrtMallocPhysical(&mut raw_handle, granule, &raw_prop, 0),
            "physical",
        );
        ok(
            sys::aclrtReserveMemAddress(&mut raw_base, granule, 0, std::ptr::null_mut(), 0),
            "reserve",
        );
    }
    let mut group = c.benchmark_group("map_unmap_2MiB");
    group.bench_function("raw", |b| {
        b.iter(|| {
            // SAFETY: a live reservation and handle of matching size.
            unsafe {
                ok(sys::aclrtMapMem(raw_base, granule, 0, raw_handle, 0), "map");
                ok(sys::aclrtUnmapMem(raw_base), "unmap");
            }
        });
    });
    group.bench_function("safe", |b| {
        b.iter(|| range.map(0, &physical).expect("map").unmap().expect("unmap"))
    });
    group.finish();
}

criterion_group! { name = benches; config = config(); targets = overhead }
criterion_main!(benches);

//! The cost of a 4 KiB copy and of address translation
//! (`aclrtMemGetAddressRange`) with 10, 1,000 and 100,000 live mappings.
//! Goal: ≤ 1.5× from 10 to 100,000.

mod common;

use ascend_sys as sys;
use common::{config, device_prop, host_buffer, ok, software_device};
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use std::ffi::c_void;
use std::hint::black_box;

const GRANULE: usize = 2 << 20;
const COUNTS: [usize; 3] = [10, 1_000, 100_000];

fn scaling(c: &mut Criterion) {
    software_device();
    let prop = device_prop();
    let host = host_buffer(4096);
    let mut group = c.benchmark_group("translation");
    for count in COUNTS {
        // One physical allocation mapped `count` times into one range.
        let mut handle = std::ptr::null_mut();
        let mut base = std::ptr::null_mut();
        // SAFETY: valid out-pointers; mappings stay inside the range.
        unsafe {
            ok(
                sys::aclrtMallocPhysical(&mut handle, GRANULE, &prop, 0),
                "malloc physical",
            );
            ok(
                sys::aclrtReserveMemAddress(&mut base, count * GRANULE, 0, std::ptr::null_mut(), 0),
                "reserve",
            );
            for index in 0..count {
                ok(
                    sys::aclrtMapMem(base.byte_add(index * GRANULE), GRANULE, 0, handle, 0),
                    "map",
                );
            }
        }
        // A mapping in the middle of the table.
        let target: *mut c_void = base.wrapping_byte_add((count / 2) * GRANULE + 100);
        group.bench_with_input(BenchmarkId::new("copy_4KiB", count), &count, |b, _| {
            // SAFETY: 4 KiB inside one mapping; `host` holds 4 KiB.
            b.iter(|| {
                ok(
                    unsafe { sys::aclrtMemcpy(black_box(target), 4096, host, 4096, sys::ACL_MEMCPY_HOST_TO_DEVICE) },
                    "copy",
                )
            });
        });
        group.bench_with_input(BenchmarkId::new("address_range", count), &count, |b, _| {
            b.iter(|| {
                let (mut start, mut size) = (std::ptr::null_mut(), 0);
                // SAFETY: valid out-pointers.
                ok(
                    unsafe { sys::aclrtMemGetAddressRange(black_box(target), &mut start, &mut size) },
                    "range",
                );
                black_box((start, size))
            });
        });
        // SAFETY: every mapping made above is unmapped once.
        unsafe {
            for index in 0..count {
                ok(sys::aclrtUnmapMem(base.byte_add(index * GRANULE)), "unmap");
            }
            ok(sys::aclrtReleaseMemAddress(base), "release");
            ok(sys::aclrtFreePhysical(handle), "free physical");
        }
    }
    group.finish();
}

criterion_group! { name = benches; config = config(); targets = scaling }
criterion_main!(benches);

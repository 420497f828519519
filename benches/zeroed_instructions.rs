//! Instructions per `DeviceBuf` allocation + drop of 4 KiB, uninitialised
//! or zeroed, counted by callgrind (repeatable on a shared machine, where
//! timings are not). Run twice and subtract:
//!
//! ```text
//! cargo bench -p ascend-benches --bench zeroed_instructions --no-run
//! for z in 0 1; do for n in 0 100000; do ZEROED=$z ALLOCS=$n ASCEND_SOFT_DEVICE_MEMORY=1G \
//!   valgrind --tool=callgrind --callgrind-out-file=/dev/null \
//!   target/release/deps/zeroed_instructions-* 2>&1 | grep Collected; done; done
//! ```
//!
//! (instructions per allocation = the difference ÷ 100,000; under
//! valgrind the software device cannot reserve its default capacity, hence
//! `ASCEND_SOFT_DEVICE_MEMORY=1G`). `ZEROED=1`
//! makes each buffer with `DeviceBuf::zeroed`, `ZEROED=0` with
//! `DeviceBuf::uninit`; the ratio of the two is the instruction-count
//! side of the goal in `benches/alloc_free.rs` (zeroed ÷ uninitialised).
//! Run directly, it prints the time per allocation. `ZEROED=2` is the
//! floor of a zeroed buffer: each uninitialised allocation followed by a
//! host `memset` of 4 KiB of host memory (the bytes a zeroed buffer must
//! write, at the host's store speed, with no call in between); the
//! floor of the goal's ratio is its time ÷ `ZEROED=0`'s.

use ascend::{Device, DeviceBuf};
use std::hint::black_box;

/// Bytes per buffer, as in `benches/alloc_free.rs`.
const SIZE: usize = 4096;

fn main() {
    let env = |name: &str, default: usize| {
        std::env::var(name)
            .ok()
            .and_then(|value| value.parse().ok())
            .unwrap_or(default)
    };
    let allocs = env("ALLOCS", 1_000_000);
    let mode = env("ZEROED", 0);
    let zeroed = mode == 1;
    ascend_sys::select_backend(ascend_sys::BackendRequest::Software).expect("software device");
    let device = Device::new(0).expect("device 0");
    // One of each first, so both counts include the same warm-up.
    drop(DeviceBuf::<u8>::zeroed(&device, SIZE).expect("alloc"));
    let start = std::time::Instant::now();
    if mode == 2 {
        let mut host = vec![1u8; SIZE];
        for _ in 0..allocs {
            // SAFETY: the bytes are never read.
            let buf = unsafe { DeviceBuf::<u8>::uninit(&device, SIZE) }.expect("alloc");
            black_box(&mut host).fill(0);
            drop(black_box(buf));
        }
    } else if zeroed {
        for _ in 0..allocs {
            drop(black_box(DeviceBuf::<u8>::zeroed(&device, SIZE).expect("alloc")));
        }
    } else {
        for _ in 0..allocs {
            // SAFETY: the bytes are never read.
            drop(black_box(
                unsafe { DeviceBuf::<u8>::uninit(&device, SIZE) }.expect("alloc"),
            ));
        }
    }
    if allocs > 0 {
        println!(
            "{allocs} {} allocations, {:.1} ns each",
            match mode {
                2 => "uninitialised + host memset",
                1 => "zeroed",
                _ => "uninitialised",
            },
            start.elapsed().as_nanos() as f64 / allocs as f64
        );
    }
}

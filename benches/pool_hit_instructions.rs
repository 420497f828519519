//! Instructions per pool hit, counted by callgrind (repeatable on a shared
//! machine, where timings are not): `N` allocation + free pairs of 4 KiB
//! that the cache serves. Run twice and subtract:
//!
//! ```text
//! cargo bench -p ascend-benches --bench pool_hit_instructions --no-run
//! for n in 0 100000; do POOL_HITS=$n ASCEND_SOFT_DEVICE_MEMORY=1G \
//!   valgrind --tool=callgrind --callgrind-out-file=/dev/null \
//!   target/release/deps/pool_hit_instructions-* 2>&1 | grep Collected; done
//! ```
//!
//! (instructions per hit = the difference ÷ 100,000). With `HIT_SIZE` the
//! pairs are of that many bytes (256, 512, 1024, 4096, 65536 or 1048576,
//! as in `benches/pool.rs`); with `GLIBC=1` they are
//! glibc's `malloc` and `free` of the same size instead (the baseline of
//! the pool hit's goal, counted the same way). Each size is a constant
//! of its own loop, as in `benches/pool.rs`. Run directly, it prints the
//! time per pair.

use ascend::Device;
use ascend::pool::{DevicePool, PoolConfig};
use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;

fn main() {
    let env = |name: &str, default: usize| {
        std::env::var(name)
            .ok()
            .and_then(|value| value.parse().ok())
            .unwrap_or(default)
    };
    let hits = env("POOL_HITS", 1_000_000);
    ascend_sys::select_backend(ascend_sys::BackendRequest::Software).expect("software device");
    let device = Device::new(0).expect("device 0");
    let pool = DevicePool::new(&device, PoolConfig::default()).expect("pool");
    let glibc = env("GLIBC", 0) == 1;
    let start = std::time::Instant::now();
    /// One arm per size on each side, so each loop has its size as a
    /// constant.
    macro_rules! sizes {
        ($($size:literal)*) => {
            match (env("HIT_SIZE", 4096), glibc) {
                $(($size, false) => pool_hits::<$size>(&pool, hits),
                ($size, true) => glibc_pairs::<$size>(hits),)*
                (size, _) => panic!("HIT_SIZE={size}: one of {}", stringify!($($size)*)),
            }
        };
    }
    sizes!(256 512 1024 4096 65536 1048576);
    if hits > 0 {
        println!(
            "{hits} {}, {:.1} ns each",
            if glibc { "malloc + free pairs" } else { "hits" },
            start.elapsed().as_nanos() as f64 / hits as f64
        );
    }
}

/// `hits` pool hits of `SIZE` bytes (after one allocation that warms the
/// cache).
fn pool_hits<const SIZE: usize>(pool: &DevicePool, hits: usize) {
    drop(pool.alloc(SIZE).expect("warm the cache"));
    for _ in 0..hits {
        drop(black_box(pool.alloc(SIZE).expect("a hit")));
    }
}

/// `pairs` glibc `malloc` + `free` pairs of `SIZE` bytes.
fn glibc_pairs<const SIZE: usize>(pairs: usize) {
    let layout = Layout::from_size_align(SIZE, 16).expect("layout");
    for _ in 0..pairs {
        // SAFETY: a non-zero size; freed with its layout.
        unsafe {
            let block = System.alloc(layout);
            assert!(!block.is_null());
            System.dealloc(black_box(block), layout);
        }
    }
}

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
//! (instructions per hit = the difference ÷ 100,000). Run directly, it
//! prints the time per hit.

use ascend::Device;
use ascend::pool::{DevicePool, PoolConfig};
use std::hint::black_box;

fn main() {
    ascend_sys::select_backend(ascend_sys::BackendRequest::Software).expect("software device");
    let device = Device::new(0).expect("device 0");
    let pool = DevicePool::new(&device, PoolConfig::default()).expect("pool");
    let hits: usize = std::env::var("POOL_HITS")
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(1_000_000);
    drop(pool.alloc(4096).expect("warm the cache"));
    let start = std::time::Instant::now();
    for _ in 0..hits {
        drop(black_box(pool.alloc(4096).expect("a hit")));
    }
    if hits > 0 {
        println!(
            "{hits} hits, {:.1} ns each",
            start.elapsed().as_nanos() as f64 / hits as f64
        );
    }
}

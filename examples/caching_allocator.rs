//! An inference-style loop on the caching device pool: two streams, batch
//! sizes that vary from step to step, activations allocated and freed every
//! step, weights kept for the whole run. Every output is checked; at the
//! end the example prints the pool's statistics and writes its snapshot
//! (JSON) and segment map (SVG) to the temporary directory.
//!
//! Sleep/wake (releasing the memory while keeping the addresses) is not in
//! the pool yet; see `docs/pools.md` (`ascend::guide::pools`).
//!
//! Run: `cargo run --example caching_allocator`

use ascend::pool::{DevicePool, PinnedPool, PoolConfig};
use ascend::stream::Stream;
use ascend::{Device, Result};
use std::sync::Arc;

const STEPS: usize = 24;
const HIDDEN: usize = 1024;

/// Logs go to standard error through `env_logger`: `RUST_LOG=ascend=trace`
/// shows every allocation, free, map and unmap; `RUST_LOG=info` the backend
/// choice.
fn main() -> std::process::ExitCode {
    env_logger::init();
    match run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn run() -> Result<()> {
    println!("backend: {:?}", ascend::backend()?.backend);
    let device = Device::new(0)?;
    // The knobs come from ASCEND_ALLOC_CONF when it is set.
    let pool = DevicePool::new(&device, PoolConfig::from_env()?)?;
    let pinned = PinnedPool::new(&device);
    let (load, compute) = (Arc::new(Stream::new(&device)?), Arc::new(Stream::new(&device)?));

    // Weights: one block for the whole run, filled on the load stream.
    let weights = pool.alloc(HIDDEN * HIDDEN)?;
    weights.fill_bytes(0x11, &load)?;

    let mut checked = 0usize;
    for step in 0..STEPS {
        // The batch grows by one row a step and starts over every 8 steps,
        // as a serving loop's batches come and go.
        let batch = 1 + step % 8 + step / 8;
        let bytes = batch * HIDDEN * 4;
        let value = (step % 250) as u8 + 1;

        // Input: a pinned staging buffer from the host pool (a power of
        // two), uploaded on the load stream into an activation block of the
        // same size.
        let mut staging = pinned.alloc(bytes)?;
        staging.get_mut()?.fill(value); // waits for the buffer's former copies
        let input = pool.alloc(staging.len())?;
        input.copy_from_host(&staging, &load)?;

        // "Compute" on the other stream: the activation is copied into the
        // output, ordered after the upload by the blocks alone.
        let output = pool.alloc(staging.len())?;
        output.copy_from_device(&input, &compute)?;
        drop(input); // cached at once, with its queued uses
        drop(staging); // likewise, back to its bucket

        // Read the output back through another pinned buffer.
        let mut back = pinned.alloc(output.byte_len())?;
        back.copy_from_device(&output, &compute)?;
        let read = back.get_mut()?;
        assert!(
            read[..bytes].iter().all(|&b| b == value),
            "step {step}: the output does not hold the input"
        );
        checked += bytes;
    }

    let stats = pool.stats();
    println!(
        "{STEPS} steps, {checked} bytes checked; allocated {} (peak {}), reserved {} (peak {}), {} allocations, {} \
         chunks mapped, {} retries",
        stats.allocated,
        stats.allocated_peak,
        stats.reserved,
        stats.reserved_peak,
        stats.allocations,
        stats.chunks_mapped,
        stats.retries
    );
    let pinned_stats = pinned.stats();
    println!(
        "pinned pool: {} hits, {} misses, {} bytes cached",
        pinned_stats.hits, pinned_stats.misses, pinned_stats.cached_bytes
    );
    assert!(pinned_stats.hits > 0, "the pinned pool reused buffers");

    let snapshot = pool.snapshot();
    let directory = std::env::temp_dir();
    let (json, svg) = (
        directory.join("ascend-pool-snapshot.json"),
        directory.join("ascend-pool-snapshot.svg"),
    );
    let io = |error: std::io::Error| ascend::Error::InvalidArgument {
        api: "caching_allocator",
        reason: error.to_string(),
    };
    std::fs::write(&json, snapshot.to_json()).map_err(io)?;
    std::fs::write(&svg, snapshot.to_svg()).map_err(io)?;
    println!("snapshot: {}\nsegment map: {}", json.display(), svg.display());

    drop(weights);
    pool.empty_cache()?;
    assert_eq!(pool.stats().reserved, 0, "everything given back");
    println!("after empty_cache: {} bytes reserved", pool.stats().reserved);
    println!("all checks passed");
    Ok(())
}

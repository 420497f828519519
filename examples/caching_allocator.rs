//! An inference-style loop on the caching device pool: two streams, batch
//! sizes that vary from step to step, activations allocated and freed every
//! step, weights kept for the whole run. Every output is checked; at the
//! end the example prints the pool's statistics and writes its snapshot
//! (JSON) and segment map (SVG) to the temporary directory. Then the pool
//! sleeps, as a serving engine does between uses: the weights are offloaded
//! to pinned host memory, the KV cache is discarded, the device memory is
//! given back with every address kept; it wakes and the weights are checked
//! at their old address. The pool records its memory history all along:
//! at the end the example writes it as a PyTorch memory-visualizer pickle
//! and as a timeline SVG, beside the segment map, in the same directory
//! (each path is printed). See `docs/pools.md` (`ascend::guide::pools`).
//!
//! Run: `cargo run --example caching_allocator`

use ascend::pool::{DevicePool, HistoryOptions, PinnedPool, PoolConfig};
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
    // Every allocation, free, map and unmap from here on, for the files
    // written at the end (recording makes every hit take the pool's lock).
    pool.record_memory_history(Some(HistoryOptions::default()))?;
    let pinned = PinnedPool::new(&device);
    let (load, compute) = (Arc::new(Stream::new(&device)?), Arc::new(Stream::new(&device)?));

    // Weights: one block for the whole run, filled on the load stream; a
    // KV cache beside them. Tags let sleep treat them differently.
    let weights = pool.alloc_tagged(HIDDEN * HIDDEN, "weights")?;
    weights.fill_bytes(0x11, &load)?;
    let kv_cache = pool.alloc_tagged(4 * HIDDEN * HIDDEN, "kv_cache")?;

    let mut checked = 0usize;
    for step in 0..STEPS {
        // The batch grows by one row a step and starts over every 8 steps,
        // as a serving loop's batches come and go.
        let batch = 1 + step % 8 + step / 8;
        let bytes = batch * HIDDEN * 4;
        let value = (step % 250) as u8 + 1;

        // Input: a pinned staging buffer from the host pool (of `bytes`
        // bytes, in a power-of-two bucket), uploaded on the load stream
        // into an activation block of the same length (whatever each pool
        // rounds to).
        let mut staging = pinned.alloc(bytes)?;
        staging.get_mut()?.fill(value); // waits for the buffer's former copies
        let input = pool.alloc(bytes)?;
        input.copy_from_host(&staging, &load)?;

        // "Compute" on the other stream: the activation is copied into the
        // output, ordered after the upload by the blocks alone.
        let output = pool.alloc(bytes)?;
        output.copy_from_device(&input, &compute)?;
        drop(input); // cached at once, with its queued uses
        drop(staging); // likewise, back to its bucket

        // Read the output back through another pinned buffer.
        let mut back = pinned.alloc(output.byte_len())?;
        back.copy_from_device(&output, &compute)?;
        let read = back.get_mut()?;
        assert!(
            read.iter().all(|&b| b == value),
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
    // An I/O error converts into `ascend::Error` (`Error::External`).
    std::fs::write(&json, snapshot.to_json())?;
    std::fs::write(&svg, snapshot.to_svg())?;
    println!("snapshot: {}\nsegment map: {}", json.display(), svg.display());

    // Sleep: weights offloaded, KV cache discarded, nothing left mapped.
    let address = weights.device_ptr();
    pool.sleep(&["weights"])?;
    let asleep = pool.stats();
    assert_eq!(asleep.reserved, 0, "no device memory while asleep");
    println!(
        "asleep: {} bytes reserved, {} bytes offloaded to pinned host memory",
        asleep.reserved, asleep.offloaded
    );
    pool.wake()?;
    assert_eq!(weights.device_ptr(), address, "the weights keep their address");
    let mut back = pinned.alloc(weights.byte_len())?;
    back.copy_from_device(&weights, &compute)?;
    assert!(back.get_mut()?.iter().all(|&b| b == 0x11), "the weights came back");
    kv_cache.fill_bytes(0, &compute)?; // its contents were discarded
    println!("awake: {} bytes reserved, weights restored", pool.stats().reserved);
    drop(back);

    // The history: PyTorch's memory visualizer opens the pickle
    // (`python -m torch.cuda._memory_viz trace_plot FILE -o out.html`, or
    // https://pytorch.org/memory_viz); the timeline needs no Python.
    let (pickle, timeline) = (
        directory.join("ascend-pool-snapshot.pickle"),
        directory.join("ascend-pool-timeline.svg"),
    );
    pool.write_torch_snapshot(&pickle)?;
    let history = pool.memory_history();
    std::fs::write(&timeline, history.to_timeline_svg())?;
    println!(
        "history: {} events\ntorch snapshot: {}\ntimeline: {}",
        history.events.len(),
        pickle.display(),
        timeline.display()
    );

    drop((weights, kv_cache));
    pool.empty_cache()?;
    assert_eq!(pool.stats().reserved, 0, "everything given back");
    println!("after empty_cache: {} bytes reserved", pool.stats().reserved);

    println!("all checks passed");
    Ok(())
}

//! The caching device pool: placement (best fit, split, coalesce, small and
//! large pools), stream-ordered reuse, `empty_cache` fenced on the work
//! that used the memory, the out-of-memory retry and its typed error, the
//! statistics, and a clean end. Data is checked on every backend; live
//! objects and misuse on the software device. One test at a time (live
//! lists are process-wide).

mod common;

use ascend::pool::{BlockState, DevicePool, PoolConfig};
use ascend::stream::{Event, EventFlags, Ordered, Stream};
use ascend::sys::soft;
use ascend::{Device, Error, PinnedHostBuf};
use common::{on_software, software_only};
use std::sync::Arc;
use std::time::Duration;

fn stream(device: &Device) -> Arc<Stream> {
    Arc::new(Stream::new(device).unwrap())
}

/// Holds `held` back until a helper records a gate after 200 ms.
fn gated<R>(device: &Device, held: &Stream, body: impl FnOnce() -> R) -> R {
    let gate = Event::with_flags(device, EventFlags::SYNC).unwrap();
    let opener = Stream::new(device).unwrap();
    held.wait_event(&gate).unwrap();
    std::thread::scope(|threads| {
        threads.spawn(|| {
            std::thread::sleep(Duration::from_millis(200));
            gate.record(&opener).unwrap();
        });
        body()
    })
}

#[test]
fn blocks_are_placed_best_fit_split_and_coalesced() {
    let (_serial, device, granule) = common::pool::start();
    let pool = DevicePool::new(&device, common::pool::pool_config(granule, 4, 2 * granule, 8)).unwrap();
    let a = pool.alloc(1000).unwrap();
    assert_eq!((a.byte_len(), a.capacity()), (1000, 1024), "rounded to 512 bytes");
    let b = pool.alloc(4096).unwrap();
    let c = pool.alloc(512).unwrap();
    // Split from one chunk, back to back.
    assert_eq!(b.device_ptr() as usize, a.device_ptr() as usize + 1024);
    assert_eq!(c.device_ptr() as usize, b.device_ptr() as usize + 4096);
    let large = pool.alloc(100 << 10).unwrap();
    assert_ne!(
        (large.device_ptr() as usize) / (4 * granule),
        (a.device_ptr() as usize) / (4 * granule),
        "a large request comes from the large pool's own range"
    );
    // A freed 4 KiB hole is the best fit for 4 KiB, not the big tail.
    let hole = b.device_ptr();
    drop(b);
    let refill = pool.alloc(3000).unwrap();
    assert_eq!(refill.device_ptr(), hole);
    // Everything freed coalesces: the whole chunk is one free range again.
    let base = a.device_ptr();
    drop((a, c, refill));
    let whole = pool.alloc(64 << 10).unwrap();
    assert_eq!(whole.device_ptr(), base);
    let stats = pool.stats();
    assert_eq!(stats.allocated, (64 << 10) + (100 << 10));
    assert_eq!(stats.reserved, granule + 2 * granule);
    assert_eq!((stats.allocations, stats.frees), (6, 4));
    assert_eq!(stats.chunks_mapped, 2);
}

#[test]
fn reuse_on_another_stream_waits_for_the_freed_blocks_work() {
    let (_serial, device, granule) = common::pool::start();
    let pool = DevicePool::new(&device, common::pool::pool_config(granule, 4, 2 * granule, 8)).unwrap();
    let (first, second) = (stream(&device), stream(&device));
    let data: Vec<u8> = (0..8192u32).map(|i| (i % 251) as u8).collect();
    let staging = Ordered::new(PinnedHostBuf::from_slice(&device, &data).unwrap());
    gated(&device, &first, || {
        let block = pool.alloc(8192).unwrap();
        block.copy_from_host(&staging, &first).unwrap();
        let address = block.device_ptr();
        drop(block); // nothing waits: the upload is still held back
        let stats = pool.stats();
        assert!(
            stats.allocated == 0 && stats.active >= 8192,
            "the freed block's work is still queued: {stats:?}"
        );
        let reused = pool.alloc(8192).unwrap();
        assert_eq!(reused.device_ptr(), address, "the cached memory is reused at once");
        // On another stream: ordered after the held-back upload.
        reused.fill_bytes(0xEE, &second).unwrap();
        assert!(
            common::pool::read_block(&device, &reused, &second)
                .iter()
                .all(|&b| b == 0xEE)
        );
    });
}

#[test]
fn empty_cache_waits_for_the_work_and_unmaps_the_tail() {
    let (_serial, device, granule) = common::pool::start();
    let pool = DevicePool::new(&device, common::pool::pool_config(granule, 4, 2 * granule, 8)).unwrap();
    let held = stream(&device);
    let misuse = on_software().then(soft::MisuseWatch::start);
    let keep = pool.alloc(4096).unwrap();
    // Written before it is read back (the sanitizer reports reads of
    // memory nothing wrote).
    keep.view().write_from_host(&[9u8; 4096]).unwrap();
    let big = pool.alloc(3 * granule).unwrap();
    assert_eq!(pool.stats().reserved, granule + 4 * granule);
    gated(&device, &held, || {
        big.fill_bytes(1, &held).unwrap();
        drop(big);
        // Unmapping the large pool must wait for the held-back memset.
        pool.empty_cache().unwrap();
    });
    let stats = pool.stats();
    assert_eq!(
        stats.reserved, granule,
        "only the small pool's chunk, with a live block, stays"
    );
    assert_eq!(stats.chunks_unmapped, 2);
    assert_eq!(stats.active, 4096);
    let kept = common::pool::read_block(&device, &keep, &held);
    assert!(kept.len() == 4096);
    assert!(kept.iter().all(|&b| b == 9), "the live block's contents stay");
    if let Some(misuse) = misuse {
        assert_eq!(misuse.seen(), [], "memory unmapped under queued work");
    }
}

/// `PoolStats::active` (as its docs say): with nothing allocated it still
/// counts the freed memory whose work the pool has not proven finished,
/// coalesced ranges whole, until the pool proves it (`empty_cache` past the
/// last live block, `sleep` everywhere); the caller's own synchronisation
/// does not tell the pool.
#[test]
fn active_counts_freed_memory_until_the_pool_proves_its_work_finished() {
    let (_serial, device, granule) = common::pool::start();
    let pool = DevicePool::new(&device, common::pool::pool_config(granule, 4, 2 * granule, 8)).unwrap();
    let stream = stream(&device);
    // Inference-style steps: activations written and read on the stream,
    // freed at the end of each step.
    for step in 0..3u8 {
        let input = pool.alloc(8192).unwrap();
        input.fill_bytes(step, &stream).unwrap();
        let output = pool.alloc(8192).unwrap();
        output.copy_from_device(&input, &stream).unwrap();
        drop((input, output));
    }
    let stats = pool.stats();
    assert_eq!(stats.allocated, 0);
    assert_eq!(stats.reserved, granule);
    // The freed blocks coalesced with the idle rest of the chunk: the whole
    // range waits for their work, and is active.
    let pending: usize = pool
        .snapshot()
        .segments
        .iter()
        .flat_map(|segment| &segment.blocks)
        .filter(|block| block.state == BlockState::FreePending)
        .map(|block| block.size)
        .sum();
    assert_eq!(pending, granule);
    assert_eq!(pool.stats().active, granule);
    // The caller's synchronisation is not the pool's proof.
    stream.synchronize().unwrap();
    assert_eq!(pool.stats().active, granule);
    // `empty_cache` synchronises the streams that used the memory past the
    // last live block, and unmaps it.
    pool.empty_cache().unwrap();
    let stats = pool.stats();
    assert_eq!((stats.active, stats.reserved), (0, 0));

    // A freed range below a live block is not past the last live block:
    // `empty_cache` leaves it (and its work) alone; `sleep` proves all.
    let freed = pool.alloc(8192).unwrap();
    freed.fill_bytes(1, &stream).unwrap();
    let live = pool.alloc(4096).unwrap();
    // Data `sleep` offloads, checked after the wake (written synchronously,
    // so it leaves no queued work; and not memory nothing wrote, whose
    // offload the sanitizer reports).
    live.view().write_from_host(&[3u8; 4096]).unwrap();
    drop(freed);
    pool.empty_cache().unwrap();
    assert_eq!(pool.stats().active, 4096 + 8192);
    pool.sleep(&[DevicePool::DEFAULT_TAG]).unwrap();
    pool.wake().unwrap();
    assert_eq!(pool.stats().active, 4096);
    assert!(
        live.view().to_vec::<u8>().unwrap().iter().all(|&b| b == 3),
        "offloaded and restored"
    );
    drop(live);
    assert_eq!(pool.stats().active, 0, "the live block's memory was idle");
}

#[test]
fn out_of_memory_retries_then_reports_the_pool() {
    let (_serial, device, granule) = common::pool::start();
    let pool = DevicePool::new(&device, common::pool::pool_config(granule, 4, 2 * granule, 8)).unwrap();
    // A failed growth gives the cache back and tries once more
    // (software device: the runtime's refusal is injected).
    let cached = pool.alloc(2 * granule).unwrap();
    drop(cached);
    if on_software() {
        let big = pool.alloc(4 * granule).unwrap();
        soft::inject_fault("aclrtMallocPhysical", 1, ascend::sys::ACL_ERROR_RT_MEMORY_ALLOCATION).unwrap();
        let more = pool.alloc(8 * granule).unwrap();
        soft::clear_faults();
        assert_eq!(pool.stats().retries, 1);
        drop((big, more));
    }
    // Fill the large pool's reservation, then ask for more.
    let first = pool.alloc(8 * granule).unwrap();
    let second = pool.alloc(8 * granule).unwrap();
    let retries = pool.stats().retries;
    match pool.alloc(2 * granule) {
        Err(Error::PoolExhausted {
            requested,
            allocated,
            reserved,
            free,
            ..
        }) => {
            assert_eq!(
                (requested, allocated, reserved, free),
                (2 * granule, 16 * granule, 16 * granule, 0)
            );
        }
        other => panic!("expected PoolExhausted, got {other:?}"),
    }
    assert_eq!(pool.stats().retries, retries + 1);
    drop((first, second));
    // Freed, the memory serves again.
    drop(pool.alloc(2 * granule).unwrap());
}

#[test]
fn the_pool_ends_after_its_last_block_and_its_queued_work() {
    let (_serial, device, granule) = common::pool::start();
    let since = soft::sequence_now();
    let misuse = on_software().then(soft::MisuseWatch::start);
    let held = stream(&device);
    let pool = DevicePool::new(&device, common::pool::pool_config(granule, 4, 2 * granule, 8)).unwrap();
    let block = Arc::new(pool.alloc(256 << 10).unwrap());
    gated(&device, &held, || {
        block.fill_bytes(3, &held).unwrap();
        drop(pool); // the block keeps the pool
        let taken = Arc::try_unwrap(Arc::clone(&block)).is_err();
        assert!(taken, "still shared");
    });
    // Taken out of its `Ordered` (waiting for the memset), then dropped:
    // the cache and its segments go with it.
    let block = Arc::try_unwrap(block).unwrap().into_inner().unwrap();
    assert_eq!(block.len(), 256 << 10);
    drop(block);
    drop(held);
    software_only(|| {
        let left: Vec<_> = soft::live_since(since)
            .into_iter()
            .map(|resource| resource.kind)
            .collect();
        assert_eq!(left, [], "the pool left runtime objects behind");
    });
    if let Some(misuse) = misuse {
        assert_eq!(misuse.seen(), []);
    }
}

#[test]
fn the_snapshot_tiles_each_segment_and_renders() {
    let (_serial, device, granule) = common::pool::start();
    let pool = DevicePool::new(&device, common::pool::pool_config(granule, 4, 2 * granule, 8)).unwrap();
    let stream = stream(&device);
    let a = pool.alloc(4096).unwrap();
    let b = pool.alloc(8192).unwrap();
    let big = pool.alloc(3 * granule).unwrap();
    b.fill_bytes(0, &stream).unwrap();
    drop(b); // cached with its memset: free_pending until proven done
    let snapshot = pool.snapshot();
    assert_eq!(snapshot.segments.len(), 2);
    for segment in &snapshot.segments {
        // The ranges cover the mapped part exactly, in order.
        let mut next = 0;
        for block in &segment.blocks {
            assert_eq!(block.offset, next, "{segment:?}");
            next += block.size;
        }
        assert_eq!(next, segment.mapped, "{segment:?}");
    }
    let small = &snapshot.segments[0];
    let states: Vec<_> = small.blocks.iter().map(|block| (block.size, block.state)).collect();
    assert_eq!(states[0], (4096, ascend::pool::BlockState::Allocated));
    assert_eq!(states[1].1, ascend::pool::BlockState::FreePending);
    let json = snapshot.to_json();
    assert!(json.starts_with("{\"device\":0,\"stats\":{\"allocated\":"), "{json}");
    let blocks: usize = snapshot.segments.iter().map(|segment| segment.blocks.len()).sum();
    assert_eq!(json.matches("\"state\":").count(), blocks);
    assert!(json.contains("\"state\":\"free_pending\""));
    let svg = snapshot.to_svg();
    assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
    // A block rectangle per block (the picture has others: background,
    // legend, unmapped parts, frames).
    assert_eq!(svg.matches("<rect class=\"block\"").count(), blocks);
    drop((a, big));
}

#[test]
fn a_pool_is_configured_from_text() {
    let (_serial, device, granule) = common::pool::start();
    let mib = granule >> 20;
    let text = format!(
        "expandable_segments:True,small_chunk_mb:{mib},small_reserve_mb:{},large_chunk_mb:{},large_reserve_mb:{}",
        4 * mib,
        2 * mib,
        8 * mib
    );
    if mib == 0 {
        return; // a configured granularity below 1 MiB cannot be written in MiB
    }
    let config = PoolConfig::parse(&text).unwrap();
    let pool = DevicePool::new(&device, config).unwrap();
    assert_eq!(pool.config().large_reserve, 8 * granule);
    let refused = DevicePool::new(&device, PoolConfig::parse("small_chunk_mb:3").unwrap());
    assert!(
        matches!(refused, Err(Error::InvalidArgument { .. })),
        "a chunk off the granularity"
    );
}

#[test]
fn a_cached_pinned_buffer_is_handed_out_only_behind_its_queued_copy() {
    use ascend::pool::PinnedPool;
    let (_serial, device, _granule) = common::pool::start();
    let pool = PinnedPool::new(&device);
    let held = stream(&device);
    let data: Vec<u8> = (0..4096u32).map(|i| (i * 7 % 256) as u8).collect();
    let source = Ordered::new(ascend::DeviceBuf::from_slice(&device, &data).unwrap());
    let again = gated(&device, &held, || {
        let buffer = pool.alloc(4096).unwrap();
        assert_eq!(buffer.capacity(), 4096);
        buffer.copy_from_device(&source, &held).unwrap();
        let address = buffer.host_ptr();
        drop(buffer); // back to the cache with the held-back download
        assert_eq!(pool.stats().cached_bytes, 4096);
        let mut again = pool.alloc(4096).unwrap();
        assert_eq!(again.host_ptr(), address, "the cached buffer");
        // Host access waits for the held-back download its former owner
        // queued.
        assert_eq!(again.get_mut().unwrap().to_vec(), data);
        again
    });
    let stats = pool.stats();
    assert_eq!((stats.hits, stats.misses, stats.allocated), (1, 1, 4096));
    drop(again);
    pool.empty_cache().unwrap();
    assert_eq!(pool.stats().cached_bytes, 0);
}

#[test]
fn pinned_requests_round_to_a_power_of_two_up_to_the_threshold_only() {
    use ascend::pool::PinnedPool;
    let (_serial, device, _granule) = common::pool::start();
    let pool = PinnedPool::new(&device).with_round_threshold(64 << 10);
    let rounded = pool.alloc(5000).unwrap();
    assert_eq!(
        (rounded.len(), rounded.capacity()),
        (5000, 8192),
        "the length is the request"
    );
    drop(rounded);
    assert_eq!(
        pool.alloc(64 << 10).unwrap().capacity(),
        64 << 10,
        "the threshold itself"
    );
    let above = pool.alloc(100_000).unwrap();
    assert_eq!(above.capacity(), 100_000, "above the threshold: the size asked for");
    let address = above.host_ptr();
    drop(above);
    let again = pool.alloc(100_000).unwrap();
    assert_eq!(again.host_ptr(), address, "the same size is served from its bucket");
    let other = pool.alloc(100_001).unwrap();
    assert_eq!((other.len(), other.capacity()), (100_001, 100_001));
    let stats = pool.stats();
    assert_eq!((stats.hits, stats.misses), (1, 4), "only the second 100_000 bytes hit");
    assert_eq!(stats.allocated_peak, 200_001, "the two 100 KB buffers at once");
    assert_eq!(
        stats.reserved_peak,
        8192 + (64 << 10) + 200_001,
        "and the two cached ones"
    );
    drop((again, other));
    let stats = pool.stats();
    assert_eq!((stats.allocated, stats.allocated_peak), (0, 200_001), "a peak stays");
    // Too large to pin: the runtime's error, nothing counted but the miss.
    assert!(pool.alloc(usize::MAX).is_err());
    let after = pool.stats();
    assert_eq!(
        (after.allocated, after.reserved_peak, after.misses),
        (0, stats.reserved_peak, 5)
    );
}

#[test]
fn pinned_buffers_over_the_cache_cap_are_freed_after_their_copies() {
    use ascend::pool::PinnedPool;
    let (_serial, device, _granule) = common::pool::start();
    let misuse = on_software().then(soft::MisuseWatch::start);
    let pool = PinnedPool::new(&device).with_max_cached_size(64 << 10);
    let held = stream(&device);
    let source = Ordered::new(ascend::DeviceBuf::from_slice(&device, &vec![7u8; 1 << 20]).unwrap());
    gated(&device, &held, || {
        let buffer = pool.alloc(1 << 20).unwrap();
        buffer.copy_from_device(&source, &held).unwrap();
        drop(buffer); // over the cap: waits for the held-back copy, then frees
    });
    let stats = pool.stats();
    assert_eq!((stats.allocated, stats.cached_bytes), (0, 0), "freed, not cached");
    drop(pool.alloc(4096).unwrap());
    assert_eq!(pool.stats().cached_bytes, 4096, "under the cap: cached");
    drop(pool.alloc(1 << 20).unwrap());
    let stats = pool.stats();
    assert_eq!((stats.hits, stats.misses, stats.cached_bytes), (0, 3, 4096));
    if let Some(misuse) = misuse {
        assert_eq!(misuse.seen(), [], "a buffer freed under its queued copy");
    }
}

#[test]
fn the_pinned_pool_reads_its_keys_from_the_pools_configuration() {
    use ascend::pool::PinnedPool;
    let (_serial, device, _granule) = common::pool::start();
    let conf = "expandable_segments:True,large_chunk_mb:40,pinned_max_round_threshold_mb:1,pinned_max_cached_size_mb:2";
    let pool = PinnedPool::from_conf(&device, conf).unwrap();
    assert_eq!(
        pool.alloc(3000).unwrap().capacity(),
        4096,
        "rounded up to the threshold"
    );
    assert_eq!(pool.alloc(1_500_000).unwrap().capacity(), 1_500_000, "kept above it");
    drop(pool.alloc(3 << 20).unwrap());
    assert_eq!(
        pool.stats().cached_bytes,
        4096 + 1_500_000,
        "3 MiB is over the cache cap"
    );
    for bad in [
        "pinned_max_round_threshold_mb:x",
        "pinned_max_cached_size_mb",
        "page_size:1g",
    ] {
        let error = PinnedPool::from_conf(&device, bad).unwrap_err().to_string();
        assert!(error.contains(bad), "{error}");
    }
}

#[test]
fn a_missing_malloc_host_with_cfg_falls_back_once_for_the_process() {
    // Fault injection: the software device only. In a process of its own,
    // as the fallback is latched for the process.
    if on_software() {
        common::run_child("child_pinned_fallback");
    }
}

/// The child of `a_missing_malloc_host_with_cfg_falls_back_once_for_the_process`.
#[test]
#[ignore = "run in a child process by a_missing_malloc_host_with_cfg_falls_back_once_for_the_process"]
fn child_pinned_fallback() {
    use ascend::pool::PinnedPool;
    let device = common::device();
    let pool = PinnedPool::new(&device);
    // An older CANN: the loader finds no aclrtMallocHostWithCfg.
    soft::inject_missing_symbol("aclrtMallocHostWithCfg", 1).unwrap();
    let mut first = pool.alloc(4096).unwrap();
    assert_eq!(
        first.get_mut().unwrap().to_vec(),
        [0; 4096],
        "zeroed, from aclrtMallocHost"
    );
    assert!(
        soft::armed_faults().is_empty(),
        "aclrtMallocHostWithCfg was tried first"
    );
    // Latched: the next new buffer does not try aclrtMallocHostWithCfg
    // again (a fault armed on it stays armed), as torch_npu latches.
    soft::inject_fault("aclrtMallocHostWithCfg", 1, ascend::sys::ACL_ERROR_RT_INTERNAL_ERROR).unwrap();
    let second = pool.alloc(1 << 20).unwrap();
    assert_eq!(second.len(), 1 << 20);
    assert_eq!(soft::armed_faults().len(), 1, "aclrtMallocHostWithCfg was tried again");
    soft::clear_faults();
    // The same on a pool made later in the process.
    let later = PinnedPool::new(&device);
    soft::inject_fault("aclrtMallocHostWithCfg", 1, ascend::sys::ACL_ERROR_RT_INTERNAL_ERROR).unwrap();
    drop(later.alloc(100).unwrap());
    assert_eq!(
        soft::armed_faults().len(),
        1,
        "a later pool tried aclrtMallocHostWithCfg"
    );
    soft::clear_faults();
    assert_eq!(pool.stats().misses, 2);
    drop((first, second));
    println!("child child_pinned_fallback done");
}

/// What `PoolConfig::from_env` and `PinnedPool::from_env` give in a child
/// process whose `ASCEND_ALLOC_CONF` is `conf` (unset for `None`), as the
/// child prints them.
fn config_from_env_in_a_child(conf: Option<&str>) -> String {
    let mut command = std::process::Command::new(std::env::current_exe().unwrap());
    command.args([
        "--exact",
        "child_config_from_env",
        "--ignored",
        "--nocapture",
        "--test-threads=1",
    ]);
    if on_software() {
        command.env("ASCEND_BACKEND", "software");
    }
    match conf {
        Some(conf) => command.env(ascend::pool::ENV_ALLOC_CONF, conf),
        None => command.env_remove(ascend::pool::ENV_ALLOC_CONF),
    };
    let output = command.output().unwrap();
    assert!(output.status.success(), "{output:?}");
    let stdout = String::from_utf8_lossy(&output.stdout);
    // The harness prints the test's name on the same line first.
    let answer = |label: &str| {
        let found = stdout.lines().find_map(|line| line.find(label).map(|at| &line[at..]));
        found.unwrap_or_else(|| panic!("no {label} in {stdout}")).to_string()
    };
    format!("{} {}", answer("from_env: "), answer("pinned: "))
}

#[test]
fn the_pools_are_configured_from_their_environment_variable() {
    assert_eq!(
        config_from_env_in_a_child(Some("large_chunk_mb:40,pinned_max_round_threshold_mb:1")),
        "from_env: Ok(41943040) pinned: Ok(1500000)"
    );
    assert_eq!(
        config_from_env_in_a_child(None),
        "from_env: Ok(20971520) pinned: Ok(2097152)",
        "unset: the defaults"
    );
    let refused = config_from_env_in_a_child(Some("page_size:1g"));
    assert!(
        refused.starts_with("from_env: Err(") && refused.contains("pinned: Err("),
        "{refused}"
    );
    assert!(refused.contains("page_size"), "{refused}");
}

/// The child of `the_pools_are_configured_from_their_environment_variable`.
#[test]
#[ignore = "run in a child process by the_pools_are_configured_from_their_environment_variable"]
fn child_config_from_env() {
    let config = PoolConfig::from_env().map(|config| config.large_chunk);
    println!(
        "from_env: {}",
        config.map_or_else(|error| format!("Err({error})"), |chunk| format!("Ok({chunk})"))
    );
    // The pinned pool reads the same variable: with a 1 MiB threshold, a
    // request of 1.5 MB keeps its size (by default it is rounded to 2 MiB).
    let pinned = ascend::pool::PinnedPool::from_env(&common::device())
        .and_then(|pool| pool.alloc(1_500_000).map(|buffer| buffer.capacity()));
    println!(
        "pinned: {}",
        pinned.map_or_else(|error| format!("Err({error})"), |len| format!("Ok({len})"))
    );
}

#[test]
fn thread_caches_keep_exact_statistics_and_give_their_blocks_back() {
    let (_serial, device, granule) = common::pool::start();
    let since = soft::sequence_now();
    let large_chunk = 2 * granule;
    let pool = DevicePool::new(&device, common::pool::pool_config(granule, 4, large_chunk, 8)).unwrap();
    // One thread: the peak is exact.
    drop(pool.alloc(4096).unwrap());
    let kept = pool.alloc(8192).unwrap();
    assert_eq!(pool.stats().allocated_peak, 8192);
    // Blocks taken on two threads at once...
    let blocks: Vec<Ordered<ascend::pool::PoolBlock>> = std::thread::scope(|threads| {
        let takers = [0, 1].map(|_| threads.spawn(|| (0..8).map(|_| pool.alloc(4096).unwrap()).collect::<Vec<_>>()));
        takers.into_iter().flat_map(|taker| taker.join().unwrap()).collect()
    });
    let stats = pool.stats();
    let live = 8192 + 16 * 4096;
    assert_eq!(stats.allocated, live);
    // ...make the peak an upper bound: at least the true peak, above it by
    // at most one large chunk of headroom per thread cache used.
    assert!(
        stats.allocated_peak >= live && stats.allocated_peak <= live + 3 * large_chunk,
        "{stats:?}"
    );
    // ...freed on a third thread.
    std::thread::scope(|threads| {
        threads.spawn(move || drop(blocks));
    });
    drop(kept);
    let stats = pool.stats();
    assert_eq!((stats.allocated, stats.allocations, stats.frees), (0, 18, 18));
    assert_eq!(stats.active, 0);
    // Blocks cached by every thread go back with `empty_cache`.
    pool.empty_cache().unwrap();
    assert_eq!(pool.stats().reserved, 0);
    // A block outliving the pool's handle goes back to its segment.
    let last = pool.alloc(4096).unwrap();
    drop(pool);
    drop(last);
    software_only(|| assert_eq!(soft::live_since(since), [], "the pool left runtime objects"));
}

#[test]
fn hits_on_four_threads_race_flushes_and_statistics() {
    let (_serial, device, granule) = common::pool::start();
    let since = soft::sequence_now();
    let pool = DevicePool::new(&device, common::pool::pool_config(granule, 8, 2 * granule, 8)).unwrap();
    let done = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|threads| {
        for thread in 0..4usize {
            let pool = &pool;
            threads.spawn(move || {
                for round in 0..2000usize {
                    let sizes = [512 * (1 + (round + thread) % 7), 4096, 65536];
                    let blocks: Vec<_> = sizes.iter().map(|&size| pool.alloc(size).unwrap()).collect();
                    assert!(blocks.iter().all(|block| block.byte_len() >= 512));
                    drop(blocks);
                }
            });
        }
        // Meanwhile: flushes from this thread, and the statistics.
        let watcher = threads.spawn(|| {
            let mut checks = 0;
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                pool.empty_cache().unwrap();
                let stats = pool.stats();
                assert!(stats.allocated <= stats.reserved && stats.allocated_peak >= stats.allocated);
                assert!(pool.snapshot().segments.len() >= 2);
                checks += 1;
            }
            checks
        });
        std::thread::sleep(Duration::from_millis(50));
        done.store(true, std::sync::atomic::Ordering::Relaxed);
        assert!(watcher.join().unwrap() > 0);
    });
    let stats = pool.stats();
    assert_eq!((stats.allocated, stats.active), (0, 0));
    assert_eq!((stats.allocations, stats.frees), (4 * 2000 * 3, 4 * 2000 * 3));
    pool.empty_cache().unwrap();
    assert_eq!(pool.stats().reserved, 0, "every cached block came back");
    drop(pool);
    software_only(|| assert_eq!(soft::live_since(since), [], "the pool left runtime objects"));
}

/// Request sizes no pool can serve: `usize::MAX - k` for every `k` below
/// 2^20, and the neighbours of the powers of two from 2^40 (above the test
/// pools' reservations) to 2^63.
fn huge_device_request() -> impl proptest::strategy::Strategy<Value = usize> {
    use proptest::prelude::*;
    prop_oneof![
        3 => (0usize..1 << 20).prop_map(|k| usize::MAX - k),
        1 => (40u32..64, 0usize..3).prop_map(|(shift, side)| (1usize << shift) - 1 + side),
    ]
}

/// Host request sizes no buffer can have: `usize::MAX - k` for every `k`
/// below 2^20 and the neighbours of 2^63 (no smaller ones: they would be
/// tried for real on the host).
fn huge_host_request() -> impl proptest::strategy::Strategy<Value = usize> {
    use proptest::prelude::*;
    prop_oneof![
        3 => (0usize..1 << 20).prop_map(|k| usize::MAX - k),
        1 => (0usize..3).prop_map(|side| (1usize << 63) - 1 + side),
    ]
}

/// The error a device pool rounding to `rounding` gives for `bytes` that
/// cannot fit: an argument error naming the method `api` when rounding overflows,
/// the pool exhausted (at once, without a retry) otherwise.
fn assert_refused(
    outcome: ascend::Result<Ordered<ascend::pool::PoolBlock>>,
    bytes: usize,
    rounding: usize,
    api: &str,
) -> Result<(), proptest::test_runner::TestCaseError> {
    use proptest::prelude::*;
    match (outcome, bytes.checked_add(rounding - 1)) {
        (Err(Error::InvalidArgument { method, .. }), None) => prop_assert_eq!(method, api),
        (Err(Error::PoolExhausted { requested, .. }), Some(_)) => {
            prop_assert_eq!(requested, bytes.next_multiple_of(rounding));
        }
        (other, _) => prop_assert!(
            false,
            "{api}({bytes}) with rounding {rounding}: {:?}",
            other.map(|_| ())
        ),
    }
    Ok(())
}

#[test]
fn requests_near_usize_max_are_refused_and_leave_the_pools_usable() {
    use ascend::allocator::DeviceAllocator;
    use proptest::test_runner::{Config, TestRunner};
    let (_serial, device, granule) = common::pool::start();
    let stream = stream(&device);
    let mut exact = common::pool::pool_config(granule, 4, 2 * granule, 8);
    exact.rounding = 1;
    let pools = [
        DevicePool::new(&device, common::pool::pool_config(granule, 4, 2 * granule, 8)).unwrap(),
        DevicePool::new(&device, exact).unwrap(),
        DevicePool::new(&device, PoolConfig::default()).unwrap(),
    ];
    let allocators: Vec<_> = pools.iter().map(|pool| pool.stream_allocator(&stream)).collect();
    // The requests of issue 25 first.
    for (pool, bytes) in [(&pools[0], usize::MAX - 4095), (&pools[1], usize::MAX - 4)] {
        let rounding = pool.config().rounding;
        assert_refused(pool.alloc(bytes), bytes, rounding, "DevicePool::alloc").unwrap();
        assert_refused(
            pool.alloc_tagged(bytes, "t"),
            bytes,
            rounding,
            "DevicePool::alloc_tagged",
        )
        .unwrap();
    }
    let cases = 256
        * std::env::var("ASCEND_TEST_SCALE")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(1);
    let config = Config {
        failure_persistence: None,
        ..Config::with_cases(cases)
    };
    TestRunner::new(config.clone())
        .run(&huge_device_request(), |bytes| {
            for (pool, allocator) in pools.iter().zip(&allocators) {
                let rounding = pool.config().rounding;
                let retries = pool.stats().retries;
                assert_refused(pool.alloc(bytes), bytes, rounding, "DevicePool::alloc")?;
                assert_refused(
                    pool.alloc_tagged(bytes, "t"),
                    bytes,
                    rounding,
                    "DevicePool::alloc_tagged",
                )?;
                proptest::prop_assert!(allocator.alloc(bytes).is_none());
                proptest::prop_assert_eq!(pool.stats().retries, retries, "nothing to retry for");
                // Still usable, in both size classes and the tag.
                let small = pool.alloc(4000).unwrap();
                let large = pool.alloc_tagged(2 * granule, "t").unwrap();
                let block = allocator.alloc(granule).unwrap();
                allocator.free(block);
                drop((small, large));
                proptest::prop_assert_eq!(pool.stats().allocated, 0);
            }
            Ok(())
        })
        .unwrap();
    use ascend::pool::PinnedPool;
    let pinned = [
        (PinnedPool::new(&device), PinnedPool::DEFAULT_ROUND_THRESHOLD),
        (PinnedPool::new(&device).with_round_threshold(usize::MAX), usize::MAX),
    ];
    TestRunner::new(config)
        .run(&huge_host_request(), |bytes| {
            for (pool, threshold) in &pinned {
                // Rounded up to a power of two (up to the threshold) that
                // overflows: an argument error; otherwise the runtime's.
                let overflows = bytes <= *threshold && bytes.checked_next_power_of_two().is_none();
                match pool.alloc(bytes) {
                    Err(Error::InvalidArgument { method, .. }) if overflows => {
                        proptest::prop_assert_eq!(method, "PinnedPool::alloc");
                    }
                    Err(Error::Acl { .. }) if !overflows => (),
                    other => proptest::prop_assert!(false, "PinnedPool::alloc({bytes}): {:?}", other.map(|_| ())),
                }
                proptest::prop_assert_eq!(pool.alloc(3000).unwrap().capacity(), 4096);
                proptest::prop_assert_eq!(pool.stats().allocated, 0);
            }
            Ok(())
        })
        .unwrap();
}

/// 750 `u32`s: 3000 bytes, which the device pool rounds to 3072 (512-byte
/// multiples) and the pinned pool to 4096 (a power of two).
const ELEMENTS: usize = 750;

#[test]
fn same_length_pool_blocks_copy_whole_to_whole_whatever_each_pool_rounds_to() {
    use ascend::pool::PinnedPool;
    let (_serial, device, granule) = common::pool::start();
    let pool = DevicePool::new(&device, common::pool::pool_config(granule, 4, 2 * granule, 8)).unwrap();
    let pinned = PinnedPool::new(&device);
    let stream = stream(&device);
    let bytes = ELEMENTS * size_of::<u32>();
    let data: Vec<u32> = (0..ELEMENTS as u32).map(|i| i.wrapping_mul(2_654_435_761)).collect();
    let mut staging = pinned.alloc(bytes).unwrap();
    // The first `bytes`: the whole buffer now (its rounded size before).
    staging.get_mut().unwrap()[..bytes].copy_from_slice(bytemuck::cast_slice(&data));
    let block = pool.alloc(bytes).unwrap();
    // Host to device, device to device, device to host: whole to whole
    // (refused as a length mismatch while lengths were the rounded sizes).
    block.copy_from_host(&staging, &stream).unwrap();
    let other = pool.alloc(bytes).unwrap();
    other.copy_from_device(&block, &stream).unwrap();
    let mut back = pinned.alloc(bytes).unwrap();
    back.copy_from_device(&other, &stream).unwrap();
    assert_eq!(bytemuck::cast_slice::<u8, u32>(back.get_mut().unwrap()), data);
    assert_eq!(other.view().to_vec::<u32>().unwrap(), data, "the view is the request");
    assert_eq!(
        (staging.len(), block.byte_len()),
        (bytes, bytes),
        "lengths are the requests"
    );
}

#[test]
fn copies_of_different_lengths_are_refused_and_written_with_a_view() {
    use ascend::pool::PinnedPool;
    let (_serial, device, granule) = common::pool::start();
    let pool = DevicePool::new(&device, common::pool::pool_config(granule, 4, 2 * granule, 8)).unwrap();
    let pinned = PinnedPool::new(&device);
    let stream = stream(&device);
    let data: Vec<u8> = (0..3000u32).map(|i| (i * 13 % 251) as u8).collect();
    let mut staging = pinned.alloc(3000).unwrap();
    staging.get_mut().unwrap()[..3000].copy_from_slice(&data);
    // 3072 bytes of capacity, like a 3000-byte block, but 3050 asked for:
    // neither padded nor cut.
    let wider = pool.alloc(3050).unwrap();
    wider.fill_bytes(0xEE, &stream).unwrap();
    let refused = wider.copy_from_host(&staging, &stream);
    assert!(matches!(refused, Err(Error::InvalidArgument { .. })), "{refused:?}");
    let mut narrow = pinned.alloc(2000).unwrap();
    let refused = narrow.copy_from_device(&wider, &stream);
    assert!(matches!(refused, Err(Error::InvalidArgument { .. })), "{refused:?}");
    // Said explicitly, by a view of the shorter length.
    wider.bytes(..3000).unwrap().copy_from_host(&staging, &stream).unwrap();
    narrow
        .copy_from_device(wider.bytes(1000..3000).unwrap(), &stream)
        .unwrap();
    let written = wider.view().to_vec::<u8>().unwrap();
    assert_eq!((&written[..3000], &written[3000..]), (&data[..], &[0xEE; 50][..]));
    assert_eq!(&narrow.get_mut().unwrap()[..], &data[1000..]);
}

#[test]
fn lengths_are_requests_and_capacities_the_rounded_sizes() {
    use ascend::pool::PinnedPool;
    let (_serial, device, granule) = common::pool::start();
    let pool = DevicePool::new(&device, common::pool::pool_config(granule, 4, 2 * granule, 8)).unwrap();
    let first = pool.alloc(3000).unwrap();
    assert_eq!((first.byte_len(), first.capacity()), (3000, 3072));
    let address = first.device_ptr();
    drop(first);
    // A cache hit of the same rounded size takes the new request's length.
    let again = pool.alloc(2600).unwrap();
    assert_eq!(again.device_ptr(), address, "a hit");
    assert_eq!((again.byte_len(), again.capacity()), (2600, 3072));
    assert_eq!(again.view().byte_len(), 2600);
    assert!(again.bytes(..2601).is_err(), "the view ends at the request");
    assert_eq!(pool.stats().allocated, 3072, "the statistics count capacities");
    let block = again.into_inner().unwrap();
    assert_eq!((block.len(), block.capacity()), (2600, 3072));
    drop(block);
    let empty = pool.alloc(0).unwrap();
    assert_eq!((empty.byte_len(), empty.capacity()), (0, 512));
    drop(empty);
    // A large block (its own path) too.
    let large = pool.alloc((100 << 10) + 1).unwrap();
    assert_eq!(
        (large.byte_len(), large.capacity()),
        ((100 << 10) + 1, (100 << 10) + 512)
    );
    drop(large);

    let pinned = PinnedPool::new(&device);
    let staging = pinned.alloc(3000).unwrap();
    assert_eq!((staging.len(), staging.capacity()), (3000, 4096));
    let stats = pinned.stats();
    assert_eq!((stats.allocated, stats.requested), (4096, 3000));
    let address = staging.host_ptr();
    drop(staging);
    let mut again = pinned.alloc(2500).unwrap();
    assert_eq!(again.host_ptr(), address, "a hit");
    assert_eq!(
        (again.len(), again.capacity(), again.get_mut().unwrap().len()),
        (2500, 4096, 2500)
    );
    let stats = pinned.stats();
    assert_eq!((stats.allocated, stats.requested, stats.hits), (4096, 2500, 1));
    drop(again);
    let stats = pinned.stats();
    assert_eq!((stats.allocated, stats.requested, stats.cached_bytes), (0, 0, 4096));
}

/// The hit's fast path serves its common case alone (an idle block of the
/// size used last, within the cache's headroom); every way out of it (a
/// change of size, headroom run out or past its cap, a busy block) falls
/// back to the full path, with the same block and exact statistics.
#[test]
fn hits_off_the_common_case_keep_exact_statistics() {
    let (_serial, device, granule) = common::pool::start();
    let large_chunk = 2 * granule; // a cache's most headroom
    let pool = DevicePool::new(&device, common::pool::pool_config(granule, 4, large_chunk, 8)).unwrap();
    let stream = stream(&device);
    // The common case: the same block back.
    let first = pool.alloc(4096).unwrap();
    let address = first.device_ptr();
    drop(first);
    let again = pool.alloc(4096).unwrap();
    assert_eq!(again.device_ptr(), address, "a hit of the cached block");
    drop(again);
    // Sizes in turn: each request changes the stack used last.
    for _ in 0..4 {
        let pair = (pool.alloc(4096).unwrap(), pool.alloc(8192).unwrap());
        assert_eq!(pool.stats().allocated, 4096 + 8192);
        drop(pair);
    }
    // More live at once than a cache's headroom, both ways.
    let count = large_chunk / (64 << 10) + 4;
    let many: Vec<_> = (0..count).map(|_| pool.alloc(64 << 10).unwrap()).collect();
    let stats = pool.stats();
    assert_eq!(stats.allocated, count * (64 << 10));
    assert_eq!(
        stats.allocated_peak,
        count * (64 << 10),
        "one thread: the peak is exact"
    );
    drop(many);
    let stats = pool.stats();
    assert_eq!((stats.allocated, stats.active), (0, 0));
    // A busy block stays active through the cache and its next hit.
    gated(&device, &stream, || {
        let busy = pool.alloc(4096).unwrap();
        busy.fill_bytes(1, &stream).unwrap();
        let address = busy.device_ptr();
        drop(busy);
        let stats = pool.stats();
        assert_eq!((stats.allocated, stats.active), (0, 4096), "cached busy");
        let reused = pool.alloc(4096).unwrap();
        assert_eq!(reused.device_ptr(), address, "the cache's last block");
        let stats = pool.stats();
        assert_eq!((stats.allocated, stats.active), (4096, 4096), "a busy hit");
        drop(reused);
    });
    let stats = pool.stats();
    assert_eq!(stats.allocations, stats.frees);
    assert_eq!(stats.allocations as usize, 2 + 8 + count + 2);
}

#[test]
fn a_typed_pinned_buffer_shares_the_byte_buckets_both_ways() {
    use ascend::pool::PinnedPool;
    let (_serial, device, _granule) = common::pool::start();
    let pool = PinnedPool::new(&device);
    // Bytes first, reused as f32s: the same 4096-byte bucket.
    let mut bytes = pool.alloc(4096).unwrap();
    bytes.get_mut().unwrap()[..8].copy_from_slice(&[0, 0, 0x80, 0x3F, 0, 0, 0, 0x40]);
    let address = bytes.host_ptr() as usize;
    drop(bytes);
    let mut floats = pool.alloc_typed::<f32>(1000).unwrap();
    assert_eq!(floats.host_ptr() as usize, address, "the cached byte buffer");
    assert_eq!((floats.len(), floats.capacity()), (1000, 1024));
    assert_eq!(
        &floats.get_mut().unwrap()[..2],
        &[1.0, 2.0],
        "what the bytes left, as f32s"
    );
    let stats = pool.stats();
    assert_eq!((stats.hits, stats.misses), (1, 1));
    assert_eq!((stats.allocated, stats.requested), (4096, 4000), "counted in bytes");
    floats.get_mut().unwrap().fill(-0.5);
    drop(floats);
    let stats = pool.stats();
    assert_eq!((stats.allocated, stats.requested, stats.cached_bytes), (0, 0, 4096));
    // Back as bytes, and as another type.
    let mut again = pool.alloc(3000).unwrap();
    assert_eq!(again.host_ptr() as usize, address);
    assert_eq!(&again.get_mut().unwrap()[..4], &(-0.5f32).to_ne_bytes());
    drop(again);
    let mut words = pool.alloc_typed::<u64>(512).unwrap();
    assert_eq!((words.host_ptr() as usize, words.capacity()), (address, 512));
    assert_eq!(
        words.get_mut().unwrap()[0],
        u64::from_ne_bytes([0, 0, 0, 0xBF, 0, 0, 0, 0xBF])
    );
    drop(words);
    assert_eq!(pool.stats().hits, 3);
    pool.empty_cache().unwrap();
    assert_eq!(pool.stats().cached_bytes, 0);
}

#[test]
fn a_typed_pinned_buffer_is_aligned_and_whole_elements() {
    use ascend::pool::PinnedPool;
    #[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
    #[repr(C)]
    struct Triple([u32; 3]); // 12 bytes: not a power of two
    #[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
    #[repr(C, align(64))]
    struct Line([u8; 64]);
    let (_serial, device, _granule) = common::pool::start();
    let pool = PinnedPool::new(&device);
    let triples = pool.alloc_typed::<Triple>(100).unwrap();
    // 1200 bytes: the 2048-byte bucket, rounded up to whole triples.
    assert_eq!((triples.len(), triples.capacity()), (100, 171));
    assert_eq!(triples.host_ptr() as usize % align_of::<Triple>(), 0);
    assert_eq!(pool.stats().allocated, 171 * 12);
    drop(triples);
    let again = pool.alloc_typed::<Triple>(150).unwrap();
    assert_eq!((pool.stats().hits, again.capacity()), (1, 171), "the same bucket");
    drop(again);
    let lines = pool.alloc_typed::<Line>(3).unwrap();
    assert_eq!(lines.host_ptr() as usize % 64, 0, "64-byte aligned");
    assert_eq!((lines.len(), lines.capacity()), (3, 4));
    // Empty: one element's bucket, length 0.
    let empty = pool.alloc_typed::<f64>(0).unwrap();
    assert_eq!((empty.len(), empty.capacity()), (0, 1));
    drop((lines, empty));
    assert_eq!(pool.stats().allocated, 0);
}

#[test]
fn typed_pinned_requests_that_cannot_be_served_are_refused_without_a_panic() {
    use ascend::pool::PinnedPool;
    #[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
    #[repr(C, align(128))]
    struct Wide([u8; 128]);
    let (_serial, device, _granule) = common::pool::start();
    let pool = PinnedPool::new(&device);
    fn refused(result: ascend::Result<()>, what: &str) {
        match result {
            Err(Error::InvalidArgument { method, reason, .. }) => {
                assert_eq!(method, "PinnedPool::alloc_typed");
                assert!(reason.contains(what), "{reason}");
            }
            other => panic!("expected a refusal ({what}), got {other:?}"),
        }
    }
    refused(pool.alloc_typed::<u32>(usize::MAX / 2).map(drop), "overflow usize");
    refused(pool.alloc_typed::<u32>(usize::MAX / 4 + 1).map(drop), "overflow usize");
    let rounds_all = PinnedPool::new(&device).with_round_threshold(usize::MAX);
    refused(rounds_all.alloc_typed::<u8>(usize::MAX / 2 + 2).map(drop), "bucket");
    refused(pool.alloc_typed::<()>(4).map(drop), "zero-sized");
    match pool.alloc_typed::<Wide>(1) {
        Err(Error::InvalidArgument { reason, .. }) => assert!(reason.contains("alignment 128"), "{reason}"),
        other => panic!("expected a refused alignment, got {:?}", other.map(|_| ())),
    }
    let stats = pool.stats();
    assert_eq!(
        (stats.hits, stats.misses, stats.allocated),
        (0, 0, 0),
        "nothing counted"
    );
    assert_eq!(pool.alloc_typed::<u32>(4).unwrap().len(), 4, "still usable");
}

/// The thread cache's give-back tests no block's tag or class of its own:
/// it keeps only a block of its hot stack's key, a small size of the
/// default tag. A tagged block of the same size, dropped after a cached
/// default block, goes back to its tag, so the next default request gets
/// the default block, not the tagged one (which a cache holding it would
/// hand out first).
#[test]
fn a_tagged_block_of_a_cached_size_goes_back_to_its_tag() {
    let (_serial, device, _granule) = common::pool::start();
    let pool = DevicePool::new(&device, PoolConfig::default()).unwrap();
    let default = pool.alloc(4096).unwrap();
    let default_address = default.device_ptr();
    drop(default); // cached: the hot key is (default tag, 4096)
    let tagged = pool.alloc_tagged(4096, "kv").unwrap();
    let tagged_address = tagged.device_ptr();
    assert_ne!(tagged_address, default_address);
    drop(tagged);
    let next = pool.alloc(4096).unwrap();
    assert_eq!(next.device_ptr(), default_address, "the default tag's cached block");
    drop(next);
    let again = pool.alloc_tagged(4096, "kv").unwrap();
    assert_eq!(again.device_ptr(), tagged_address, "the tag's own freed block");
}

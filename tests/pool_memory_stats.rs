//! `DevicePool::memory_stats`: torch's `memory_stats()` keys and meaning
//! for the whole pool, each size class and each tag; `reset_peak_stats`
//! and `reset_accumulated_stats`. Every figure is checked against a model
//! of the trace that drove it. One test at a time (live lists are
//! process-wide).

mod common;

use ascend::Error;
use ascend::pool::{DevicePool, MemoryStats, PoolConfig, Stat};
use std::collections::BTreeMap;

/// A pool with 64 KiB small blocks, a small pool of 4 granules and a large
/// pool of 8 chunks of 2 granules.
fn pool() -> (std::sync::MutexGuard<'static, ()>, DevicePool, usize) {
    let (serial, device, granule) = common::pool::start();
    let pool = DevicePool::new(&device, common::pool::pool_config(granule, 4, 2 * granule, 8)).unwrap();
    (serial, pool, granule)
}

fn exact(current: u64, peak: u64, allocated: u64, freed: u64) -> Stat {
    let mut stat = Stat::default();
    stat.current = current;
    stat.peak = Some(peak);
    stat.allocated = Some(allocated);
    stat.freed = Some(freed);
    stat
}

#[test]
fn the_whole_pool_counts_bytes_and_blocks_in_and_out() {
    let (_serial, pool, granule) = pool();
    let a = pool.alloc(1000).unwrap(); // 1024
    let b = pool.alloc(4096).unwrap();
    drop(a);
    let c = pool.alloc(1024).unwrap(); // a hit of the thread cache
    let stats = pool.memory_stats();
    let all = stats.all;
    assert_eq!(
        all.allocated_bytes,
        exact(4096 + 1024, 4096 + 1024, 2 * 1024 + 4096, 1024)
    );
    assert_eq!(
        (all.allocation.current, all.allocation.allocated, all.allocation.freed),
        (2, Some(3), Some(1))
    );
    assert_eq!(all.allocation.peak, None, "not kept: it would add a count to every hit");
    assert_eq!(
        all.reserved_bytes,
        exact(granule as u64, granule as u64, granule as u64, 0)
    );
    assert_eq!(all.segment, exact(1, 1, 1, 0));
    assert_eq!(all.allocated_bytes.current, pool.stats().allocated as u64);
    // The flat map has torch's keys.
    let torch = stats.to_torch_map();
    for (key, value) in [
        ("allocated_bytes.all.current", 5120),
        ("allocated_bytes.all.peak", 5120),
        ("allocated_bytes.all.allocated", 6144),
        ("allocated_bytes.all.freed", 1024),
        ("allocation.all.current", 2),
        ("reserved_bytes.all.current", granule as u64),
        ("reserved_bytes.small_pool.current", granule as u64),
        ("reserved_bytes.large_pool.current", 0),
        ("segment.all.peak", 1),
        ("num_alloc_retries", 0),
        ("num_ooms", 0),
        ("num_device_alloc", 1),
        ("num_device_free", 0),
    ] {
        assert_eq!(torch.get(key), Some(&value), "{key}");
    }
    assert!(!torch.contains_key("allocation.all.peak"));
    drop((b, c));
    let all = pool.memory_stats().all;
    assert_eq!(all.allocated_bytes, exact(0, 5120, 6144, 6144));
    assert_eq!((all.allocation.current, all.allocation.freed), (0, Some(3)));
}

#[test]
fn size_classes_split_the_pool_and_the_large_one_keeps_its_peaks() {
    let (_serial, pool, granule) = pool();
    let small = pool.alloc(4096).unwrap();
    let large = pool.alloc(100 << 10).unwrap(); // large: above the 64 KiB limit
    let second = pool.alloc(200 << 10).unwrap();
    drop(large);
    let stats = pool.memory_stats();
    let large_pool = stats.large_pool;
    assert_eq!(
        large_pool.allocated_bytes,
        exact(200 << 10, 300 << 10, 300 << 10, 100 << 10)
    );
    assert_eq!(large_pool.allocation, exact(1, 2, 2, 1));
    assert_eq!(large_pool.reserved_bytes.current, 2 * granule as u64);
    assert_eq!(large_pool.segment.current, 1, "one large chunk of two granules");
    let small_pool = stats.small_pool;
    assert_eq!(small_pool.allocated_bytes.current, 4096);
    assert_eq!(small_pool.allocated_bytes.allocated, Some(4096));
    assert_eq!(small_pool.allocated_bytes.peak, None);
    assert_eq!(small_pool.reserved_bytes.current, granule as u64);
    assert_eq!(
        stats.all.reserved_bytes.current,
        small_pool.reserved_bytes.current + large_pool.reserved_bytes.current
    );
    drop((small, second));
}

#[test]
fn each_tag_is_counted_exactly_and_the_default_tag_is_the_rest() {
    let (_serial, pool, granule) = pool();
    let w1 = pool.alloc_tagged(4096, "weights").unwrap();
    let w2 = pool.alloc_tagged(100 << 10, "weights").unwrap();
    let kv = pool.alloc_tagged(8192, "kv_cache").unwrap();
    let scratch = pool.alloc(2048).unwrap();
    drop(w1);
    let w3 = pool.alloc_tagged(4096, "weights").unwrap();
    let stats = pool.memory_stats();
    let weights = &stats.tags["weights"];
    let w = (4096 + (100 << 10)) as u64;
    assert_eq!(weights.allocated_bytes, exact(w, w, w + 4096, 4096));
    assert_eq!(weights.allocation, exact(2, 2, 3, 1));
    assert_eq!(
        weights.reserved_bytes.current,
        3 * granule as u64,
        "a small and a large segment of its own"
    );
    assert_eq!(weights.segment.current, 2);
    assert_eq!(stats.tags["kv_cache"].allocated_bytes, exact(8192, 8192, 8192, 0));
    let default = &stats.tags[DevicePool::DEFAULT_TAG];
    assert_eq!(default.allocated_bytes.current, 2048);
    assert_eq!(default.allocated_bytes.allocated, Some(2048));
    assert_eq!(
        default.allocated_bytes.peak, None,
        "the rest of the pool: no peak of its own"
    );
    assert_eq!(default.reserved_bytes.current, granule as u64);
    let sum: u64 = stats.tags.values().map(|tag| tag.allocated_bytes.current).sum();
    assert_eq!(sum, stats.all.allocated_bytes.current);
    let reserved: u64 = stats.tags.values().map(|tag| tag.reserved_bytes.current).sum();
    assert_eq!(reserved, stats.all.reserved_bytes.current);
    drop((w2, w3, kv, scratch));
    let after = pool.memory_stats();
    assert_eq!(after.tags["weights"].allocated_bytes, exact(0, w, w + 4096, w + 4096));
}

#[test]
fn peaks_start_again_from_now_on_reset() {
    let (_serial, pool, _granule) = pool();
    let warm = pool.alloc_tagged(200 << 10, "weights").unwrap();
    let scratch = pool.alloc(32 << 10).unwrap();
    drop(scratch);
    drop(warm);
    pool.empty_cache().unwrap();
    let before = pool.memory_stats();
    assert_eq!(before.all.allocated_bytes.peak, Some((200 << 10) + (32 << 10)));
    assert!(before.all.reserved_bytes.peak.unwrap() > 0);
    pool.reset_peak_stats();
    let step = pool.alloc(4096).unwrap();
    let after = pool.memory_stats();
    assert_eq!(after.all.allocated_bytes.peak, Some(4096));
    assert_eq!(after.all.reserved_bytes.peak, Some(after.all.reserved_bytes.current));
    assert_eq!(after.tags["weights"].allocated_bytes.peak, Some(0));
    assert_eq!(after.large_pool.allocated_bytes.peak, Some(0));
    assert_eq!(pool.stats().allocated_peak, 4096);
    assert_eq!(pool.stats().reserved_peak, pool.stats().reserved);
    // Cumulative counts are not peaks: they stay.
    assert_eq!(
        after.all.allocated_bytes.allocated,
        Some((200 << 10) + (32 << 10) + 4096)
    );
    drop(step);
}

#[test]
fn accumulated_counts_start_again_from_zero_on_reset() {
    let (_serial, pool, _granule) = pool();
    let kept = pool.alloc(4096).unwrap();
    let kept_large = pool.alloc(100 << 10).unwrap();
    drop(pool.alloc(4096).unwrap());
    assert!(matches!(pool.alloc(1 << 30), Err(Error::PoolExhausted { .. })));
    pool.reset_accumulated_stats();
    let stats = pool.memory_stats();
    assert_eq!(stats.all.allocated_bytes.allocated, Some(0));
    assert_eq!(stats.all.allocated_bytes.freed, Some(0));
    assert_eq!(
        stats.all.allocated_bytes.current,
        4096 + (100 << 10),
        "current values stay"
    );
    assert_eq!(stats.all.allocated_bytes.peak, Some(8192 + (100 << 10)), "peaks stay");
    assert_eq!(stats.all.allocation.current, 2);
    assert_eq!(stats.large_pool.allocation.allocated, Some(0));
    assert_eq!((stats.num_ooms, stats.num_device_alloc), (0, 0));
    assert_eq!(pool.stats().allocations, 0);
    drop(pool.alloc(512).unwrap());
    let stats = pool.memory_stats();
    assert_eq!(stats.all.allocated_bytes.allocated, Some(512));
    assert_eq!(stats.all.allocation.allocated, Some(1));
    drop((kept, kept_large));
}

#[test]
fn out_of_memory_errors_retries_and_device_calls_are_counted() {
    let (_serial, pool, granule) = pool();
    // Larger than the large pool's whole reservation: refused at once.
    assert!(matches!(pool.alloc(64 * granule), Err(Error::PoolExhausted { .. })));
    // Fill the large pool, then ask for more: a retry, then an error.
    let mut held = Vec::new();
    for _ in 0..8 {
        held.push(pool.alloc(2 * granule).unwrap());
    }
    assert!(matches!(pool.alloc(2 * granule), Err(Error::PoolExhausted { .. })));
    let stats = pool.memory_stats();
    assert_eq!(stats.num_ooms, 2);
    assert_eq!(stats.num_alloc_retries, 1);
    assert_eq!(stats.num_device_alloc, 8);
    assert_eq!(stats.large_pool.segment, exact(8, 8, 8, 0));
    drop(held);
    pool.empty_cache().unwrap();
    let stats = pool.memory_stats();
    assert_eq!(stats.num_device_free, 8);
    assert_eq!(stats.large_pool.segment, exact(0, 8, 8, 8));
    assert_eq!(
        stats.large_pool.reserved_bytes,
        exact(0, 16 * granule as u64, 16 * granule as u64, 16 * granule as u64)
    );
}

#[test]
fn inactive_split_bytes_are_the_cache_that_cannot_be_given_back() {
    let (_serial, pool, granule) = pool();
    let low = pool.alloc_tagged(2 * granule, "t").unwrap();
    let high = pool.alloc_tagged(2 * granule, "t").unwrap();
    drop(low); // a hole below a live block: cached, cannot be unmapped
    pool.empty_cache().unwrap();
    let stats = pool.memory_stats();
    assert_eq!(stats.tags["t"].inactive_split_bytes.current, 2 * granule as u64);
    assert_eq!(stats.large_pool.inactive_split_bytes.current, 2 * granule as u64);
    assert_eq!(stats.all.inactive_split_bytes.current, 2 * granule as u64);
    drop(high);
    let stats = pool.memory_stats();
    assert_eq!(
        stats.tags["t"].inactive_split_bytes.current, 0,
        "nothing live: all of it can be given back"
    );
    pool.empty_cache().unwrap();
    assert_eq!(pool.memory_stats().tags["t"].reserved_bytes.current, 0);
}

/// A deterministic trace over two tags and both classes; after every step
/// each tag's and each class's live bytes and blocks equal a model's.
#[test]
fn a_mixed_trace_matches_a_model_at_every_step() {
    let (_serial, pool, _granule) = pool();
    let sizes = [512usize, 1536, 4096, 60 << 10, 80 << 10, 300 << 10];
    let tags = [None, Some("a"), Some("b")];
    let mut live = Vec::new();
    let mut model: BTreeMap<&str, (u64, u64, u64)> = BTreeMap::new(); // (bytes, peak, blocks)
    let mut large_model = (0u64, 0u64);
    let mut seed = 0x2545_f491_u64;
    let mut next = |bound: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % bound as u64) as usize
    };
    for step in 0..400 {
        if live.is_empty() || next(3) > 0 {
            let (size, tag) = (sizes[next(sizes.len())], tags[next(tags.len())]);
            let block = match tag {
                None => pool.alloc(size).unwrap(),
                Some(tag) => pool.alloc_tagged(size, tag).unwrap(),
            };
            let name = tag.unwrap_or(DevicePool::DEFAULT_TAG);
            let entry = model.entry(name).or_default();
            entry.0 += size as u64;
            entry.1 = entry.1.max(entry.0);
            entry.2 += 1;
            if size > 64 << 10 {
                large_model.0 += size as u64;
                large_model.1 = large_model.1.max(large_model.0);
            }
            live.push((block, name, size));
        } else {
            let (block, name, size) = live.swap_remove(next(live.len()));
            drop(block);
            let entry = model.entry(name).or_default();
            entry.0 -= size as u64;
            entry.2 -= 1;
            if size > 64 << 10 {
                large_model.0 -= size as u64;
            }
        }
        let stats: MemoryStats = pool.memory_stats();
        for (name, &(bytes, peak, blocks)) in &model {
            let tag = &stats.tags[*name];
            assert_eq!(tag.allocated_bytes.current, bytes, "step {step}, tag {name}");
            assert_eq!(tag.allocation.current, blocks, "step {step}, tag {name}");
            if *name != DevicePool::DEFAULT_TAG {
                assert_eq!(tag.allocated_bytes.peak, Some(peak), "step {step}, tag {name}");
            }
        }
        assert_eq!(stats.large_pool.allocated_bytes.current, large_model.0, "step {step}");
        assert_eq!(
            stats.large_pool.allocated_bytes.peak,
            Some(large_model.1),
            "step {step}"
        );
        let total: u64 = model.values().map(|entry| entry.0).sum();
        assert_eq!(stats.all.allocated_bytes.current, total, "step {step}");
    }
}

#[test]
fn the_default_tag_alone_is_the_whole_pool() {
    let (_serial, pool, _granule) = pool();
    let block = pool.alloc(4096).unwrap();
    let stats = pool.memory_stats();
    assert_eq!(stats.tags.len(), 1);
    assert_eq!(stats.tags[DevicePool::DEFAULT_TAG], stats.all);
    drop(block);
    let config = PoolConfig::default();
    assert_eq!(config.rounding, 512, "the trace's sizes are multiples of the rounding");
}

#[test]
fn oversize_blocks_and_the_split_limit_are_reported_as_torch_does() {
    let (_serial, device, granule) = common::pool::start();
    let mut config = common::pool::pool_config(granule, 4, 2 * granule, 8);
    config.large_chunk = (32usize << 20).next_multiple_of(granule);
    config.large_reserve = 4 * config.large_chunk;
    config.max_split_size = Some(20 << 20);
    let pool = DevicePool::new(&device, config).unwrap();
    let oversize = pool.alloc(24 << 20).unwrap();
    let stats = pool.memory_stats();
    assert_eq!(stats.max_split_size, Some(20 << 20));
    assert_eq!(
        (stats.oversize_allocations.current, stats.oversize_segments.current),
        (1, 1)
    );
    drop(oversize); // cached whole: no longer allocated, still a segment
    let stats = pool.memory_stats();
    assert_eq!(stats.oversize_allocations.current, 0);
    assert_eq!(stats.oversize_allocations.peak, Some(1));
    assert_eq!(stats.oversize_segments.current, 1);
    let torch = stats.to_torch_map();
    assert_eq!(torch["max_split_size"], 20 << 20);
    assert_eq!(torch["oversize_allocations.peak"], 1);
    assert_eq!(torch["oversize_segments.current"], 1);
    pool.reset_peak_stats();
    assert_eq!(pool.memory_stats().oversize_allocations.peak, Some(0));
    let unset = DevicePool::new(&device, PoolConfig::default()).unwrap();
    assert!(!unset.memory_stats().to_torch_map().contains_key("max_split_size"));
}

/// A pool capped at 4 granules that collects garbage past half of it.
fn capped_with_gc() -> (std::sync::MutexGuard<'static, ()>, DevicePool, usize) {
    let (serial, device, g) = common::pool::start();
    let mut config = common::pool::pool_config(g, 4, g, 32);
    config.memory_limit = Some(4 * g);
    config.garbage_collection_threshold = Some(0.5);
    (serial, DevicePool::new(&device, config).unwrap(), g)
}

/// Chunks unmapped and mapped again within one request (garbage
/// collection gives the cache back, then the pool grows) are each counted
/// in the cumulative figures, as `num_device_alloc` / `num_device_free`
/// count them; not only their net change.
#[test]
fn chunks_unmapped_and_mapped_in_one_request_are_each_counted() {
    let (_serial, pool, g) = capped_with_gc();
    let kept = pool.alloc(g).unwrap(); // 1 chunk
    drop(pool.alloc_tagged(2 * g, "scratch").unwrap()); // 2 more, cached: 3 > 2
    // No fit: garbage collection unmaps the 2 cached chunks, then 3 more
    // are mapped (4 in all, within the cap).
    let grown = pool.alloc(3 * g).unwrap();
    let stats = pool.memory_stats();
    assert_eq!((stats.num_device_alloc, stats.num_device_free), (6, 2));
    assert_eq!(pool.stats().gc_runs, 1);
    assert_eq!(stats.all.segment, exact(4, 4, 6, 2));
    assert_eq!(stats.large_pool.segment, exact(4, 4, 6, 2));
    let g64 = g as u64;
    assert_eq!(stats.all.reserved_bytes, exact(4 * g64, 4 * g64, 6 * g64, 2 * g64));
    assert_eq!(
        stats.tags[DevicePool::DEFAULT_TAG].reserved_bytes,
        exact(4 * g64, 4 * g64, 4 * g64, 0)
    );
    assert_eq!(
        stats.tags["scratch"].reserved_bytes,
        exact(0, 2 * g64, 2 * g64, 2 * g64)
    );
    drop((kept, grown));
}

/// Garbage collection leaves the free tail of the segment the request
/// grows: the growth counts that tail, so unmapping it would only map it
/// again (and wait for its streams first).
#[test]
fn garbage_collection_spares_the_tail_the_request_grows_into() {
    let (_serial, pool, g) = capped_with_gc();
    let kept = pool.alloc(g).unwrap(); // 1 chunk
    drop(pool.alloc(2 * g).unwrap()); // 2 more, cached at the end: 3 > 2
    let grown = pool.alloc(3 * g).unwrap(); // the 2 cached + 1 new
    let stats = pool.memory_stats();
    assert_eq!(pool.stats().gc_runs, 1);
    assert_eq!((stats.num_device_alloc, stats.num_device_free), (4, 0));
    assert_eq!(pool.stats().reserved, 4 * g);
    drop((kept, grown));
}

/// A cached oversize block whose work may still be queued is active in
/// the large pool (where it lives), not in the small one.
#[test]
fn a_busy_cached_oversize_block_is_active_in_the_large_pool() {
    use ascend::stream::{Event, EventFlags, Stream};
    let (_serial, device, g) = common::pool::start();
    let mut config = common::pool::pool_config(g, 4, g, 64);
    config.max_split_size = Some(20 << 20);
    let pool = DevicePool::new(&device, config).unwrap();
    let stream = std::sync::Arc::new(Stream::new(&device).unwrap());
    // The stream waits for a gate opened later, so the memset stays queued.
    let gate = Event::with_flags(&device, EventFlags::SYNC).unwrap();
    let opener = Stream::new(&device).unwrap();
    stream.wait_event(&gate).unwrap();
    let size = (24usize << 20).next_multiple_of(g);
    let stats = std::thread::scope(|threads| {
        threads.spawn(|| {
            std::thread::sleep(std::time::Duration::from_millis(200));
            gate.record(&opener).unwrap();
        });
        let oversize = pool.alloc(size).unwrap();
        oversize.fill_bytes(1, &stream).unwrap();
        drop(oversize); // cached whole, with its memset
        pool.memory_stats()
    });
    assert_eq!(stats.oversize_segments.current, 1, "cached whole");
    assert_eq!(stats.all.active_bytes.current, size as u64);
    assert_eq!(stats.large_pool.active_bytes.current, size as u64);
    assert_eq!(stats.small_pool.active_bytes.current, 0);
    stream.synchronize().unwrap();
}

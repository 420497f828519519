//! torch_npu's allocator knobs on the device pool: `roundup_power2_divisions`,
//! `max_split_size_mb`, `garbage_collection_threshold` and the memory cap
//! (`memory_limit`, the per-process memory fraction). Each test runs a
//! trace with the knob and, where that shows its effect, without it.
//! Sizes are in granules (the VMM granularity), so the same bodies run on
//! the software device and on hardware.

mod common;

use ascend::Error;
use ascend::pool::{DevicePool, PoolConfig};
use common::pool::{pool_config, start};

/// Whether `inner` lies inside the block at `base` of `len` bytes.
fn inside(inner: u64, base: u64, len: usize) -> bool {
    inner >= base && inner < base + len as u64
}

#[test]
fn roundup_power2_divisions_rounds_to_equal_steps_and_reuses_across_sizes() {
    let (_guard, device, granule) = start();
    let mib = 1usize << 20;
    let mut config = pool_config(granule, 4, granule, 64);
    let plain = DevicePool::new(&device, config).unwrap();
    config.roundup_power2_divisions = [4; 16];
    let divided = DevicePool::new(&device, config).unwrap();
    // 5 MiB + 3 bytes: in 4..8 MiB, steps of 1 MiB.
    assert_eq!(divided.alloc(5 * mib + 3).unwrap().capacity(), 6 * mib);
    assert_eq!(plain.alloc(5 * mib + 3).unwrap().capacity(), 5 * mib + 512);
    // A power of two stays; small requests round within their interval.
    assert_eq!(divided.alloc(4 * mib).unwrap().capacity(), 4 * mib);
    assert_eq!(divided.alloc(100 << 10).unwrap().capacity(), 112 << 10);
    // Shapes that vary a little share one cached block.
    let first = divided.alloc(5 * mib + 100).unwrap();
    let address = first.device_ptr();
    drop(first);
    let second = divided.alloc(5 * mib + 700_000).unwrap();
    assert_eq!((second.device_ptr(), second.capacity()), (address, 6 * mib));
    assert_eq!(divided.stats().allocated, 6 * mib);
    // The list form per interval: 1 MiB..2 MiB undivided, 4 MiB and up in halves.
    let mut config = pool_config(granule, 4, granule, 64);
    config = {
        let mut listed = PoolConfig::parse("roundup_power2_divisions:[1:1,4:2]").unwrap();
        listed.small_limit = config.small_limit;
        listed.small_chunk = config.small_chunk;
        listed.small_reserve = config.small_reserve;
        listed.large_chunk = config.large_chunk;
        listed.large_reserve = config.large_reserve;
        listed
    };
    let listed = DevicePool::new(&device, config).unwrap();
    assert_eq!(listed.alloc(mib + 1).unwrap().capacity(), mib + 512);
    assert_eq!(listed.alloc(5 * mib).unwrap().capacity(), 6 * mib);
}

#[test]
fn an_oversize_block_is_cached_whole_and_reused_only_within_the_slack() {
    let (_guard, device, granule) = start();
    let g = granule;
    let slack = PoolConfig::OVERSIZE_SLACK;
    // Oversize: 4 granules and up; a 24-granule block.
    let big_len = (slack / g + 14) * g;
    let trace = |max_split: Option<usize>| {
        let mut config = pool_config(g, 4, g, 4 * big_len / g);
        config.max_split_size = max_split;
        let pool = DevicePool::new(&device, config).unwrap();
        let big = pool.alloc(big_len).unwrap();
        let base = big.device_ptr() as u64;
        drop(big);
        // A request below max_split.
        let small = pool.alloc(g).unwrap();
        let small_inside = inside(small.device_ptr() as u64, base, big_len);
        (pool, base, small, small_inside)
    };
    // Without the knob the freed range is split for the small request.
    let (_pool, _, _small, small_inside) = trace(None);
    assert!(small_inside, "without max_split the free range is split");

    let (pool, base, small, small_inside) = trace(Some(4 * g));
    assert!(!small_inside, "a request below max_split never takes an oversize block");
    let stats = pool.stats();
    assert_eq!((stats.oversize_allocations, stats.oversize_segments), (0, 1));
    // An oversize request the slack (or more) below the block: not reused.
    let beyond = pool.alloc(big_len - slack).unwrap();
    assert!(!inside(beyond.device_ptr() as u64, base, big_len));
    assert_eq!(beyond.capacity(), big_len - slack);
    // Within the slack: the block, whole (never split).
    let within = pool.alloc(big_len - slack + g).unwrap();
    assert_eq!((within.device_ptr() as u64, within.capacity()), (base, big_len));
    let stats = pool.stats();
    assert_eq!((stats.oversize_allocations, stats.oversize_segments), (2, 2));
    assert_eq!(stats.allocated, g + big_len - slack + big_len);
    drop((small, beyond, within));
    assert_eq!(pool.stats().oversize_allocations, 0);
    // empty_cache gives the cached oversize blocks back first: all unmapped.
    pool.empty_cache().unwrap();
    let stats = pool.stats();
    assert_eq!((stats.reserved, stats.oversize_segments), (0, 0));
}

#[test]
fn out_of_memory_releases_cached_oversize_blocks_before_failing() {
    let (_guard, device, g) = start();
    let mut config = pool_config(g, 4, g, 8);
    config.max_split_size = Some(4 * g);
    let pool = DevicePool::new(&device, config).unwrap();
    let first = pool.alloc(6 * g).unwrap();
    drop(first); // cached whole: 6 of the 8 granules
    // 3 granules: below max_split, so not from the cache; 2 are unmapped.
    let small = pool.alloc(3 * g).unwrap();
    let stats = pool.stats();
    assert_eq!(stats.retries, 1, "the retry gave the oversize block back");
    assert_eq!(stats.oversize_segments, 0);
    assert_eq!(small.capacity(), 3 * g);
}

#[test]
fn garbage_collection_keeps_reserved_under_the_threshold_of_the_limit() {
    let (_guard, device, g) = start();
    let trace = |threshold: Option<f64>| {
        let mut config = pool_config(g, 4, g, 32);
        config.memory_limit = Some(16 * g);
        config.garbage_collection_threshold = threshold;
        let pool = DevicePool::new(&device, config).unwrap();
        drop(pool.alloc_tagged(10 * g, "activations").unwrap()); // cached: 10 granules
        let weights = pool.alloc(4 * g).unwrap(); // another tag: the pool grows
        let stats = pool.stats();
        drop(weights);
        (stats.reserved, stats.gc_runs, stats.retries)
    };
    assert_eq!(trace(None), (14 * g, 0, 0), "without GC the cache stays");
    assert_eq!(trace(Some(0.5)), (4 * g, 1, 0), "GC gave the cache back first");
    // Under the threshold nothing runs.
    let mut config = pool_config(g, 4, g, 32);
    config.memory_limit = Some(16 * g);
    config.garbage_collection_threshold = Some(0.9);
    let pool = DevicePool::new(&device, config).unwrap();
    drop(pool.alloc_tagged(10 * g, "activations").unwrap());
    drop(pool.alloc(4 * g).unwrap());
    assert_eq!((pool.stats().reserved, pool.stats().gc_runs), (14 * g, 0));
}

#[test]
fn garbage_collection_gives_the_oldest_oversize_block_back_first() {
    let (_guard, device, g) = start();
    // Two oversize blocks, [0, 3) and [3, 9) granules, cached in the order
    // given; then 9 granules reserved pass 0.5 of 16 before a growth.
    let trace = |tail_first: bool| {
        let mut config = pool_config(g, 4, g, 32);
        config.memory_limit = Some(16 * g);
        config.garbage_collection_threshold = Some(0.5);
        config.max_split_size = Some(3 * g);
        let pool = DevicePool::new(&device, config).unwrap();
        let head = pool.alloc(3 * g).unwrap();
        let tail = pool.alloc(6 * g).unwrap();
        if tail_first {
            drop(tail);
            drop(head);
        } else {
            drop(head);
            drop(tail);
        }
        assert_eq!(pool.stats().oversize_segments, 2);
        let next = pool.alloc_tagged(2 * g, "other").unwrap();
        let stats = pool.stats();
        drop(next);
        (stats.gc_runs, stats.oversize_segments, stats.reserved)
    };
    // The tail is the oldest: giving it back unmaps 6 granules, enough;
    // the head stays cached.
    assert_eq!(trace(true), (1, 1, 3 * g + 2 * g));
    // The head is the oldest: it unmaps nothing alone, so the tail follows.
    assert_eq!(trace(false), (1, 0, 2 * g));
}

#[test]
fn the_memory_cap_refuses_growth_after_the_retry_and_says_so() {
    let (_guard, device, g) = start();
    let mut config = pool_config(g, 4, g, 32);
    config.memory_limit = Some(8 * g);
    let pool = DevicePool::new(&device, config).unwrap();
    drop(pool.alloc(4 * g).unwrap()); // cached: 4 granules
    // 4 + 6 > 8: the retry empties the cache first, then it fits.
    let weights = pool.alloc_tagged(6 * g, "weights").unwrap();
    assert_eq!((pool.stats().retries, pool.stats().reserved), (1, 6 * g));
    // 6 + 4 > 8 with nothing cached: refused by the cap.
    match pool.alloc_tagged(4 * g, "kv") {
        Err(Error::PoolExhausted {
            limit: Some(limit),
            reserved,
            cause,
            ..
        }) => {
            assert_eq!((limit, reserved), (8 * g, 6 * g));
            assert!(cause.contains(&format!("memory limit of {}", 8 * g)), "{cause}");
        }
        other => panic!("expected the cap's PoolExhausted, got {other:?}"),
    }
    assert_eq!(pool.stats().retries, 2);
    // Larger than the cap: refused at once, no retry.
    assert!(matches!(
        pool.alloc(9 * g),
        Err(Error::PoolExhausted { limit: Some(_), .. })
    ));
    assert_eq!(pool.stats().retries, 2);
    // Without the cap the same request is served.
    drop(weights);
    let uncapped = DevicePool::new(&device, pool_config(g, 4, g, 32)).unwrap();
    drop(uncapped.alloc_tagged(6 * g, "weights").unwrap());
    assert!(uncapped.alloc_tagged(4 * g, "kv").is_ok());
}

#[test]
fn a_wake_past_the_memory_cap_empties_the_cache_then_refuses_and_stays_asleep() {
    let (_guard, device, g) = start();
    let mut config = pool_config(g, 4, g, 32);
    config.memory_limit = Some(8 * g);
    let pool = DevicePool::new(&device, config).unwrap();
    let kv = pool.alloc_tagged(6 * g, "kv").unwrap();
    kv.bytes(..64).unwrap().write_from_host(&[7u8; 64]).unwrap();
    pool.sleep(&["kv"]).unwrap(); // offloaded; its 6 granules go back
    assert_eq!(pool.stats().reserved, 0);
    pool.wake_tags(&[DevicePool::DEFAULT_TAG]).unwrap(); // nothing to map
    let scratch = pool.alloc(4 * g).unwrap();
    drop(pool.alloc(2 * g).unwrap()); // cached
    assert_eq!(pool.stats().reserved, 6 * g);
    // 6 + 6 > 8; emptying the cache leaves 4 + 6 > 8: refused by the cap.
    match pool.wake() {
        Err(Error::PoolExhausted {
            limit: Some(limit),
            cause,
            ..
        }) => {
            assert_eq!(limit, 8 * g);
            assert!(cause.contains("waking"), "{cause}");
        }
        other => panic!("expected the cap's PoolExhausted, got {other:?}"),
    }
    assert!(pool.is_asleep("kv"), "a refused wake leaves the tag asleep");
    assert_eq!(pool.stats().reserved, 4 * g, "the cache was emptied first");
    // With the scratch block cached, emptying the cache makes room.
    drop(scratch);
    pool.wake().unwrap();
    assert!(!pool.is_asleep("kv"));
    assert_eq!(pool.stats().reserved, 6 * g);
    assert_eq!(kv.bytes(..64).unwrap().to_vec::<u8>().unwrap(), [7; 64]);
}

#[test]
fn a_memory_fraction_caps_at_its_share_of_the_device() {
    let (_guard, device, g) = start();
    let (_, total) = device.memory_info().unwrap();
    let pool = DevicePool::new(&device, pool_config(g, 4, g, 32)).unwrap();
    assert_eq!(pool.memory_limit(), None);
    // A fraction that leaves room for 3 granules.
    let fraction = (3 * g) as f64 / total as f64;
    pool.set_memory_fraction(fraction).unwrap();
    let limit = pool.memory_limit().unwrap();
    assert!(limit <= 3 * g && limit > 2 * g, "{limit}");
    let first = pool.alloc(2 * g).unwrap();
    match pool.alloc(2 * g) {
        Err(Error::PoolExhausted {
            cause, limit: Some(_), ..
        }) => {
            assert!(
                cause.contains("fraction") && cause.contains(&total.to_string()),
                "{cause}"
            );
        }
        other => panic!("expected the cap's PoolExhausted, got {other:?}"),
    }
    assert!(pool.set_memory_fraction(0.0).is_err());
    pool.set_memory_fraction(1.0).unwrap();
    assert!(pool.alloc(2 * g).is_ok(), "the cap is raised");
    drop(first);
    let mut config = pool_config(g, 4, g, 32);
    config.memory_fraction = Some(0.25);
    let configured = DevicePool::new(&device, config).unwrap();
    assert_eq!(configured.memory_limit(), Some((0.25 * total as f64) as usize));
}

mod model {
    //! Random traces with every knob on, against what the knobs promise.

    use super::common::pool::{pool_config, read_block, start};
    use ascend::Error;
    use ascend::pool::{DevicePool, PoolBlock, PoolConfig};
    use ascend::stream::{Ordered, Stream};
    use proptest::prelude::*;
    use std::sync::Arc;

    #[derive(Debug, Clone)]
    enum Step {
        /// Allocate this many thousandths of a granule, in tag 0 or 1, and
        /// fill it on stream 0 or 1.
        Alloc(usize, usize, usize),
        /// Free the live block at this index (modulo the count).
        Free(usize),
        /// Give the cache back.
        EmptyCache,
    }

    fn steps() -> impl Strategy<Value = Vec<Step>> {
        let step = prop_oneof![
            5 => (1usize..7000, 0usize..2, 0usize..2).prop_map(|(size, tag, stream)| Step::Alloc(size, tag, stream)),
            4 => any::<usize>().prop_map(Step::Free),
            1 => Just(Step::EmptyCache),
        ];
        proptest::collection::vec(step, 1..40)
    }

    /// torch's rounding, written again from its description: `divisions`
    /// steps per power of two above `rounding × divisions`.
    fn rounded(size: usize, rounding: usize, divisions: usize) -> usize {
        let plain = size.max(1).div_ceil(rounding) * rounding;
        if size <= rounding * divisions || size.is_power_of_two() {
            return plain;
        }
        let low = 1usize << size.ilog2();
        let step = low / divisions;
        size.div_ceil(step) * step
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

        #[test]
        fn every_knob_keeps_its_promise_on_random_traces(steps in steps()) {
            let (_guard, device, g) = start();
            let mut config = pool_config(g, 4, g, 32);
            config.roundup_power2_divisions = [4; 16];
            config.max_split_size = Some(2 * g);
            config.memory_limit = Some(12 * g);
            config.garbage_collection_threshold = Some(0.5);
            let max_split = 2 * g;
            let pool = DevicePool::new(&device, config).unwrap();
            let streams = [Arc::new(Stream::new(&device).unwrap()), Arc::new(Stream::new(&device).unwrap())];
            let mut live: Vec<(Ordered<PoolBlock>, u8)> = Vec::new();
            let mut value = 0u8;
            for step in steps {
                match step {
                    Step::Alloc(thousandths, tag, stream) => {
                        let bytes = thousandths * g / 1000;
                        let bytes = bytes.max(1);
                        let expected = rounded(bytes, config.rounding, 4);
                        match pool.alloc_tagged(bytes, ["a", "b"][tag]) {
                            Ok(block) => {
                                let capacity = block.capacity();
                                if capacity != expected {
                                    // Only a cached oversize block, within the slack.
                                    prop_assert!(expected >= max_split, "{bytes}: {capacity} for {expected}");
                                    prop_assert!(capacity > expected && capacity < expected + PoolConfig::OVERSIZE_SLACK);
                                }
                                value = value.wrapping_add(1);
                                block.fill_bytes(value, &streams[stream]).unwrap();
                                live.push((block, value));
                            }
                            Err(Error::PoolExhausted { limit, reserved, .. }) => {
                                // The reservations are far larger: only the cap refuses,
                                // after giving back what it could.
                                prop_assert_eq!(limit, Some(12 * g));
                                let allocated: usize = live.iter().map(|(block, _)| block.capacity()).sum();
                                prop_assert!(reserved + expected > 12 * g || allocated + expected > 12 * g);
                            }
                            Err(other) => prop_assert!(false, "{other}"),
                        }
                    }
                    Step::Free(index) => {
                        if !live.is_empty() {
                            let at = index % live.len();
                            live.swap_remove(at);
                        }
                    }
                    Step::EmptyCache => pool.empty_cache().unwrap(),
                }
                let stats = pool.stats();
                prop_assert!(stats.reserved <= 12 * g, "{} past the cap", stats.reserved);
                let capacities: usize = live.iter().map(|(block, _)| block.capacity()).sum();
                prop_assert_eq!(stats.allocated, capacities);
                let oversize = live.iter().filter(|(block, _)| block.capacity() >= max_split).count();
                prop_assert_eq!(stats.oversize_allocations, oversize as u64);
                prop_assert!(stats.oversize_segments >= stats.oversize_allocations);
                let mut ranges: Vec<(u64, u64)> = live
                    .iter()
                    .map(|(block, _)| (block.device_ptr() as u64, block.capacity() as u64))
                    .collect();
                ranges.sort_unstable();
                for pair in ranges.windows(2) {
                    prop_assert!(pair[0].0 + pair[0].1 <= pair[1].0, "overlap: {:?}", pair);
                }
            }
            for (block, value) in &live {
                let bytes = read_block(&device, block, &streams[0]);
                prop_assert!(bytes.iter().all(|byte| byte == value));
            }
            drop(live);
            pool.empty_cache().unwrap();
            let stats = pool.stats();
            prop_assert_eq!((stats.reserved, stats.oversize_segments, stats.oversize_allocations), (0, 0, 0));
        }
    }
}

#[test]
fn a_snapshot_and_a_sleep_give_cached_oversize_blocks_back_to_the_free_ranges() {
    let (_guard, device, g) = start();
    let mut config = pool_config(g, 4, g, 32);
    config.max_split_size = Some(2 * g);
    let pool = DevicePool::new(&device, config).unwrap();
    let keep = pool.alloc(g).unwrap();
    drop(pool.alloc(3 * g).unwrap());
    assert_eq!(pool.stats().oversize_segments, 1);
    let snapshot = pool.snapshot();
    let large = &snapshot.segments[1];
    assert!(
        large
            .blocks
            .iter()
            .any(|block| block.state != ascend::pool::BlockState::Allocated && block.size >= 3 * g),
        "{large:?}"
    );
    assert_eq!(pool.stats().oversize_segments, 0);
    // Cached again, then a sleep: back to the free ranges before it.
    drop(pool.alloc(3 * g).unwrap());
    assert_eq!(pool.stats().oversize_segments, 1);
    pool.sleep(&[]).unwrap();
    assert_eq!(pool.stats().oversize_segments, 0);
    pool.wake().unwrap();
    let again = pool.alloc(3 * g).unwrap();
    assert_eq!(again.capacity(), 3 * g);
    drop((keep, again));
}

/// Each torch_npu key that `docs/pools.md` lists as refused is refused by
/// the parser with the table's reason, not as an unknown key (issue 39),
/// by both pools and whatever the value.
#[test]
fn torch_npu_keys_the_docs_list_as_refused_are_refused_with_the_docs_reason() {
    use ascend::pool::PinnedPool;
    let (_serial, device, _granule) = start();
    let docs = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/pools.md")).unwrap();
    let mut checked = Vec::new();
    for row in docs.lines().filter(|line| line.starts_with("| `")) {
        let Some((keys, here)) = row.trim_matches('|').split_once(" | ") else {
            continue;
        };
        let Some(reason) = here.trim().strip_prefix("refused: ") else {
            continue;
        };
        // The keys are the first cell's code spans before any parenthesis.
        let keys = keys.split(" (").next().unwrap_or(keys);
        for key in keys.split('`').skip(1).step_by(2) {
            for value in ["1", "1g", "True"] {
                let entry = format!("{key}:{value}");
                let error = PoolConfig::parse(&entry).unwrap_err();
                assert!(matches!(error, Error::InvalidArgument { .. }), "{error:?}");
                let text = error.to_string();
                assert!(text.contains(&format!("`{entry}`: refused: {reason}")), "{key}: {text}");
                assert!(!text.contains("unknown key"), "{text}");
            }
            let text = PinnedPool::from_conf(&device, &format!("{key}:2"))
                .unwrap_err()
                .to_string();
            assert!(text.contains(&format!("refused: {reason}")), "{key}: {text}");
            checked.push(key.to_string());
        }
    }
    assert_eq!(
        checked,
        [
            "base_addr_aligned_kb",
            "page_size",
            "pinned_reserve_segment_size_mb",
            "pinned_use_background_threads",
            "pinned_mem_register",
            "pin_memory_expandable_segments",
        ],
        "the refused rows of docs/pools.md"
    );
    // A key that is neither known nor refused is still unknown.
    let text = PoolConfig::parse("page_sizes:1g").unwrap_err().to_string();
    assert!(text.contains("unknown key `page_sizes`"), "{text}");
}

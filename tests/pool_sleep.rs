//! Sleep and wake of the device pool: tagged memory, offloaded contents
//! restored at the same addresses, discarded contents, allocations refused
//! while asleep, no physical memory held while asleep, and 100 cycles that
//! leave the pool and the host where they were. Data and statistics are
//! checked on every backend; physical memory and live objects on the
//! software device. One test at a time (live lists are process-wide).

mod common;

use ascend::Error;
use ascend::pool::{DevicePool, PoolBlock};
use ascend::stream::{Ordered, Stream};
use ascend::sys::soft;
use common::{on_software, software_only};
use std::sync::Arc;

/// Writes `byte` into every byte of `block` on `stream`.
fn fill(block: &Ordered<PoolBlock>, byte: u8, stream: &Arc<Stream>) {
    block.fill_bytes(byte, stream).unwrap();
}

fn all(bytes: &[u8], byte: u8) -> bool {
    bytes.iter().all(|&b| b == byte)
}

#[test]
fn sleep_gives_the_memory_back_and_wake_restores_the_offloaded_tags_at_the_same_addresses() {
    let (_serial, device, granule) = common::pool::start();
    let stream = Arc::new(Stream::new(&device).unwrap());
    let since = soft::sequence_now();
    let pool = DevicePool::new(&device, common::pool::pool_config(granule, 4, 2 * granule, 8)).unwrap();
    let physical_before = soft::live().physical_bytes;
    // Small and large blocks of two tags, and a default-tag block.
    let weights = [
        pool.alloc_tagged(4096, "weights").unwrap(),
        pool.alloc_tagged(3 * granule, "weights").unwrap(),
        pool.alloc_tagged(8192, "weights").unwrap(),
    ];
    let kv = pool.alloc_tagged(granule, "kv_cache").unwrap();
    let scratch = pool.alloc(4096).unwrap();
    for (block, byte) in weights.iter().zip([1, 2, 3]) {
        fill(block, byte, &stream);
    }
    fill(&kv, 4, &stream);
    fill(&scratch, 5, &stream);
    let addresses: Vec<_> = weights.iter().chain([&kv, &scratch]).map(|b| b.device_ptr()).collect();
    let reserved = pool.stats().reserved;
    assert!(reserved > 0);

    pool.sleep(&["weights", "default"]).unwrap();
    assert!(pool.is_asleep("weights") && pool.is_asleep("kv_cache") && pool.is_asleep("default"));
    let stats = pool.stats();
    assert_eq!(stats.reserved, 0, "nothing is mapped while asleep");
    assert_eq!(
        stats.offloaded,
        4096 + 3 * granule + 8192 + 4096,
        "the offloaded tags' live bytes"
    );
    assert_eq!(
        stats.allocated,
        4096 + 3 * granule + 8192 + granule + 4096,
        "blocks stay allocated"
    );
    assert_eq!(stats.sleeps, 1);
    software_only(|| {
        assert_eq!(
            soft::live().physical_bytes,
            physical_before,
            "no physical memory while asleep"
        );
    });
    let snapshot = pool.snapshot();
    assert!(
        snapshot
            .segments
            .iter()
            .all(|segment| segment.asleep && segment.mapped == 0)
    );
    assert!(snapshot.to_json().contains("\"tag\":\"kv_cache\""));

    pool.wake().unwrap();
    assert!(!pool.is_asleep("weights") && !pool.is_asleep("kv_cache"));
    let stats = pool.stats();
    assert_eq!((stats.reserved, stats.offloaded, stats.wakes), (reserved, 0, 1));
    let now: Vec<_> = weights.iter().chain([&kv, &scratch]).map(|b| b.device_ptr()).collect();
    assert_eq!(now, addresses, "every block keeps its address");
    for (block, byte) in weights.iter().zip([1, 2, 3]) {
        assert!(
            all(&common::pool::read_block(&device, block, &stream), byte),
            "offloaded contents restored"
        );
    }
    assert!(all(&common::pool::read_block(&device, &scratch, &stream), 5));
    // The discarded tag's memory is usable again (its contents are gone).
    fill(&kv, 6, &stream);
    assert!(all(&common::pool::read_block(&device, &kv, &stream), 6));

    drop((weights, kv, scratch));
    drop(pool);
    drop(stream);
    software_only(|| assert_eq!(soft::live_since(since), []));
}

#[test]
fn a_sleeping_tag_refuses_allocations_and_takes_frees() {
    let (_serial, device, granule) = common::pool::start();
    let pool = DevicePool::new(&device, common::pool::pool_config(granule, 4, 2 * granule, 8)).unwrap();
    let kept = pool.alloc_tagged(4096, "weights").unwrap();
    let freed = pool.alloc_tagged(4096, "weights").unwrap();
    let other = pool.alloc_tagged(4096, "kv_cache").unwrap();
    pool.sleep(&[]).unwrap();
    match pool.alloc_tagged(4096, "weights") {
        Err(Error::PoolAsleep { tag, .. }) => assert_eq!(tag, "weights"),
        other => panic!("expected PoolAsleep, got {other:?}"),
    }
    assert!(matches!(pool.alloc(16), Err(Error::PoolAsleep { .. })));
    // A tag first used while the pool sleeps is awake.
    drop(pool.alloc_tagged(4096, "new").unwrap());
    drop(freed); // a free while asleep needs no runtime call
    assert_eq!(pool.stats().allocated, 2 * 4096);
    // Waking one tag leaves the others asleep.
    pool.wake_tags(&["weights"]).unwrap();
    assert!(!pool.is_asleep("weights") && pool.is_asleep("kv_cache"));
    let again = pool.alloc_tagged(4096, "weights").unwrap();
    assert!(matches!(
        pool.alloc_tagged(4096, "kv_cache"),
        Err(Error::PoolAsleep { .. })
    ));
    // The first sleep discarded `kept`'s contents: both weights blocks get
    // data the next sleep offloads, checked after the wake (and not memory
    // nothing wrote, whose offload the sanitizer reports).
    kept.view().write_from_host(&[4u8; 4096]).unwrap();
    again.view().write_from_host(&[6u8; 4096]).unwrap();
    // Sleeping again sleeps the awake tags; the sleeping one stays asleep.
    pool.sleep(&["weights"]).unwrap();
    pool.wake().unwrap();
    assert_eq!(pool.stats().allocated, 3 * 4096);
    assert!(
        all(&kept.view().to_vec::<u8>().unwrap(), 4) && all(&again.view().to_vec::<u8>().unwrap(), 6),
        "the offloaded tag's blocks kept their bytes"
    );
    drop((kept, other, again));
    assert_eq!(pool.stats().allocated, 0);
}

#[test]
fn work_on_a_sleeping_block_fails_and_reaches_no_other_memory() {
    let (_serial, device, granule) = common::pool::start();
    // What the hardware does on such an access (a device fault) is not
    // something a test should provoke; the software device reports it.
    if !on_software() {
        return;
    }
    let stream = Arc::new(Stream::new(&device).unwrap());
    let pool = DevicePool::new(&device, common::pool::pool_config(granule, 4, 2 * granule, 8)).unwrap();
    let block = pool.alloc_tagged(4096, "weights").unwrap();
    let neighbour = pool.alloc_tagged(4096, "weights").unwrap();
    fill(&block, 1, &stream);
    fill(&neighbour, 2, &stream);
    pool.sleep(&["weights"]).unwrap();
    let misuse = soft::MisuseWatch::start();
    let outcome = block.fill_bytes(9, &stream).and_then(|()| stream.synchronize());
    assert!(
        matches!(&outcome, Err(Error::PoolAsleep { tag, .. }) if tag == "weights"),
        "a memset of a sleeping block is refused: {outcome:?}"
    );
    let mut host = [0u8; 4096];
    let read = block.view().read_to_host(&mut host);
    assert!(matches!(read, Err(Error::PoolAsleep { .. })), "{read:?}");
    assert_eq!(misuse.seen(), [], "nothing reached the runtime");
    drop(misuse);
    pool.wake().unwrap();
    assert!(
        all(&common::pool::read_block(&device, &neighbour, &stream), 2),
        "the neighbour is untouched"
    );
}

#[test]
fn a_hundred_sleep_wake_cycles_leave_the_pool_and_the_host_where_they_were() {
    let (_serial, device, granule) = common::pool::start();
    let stream = Arc::new(Stream::new(&device).unwrap());
    let pool = DevicePool::new(&device, common::pool::pool_config(granule, 4, 2 * granule, 8)).unwrap();
    let weights = pool.alloc_tagged(2 * granule, "weights").unwrap();
    let kv = pool.alloc_tagged(granule, "kv_cache").unwrap();
    fill(&weights, 7, &stream);
    stream.synchronize().unwrap();
    let reserved = pool.stats().reserved;
    let before = soft::live();
    // The first cycle leaves the offload's pinned buffer as a spare...
    pool.sleep(&["weights"]).unwrap();
    pool.wake().unwrap();
    assert_eq!(pool.stats().offload_spare, 2 * granule);
    let live = soft::live();
    software_only(|| assert_eq!(live.host_bytes, before.host_bytes + 2 * granule as u64));
    // ...which every later cycle reuses.
    for cycle in 0..100 {
        pool.sleep(&["weights"]).unwrap();
        assert_eq!(
            pool.stats().offload_spare,
            0,
            "cycle {cycle}: the spare holds the offload"
        );
        pool.wake().unwrap();
        let stats = pool.stats();
        assert_eq!(
            (stats.reserved, stats.offloaded, stats.offload_spare),
            (reserved, 0, 2 * granule),
            "cycle {cycle}"
        );
        software_only(|| {
            let now = soft::live();
            assert_eq!(now.physical_bytes, live.physical_bytes, "cycle {cycle}: device memory");
            assert_eq!(now.host_bytes, live.host_bytes, "cycle {cycle}: host memory");
            assert_eq!(now.mappings, live.mappings, "cycle {cycle}: mappings");
        });
    }
    assert_eq!(pool.stats().reserved_peak, reserved, "no cycle mapped more");
    assert!(all(&common::pool::read_block(&device, &weights, &stream), 7));
    // `empty_cache` frees the spare.
    pool.empty_cache().unwrap();
    assert_eq!(pool.stats().offload_spare, 0);
    software_only(|| assert_eq!(soft::live().host_bytes, before.host_bytes));
    drop((weights, kv));
}

#[test]
fn sleep_and_wake_race_with_allocations_and_frees_on_another_thread() {
    let (_serial, device, granule) = common::pool::start();
    let since = soft::sequence_now();
    let pool = DevicePool::new(&device, common::pool::pool_config(granule, 4, 2 * granule, 8)).unwrap();
    let weights = pool.alloc_tagged(8192, "weights").unwrap();
    let stream = Arc::new(Stream::new(&device).unwrap());
    weights.fill_bytes(9, &stream).unwrap();
    let stop = std::sync::atomic::AtomicBool::new(false);
    let (mut served, mut refused) = (0u32, 0u32);
    std::thread::scope(|scope| {
        let worker = scope.spawn(|| {
            // Only allocations and frees: using a block while its tag may
            // sleep is outside the contract.
            let mut held = Vec::new();
            let (mut served, mut refused) = (0u32, 0u32);
            // Rounds after the last wake: the pool is awake for them, so
            // some are served however the threads were scheduled before.
            let mut awake_rounds = 0;
            for round in 0usize.. {
                if stop.load(std::sync::atomic::Ordering::Relaxed) {
                    awake_rounds += 1;
                    if awake_rounds > 50 {
                        break;
                    }
                }
                match pool.alloc(4096 * (1 + round % 5)) {
                    Ok(block) => {
                        served += 1;
                        held.push(block);
                    }
                    Err(Error::PoolAsleep { .. }) => refused += 1,
                    Err(other) => panic!("unexpected: {other}"),
                }
                if held.len() > 8 {
                    held.swap_remove(round % held.len());
                }
            }
            (served, refused)
        });
        for _ in 0..20 {
            pool.sleep(&["weights"]).unwrap();
            pool.wake().unwrap();
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        (served, refused) = worker.join().expect("the worker");
    });
    assert!(served > 0, "the worker was served ({refused} refused)");
    assert_eq!(pool.stats().allocated, 8192, "only the weights are left");
    assert_eq!(pool.stats().sleeps, 20);
    assert!(all(&common::pool::read_block(&device, &weights, &stream), 9));
    drop(weights);
    drop(pool);
    drop(stream);
    software_only(|| assert_eq!(soft::live_since(since), []));
}

/// How a writer of [`sleep_is_a_point_in_time_for_writes_on_other_threads`]
/// writes its block.
#[derive(Clone, Copy)]
enum Write {
    /// A host write through a view (`OrderedView::write_from_host`).
    FromHost,
    /// A queued memset, then a synchronisation of its stream.
    Queued,
}

/// Writes `value` into every word of `block`; `Ok` is the
/// acknowledgement.
fn write_words(block: &Ordered<PoolBlock>, how: Write, value: u32, stream: &Arc<Stream>) -> ascend::Result<()> {
    match how {
        Write::FromHost => block.view().write_from_host(&vec![value; block.byte_len() / 4]),
        Write::Queued => block.view().fill_u32(value, stream).and_then(|()| stream.synchronize()),
    }
}

/// Issue 38: a write that returned `Ok` before `sleep` returned was
/// lost (or torn) when it landed between the offload copy and the unmap.
/// Each round, two writers (a host write of a large block, a queued
/// memset of a small one) write new values until their tag is refused,
/// while this thread sleeps; after the wake each block holds the last
/// value acknowledged, whole. (A failed round stops the writers, so the
/// test fails instead of hanging.)
#[test]
fn sleep_is_a_point_in_time_for_writes_on_other_threads() {
    use std::sync::atomic::{AtomicBool, Ordering};
    let (_serial, device, granule) = common::pool::start();
    let pool = DevicePool::new(&device, common::pool::pool_config(granule, 4, 2 * granule, 8)).unwrap();
    let large = pool.alloc_tagged(2 * granule, "tensors").unwrap();
    let small = pool.alloc_tagged(32 << 10, "tensors").unwrap();
    let stream = Arc::new(Stream::new(&device).unwrap());
    let rounds = 150;
    let (start, failed) = (std::sync::Barrier::new(3), AtomicBool::new(false));
    let (sender, acknowledged) = std::sync::mpsc::channel::<(usize, Result<u32, String>)>();
    // The values before the first round.
    write_words(&large, Write::FromHost, 0, &stream).unwrap();
    write_words(&small, Write::Queued, 0, &stream).unwrap();
    let failure = std::thread::scope(|scope| {
        for (index, (block, how)) in [(&large, Write::FromHost), (&small, Write::Queued)]
            .into_iter()
            .enumerate()
        {
            let (start, failed, sender, device) = (&start, &failed, sender.clone(), &device);
            scope.spawn(move || {
                let stream = Arc::new(Stream::new(device).unwrap());
                let mut value = 0u32;
                for _ in 0..rounds {
                    start.wait();
                    let mut last = Ok(0);
                    while !failed.load(Ordering::Acquire) {
                        value += 1;
                        match write_words(block, how, value, &stream) {
                            Ok(()) => last = Ok(value),
                            Err(Error::PoolAsleep { tag, .. }) if tag == "tensors" => break,
                            Err(other) => {
                                last = Err(format!("writer {index}: a write failed with {other}"));
                                break;
                            }
                        }
                    }
                    sender.send((index, last)).unwrap();
                    // Until the round's check has read the blocks.
                    start.wait();
                    if failed.load(Ordering::Acquire) {
                        return;
                    }
                }
            });
        }
        let mut expected = [0u32; 2];
        for round in 0..rounds {
            start.wait();
            let mut round_outcome = || -> Result<(), String> {
                // The writers run for a while first, longer in some rounds.
                std::thread::sleep(std::time::Duration::from_micros((round % 7) as u64 * 150));
                pool.sleep(&["tensors"]).map_err(|error| format!("sleep: {error}"))?;
                for _ in 0..2 {
                    let (index, last) = acknowledged.recv().map_err(|error| error.to_string())?;
                    match last? {
                        0 => {}
                        value => expected[index] = value,
                    }
                }
                pool.wake().map_err(|error| format!("wake: {error}"))?;
                for (index, block) in [&large, &small].into_iter().enumerate() {
                    let words: Vec<u32> = block.view().to_vec().map_err(|error| error.to_string())?;
                    let wrong = words.iter().filter(|&&word| word != expected[index]).count();
                    if wrong > 0 {
                        return Err(format!(
                            "block {index}: {wrong} of {} words are not the last value acknowledged before \
                             the sleep, {} (the first word is {})",
                            words.len(),
                            expected[index],
                            words[0]
                        ));
                    }
                }
                Ok(())
            };
            let outcome = round_outcome();
            if outcome.is_err() {
                failed.store(true, Ordering::Release);
            }
            start.wait();
            if let Err(failure) = outcome {
                return Some(format!("round {round}: {failure}"));
            }
        }
        None
    });
    assert_eq!(failure, None);
    assert_eq!(pool.stats().sleeps, rounds as u64);
}

#[test]
fn tags_are_escaped_in_the_snapshot() {
    let (_serial, device, granule) = common::pool::start();
    let pool = DevicePool::new(&device, common::pool::pool_config(granule, 4, 2 * granule, 8)).unwrap();
    let tag = "a\"b\\c<d>\n";
    let block = pool.alloc_tagged(4096, tag).unwrap();
    let snapshot = pool.snapshot();
    assert!(snapshot.segments.iter().any(|segment| segment.tag == tag));
    assert!(
        snapshot.to_json().contains(r#""tag":"a\"b\\c<d>\u000a""#),
        "{}",
        snapshot.to_json()
    );
    assert!(snapshot.to_svg().contains("a\"b\\c&lt;d&gt;"));
    drop(block);
}

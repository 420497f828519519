//! The device pool when a composite fails *and its undo fails too* (two
//! runtime failures in one call): a growth whose map fails and whose
//! unmap-back fails, an `empty_cache` or a sleep whose unmap fails and
//! whose map-back fails. Such a call cannot keep its promise to change
//! nothing, but the pool must stay sound and consistent: what its free
//! lists offer is mapped, its statistics count what is mapped, a range is
//! never handed out under another owner's queued work, and a tag whose
//! memory could not be mapped back is asleep (its allocations refused)
//! until a wake maps it. Software device only (fault injection); one test
//! at a time.

mod common;

use ascend::pool::DevicePool;
use ascend::stream::{DeviceFlag, Stream, ValueCondition};
use ascend::sys::{self, soft};
use ascend::{DeviceSlice, DeviceSliceMut};
use std::sync::{Arc, Mutex, MutexGuard};

const CODE: sys::aclError = sys::ACL_ERROR_RT_DRV_INTERNAL_ERROR;

static SERIAL: Mutex<()> = Mutex::new(());

fn start() -> Option<MutexGuard<'static, ()>> {
    let guard = SERIAL.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    common::on_software().then_some(guard)
}

/// The bytes the pool's segments map now.
fn mapped(pool: &DevicePool) -> usize {
    pool.snapshot().segments.iter().map(|segment| segment.mapped).sum()
}

/// Fails the `first` call of its function and then the `then` call, runs
/// `operation`, and clears the faults.
fn twice<R>(first: (&str, u64), then: (&str, u64), operation: impl FnOnce() -> R) -> R {
    soft::inject_fault(first.0, first.1, CODE).unwrap();
    soft::inject_fault(then.0, then.1, CODE).unwrap();
    let result = operation();
    soft::clear_faults();
    result
}

#[test]
fn a_failed_empty_cache_undo_never_hands_out_memory_under_queued_work() {
    let Some(_serial) = start() else { return };
    let device = common::device();
    let chunk = common::pool::granule(&device);
    let pool = DevicePool::new(&device, common::pool::pool_config(chunk, 4, chunk, 8)).unwrap();
    let _first = pool.alloc(chunk).unwrap(); // [0, C) stays live
    drop(pool.alloc(3 * chunk).unwrap()); // [C, 4C) cached
    // The second unmap fails, and mapping the first one back fails too.
    let emptied = twice(("aclrtUnmapMem", 2), ("aclrtMapMem", 1), || pool.empty_cache());
    assert!(emptied.is_err());
    assert_eq!(pool.stats().reserved, mapped(&pool), "reserved is what is mapped");

    // A block freed with a memset still queued (its stream waits on a flag)...
    let held = Arc::new(Stream::new(&device).unwrap());
    let flag = DeviceFlag::new(&device, 0).unwrap();
    held.wait_value(&flag, 1, ValueCondition::Equal).unwrap();
    let old = pool.alloc(4 * chunk).unwrap();
    old.fill_bytes(7, &held).unwrap();
    drop(old);
    // ...is not handed out as idle memory to a new owner: either the new
    // block waits for that work, or it lies elsewhere.
    let new = pool.alloc(3 * chunk).unwrap();
    if new.is_busy() {
        flag.set(1).unwrap(); // its host access waits for the work
        drop(new.into_inner().unwrap());
    } else {
        let mut new = new.into_inner().unwrap();
        DeviceSliceMut::<u8>::from_storage(&mut new)
            .unwrap()
            .fill_bytes(0)
            .unwrap();
        flag.set(1).unwrap();
        held.synchronize().unwrap();
        let bytes = DeviceSlice::<u8>::from_storage(&new).unwrap().to_vec().unwrap();
        assert!(bytes.iter().all(|&byte| byte == 0), "queued work wrote a live block");
    }
    assert_eq!(pool.stats().reserved, mapped(&pool));
}

#[test]
fn a_failed_growth_undo_keeps_the_statistics_and_the_retry_sound() {
    let Some(_serial) = start() else { return };
    let device = common::device();
    let chunk = common::pool::granule(&device);
    let pool = DevicePool::new(&device, common::pool::pool_config(chunk, 4, chunk, 8)).unwrap();
    // The second map fails, and unmapping the first one back fails too;
    // the retry then empties the cache.
    let grown = twice(("aclrtMapMem", 2), ("aclrtUnmapMem", 1), || {
        pool.alloc(2 * chunk).map(drop)
    });
    let _ = grown;
    assert_eq!(pool.stats().reserved, mapped(&pool), "reserved is what is mapped");
    // The pool goes on working, and ends clean of blocks.
    let block = pool.alloc(2 * chunk).unwrap();
    assert_eq!(pool.stats().reserved, mapped(&pool));
    drop(block);
    pool.empty_cache().unwrap();
    assert_eq!((pool.stats().reserved, mapped(&pool)), (0, 0));
}

#[test]
fn a_failed_sleep_undo_leaves_the_tag_asleep_and_the_wake_restores_it() {
    let Some(_serial) = start() else { return };
    let device = common::device();
    let chunk = common::pool::granule(&device);
    let stream = Arc::new(Stream::new(&device).unwrap());
    let pool = DevicePool::new(&device, common::pool::pool_config(chunk, 4, chunk, 8)).unwrap();
    let weights = pool.alloc_tagged(3 * chunk, "weights").unwrap();
    weights.fill_bytes(5, &stream).unwrap();
    stream.synchronize().unwrap();
    // The large segment's second unmap fails, and mapping the first one
    // back fails too: the memory cannot be put back as it was.
    let slept = twice(("aclrtUnmapMem", 2), ("aclrtMapMem", 1), || pool.sleep(&["weights"]));
    assert!(slept.is_err());
    assert!(pool.is_asleep("weights"), "memory that is not mapped back is asleep");
    assert!(matches!(
        pool.alloc_tagged(512, "weights"),
        Err(ascend::Error::PoolAsleep { .. })
    ));
    // The wake maps it and restores the offloaded contents.
    pool.wake().unwrap();
    assert!(!pool.is_asleep("weights"));
    let bytes = common::pool::read_block(&device, &weights, &stream);
    assert!(bytes.iter().all(|&byte| byte == 5), "the offloaded contents came back");
    assert_eq!(pool.stats().reserved, mapped(&pool));
}

/// Every pair of a failing call and a failing undo, for a growth, an
/// `empty_cache` and a sleep + wake: no panic, the statistics count what
/// is mapped, and the pool serves again once the faults are gone.
#[test]
fn each_pair_of_failures_leaves_the_pool_consistent() {
    let Some(_serial) = start() else { return };
    let device = common::device();
    let chunk = common::pool::granule(&device);
    let pairs = [
        ("aclrtMapMem", "aclrtUnmapMem"),
        ("aclrtUnmapMem", "aclrtMapMem"),
        ("aclrtMallocPhysical", "aclrtUnmapMem"),
    ];
    let mut failed = 0;
    for (first, undo) in pairs {
        for nth in 1..=3 {
            let pool = DevicePool::new(&device, common::pool::pool_config(chunk, 4, chunk, 8)).unwrap();
            let kept = pool.alloc_tagged(chunk, "weights").unwrap();
            // Data the sleep offloads, checked after every pair of failures
            // (and not memory nothing wrote, whose offload the sanitizer
            // reports).
            kept.view().write_from_host(&vec![5u8; chunk]).unwrap();
            drop(pool.alloc_tagged(2 * chunk, "weights").unwrap());
            let operations: [&dyn Fn() -> ascend::Result<()>; 3] = [
                &|| pool.alloc_tagged(4 * chunk, "weights").map(drop),
                &|| pool.empty_cache(),
                &|| pool.sleep(&["weights"]).and_then(|()| pool.wake()),
            ];
            for operation in operations {
                let outcome = twice((first, nth), (undo, 1), operation);
                failed += usize::from(outcome.is_err());
                let context = format!("{first} #{nth}, then {undo}");
                assert_eq!(pool.stats().reserved, mapped(&pool), "{context}");
                if pool.is_asleep("weights") {
                    pool.wake().unwrap_or_else(|error| panic!("{context}: wake: {error}"));
                }
                let bytes = kept.view().to_vec::<u8>().unwrap();
                assert!(
                    bytes.iter().all(|&byte| byte == 5),
                    "{context}: the live block kept its bytes"
                );
                drop(
                    pool.alloc_tagged(2 * chunk, "weights")
                        .unwrap_or_else(|error| panic!("{context}: then: {error}")),
                );
                assert_eq!(pool.stats().reserved, mapped(&pool), "{context}");
            }
            drop(kept);
        }
    }
    assert!(failed > 0, "no pair of faults fired");
}

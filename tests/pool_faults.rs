//! The device pool under runtime failures: each runtime call of an
//! allocation that grows a segment, of the out-of-memory retry, and of
//! `empty_cache` is failed in turn. The pool must report the error (or
//! succeed by its retry), keep its statistics and blocks consistent, go on
//! working, and leave nothing behind. Software device only (fault
//! injection); one test at a time.

mod common;

use ascend::pool::DevicePool;
use ascend::sys::{self, soft};
use common::on_software;
use std::sync::{Mutex, MutexGuard};

const CODE: sys::aclError = sys::ACL_ERROR_RT_DRV_INTERNAL_ERROR;

const CALLS: [&str; 5] = [
    "aclrtMemGetAllocationGranularity",
    "aclrtMallocPhysical",
    "aclrtMapMem",
    "aclrtUnmapMem",
    "aclrtFreePhysical",
];

static SERIAL: Mutex<()> = Mutex::new(());

/// The file lock and the granularity, or `None` off the software device.
fn start() -> Option<(MutexGuard<'static, ()>, usize)> {
    let guard = SERIAL.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if !on_software() {
        return None;
    }
    let granule = ascend::vmm::PhysicalMemProp::device(&common::device())
        .round_up(1)
        .unwrap();
    Some((guard, granule))
}

/// Runs `operation` on a fresh pool with the `nth` call of each watched
/// function failing, until the operation no longer reaches it; checks each
/// outcome with `check(pool, outcome)`. Returns how many faults fired.
fn sweep(
    setup: impl Fn(&DevicePool) -> Vec<ascend::stream::Ordered<ascend::pool::PoolBlock>>,
    operation: impl Fn(&DevicePool) -> ascend::Result<()>,
) -> usize {
    let device = common::device();
    let granule = common::pool::granule(&device);
    let mut fired = 0;
    for api in CALLS {
        for nth in 1.. {
            let since = soft::sequence_now();
            let misuse = soft::MisuseWatch::start();
            let pool = DevicePool::new(&device, common::pool::pool_config(granule, 4, granule, 8)).unwrap();
            let kept = setup(&pool);
            let before = pool.stats();
            soft::inject_fault(api, nth, CODE).unwrap();
            let outcome = operation(&pool);
            let hit = soft::armed_faults().is_empty();
            soft::clear_faults();
            if !hit {
                outcome.unwrap_or_else(|error| panic!("{api} #{nth} did not fire, yet: {error}"));
                break;
            }
            fired += 1;
            let after = pool.stats();
            match outcome {
                // Served anyway (the retry, or a best-effort release).
                Ok(()) => {}
                Err(error) => {
                    assert!(
                        matches!(error, ascend::Error::PoolExhausted { .. } | ascend::Error::Acl { .. }),
                        "{api} #{nth}: {error}"
                    );
                    assert_eq!(after.allocated, before.allocated, "{api} #{nth}");
                }
            }
            let mapped: usize = pool.snapshot().segments.iter().map(|segment| segment.mapped).sum();
            assert_eq!(after.reserved, mapped, "{api} #{nth}: reserved is what is mapped");
            // It still works.
            drop(
                pool.alloc(3 * granule)
                    .unwrap_or_else(|error| panic!("{api} #{nth}, then: {error}")),
            );
            drop(kept);
            drop(pool);
            assert_eq!(soft::live_since(since), [], "{api} #{nth}: leaked");
            assert_eq!(misuse.seen(), [], "{api} #{nth}: misuse");
        }
    }
    fired
}

#[test]
fn a_growing_allocation_survives_each_failed_call() {
    let Some((_serial, granule)) = start() else { return };
    // Growth by two chunks: granularity queries, allocations and maps; a
    // failure is retried once after emptying the (empty) cache.
    let fired = sweep(|_| Vec::new(), |pool| pool.alloc(2 * granule).map(drop));
    assert!(fired >= 6, "{fired} faults fired");
}

#[test]
fn the_retry_and_empty_cache_survive_each_failed_call() {
    let Some((_serial, granule)) = start() else { return };
    // Two chunks live and two cached at the end of the large pool: a
    // request for four cannot use the cache, so the pool grows; when a
    // call of the growth fails, it empties the cache (unmaps, frees) and
    // grows again, and each of those calls is failed in turn too.
    let setup = |pool: &DevicePool| {
        let live = pool.alloc(2 * granule).unwrap();
        drop(pool.alloc(2 * granule).unwrap());
        vec![live]
    };
    let fired = sweep(setup, |pool| pool.alloc(4 * granule).map(drop));
    assert!(fired >= 6, "{fired} faults fired");
    // The same with the first allocation refused, so the retry runs: each
    // call of the retry (unmap, free, and the growth again) fails in turn.
    let retried = |pool: &DevicePool| {
        soft::inject_fault("aclrtMallocPhysical", 1, sys::ACL_ERROR_RT_MEMORY_ALLOCATION).unwrap();
        pool.alloc(4 * granule).map(drop)
    };
    let fired = sweep(setup, retried);
    assert!(fired >= 10, "{fired} faults fired");
    let fired = sweep(setup, |pool| pool.empty_cache());
    assert!(fired >= 2, "{fired} faults fired");
}

//! Sleep and wake under runtime failures: each runtime call they make is
//! failed in turn. A failed sleep must leave the pool awake with every
//! block's contents; a failed wake must leave it asleep, and a later wake
//! must restore the offloaded contents. Either way nothing is leaked and
//! the pool goes on working. Software device only (fault injection); one
//! test at a time.

mod common;

use ascend::Device;
use ascend::pool::{DevicePool, PoolBlock};
use ascend::stream::{Ordered, Stream};
use ascend::sys::{self, soft};
use common::on_software;
use std::sync::{Arc, Mutex, MutexGuard};

const CODE: sys::aclError = sys::ACL_ERROR_RT_DRV_INTERNAL_ERROR;

/// Every call sleep and wake make. (`aclrtFreeHost` is left out: a pinned
/// buffer whose free is refused is left to the runtime, as every
/// `PinnedHostBuf` is, which the leak check would count.)
const CALLS: [&str; 9] = [
    "aclrtSynchronizeDevice",
    "aclrtSynchronizeStream",
    "aclrtMallocHost",
    "aclrtMemcpy",
    "aclrtUnmapMem",
    "aclrtFreePhysical",
    "aclrtMemGetAllocationGranularity",
    "aclrtMallocPhysical",
    "aclrtMapMem",
];

static SERIAL: Mutex<()> = Mutex::new(());

fn start() -> Option<MutexGuard<'static, ()>> {
    let guard = SERIAL.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    on_software().then_some(guard)
}

/// A pool with offloaded and discarded tags in both size classes, a
/// freed block whose memset may still be queued, and the bytes each
/// offloaded block holds.
struct Scene {
    device: Device,
    stream: Arc<Stream>,
    pool: DevicePool,
    weights: Vec<(Ordered<PoolBlock>, u8)>,
    kv: Ordered<PoolBlock>,
}

impl Scene {
    fn new() -> Self {
        let device = common::device();
        let granule = common::pool::granule(&device);
        let stream = Arc::new(Stream::new(&device).unwrap());
        let pool = DevicePool::new(&device, common::pool::pool_config(granule, 4, granule, 8)).unwrap();
        let weights: Vec<_> = [(4096, 1), (8192, 2), (2 * granule, 3)]
            .into_iter()
            .map(|(bytes, byte)| {
                let block = pool.alloc_tagged(bytes, "weights").unwrap();
                block.fill_bytes(byte, &stream).unwrap();
                (block, byte)
            })
            .collect();
        let freed = pool.alloc_tagged(4096, "weights").unwrap();
        freed.fill_bytes(9, &stream).unwrap();
        drop(freed);
        let kv = pool.alloc_tagged(granule, "kv_cache").unwrap();
        kv.fill_bytes(4, &stream).unwrap();
        Self {
            device,
            stream,
            pool,
            weights,
            kv,
        }
    }

    fn read(&self, block: &Ordered<PoolBlock>) -> Vec<u8> {
        common::pool::read_block(&self.device, block, &self.stream)
    }

    /// Every offloaded block holds its bytes.
    fn check_weights(&self, what: &str) {
        for (block, byte) in &self.weights {
            assert!(self.read(block).iter().all(|b| b == byte), "{what}: contents of {byte}");
        }
    }

    fn asleep(&self) -> bool {
        self.pool.is_asleep("weights") && self.pool.is_asleep("kv_cache")
    }

    fn awake(&self) -> bool {
        !self.pool.is_asleep("weights") && !self.pool.is_asleep("kv_cache")
    }
}

/// Runs `operation` on a fresh scene (prepared by `prepare`) with the
/// `nth` call of each watched function failing, until it no longer
/// reaches it; `check` judges each outcome. Returns how many faults fired.
fn sweep(
    prepare: impl Fn(&Scene),
    operation: impl Fn(&Scene) -> ascend::Result<()>,
    check: impl Fn(&Scene, &str, ascend::Result<()>),
) -> usize {
    let mut fired = 0;
    for api in CALLS {
        for nth in 1.. {
            let since = soft::sequence_now();
            let misuse = soft::MisuseWatch::start();
            let scene = Scene::new();
            prepare(&scene);
            soft::inject_fault(api, nth, CODE).unwrap();
            let outcome = operation(&scene);
            let hit = soft::armed_faults().is_empty();
            soft::clear_faults();
            let what = format!("{api} #{nth}");
            if !hit {
                outcome.unwrap_or_else(|error| panic!("{what} did not fire, yet: {error}"));
                break;
            }
            fired += 1;
            check(&scene, &what, outcome);
            // It goes on working, and ends clean.
            scene
                .pool
                .wake()
                .unwrap_or_else(|error| panic!("{what}, then wake: {error}"));
            scene.check_weights(&format!("{what}, then"));
            drop(scene.pool.alloc_tagged(4096, "weights").unwrap());
            drop(scene);
            assert_eq!(soft::live_since(since), [], "{what}: leaked");
            assert_eq!(misuse.seen(), [], "{what}: misuse");
        }
    }
    fired
}

#[test]
fn a_failed_sleep_leaves_the_pool_awake_with_its_contents() {
    let Some(_serial) = start() else { return };
    let fired = sweep(
        |_| {},
        |scene| scene.pool.sleep(&["weights"]),
        |scene, what, outcome| match outcome {
            Err(error) => {
                assert!(matches!(error, ascend::Error::Acl { .. }), "{what}: {error}");
                assert!(scene.awake(), "{what}: a failed sleep keeps the pool awake");
                let mapped: usize = scene.pool.snapshot().segments.iter().map(|s| s.mapped).sum();
                assert_eq!(scene.pool.stats().reserved, mapped, "{what}");
                assert_eq!(scene.pool.stats().sleeps, 0, "{what}");
                scene.check_weights(what);
                assert!(
                    scene.read(&scene.kv).iter().all(|&b| b == 4),
                    "{what}: the discarded tag too"
                );
            }
            // A refused physical free: sleep completes, the chunk is kept.
            Ok(()) => assert!(scene.asleep(), "{what}"),
        },
    );
    assert!(fired >= 12, "{fired} faults fired");
}

#[test]
fn a_failed_wake_leaves_the_pool_asleep_and_a_later_wake_restores_it() {
    let Some(_serial) = start() else { return };
    let fired = sweep(
        |scene| scene.pool.sleep(&["weights"]).unwrap(),
        |scene| scene.pool.wake(),
        |scene, what, outcome| match outcome {
            Err(error) => {
                assert!(matches!(error, ascend::Error::Acl { .. }), "{what}: {error}");
                assert!(scene.asleep(), "{what}: a failed wake keeps the pool asleep");
                let stats = scene.pool.stats();
                assert_eq!((stats.reserved, stats.wakes), (0, 0), "{what}");
                assert!(stats.offloaded > 0, "{what}: the offloaded copies are kept");
            }
            Ok(()) => panic!("{what}: a wake whose call failed cannot succeed"),
        },
    );
    assert!(fired >= 11, "{fired} faults fired");
}

/// Issue 38 under faults: a sleep whose offload copy fails while another
/// thread writes a block of the tag leaves the tag awake (its gate open
/// again: the writer's next writes succeed) and the block holding the
/// last value acknowledged.
#[test]
fn a_failed_offload_copy_during_writes_on_another_thread_keeps_every_acknowledged_write() {
    use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
    let Some(_serial) = start() else { return };
    let device = common::device();
    let granule = common::pool::granule(&device);
    let pool = DevicePool::new(&device, common::pool::pool_config(granule, 4, granule, 8)).unwrap();
    // One offload copy per size class: the large block's, then the small one's.
    let large = pool.alloc_tagged(2 * granule, "weights").unwrap();
    let small = pool.alloc_tagged(8192, "weights").unwrap();
    for nth in 1..=2 {
        let (stop, acknowledged) = (AtomicBool::new(false), AtomicU32::new(0));
        std::thread::scope(|scope| {
            let writer = scope.spawn(|| {
                // Memsets and stream synchronisations only: the fault is
                // armed on `aclrtMemcpy`, which only the sleep calls.
                let stream = Arc::new(Stream::new(&device).unwrap());
                let mut value = 0;
                while !stop.load(Ordering::Acquire) {
                    value += 1;
                    let written = large
                        .view()
                        .fill_u32(value, &stream)
                        .and_then(|()| small.view().fill_u32(value, &stream))
                        .and_then(|()| stream.synchronize());
                    match written {
                        Ok(()) => acknowledged.store(value, Ordering::Release),
                        Err(ascend::Error::PoolAsleep { .. }) => {}
                        Err(other) => panic!("nth {nth}: a write failed with {other}"),
                    }
                }
            });
            while acknowledged.load(Ordering::Acquire) == 0 {
                std::thread::yield_now();
            }
            soft::inject_fault("aclrtMemcpy", nth, CODE).unwrap();
            let slept = pool.sleep(&["weights"]);
            let fired = soft::armed_faults().is_empty();
            soft::clear_faults();
            assert!(fired, "nth {nth}: the offload copy was reached");
            assert!(matches!(slept, Err(ascend::Error::Acl { .. })), "nth {nth}: {slept:?}");
            assert!(
                !pool.is_asleep("weights"),
                "nth {nth}: a failed sleep keeps the tag awake"
            );
            // The gate is open again: writes after the failed sleep are
            // acknowledged.
            let after = acknowledged.load(Ordering::Acquire);
            while acknowledged.load(Ordering::Acquire) <= after + 1 {
                std::thread::yield_now();
            }
            stop.store(true, Ordering::Release);
            writer.join().expect("the writer");
        });
        let last = acknowledged.load(Ordering::Acquire);
        for block in [&large, &small] {
            let words: Vec<u32> = block.view().to_vec().unwrap();
            assert!(
                words.iter().all(|&word| word == last),
                "nth {nth}: the block holds {} where {last} was acknowledged last",
                words[0]
            );
        }
    }
}

//! The device pool against a reference model: random sequences of
//! allocations and frees in two tags, `empty_cache`, sleep (one tag
//! offloaded, the other discarded) and wake (one tag or all), on two
//! streams. After every step: no two live blocks overlap, allocations from
//! a sleeping tag are refused, and the statistics equal the model's; at the
//! end every block still holds the byte it was filled with (on its stream,
//! so the pool's ordering is exercised; offloaded blocks across their
//! sleeps), and nothing is left on the device (software device). A second
//! property runs two threads on two streams against one pool: they
//! allocate, free each other's blocks, copy each other's blocks and empty
//! the cache at once; no two live blocks ever overlap, and every block
//! holds its bytes at the end.

mod common;

use ascend::pool::{DevicePool, PoolBlock};
use ascend::stream::{Ordered, Stream};
use ascend::sys::soft;
use common::software_only;
use proptest::prelude::*;
use std::sync::Arc;

#[derive(Debug, Clone)]
enum Step {
    /// Allocate this many bytes in tag 0 or 1, fill on stream 0 or 1.
    Alloc(usize, usize, usize),
    /// Free the live block at this index (modulo the count).
    Free(usize),
    /// Give the cache back.
    EmptyCache,
    /// Sleep, offloading tag 0 and discarding tag 1.
    Sleep,
    /// Wake tag 0 or 1, or (2) every tag.
    Wake(usize),
}

/// Tag 0 is offloaded when the pool sleeps, tag 1 is not.
const TAGS: [&str; 2] = ["offloaded", "discarded"];

fn steps() -> impl Strategy<Value = Vec<Step>> {
    let step = prop_oneof![
        4 => (1usize..300_000, 0usize..2, 0usize..2).prop_map(|(bytes, tag, stream)| Step::Alloc(bytes, tag, stream)),
        3 => any::<usize>().prop_map(Step::Free),
        1 => Just(Step::EmptyCache),
        1 => Just(Step::Sleep),
        1 => (0usize..3).prop_map(Step::Wake),
    ];
    proptest::collection::vec(step, 1..40)
}

struct Live {
    block: Ordered<PoolBlock>,
    tag: usize,
    /// The byte every byte of the block holds; `None` once its tag slept
    /// without being offloaded.
    byte: Option<u8>,
}

/// One property at a time: live lists are process-wide.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn run(steps: &[Step]) {
    let _serial = serial();
    let device = common::device();
    let granule = common::pool::granule(&device);
    let config = common::pool::pool_config(granule, 8, granule, 32);
    let since = soft::sequence_now();
    let streams = [
        Arc::new(Stream::new(&device).unwrap()),
        Arc::new(Stream::new(&device).unwrap()),
    ];
    let pool = DevicePool::new(&device, config).unwrap();
    let mut live: Vec<Live> = Vec::new();
    let mut next_byte = 1u8;
    let mut byte = || {
        let byte = next_byte;
        next_byte = next_byte.wrapping_add(1).max(1);
        byte
    };
    // The model: which tags sleep, and the host bytes holding offloads.
    let mut asleep = [false; 2];
    let mut offloaded = 0;
    // A tag's segments exist from its first allocation; sleep puts only
    // existing tags to sleep.
    let mut exists = [false; 2];
    // The highest sum of live blocks (one thread: the pool's peak is exact).
    let mut allocated_peak = 0;
    for step in steps {
        match *step {
            Step::Alloc(bytes, tag, stream) if asleep[tag] => {
                let refused = pool.alloc_tagged(bytes, TAGS[tag]);
                assert!(matches!(refused, Err(ascend::Error::PoolAsleep { .. })), "{refused:?}");
                let _ = stream;
            }
            Step::Alloc(bytes, tag, stream) => {
                exists[tag] = true;
                let block = pool.alloc_tagged(bytes, TAGS[tag]).unwrap();
                assert!(block.byte_len() >= bytes && block.byte_len().is_multiple_of(512));
                let byte = byte();
                block.fill_bytes(byte, &streams[stream]).unwrap();
                live.push(Live {
                    block,
                    tag,
                    byte: Some(byte),
                });
                allocated_peak = allocated_peak.max(live.iter().map(|l| l.block.byte_len()).sum());
            }
            Step::Free(index) if !live.is_empty() => {
                let index = index % live.len();
                drop(live.swap_remove(index));
            }
            Step::Free(_) => {}
            Step::EmptyCache => pool.empty_cache().unwrap(),
            Step::Sleep => {
                pool.sleep(&[TAGS[0]]).unwrap();
                if exists[0] && !asleep[0] {
                    offloaded = live.iter().filter(|l| l.tag == 0).map(|l| l.block.byte_len()).sum();
                }
                if exists[1] && !asleep[1] {
                    live.iter_mut().filter(|l| l.tag == 1).for_each(|l| l.byte = None);
                }
                asleep = exists;
            }
            Step::Wake(which) => {
                if which == 2 {
                    pool.wake().unwrap();
                } else {
                    pool.wake_tags(&[TAGS[which]]).unwrap();
                }
                for (tag, sleeping) in asleep.iter_mut().enumerate() {
                    if which != 2 && which != tag {
                        continue;
                    }
                    *sleeping = false;
                    if tag == 0 {
                        offloaded = 0;
                    }
                    // A discarded block is usable again: fill it anew.
                    for entry in live.iter_mut().filter(|l| l.tag == tag && l.byte.is_none()) {
                        let byte = byte();
                        entry.block.fill_bytes(byte, &streams[usize::from(byte) % 2]).unwrap();
                        entry.byte = Some(byte);
                    }
                }
            }
        }
        for (tag, name) in TAGS.iter().enumerate() {
            assert_eq!(pool.is_asleep(name), asleep[tag], "tag {name}");
        }
        // No overlap.
        let mut ranges: Vec<(usize, usize)> = live
            .iter()
            .map(|l| (l.block.device_ptr() as usize, l.block.byte_len()))
            .collect();
        ranges.sort_unstable();
        for pair in ranges.windows(2) {
            assert!(pair[0].0 + pair[0].1 <= pair[1].0, "overlapping blocks {pair:?}");
        }
        // The statistics are the model's.
        let stats = pool.stats();
        assert_eq!(stats.allocated, live.iter().map(|l| l.block.byte_len()).sum::<usize>());
        assert_eq!(stats.allocated_peak, allocated_peak);
        assert!(stats.active_peak >= stats.active);
        assert_eq!(stats.offloaded, offloaded);
        let snapshot = pool.snapshot();
        let mapped: usize = snapshot.segments.iter().map(|segment| segment.mapped).sum();
        assert_eq!(stats.reserved, mapped);
        let asleep_mapped: usize = snapshot.segments.iter().filter(|s| s.asleep).map(|s| s.mapped).sum();
        assert_eq!(asleep_mapped, 0, "a sleeping tag maps nothing");
        if asleep == [false; 2] {
            assert!(stats.active >= stats.allocated && stats.reserved >= stats.active);
        }
    }
    pool.wake().unwrap();
    for entry in live.iter_mut().filter(|l| l.byte.is_none()) {
        let byte = byte();
        entry.block.fill_bytes(byte, &streams[0]).unwrap();
        entry.byte = Some(byte);
    }
    // Every block kept its byte (read on the other stream than it was
    // filled on, for half of them: ordered by the block's tracks).
    for (index, entry) in live.iter().enumerate() {
        let bytes = common::pool::read_block(&device, &entry.block, &streams[index % 2]);
        let byte = entry.byte.expect("every block awake has a byte");
        assert!(bytes.iter().all(|&b| b == byte), "block {index} lost its bytes");
    }
    drop(live);
    drop(pool);
    drop(streams);
    software_only(|| assert_eq!(soft::live_since(since), [], "the pool left runtime objects"));
}

/// One thread's steps in the two-thread run.
#[derive(Debug, Clone)]
enum ThreadStep {
    /// Allocate this many bytes, fill on the thread's stream.
    Alloc(usize),
    /// Free the shared live block at this index (either thread's).
    Free(usize),
    /// Copy the shared live block at this index into a new block on this
    /// thread's stream (a cross-stream read of the other thread's block).
    Copy(usize),
    /// Give the cache back.
    EmptyCache,
}

fn thread_steps() -> impl Strategy<Value = Vec<ThreadStep>> {
    let step = prop_oneof![
        4 => (1usize..300_000).prop_map(ThreadStep::Alloc),
        3 => any::<usize>().prop_map(ThreadStep::Free),
        2 => any::<usize>().prop_map(ThreadStep::Copy),
        1 => Just(ThreadStep::EmptyCache),
    ];
    proptest::collection::vec(step, 1..30)
}

/// Asserts that `block` overlaps none of `live`.
fn assert_apart(live: &[Live], block: &Ordered<PoolBlock>) {
    let (start, len) = (block.device_ptr() as usize, block.byte_len());
    for other in live {
        let (other_start, other_len) = (other.block.device_ptr() as usize, other.block.byte_len());
        assert!(
            start + len <= other_start || other_start + other_len <= start,
            "blocks overlap: {start:#x}+{len} and {other_start:#x}+{other_len}"
        );
    }
}

/// Two threads on two streams allocate, free (each other's blocks too),
/// copy each other's blocks and empty the cache on one pool at once.
fn run_two_threads(steps: [Vec<ThreadStep>; 2]) {
    let _serial = serial();
    let device = common::device();
    let granule = common::pool::granule(&device);
    let config = common::pool::pool_config(granule, 16, granule, 64);
    let since = soft::sequence_now();
    let pool = DevicePool::new(&device, config).unwrap();
    let live: std::sync::Mutex<Vec<Live>> = std::sync::Mutex::default();
    let next_byte = std::sync::atomic::AtomicU8::new(1);
    std::thread::scope(|scope| {
        for (thread, steps) in steps.iter().enumerate() {
            let (pool, live, next_byte, device) = (&pool, &live, &next_byte, &device);
            scope.spawn(move || {
                let stream = Arc::new(Stream::new(device).unwrap());
                for step in steps {
                    match *step {
                        ThreadStep::Alloc(bytes) => {
                            let block = pool.alloc(bytes).unwrap();
                            let byte = next_byte.fetch_add(1, std::sync::atomic::Ordering::Relaxed).max(1);
                            block.fill_bytes(byte, &stream).unwrap();
                            let mut live = live.lock().unwrap();
                            assert_apart(&live, &block);
                            live.push(Live {
                                block,
                                tag: thread,
                                byte: Some(byte),
                            });
                        }
                        ThreadStep::Free(index) => {
                            let mut live = live.lock().unwrap();
                            if !live.is_empty() {
                                let index = index % live.len();
                                let freed = live.swap_remove(index);
                                drop(live);
                                drop(freed);
                            }
                        }
                        ThreadStep::Copy(index) => {
                            let mut live = live.lock().unwrap();
                            if live.is_empty() {
                                continue;
                            }
                            let source = &live[index % live.len()];
                            let copy = pool.alloc(source.block.byte_len()).unwrap();
                            copy.copy_from_device(&source.block, &stream).unwrap();
                            let byte = source.byte;
                            assert_apart(&live, &copy);
                            live.push(Live {
                                block: copy,
                                tag: thread,
                                byte,
                            });
                        }
                        ThreadStep::EmptyCache => pool.empty_cache().unwrap(),
                    }
                }
            });
        }
    });
    let live = live.into_inner().unwrap();
    let stats = pool.stats();
    assert_eq!(stats.allocated, live.iter().map(|l| l.block.byte_len()).sum::<usize>());
    let mapped: usize = pool.snapshot().segments.iter().map(|segment| segment.mapped).sum();
    assert_eq!(stats.reserved, mapped);
    let stream = Arc::new(Stream::new(&device).unwrap());
    for (index, entry) in live.iter().enumerate() {
        let byte = entry.byte.expect("filled");
        assert!(
            common::pool::read_block(&device, &entry.block, &stream)
                .iter()
                .all(|&b| b == byte),
            "block {index} (thread {}) lost its bytes",
            entry.tag
        );
    }
    drop(live);
    drop(pool);
    drop(stream);
    software_only(|| assert_eq!(soft::live_since(since), [], "the pool left runtime objects"));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(
        16 * std::env::var("ASCEND_TEST_SCALE").ok().and_then(|s| s.parse().ok()).unwrap_or(1)
    ))]
    #[test]
    fn the_pool_follows_the_model(steps in steps()) {
        run(&steps);
    }

    #[test]
    fn two_threads_share_the_pool(first in thread_steps(), second in thread_steps()) {
        run_two_threads([first, second]);
    }
}

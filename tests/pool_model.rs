//! The device pool against a reference model: random sequences of
//! allocations and frees in two tags, `record_stream` (then a raw write on
//! that stream), `empty_cache`, sleep (one tag offloaded, the other
//! discarded) and wake (one tag or all), on two streams. After every step:
//! no two live blocks overlap, allocations from a sleeping tag are refused,
//! and the statistics equal the model's (allocated bytes and their peak,
//! offloaded bytes, the counts of allocations and frees); at the end every
//! block still holds the byte it was last written with (on its stream, so
//! the pool's ordering is exercised; offloaded blocks across their sleeps),
//! and nothing is left on the device (software device). A second property
//! runs two threads on two streams against one pool: they allocate, free
//! each other's blocks, copy each other's blocks, `record_stream` and
//! write them, empty the cache, and sleep and wake the pool at once (a
//! sleep with its wake excludes only the threads' *uses* of blocks, as a
//! framework pauses its compute: allocations are refused meanwhile, frees
//! and `empty_cache` go on); no two live blocks ever overlap, the
//! statistics equal the counts, and every block holds its bytes at the
//! end.

mod common;

use ascend::pool::{DevicePool, PoolBlock};
use ascend::stream::{Ordered, Stream};
use ascend::sys;
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
    /// `record_stream` the live block at this index (modulo the count) on
    /// stream 0 or 1, then write it there by a raw call.
    RecordStream(usize, usize),
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
        2 => (any::<usize>(), 0usize..2).prop_map(|(index, stream)| Step::RecordStream(index, stream)),
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

/// Notes `stream` as a writer of `block` (`record_stream`), then sets
/// every byte of it to `byte` there by a raw `aclrtMemsetAsync`, as an
/// operator library's kernel would write it.
fn write_raw(block: &Ordered<PoolBlock>, stream: &Arc<Stream>, byte: u8) {
    block.record_stream(stream).unwrap();
    let len = block.byte_len();
    // SAFETY: the block is live and mapped for `len` bytes, and its tracks
    // now hold `stream`, so its later uses and its free wait for this
    // write.
    let code = unsafe {
        sys::aclrtMemsetAsync(
            block.device_ptr().cast_mut(),
            len,
            i32::from(byte),
            len,
            stream.as_raw(),
        )
    };
    assert_eq!(code, sys::ACL_SUCCESS);
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
    // Blocks handed out and given back.
    let (mut allocations, mut frees) = (0u64, 0u64);
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
                allocations += 1;
                assert!(block.byte_len() == bytes && block.capacity() >= bytes && block.capacity().is_multiple_of(512));
                let byte = byte();
                block.fill_bytes(byte, &streams[stream]).unwrap();
                live.push(Live {
                    block,
                    tag,
                    byte: Some(byte),
                });
                allocated_peak = allocated_peak.max(live.iter().map(|l| l.block.capacity()).sum());
            }
            Step::Free(index) if !live.is_empty() => {
                let index = index % live.len();
                drop(live.swap_remove(index));
                frees += 1;
            }
            Step::Free(_) => {}
            Step::RecordStream(index, stream) if !live.is_empty() => {
                let index = index % live.len();
                // Using a block of a sleeping tag is outside the contract.
                if !asleep[live[index].tag] {
                    let byte = byte();
                    write_raw(&live[index].block, &streams[stream], byte);
                    live[index].byte = Some(byte);
                }
            }
            Step::RecordStream(..) => {}
            Step::EmptyCache => pool.empty_cache().unwrap(),
            Step::Sleep => {
                pool.sleep(&[TAGS[0]]).unwrap();
                if exists[0] && !asleep[0] {
                    offloaded = live.iter().filter(|l| l.tag == 0).map(|l| l.block.capacity()).sum();
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
            .map(|l| (l.block.device_ptr() as usize, l.block.capacity()))
            .collect();
        ranges.sort_unstable();
        for pair in ranges.windows(2) {
            assert!(pair[0].0 + pair[0].1 <= pair[1].0, "overlapping blocks {pair:?}");
        }
        // The statistics are the model's.
        let stats = pool.stats();
        assert_eq!(stats.allocated, live.iter().map(|l| l.block.capacity()).sum::<usize>());
        assert_eq!(stats.allocated_peak, allocated_peak);
        assert!(stats.active_peak >= stats.active);
        assert_eq!(stats.offloaded, offloaded);
        assert_eq!((stats.allocations, stats.frees), (allocations, frees));
        assert!(stats.reserved_peak >= stats.reserved);
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
    /// `record_stream` the shared live block at this index on this
    /// thread's stream, then write it there by a raw call.
    RecordStream(usize),
    /// Give the cache back.
    EmptyCache,
    /// Sleep (offloading the default tag), then wake.
    SleepWake,
}

fn thread_steps() -> impl Strategy<Value = Vec<ThreadStep>> {
    let step = prop_oneof![
        4 => (1usize..300_000).prop_map(ThreadStep::Alloc),
        3 => any::<usize>().prop_map(ThreadStep::Free),
        2 => any::<usize>().prop_map(ThreadStep::Copy),
        2 => any::<usize>().prop_map(ThreadStep::RecordStream),
        1 => Just(ThreadStep::EmptyCache),
        1 => Just(ThreadStep::SleepWake),
    ];
    proptest::collection::vec(step, 1..30)
}

/// Asserts that `block` overlaps none of `live`.
fn assert_apart(live: &[Live], block: &Ordered<PoolBlock>) {
    let (start, len) = (block.device_ptr() as usize, block.capacity());
    for other in live {
        let (other_start, other_len) = (other.block.device_ptr() as usize, other.block.capacity());
        assert!(
            start + len <= other_start || other_start + other_len <= start,
            "blocks overlap: {start:#x}+{len} and {other_start:#x}+{other_len}"
        );
    }
}

/// What the two threads counted: blocks handed out and given back, and
/// sleeps.
#[derive(Default)]
struct Counts {
    allocations: std::sync::atomic::AtomicU64,
    frees: std::sync::atomic::AtomicU64,
    sleeps: std::sync::atomic::AtomicU64,
}

impl Counts {
    fn add(counter: &std::sync::atomic::AtomicU64) {
        counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }

    fn get(counter: &std::sync::atomic::AtomicU64) -> u64 {
        counter.load(std::sync::atomic::Ordering::Relaxed)
    }
}

/// The blocks both threads see, and what they may do with them at once.
struct Shared<'a> {
    pool: &'a DevicePool,
    device: &'a ascend::Device,
    live: std::sync::Mutex<Vec<Live>>,
    /// Taken to use blocks (shared) and to sleep and wake the pool
    /// (exclusive): a sleep excludes uses of blocks only.
    uses: std::sync::RwLock<()>,
    next_byte: std::sync::atomic::AtomicU8,
    counts: Counts,
}

impl Shared<'_> {
    fn byte(&self) -> u8 {
        self.next_byte.fetch_add(1, std::sync::atomic::Ordering::Relaxed).max(1)
    }

    fn live(&self) -> std::sync::MutexGuard<'_, Vec<Live>> {
        self.live.lock().unwrap()
    }

    fn using(&self) -> std::sync::RwLockReadGuard<'_, ()> {
        self.uses.read().unwrap()
    }

    /// One step of thread `thread`, whose stream is `stream`.
    fn step(&self, step: &ThreadStep, thread: usize, stream: &Arc<Stream>) {
        match *step {
            ThreadStep::Alloc(bytes) => {
                // Not excluded by a sleep: refused while the pool sleeps.
                let block = match self.pool.alloc(bytes) {
                    Ok(block) => block,
                    Err(ascend::Error::PoolAsleep { .. }) => return,
                    Err(other) => panic!("unexpected: {other}"),
                };
                Counts::add(&self.counts.allocations);
                let _using = self.using();
                let byte = self.byte();
                block.fill_bytes(byte, stream).unwrap();
                let mut live = self.live();
                assert_apart(&live, &block);
                live.push(Live {
                    block,
                    tag: thread,
                    byte: Some(byte),
                });
            }
            ThreadStep::Free(index) => {
                let mut live = self.live();
                if !live.is_empty() {
                    let index = index % live.len();
                    let freed = live.swap_remove(index);
                    drop(live);
                    drop(freed);
                    Counts::add(&self.counts.frees);
                }
            }
            ThreadStep::Copy(index) => {
                let _using = self.using();
                let mut live = self.live();
                if live.is_empty() {
                    return;
                }
                let source = &live[index % live.len()];
                let copy = self.pool.alloc(source.block.byte_len()).unwrap();
                Counts::add(&self.counts.allocations);
                copy.copy_from_device(&source.block, stream).unwrap();
                let byte = source.byte;
                assert_apart(&live, &copy);
                live.push(Live {
                    block: copy,
                    tag: thread,
                    byte,
                });
            }
            ThreadStep::RecordStream(index) => {
                let _using = self.using();
                let mut live = self.live();
                if live.is_empty() {
                    return;
                }
                let index = index % live.len();
                let byte = self.byte();
                write_raw(&live[index].block, stream, byte);
                live[index].byte = Some(byte);
            }
            ThreadStep::EmptyCache => self.pool.empty_cache().unwrap(),
            ThreadStep::SleepWake => {
                let _no_uses = self.uses.write().unwrap();
                self.pool.sleep(&[DevicePool::DEFAULT_TAG]).unwrap();
                Counts::add(&self.counts.sleeps);
                self.pool.wake().unwrap();
            }
        }
    }
}

/// Two threads on two streams allocate, free (each other's blocks too),
/// copy and write each other's blocks, empty the cache, and sleep and wake
/// one pool at once.
fn run_two_threads(steps: [Vec<ThreadStep>; 2]) {
    let _serial = serial();
    let device = common::device();
    let granule = common::pool::granule(&device);
    let config = common::pool::pool_config(granule, 16, granule, 64);
    let since = soft::sequence_now();
    let pool = DevicePool::new(&device, config).unwrap();
    let shared = Shared {
        pool: &pool,
        device: &device,
        live: std::sync::Mutex::default(),
        uses: std::sync::RwLock::default(),
        next_byte: std::sync::atomic::AtomicU8::new(1),
        counts: Counts::default(),
    };
    std::thread::scope(|scope| {
        for (thread, steps) in steps.iter().enumerate() {
            let shared = &shared;
            scope.spawn(move || {
                let stream = Arc::new(Stream::new(shared.device).unwrap());
                for step in steps {
                    shared.step(step, thread, &stream);
                }
            });
        }
    });
    let live = shared.live.into_inner().unwrap();
    let stats = pool.stats();
    assert_eq!(stats.allocated, live.iter().map(|l| l.block.capacity()).sum::<usize>());
    let counts = &shared.counts;
    assert_eq!(
        (stats.allocations, stats.frees),
        (Counts::get(&counts.allocations), Counts::get(&counts.frees))
    );
    assert_eq!(
        (stats.sleeps, stats.wakes),
        (Counts::get(&counts.sleeps), Counts::get(&counts.sleeps))
    );
    assert!(!pool.is_asleep(DevicePool::DEFAULT_TAG));
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

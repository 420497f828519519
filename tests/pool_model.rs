//! The device pool against a reference model: random sequences of
//! allocations, frees and `empty_cache` on two streams. After every step:
//! no two live blocks overlap, every block still holds the byte it was
//! filled with (on its stream, so the pool's ordering is exercised), and
//! the statistics equal the model's; at the end nothing is left on the
//! device (software device).

mod common;

use ascend::pool::{DevicePool, PoolBlock, PoolConfig};
use ascend::stream::{Ordered, Stream};
use ascend::sys::soft;
use ascend::{Device, PinnedHostBuf};
use common::software_only;
use proptest::prelude::*;
use std::sync::Arc;

#[derive(Debug, Clone)]
enum Step {
    /// Allocate this many bytes, fill on stream 0 or 1.
    Alloc(usize, usize),
    /// Free the live block at this index (modulo the count).
    Free(usize),
    /// Give the cache back.
    EmptyCache,
}

fn steps() -> impl Strategy<Value = Vec<Step>> {
    let step = prop_oneof![
        4 => (1usize..300_000, 0usize..2).prop_map(|(bytes, stream)| Step::Alloc(bytes, stream)),
        3 => any::<usize>().prop_map(Step::Free),
        1 => Just(Step::EmptyCache),
    ];
    proptest::collection::vec(step, 1..40)
}

struct Live {
    block: Ordered<PoolBlock>,
    byte: u8,
}

fn read(device: &Device, block: &Ordered<PoolBlock>, stream: &Arc<Stream>) -> Vec<u8> {
    let mut out = Ordered::new(PinnedHostBuf::<u8>::zeroed(device, block.byte_len()).unwrap());
    out.copy_from_device(block, stream).unwrap();
    out.get_mut().unwrap().to_vec()
}

fn run(steps: &[Step]) {
    let device = common::device();
    let granule = ascend::vmm::PhysicalMemProp::device(&device).round_up(1).unwrap();
    let mut config = PoolConfig::default();
    config.small_limit = 64 << 10;
    config.small_chunk = granule;
    config.small_reserve = 8 * granule;
    config.large_chunk = granule;
    config.large_reserve = 32 * granule;
    let since = soft::sequence_now();
    let streams = [
        Arc::new(Stream::new(&device).unwrap()),
        Arc::new(Stream::new(&device).unwrap()),
    ];
    let pool = DevicePool::new(&device, config).unwrap();
    let mut live: Vec<Live> = Vec::new();
    let mut next_byte = 1u8;
    for step in steps {
        match *step {
            Step::Alloc(bytes, stream) => {
                let block = pool.alloc(bytes).unwrap();
                assert!(block.byte_len() >= bytes && block.byte_len().is_multiple_of(512));
                block.fill_bytes(next_byte, &streams[stream]).unwrap();
                live.push(Live { block, byte: next_byte });
                next_byte = next_byte.wrapping_add(1).max(1);
            }
            Step::Free(index) if !live.is_empty() => {
                let index = index % live.len();
                drop(live.swap_remove(index));
            }
            Step::Free(_) => {}
            Step::EmptyCache => pool.empty_cache().unwrap(),
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
        let mapped: usize = pool.snapshot().segments.iter().map(|segment| segment.mapped).sum();
        assert_eq!(stats.reserved, mapped);
        assert!(stats.active >= stats.allocated && stats.reserved >= stats.active);
    }
    // Every block kept its byte (read on the other stream than it was
    // filled on, for half of them: ordered by the block's tracks).
    for (index, entry) in live.iter().enumerate() {
        let bytes = read(&device, &entry.block, &streams[index % 2]);
        assert!(bytes.iter().all(|&b| b == entry.byte), "block {index} lost its bytes");
    }
    drop(live);
    drop(pool);
    drop(streams);
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
}

//! Helpers of the pool tests: a small configuration and reading a block.

use ascend::pool::{PoolBlock, PoolConfig};
use ascend::stream::{Ordered, Stream};
use ascend::{Device, PinnedHostBuf};
use std::sync::{Arc, Mutex, MutexGuard};

/// One test of a file at a time: live lists are process-wide.
static SERIAL: Mutex<()> = Mutex::new(());

/// This test's turn, device 0 and its granularity.
pub fn start() -> (MutexGuard<'static, ()>, Device, usize) {
    let guard = SERIAL.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let device = super::device();
    let granule = granule(&device);
    (guard, device, granule)
}

/// The VMM granularity of `device`: the smallest chunk a pool can use.
pub fn granule(device: &Device) -> usize {
    ascend::vmm::PhysicalMemProp::device(device)
        .round_up(1)
        .expect("granularity")
}

/// A pool small enough to fill in a test: requests up to 64 KiB are small;
/// the small pool has `small_chunks` chunks of one granule, the large pool
/// `large_chunks` chunks of `large_chunk` bytes.
pub fn pool_config(granule: usize, small_chunks: usize, large_chunk: usize, large_chunks: usize) -> PoolConfig {
    let mut config = PoolConfig::default();
    config.small_limit = 64 << 10;
    config.small_chunk = granule;
    config.small_reserve = small_chunks * granule;
    config.large_chunk = large_chunk;
    config.large_reserve = large_chunks * large_chunk;
    config
}

/// The contents of `block`, copied on `stream` into a pinned buffer whose
/// host access waits for the copy (and so for the block's earlier uses).
pub fn read_block(device: &Device, block: &Ordered<PoolBlock>, stream: &Arc<Stream>) -> Vec<u8> {
    let mut host = Ordered::new(PinnedHostBuf::<u8>::zeroed(device, block.byte_len()).expect("pinned buffer"));
    host.copy_from_device(block, stream).expect("copy");
    host.get_mut().expect("the copy finished").to_vec()
}

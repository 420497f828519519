//! The safe layer under the stream-hazard sanitizer: its stream-ordered
//! owners and pools order their work so that the sanitizer has nothing to
//! report, including memory a pool hands from one stream to another.
//! Software device only (the sanitizer is part of it).

mod common;

use ascend::pool::{DevicePool, PinnedPool, PoolConfig};
use ascend::stream::{Ordered, Stream};
use ascend::testing::{SanitizerChecks, on_software_device_sanitized, sanitizer_summary};
use ascend::{Device, PinnedHostBuf};
use std::sync::Arc;

fn stream(device: &Device) -> Arc<Stream> {
    Arc::new(Stream::new(device).expect("stream"))
}

/// Reads a block back through a pinned buffer on `stream`.
fn read(device: &Device, block: &Ordered<ascend::pool::PoolBlock>, stream: &Arc<Stream>) -> Vec<u8> {
    let mut host = Ordered::new(PinnedHostBuf::<u8>::zeroed(device, block.byte_len()).expect("pinned"));
    host.copy_from_device(block, stream).expect("copy");
    host.get_mut().expect("the copy finished").to_vec()
}

#[test]
fn a_pool_block_handed_from_one_stream_to_another_is_ordered() {
    if !common::on_software() {
        return;
    }
    let device = Device::new(0).expect("device");
    on_software_device_sanitized(SanitizerChecks::all(), || {
        let pool = DevicePool::new(&device, PoolConfig::default()).expect("pool");
        let (a, b) = (stream(&device), stream(&device));
        let before = sanitizer_summary();
        for round in 0..4u8 {
            let block = pool.alloc(4096).expect("block");
            let address = block.device_ptr();
            // Written on `a`, freed with the memset still queued.
            block.fill_bytes(round, &a).expect("fill on a");
            drop(block);
            // The same memory, reused on `b`: the pool orders it after `a`.
            let again = pool.alloc(4096).expect("block again");
            assert_eq!(again.device_ptr(), address, "the pool reuses the block");
            again.fill_bytes(round + 10, &b).expect("fill on b");
            assert!(read(&device, &again, &b).iter().all(|&byte| byte == round + 10));
        }
        a.synchronize().expect("a");
        b.synchronize().expect("b");
        assert_eq!(sanitizer_summary(), before, "no hazard reported");
    });
}

#[test]
fn a_pinned_pool_buffer_reused_across_streams_is_ordered() {
    if !common::on_software() {
        return;
    }
    let device = Device::new(0).expect("device");
    on_software_device_sanitized(SanitizerChecks::all(), || {
        let pool = PinnedPool::new(&device);
        let device_pool = DevicePool::new(&device, PoolConfig::default()).expect("pool");
        let (a, b) = (stream(&device), stream(&device));
        let source = device_pool.alloc(4096).expect("block");
        source.fill_bytes(3, &a).expect("fill");
        for stream in [&a, &b, &a, &b] {
            let mut staging = pool.alloc(4096).expect("staging");
            staging.copy_from_device(&source, stream).expect("download");
            assert!(staging.get_mut().expect("finished").iter().all(|&byte| byte == 3));
        }
    });
}

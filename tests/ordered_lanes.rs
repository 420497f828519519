//! Large `Ordered` owners, whose uses are tracked in lanes of one MiB
//! (`OrderedView`'s docs): uses whose bytes cross lane boundaries are
//! ordered in every lane they touch, and uses in different lanes never
//! wait for each other.
//!
//! As in `ordered_views.rs`, one stream is held back behind a gate
//! (`common::gate`): only the waits the crate inserts keep a conflicting
//! use after the held-back one. The tests run one at a time.

mod common;

use ascend::pool::{DevicePool, PoolConfig};
use ascend::stream::Ordered;
use ascend::{Device, DeviceBuf, PinnedHostBuf};
use common::gate::{GATE_DELAY, gated};
use std::sync::Arc;
use std::time::Instant;

/// Elements of `u32` in one MiB, a lane of the storages here.
const LANE: usize = (1 << 20) / 4;
/// Four lanes.
const LEN: usize = 4 * LANE;

use common::{serial_device as start, shared_stream as stream};

fn pattern(seed: u32, len: usize) -> Vec<u32> {
    (0..len as u32).map(|index| index.wrapping_mul(7) ^ seed).collect()
}

fn pinned(device: &Device, data: &[u32]) -> Ordered<PinnedHostBuf<u32>> {
    Ordered::new(PinnedHostBuf::from_slice(device, data).expect("a pinned buffer"))
}

fn storage(device: &Device) -> Ordered<DeviceBuf<u32>> {
    Ordered::new(DeviceBuf::<u32>::zeroed(device, LEN).expect("a 4 MiB buffer"))
}

fn host(out: &Ordered<PinnedHostBuf<u32>>) -> Vec<u32> {
    out.view().with_host(|values| values.to_vec()).unwrap()
}

#[test]
fn a_write_across_lanes_orders_later_uses_of_each_of_its_parts() {
    let (_serial, device) = start();
    let (held, other) = (stream(&device), stream(&device));
    // Elements LANE - 16 .. 2 * LANE + 16: the end of lane 0, all of
    // lane 1, the start of lane 2.
    let (from, to) = (LANE - 16, 2 * LANE + 16);
    let data = pattern(0x5a00_0000, to - from);
    let page = pinned(&device, &data);
    let storage = storage(&device);
    let outs: Vec<_> = (0..3)
        .map(|_| Ordered::new(PinnedHostBuf::<u32>::zeroed(&device, 16).unwrap()))
        .collect();
    let parts = [from..LANE, LANE + 100..LANE + 116, 2 * LANE..to];
    gated(&device, &held, || {
        storage
            .elements::<u32>(from..to)
            .unwrap()
            .copy_from_host(&page, &held)
            .unwrap();
        for (out, part) in outs.iter().zip(&parts) {
            out.copy_from_device(storage.elements::<u32>(part.clone()).unwrap(), &other)
                .unwrap();
        }
    });
    for (out, part) in outs.iter().zip(parts) {
        assert_eq!(
            host(out),
            &data[part.start - from..part.end - from],
            "elements {part:?}"
        );
    }
}

#[test]
fn uses_in_different_lanes_do_not_wait_for_each_other() {
    let (_serial, device) = start();
    let (held, free) = (stream(&device), stream(&device));
    let storage = storage(&device);
    let (low, high) = (pattern(1, LANE), pattern(2, 16));
    let (low_page, high_page) = (pinned(&device, &low), pinned(&device, &high));
    let waited = gated(&device, &held, || {
        storage
            .elements::<u32>(..LANE)
            .unwrap()
            .copy_from_host(&low_page, &held)
            .unwrap();
        let queued = Instant::now();
        storage
            .elements::<u32>(3 * LANE..3 * LANE + 16)
            .unwrap()
            .copy_from_host(&high_page, &free)
            .unwrap();
        free.synchronize().unwrap();
        let mut lane_two = [9u32; 4];
        storage
            .elements::<u32>(2 * LANE..2 * LANE + 4)
            .unwrap()
            .read_to_host(&mut lane_two)
            .unwrap();
        assert_eq!(lane_two, [0; 4]);
        queued.elapsed()
    });
    assert!(
        waited < GATE_DELAY / 2,
        "uses of other lanes waited {waited:?} for the held-back one"
    );
    let all = storage.view().to_vec::<u32>().unwrap();
    assert_eq!(&all[..LANE], &low[..]);
    assert_eq!(&all[3 * LANE..3 * LANE + 16], &high[..]);
}

#[test]
fn host_access_across_lanes_waits_for_the_queued_work_in_each() {
    let (_serial, device) = start();
    let held = stream(&device);
    let storage = Arc::new(storage(&device));
    gated(&device, &held, || {
        // Held back: the end of lane 1 and the start of lane 2.
        storage
            .elements::<u32>(2 * LANE - 8..2 * LANE + 8)
            .unwrap()
            .fill_bytes(0xCD, &held)
            .unwrap();
        assert!(storage.is_busy());
        // From lane 0 to lane 2: waits for the fill.
        let read = storage
            .elements::<u32>(LANE - 4..2 * LANE + 4)
            .unwrap()
            .to_vec::<u32>()
            .unwrap();
        assert_eq!(&read[..4], [0; 4]);
        assert_eq!(&read[read.len() - 12..], [0xCDCD_CDCD; 12]);
    });
    gated(&device, &held, || {
        storage
            .elements::<u32>(3 * LANE..)
            .unwrap()
            .fill_bytes(1, &held)
            .unwrap();
        storage.wait().unwrap();
        assert!(!storage.is_busy(), "wait proves the work of every lane finished");
    });
    let last = storage.elements::<u32>(LEN - 2..).unwrap().to_vec::<u32>().unwrap();
    assert_eq!(last, [0x0101_0101; 2]);
}

#[test]
fn a_host_write_across_lanes_holds_back_a_use_of_its_part_in_either_lane() {
    let (_serial, device) = start();
    const HOLD: std::time::Duration = GATE_DELAY;
    let staging = Arc::new(Ordered::new(PinnedHostBuf::<u32>::zeroed(&device, LEN).unwrap()));
    let started = std::sync::Barrier::new(2);
    std::thread::scope(|threads| {
        let (writer, started) = (Arc::clone(&staging), &started);
        threads.spawn(move || {
            // The end of lane 1 and the start of lane 2.
            writer
                .slice(2 * LANE - 8..2 * LANE + 8)
                .unwrap()
                .with_host_mut(|values| {
                    started.wait();
                    std::thread::sleep(HOLD);
                    values.fill(7);
                })
                .unwrap();
        });
        started.wait();
        // Lane 3: not held back.
        let at = Instant::now();
        staging
            .slice(3 * LANE..3 * LANE + 4)
            .unwrap()
            .with_host(|_| ())
            .unwrap();
        assert!(
            at.elapsed() < HOLD / 2,
            "a read of another lane waited {:?}",
            at.elapsed()
        );
        // The write's part in lane 2 only: waits for the whole write.
        let read = staging
            .slice(2 * LANE..2 * LANE + 4)
            .unwrap()
            .with_host(|values| values.to_vec())
            .unwrap();
        assert_eq!(read, [7; 4], "the read came after the host write");
    });
}

#[test]
fn a_copy_between_lanes_of_one_owner_is_ordered_after_a_write_of_its_source() {
    let (_serial, device) = start();
    let (held, other) = (stream(&device), stream(&device));
    let data = pattern(3, 64);
    let page = pinned(&device, &data);
    let storage = storage(&device);
    gated(&device, &held, || {
        storage
            .elements::<u32>(LANE - 32..LANE + 32)
            .unwrap()
            .copy_from_host(&page, &held)
            .unwrap();
        storage
            .elements::<u32>(3 * LANE..3 * LANE + 64)
            .unwrap()
            .copy_from_device(storage.elements::<u32>(LANE - 32..LANE + 32).unwrap(), &other)
            .unwrap();
    });
    let storage = storage.into_inner().unwrap();
    let all = storage.to_vec().unwrap();
    assert_eq!(&all[3 * LANE..3 * LANE + 64], &data[..]);
}

#[test]
fn into_inner_waits_for_the_work_of_every_lane() {
    let (_serial, device) = start();
    let (first, second) = (stream(&device), stream(&device));
    let storage = storage(&device);
    let taken = gated(&device, &first, || {
        // Held back: the last lane.
        storage
            .elements::<u32>(LEN - 16..)
            .unwrap()
            .fill_bytes(2, &first)
            .unwrap();
        storage.elements::<u32>(..16).unwrap().fill_bytes(1, &second).unwrap();
        let at = Instant::now();
        let taken = storage.into_inner().unwrap();
        assert!(
            at.elapsed() > GATE_DELAY / 4,
            "into_inner did not wait for the held-back fill"
        );
        taken
    });
    let all = taken.to_vec().unwrap();
    assert_eq!(&all[..16], [0x0101_0101; 16]);
    assert_eq!(&all[LEN - 16..], [0x0202_0202; 16]);
}

#[test]
fn a_large_pool_block_given_back_busy_orders_its_next_user_in_every_lane() {
    let (_serial, device) = start();
    let (held, other) = (stream(&device), stream(&device));
    let pool = DevicePool::new(&device, PoolConfig::default()).unwrap();
    let bytes = LEN * 4;
    let block = pool.alloc(bytes).unwrap();
    let address = block.device_ptr();
    let data = pattern(4, 64);
    let page = pinned(&device, &data);
    let out = Ordered::new(PinnedHostBuf::<u32>::zeroed(&device, 64).unwrap());
    gated(&device, &held, || {
        // The last lane of the block, written held back.
        block
            .elements::<u32>(LEN - 64..)
            .unwrap()
            .copy_from_host(&page, &held)
            .unwrap();
        drop(block);
        let again = pool.alloc(bytes).unwrap();
        assert_eq!(again.device_ptr(), address, "the cached block is reused");
        out.copy_from_device(again.elements::<u32>(LEN - 64..).unwrap(), &other)
            .unwrap();
    });
    assert_eq!(host(&out), data);
}

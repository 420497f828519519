//! Views of `Ordered` owners: sub-range copies and memsets on any stream,
//! ordered per range, with host access through a shared `Arc`.
//!
//! The order tests hold one stream back behind a gate (`common::gate`)
//! and queue the other use on another stream: overlapping uses must come
//! out in order (only the inserted waits do that), disjoint ones must not
//! wait for the gate. The misuse lists are software-device only and
//! process-wide, so the tests of this file run one at a time.

mod common;

use ascend::pool::{DevicePool, PoolConfig};
use ascend::stream::{Copy2d, Ordered, OwnedView};
use ascend::sys::{self, soft};
use ascend::{Device, DeviceBuf, Error, PinnedHostBuf};
use common::gate::{GATE_DELAY, gated};
use common::on_software;
use std::ops::Bound;
use std::sync::Arc;
use std::time::Instant;

/// Elements of the storages here.
const LEN: usize = 1 << 14;
const HALF: usize = LEN / 2;

use common::{serial_device as start, shared_stream as stream};

fn pattern(seed: u32, len: usize) -> Vec<u32> {
    (0..len as u32).map(|index| index ^ seed).collect()
}

fn staging(device: &Device, data: &[u32]) -> Ordered<PinnedHostBuf<u32>> {
    Ordered::new(PinnedHostBuf::from_slice(device, data).expect("a pinned buffer"))
}

/// A misuse watch on the software device (memory released under queued
/// work is reported there); `None` on hardware.
fn watch() -> Option<soft::MisuseWatch> {
    on_software().then(soft::MisuseWatch::start)
}

fn no_misuse(watch: Option<soft::MisuseWatch>) {
    if let Some(watch) = watch {
        assert_eq!(watch.seen(), [], "memory used or released under queued work");
    }
}

#[test]
fn a_view_write_is_ordered_before_an_overlapping_read_elsewhere() {
    let (_serial, device) = start();
    let (writer, reader) = (stream(&device), stream(&device));
    let data = pattern(0x1100_0000, HALF);
    let page = staging(&device, &data);
    let storage = Ordered::new(DeviceBuf::<u32>::zeroed(&device, LEN).unwrap());
    let out = Ordered::new(PinnedHostBuf::<u32>::zeroed(&device, HALF / 2).unwrap());
    gated(&device, &writer, || {
        storage
            .elements::<u32>(HALF..)
            .unwrap()
            .copy_from_host(&page, &writer)
            .unwrap();
        // Overlaps the held-back write's second half: must wait for it.
        out.copy_from_device(storage.elements::<u32>(HALF + HALF / 2..).unwrap(), &reader)
            .unwrap();
    });
    assert_eq!(
        out.view().with_host(|values| values.to_vec()).unwrap(),
        &data[HALF / 2..]
    );
}

#[test]
fn disjoint_views_on_two_streams_do_not_wait_for_each_other() {
    let (_serial, device) = start();
    let (held, free) = (stream(&device), stream(&device));
    let storage = Ordered::new(DeviceBuf::<u32>::zeroed(&device, LEN).unwrap());
    let (low, high) = (pattern(1, HALF), pattern(2, HALF));
    let (low_page, high_page) = (staging(&device, &low), staging(&device, &high));
    let waited = gated(&device, &held, || {
        storage
            .elements::<u32>(..HALF)
            .unwrap()
            .copy_from_host(&low_page, &held)
            .unwrap();
        let queued = Instant::now();
        storage
            .elements::<u32>(HALF..)
            .unwrap()
            .copy_from_host(&high_page, &free)
            .unwrap();
        free.synchronize().unwrap();
        queued.elapsed()
    });
    assert!(
        waited < GATE_DELAY / 2,
        "a write of other bytes waited {waited:?} for the held-back one"
    );
    assert_eq!(storage.view().to_vec::<u32>().unwrap(), [low, high].concat());
}

#[test]
fn overlapping_views_on_two_streams_are_ordered() {
    let (_serial, device) = start();
    let (held, other) = (stream(&device), stream(&device));
    let storage = Ordered::new(DeviceBuf::<u32>::zeroed(&device, LEN).unwrap());
    let (first, second) = (pattern(3, HALF), pattern(4, HALF));
    let (first_page, second_page) = (staging(&device, &first), staging(&device, &second));
    gated(&device, &held, || {
        storage
            .elements::<u32>(..HALF)
            .unwrap()
            .copy_from_host(&first_page, &held)
            .unwrap();
        // One element of overlap: the second write must land last.
        storage
            .elements::<u32>(HALF - 1..LEN - 1)
            .unwrap()
            .copy_from_host(&second_page, &other)
            .unwrap();
    });
    let all = storage.view().to_vec::<u32>().unwrap();
    assert_eq!(&all[..HALF - 1], &first[..HALF - 1]);
    assert_eq!(&all[HALF - 1..LEN - 1], &second[..]);
}

#[test]
fn a_memset_of_a_view_is_ordered_after_a_read_of_it_elsewhere() {
    let (_serial, device) = start();
    let (held, writer) = (stream(&device), stream(&device));
    let data = pattern(5, LEN);
    let storage = Ordered::new(DeviceBuf::from_slice(&device, &data).unwrap());
    let out = Ordered::new(PinnedHostBuf::<u32>::zeroed(&device, 16).unwrap());
    gated(&device, &held, || {
        out.copy_from_device(storage.elements::<u32>(100..116).unwrap(), &held)
            .unwrap();
        // Clears bytes the held-back read still has to read.
        storage
            .elements::<u32>(..LEN / 2)
            .unwrap()
            .fill_bytes(0, &writer)
            .unwrap();
    });
    assert_eq!(out.view().with_host(|values| values.to_vec()).unwrap(), &data[100..116]);
}

#[test]
fn the_owner_waits_for_its_views_work_and_a_pool_reuses_after_it() {
    let (_serial, device) = start();
    let misuse = watch();
    let (held, other) = (stream(&device), stream(&device));
    let data = pattern(6, 256);
    let page = staging(&device, &data);
    // into_inner waits for the held-back view copy.
    let storage = Ordered::new(DeviceBuf::<u32>::zeroed(&device, 1024).unwrap());
    let taken = gated(&device, &held, || {
        storage
            .elements::<u32>(512..768)
            .unwrap()
            .copy_from_host(&page, &held)
            .unwrap();
        storage.into_inner().unwrap()
    });
    assert_eq!(&taken.to_vec().unwrap()[512..768], &data[..]);
    // A pool block given back with a view's work queued: its next user on
    // another stream is ordered after that work.
    let pool = DevicePool::new(&device, PoolConfig::default()).unwrap();
    let block = pool.alloc(4096).unwrap();
    let address = block.device_ptr();
    let out = Ordered::new(PinnedHostBuf::<u32>::zeroed(&device, 256).unwrap());
    gated(&device, &held, || {
        block
            .elements::<u32>(256..512)
            .unwrap()
            .copy_from_host(&page, &held)
            .unwrap();
        drop(block);
        let again = pool.alloc(4096).unwrap();
        assert_eq!(again.device_ptr(), address, "the cached block is reused");
        out.copy_from_device(again.elements::<u32>(256..512).unwrap(), &other)
            .unwrap();
    });
    assert_eq!(out.view().with_host(|values| values.to_vec()).unwrap(), data);
    no_misuse(misuse);
}

#[test]
fn two_threads_write_disjoint_views_of_one_shared_storage() {
    let (_serial, device) = start();
    let storage = Arc::new(Ordered::new(DeviceBuf::<u32>::zeroed(&device, LEN).unwrap()));
    const ROUNDS: u32 = 50;
    std::thread::scope(|threads| {
        for half in 0..2 {
            let (storage, device) = (Arc::clone(&storage), device.clone());
            threads.spawn(move || {
                let stream = stream(&device);
                let view = OwnedView::whole(storage)
                    .elements::<u32>(half * HALF..(half + 1) * HALF)
                    .unwrap();
                for round in 0..ROUNDS {
                    let page = staging(&device, &pattern((round << 8) | half as u32, HALF));
                    view.view().copy_from_host(&page, &stream).unwrap();
                }
            });
        }
    });
    let last = ROUNDS - 1;
    assert_eq!(
        storage.view().to_vec::<u32>().unwrap(),
        [pattern(last << 8, HALF), pattern((last << 8) | 1, HALF)].concat(),
        "an update was lost"
    );
}

#[test]
fn host_access_through_a_shared_arc_waits_for_conflicting_work() {
    let (_serial, device) = start();
    let held = stream(&device);
    let data = pattern(7, LEN);
    let page = Arc::new(staging(&device, &data));
    let storage = Arc::new(Ordered::new(DeviceBuf::<u32>::zeroed(&device, LEN).unwrap()));
    gated(&device, &held, || {
        storage.copy_from_host(&page, &held).unwrap();
        // The host write of the staging buffer waits for the held-back
        // upload that reads it: the device gets the old values.
        page.view().with_host_mut(|values| values.fill(0)).unwrap();
    });
    assert_eq!(storage.view().to_vec::<u32>().unwrap(), data);
    gated(&device, &held, || {
        storage.elements::<u32>(..4).unwrap().fill_bytes(0xAB, &held).unwrap();
        // A host read of other bytes needs no wait; of these, it waits.
        let mut other = [0u32; 4];
        storage.elements::<u32>(4..8).unwrap().read_to_host(&mut other).unwrap();
        assert_eq!(other, data[4..8]);
        let mut first = [0u32; 4];
        storage.elements::<u32>(..4).unwrap().read_to_host(&mut first).unwrap();
        assert_eq!(first, [0xABAB_ABAB; 4]);
    });
    gated(&device, &held, || {
        storage.fill_bytes(1, &held).unwrap();
        storage.wait().unwrap();
        assert!(!storage.is_busy());
    });
    storage.bytes(..8).unwrap().write_from_host(&[9u32, 9]).unwrap();
    assert_eq!(
        storage.elements::<u32>(..3).unwrap().to_vec::<u32>().unwrap(),
        [9, 9, 0x0101_0101]
    );
}

#[test]
fn two_d_copies_of_views() {
    let (_serial, device) = start();
    let stream = stream(&device);
    // A 4 x 4 image in the middle of a larger pinned buffer.
    let image: Vec<u32> = (0..16).collect();
    let host = staging(&device, &[vec![99; 4], image, vec![99; 4]].concat());
    let storage = Ordered::new(DeviceBuf::<u32>::zeroed(&device, 16).unwrap());
    // Its left two columns, packed, into elements 8..16.
    let columns = Copy2d::new(2, 4).with_src_pitch(4);
    storage
        .elements::<u32>(8..)
        .unwrap()
        .copy_from_host_2d(host.slice(4..20).unwrap(), columns, &stream)
        .unwrap();
    // Device to device: rows of the packed columns, spread 4 apart.
    let spread = Copy2d::new(2, 4).with_dst_pitch(4);
    storage
        .elements::<u32>(..8)
        .unwrap()
        .copy_from_device_2d::<u32, _>(
            storage.elements::<u32>(8..).unwrap(),
            Copy2d::new(2, 2).with_dst_pitch(4),
            &stream,
        )
        .unwrap();
    let out = Ordered::new(PinnedHostBuf::<u32>::zeroed(&device, 16).unwrap());
    out.view()
        .copy_from_device_2d(storage.elements::<u32>(8..).unwrap(), spread, &stream)
        .unwrap();
    let all = storage.view().to_vec::<u32>().unwrap();
    assert_eq!(&all[8..], [0, 1, 4, 5, 8, 9, 12, 13]);
    assert_eq!(&all[..8], [0, 1, 0, 0, 4, 5, 0, 0]);
    assert_eq!(
        out.view().with_host(|values| values.to_vec()).unwrap(),
        [0, 1, 0, 0, 4, 5, 0, 0, 8, 9, 0, 0, 12, 13, 0, 0]
    );
}

#[test]
fn bad_ranges_and_lengths_are_typed_errors() {
    let (_serial, device) = start();
    let stream = stream(&device);
    let storage = Ordered::new(DeviceBuf::<u32>::zeroed(&device, 16).unwrap());
    let host = staging(&device, &[1; 8]);
    let invalid = |result: Result<(), Error>| match result {
        Err(Error::InvalidArgument { reason, .. }) => reason,
        other => panic!("expected an argument error, got {other:?}"),
    };
    assert!(matches!(storage.bytes(..65), Err(Error::InvalidArgument { .. })));
    assert!(matches!(
        storage.elements::<u32>((Bound::Included(3), Bound::Excluded(2))),
        Err(Error::InvalidArgument { .. })
    ));
    assert!(matches!(
        storage.elements::<u64>(0..usize::MAX),
        Err(Error::InvalidArgument { .. })
    ));
    assert!(matches!(host.slice(..=8), Err(Error::InvalidArgument { .. })));
    // Lengths are in bytes, and say so.
    let reason = invalid(storage.copy_from_host(&host, &stream));
    assert!(reason.contains("64 bytes") && reason.contains("32"), "{reason}");
    assert!(!reason.contains("elements"), "{reason}");
    // The explicit form: a view of the longer side.
    storage
        .elements::<u32>(..8)
        .unwrap()
        .copy_from_host(&host, &stream)
        .unwrap();
    // Overlapping views of one owner.
    let reason = invalid(
        storage
            .bytes(4..36)
            .unwrap()
            .copy_from_device(storage.bytes(..32).unwrap(), &stream),
    );
    assert!(reason.contains("overlap"), "{reason}");
    assert_eq!(
        &storage.view().to_vec::<u32>().unwrap()[..9],
        [1, 1, 1, 1, 1, 1, 1, 1, 0]
    );
}

#[test]
fn a_host_write_in_flight_holds_back_conflicting_work_only() {
    let (_serial, device) = start();
    let stream = stream(&device);
    const HOLD: std::time::Duration = GATE_DELAY;
    let data = pattern(8, 64);
    let tensor = Ordered::new(DeviceBuf::from_slice(&device, &data).unwrap());
    let pinned = Arc::new(Ordered::new(PinnedHostBuf::<u32>::zeroed(&device, 128).unwrap()));
    let started = std::sync::Barrier::new(2);
    std::thread::scope(|threads| {
        let (writer, started) = (Arc::clone(&pinned), &started);
        threads.spawn(move || {
            writer
                .slice(..64)
                .unwrap()
                .with_host_mut(|values| {
                    started.wait();
                    std::thread::sleep(HOLD);
                    // Written last: a copy into these elements that did
                    // not wait would land before this and be overwritten.
                    values.fill(1);
                })
                .unwrap();
        });
        started.wait();
        // Other elements: not held back by the host write.
        let queued = Instant::now();
        pinned.slice(64..).unwrap().copy_from_device(&tensor, &stream).unwrap();
        stream.synchronize().unwrap();
        assert!(
            queued.elapsed() < HOLD / 2,
            "a copy of other elements waited {:?}",
            queued.elapsed()
        );
        // The same elements: queued only once the host write is over.
        pinned.slice(..64).unwrap().copy_from_device(&tensor, &stream).unwrap();
    });
    let all = pinned.view().with_host(|values| values.to_vec()).unwrap();
    assert_eq!(&all[..64], &data[..], "the copy came after the host write");
    assert_eq!(&all[64..], &data[..]);
}

/// Software device only: fault injection.
#[test]
fn a_refused_view_copy_queues_nothing_and_leaves_the_range_usable() {
    let (_serial, device) = start();
    if !on_software() {
        return;
    }
    soft::clear_faults();
    let (first, second) = (stream(&device), stream(&device));
    let storage = Ordered::new(DeviceBuf::<u32>::zeroed(&device, 64).unwrap());
    let page = staging(&device, &[5; 16]);
    storage.elements::<u32>(..16).unwrap().fill_bytes(1, &first).unwrap();
    for (api, stream) in [("aclrtStreamWaitEvent", &second), ("aclrtMemcpyAsync", &first)] {
        soft::inject_fault(api, 1, sys::ACL_ERROR_RT_DRV_INTERNAL_ERROR).unwrap();
        let refused = storage.elements::<u32>(8..24).unwrap().copy_from_host(&page, stream);
        assert!(refused.is_err(), "{api} refused");
        soft::clear_faults();
    }
    // Not left in flight: the same bytes take the next copy at once.
    storage
        .elements::<u32>(8..24)
        .unwrap()
        .copy_from_host(&page, &second)
        .unwrap();
    let all = storage.view().to_vec::<u32>().unwrap();
    assert_eq!(&all[..8], [0x0101_0101; 8]);
    assert_eq!(&all[8..24], [5; 16]);
    assert_eq!(&all[24..], [0; 40]);
}

#[test]
fn a_pool_joins_freed_blocks_with_their_views_work_over_the_whole_range() {
    let (_serial, device) = start();
    let (held, other) = (stream(&device), stream(&device));
    let pool = DevicePool::new(&device, PoolConfig::default()).unwrap();
    let first = pool.alloc(4096).unwrap();
    let second = pool.alloc(4096).unwrap();
    let start_at = first.device_ptr() as usize;
    assert_eq!(second.device_ptr() as usize, start_at + 4096, "neighbours");
    let out = Ordered::new(PinnedHostBuf::<u8>::zeroed(&device, 256).unwrap());
    gated(&device, &held, || {
        // The first bytes of the second block, written held back.
        second.bytes(..256).unwrap().fill_bytes(0xAB, &held).unwrap();
        drop((first, second));
        // Both come back joined: the write is now at bytes 4096.. of it.
        let joined = pool.alloc(8192).unwrap();
        assert_eq!(joined.device_ptr() as usize, start_at, "the two blocks joined");
        out.copy_from_device(joined.bytes(4096..4096 + 256).unwrap(), &other)
            .unwrap();
    });
    assert_eq!(out.view().with_host(|bytes| bytes.to_vec()).unwrap(), [0xAB; 256]);
}

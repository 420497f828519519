//! `Ordered` buffers: asynchronous work on any stream, with no scope, kept
//! in order at run time.
//!
//! The order tests hold one stream back behind a gate (a wait for an
//! `ACL_EVENT_SYNC` event that a helper thread records after
//! `GATE_DELAY`) and queue the conflicting use on another stream: only
//! the waits `Ordered` inserts keep the second use after the first. Fault
//! injection and the lists of live objects are software-device only and
//! process-wide, so the tests of this file run one at a time.

mod common;

use ascend::stream::Ordered;
use ascend::sys::{self, soft};
use ascend::vmm::{ExpandableSegment, OwnedMapping, PhysicalAlloc, PhysicalMemProp, SharedSegment, VirtualRange};
use ascend::{DeviceBuf, PinnedHostBuf};
use common::gate::gated;
use common::{on_software, software_only};
use std::sync::Arc;

const LEN: usize = 1 << 14;
const CODE: sys::aclError = sys::ACL_ERROR_RT_DRV_INTERNAL_ERROR;

use common::shared_stream as stream;

fn pattern(seed: u32) -> Vec<u32> {
    (0..LEN as u32).map(|index| index ^ seed).collect()
}

#[test]
fn a_read_on_another_stream_waits_for_the_write() {
    let (_serial, device) = common::serial_device_without_faults();
    let (writer, reader) = (stream(&device), stream(&device));
    let data = pattern(0x1100_0000);
    let staging = Ordered::new(PinnedHostBuf::from_slice(&device, &data).unwrap());
    let tensor = Ordered::new(DeviceBuf::<u32>::zeroed(&device, LEN).unwrap());
    let copy = Ordered::new(DeviceBuf::<u32>::zeroed(&device, LEN).unwrap());
    gated(&device, &writer, || {
        tensor.copy_from_host(&staging, &writer).unwrap();
        // Not held back itself: only the wait for the write orders it.
        copy.copy_from_device(&tensor, &reader).unwrap();
    });
    assert_eq!(copy.into_inner().unwrap().to_vec().unwrap(), data);
}

#[test]
fn a_write_on_another_stream_waits_for_the_reads() {
    let (_serial, device) = common::serial_device_without_faults();
    let (reader, writer) = (stream(&device), stream(&device));
    let data = pattern(0x2200_0000);
    let tensor = Ordered::new(DeviceBuf::from_slice(&device, &data).unwrap());
    let mut out = Ordered::new(PinnedHostBuf::<u32>::zeroed(&device, LEN).unwrap());
    gated(&device, &reader, || {
        out.copy_from_device(&tensor, &reader).unwrap();
        // Overwriting the tensor must wait for the held-back read.
        tensor.fill_bytes(0xEE, &writer).unwrap();
    });
    assert_eq!(
        &out.get_mut().unwrap()[..],
        &data[..],
        "the read saw the data before the fill"
    );
    let filled = tensor.into_inner().unwrap().to_vec().unwrap();
    assert!(filled.iter().all(|&word| word == 0xEEEE_EEEE));
}

#[test]
fn host_access_and_drop_wait_for_queued_work() {
    let (_serial, device) = common::serial_device_without_faults();
    let held = stream(&device);
    let data = pattern(0x3300_0000);
    let tensor = Ordered::new(DeviceBuf::from_slice(&device, &data).unwrap());
    let misuse = software_only_watch();
    let mut out = Ordered::new(PinnedHostBuf::<u32>::zeroed(&device, LEN).unwrap());
    gated(&device, &held, || {
        out.copy_from_device(&tensor, &held).unwrap();
        assert!(out.is_busy());
        // Host access waits for the held-back download.
        assert_eq!(&out.get_mut().unwrap()[..], &data[..]);
        assert!(!out.is_busy());
    });
    let out2 = Ordered::new(PinnedHostBuf::<u32>::zeroed(&device, LEN).unwrap());
    gated(&device, &held, || {
        out2.copy_from_device(&tensor, &held).unwrap();
        // Dropping both while the download is held back: they wait.
        drop(out2);
        drop(tensor);
    });
    if let Some(misuse) = misuse {
        assert_eq!(misuse.seen(), [], "memory released under queued work");
    }
}

fn software_only_watch() -> Option<soft::MisuseWatch> {
    on_software().then(soft::MisuseWatch::start)
}

#[test]
fn one_stream_needs_no_event() {
    let (_serial, device) = common::serial_device_without_faults();
    let only = stream(&device);
    let data = pattern(0x4400_0000);
    let staging = Ordered::new(PinnedHostBuf::from_slice(&device, &data).unwrap());
    let tensor = Ordered::new(DeviceBuf::<u32>::zeroed(&device, LEN).unwrap());
    let mut out = Ordered::new(PinnedHostBuf::<u32>::zeroed(&device, LEN).unwrap());
    // Any event created would hit this fault.
    software_only(|| soft::inject_fault("aclrtCreateEventWithFlag", 1, CODE).unwrap());
    for _ in 0..3 {
        tensor.copy_from_host(&staging, &only).unwrap();
        tensor.fill_bytes(0, &only).unwrap();
        tensor.copy_from_host(&staging, &only).unwrap();
        out.copy_from_device(&tensor, &only).unwrap();
    }
    software_only(|| {
        assert_eq!(soft::armed_faults().len(), 1, "an event was created");
        soft::clear_faults();
    });
    assert_eq!(&out.get_mut().unwrap()[..], &data[..]);
}

#[test]
fn buffers_in_arcs_cross_threads_and_streams() {
    let (_serial, device) = common::serial_device_without_faults();
    let data = pattern(0x5500_0000);
    let tensor = Arc::new(Ordered::new(DeviceBuf::from_slice(&device, &data).unwrap()));
    let copies: Vec<_> = (0..3)
        .map(|_| {
            let (tensor, device) = (Arc::clone(&tensor), device.clone());
            std::thread::spawn(move || {
                let own = stream(&device);
                let copy = Ordered::new(DeviceBuf::<u32>::zeroed(&device, LEN).unwrap());
                copy.copy_from_device(&tensor, &own).unwrap();
                copy.into_inner().unwrap().to_vec().unwrap()
            })
        })
        .collect();
    for copy in copies {
        assert_eq!(copy.join().unwrap(), data);
    }
}

#[test]
fn a_failed_cross_stream_wait_queues_nothing() {
    let (_serial, device) = common::serial_device_without_faults();
    if !on_software() {
        return;
    }
    let (first, second) = (stream(&device), stream(&device));
    let tensor = Ordered::new(DeviceBuf::from_slice(&device, &pattern(1)).unwrap());
    let copy = Ordered::new(DeviceBuf::<u32>::zeroed(&device, LEN).unwrap());
    tensor.fill_bytes(7, &first).unwrap();
    soft::inject_fault("aclrtStreamWaitEvent", 1, CODE).unwrap();
    let refused = copy.copy_from_device(&tensor, &second);
    assert_eq!(refused.unwrap_err().code(), Some(ascend::ErrorCode(CODE)));
    assert_eq!(
        copy.into_inner().unwrap().to_vec().unwrap(),
        vec![0; LEN],
        "nothing was copied"
    );
}

#[test]
fn unprovable_work_keeps_the_memory() {
    let (_serial, device) = common::serial_device_without_faults();
    if !on_software() {
        return;
    }
    let held = stream(&device);
    let since = soft::sequence_now();
    let misuse = soft::MisuseWatch::start();
    let (tensor, out) = (
        DeviceBuf::from_slice(&device, &pattern(2)).unwrap(),
        PinnedHostBuf::<u32>::zeroed(&device, LEN).unwrap(),
    );
    let (tensor_at, out_at) = (tensor.as_raw() as u64, out.as_ptr() as u64);
    let (tensor, out) = (Ordered::new(tensor), Ordered::new(out));
    gated(&device, &held, || {
        out.copy_from_device(&tensor, &held).unwrap();
        for api in [
            "aclrtSynchronizeStream",
            "aclrtSynchronizeStream",
            "aclrtSynchronizeDevice",
        ] {
            soft::inject_fault(api, 1, CODE).unwrap();
        }
        assert_eq!(out.into_inner().unwrap_err().code(), Some(ascend::ErrorCode(CODE)));
        soft::clear_faults();
    });
    drop(tensor);
    let leaked: Vec<u64> = soft::live_since(since).iter().map(|resource| resource.id).collect();
    assert!(leaked.contains(&out_at), "the pinned buffer is kept: {leaked:?}");
    assert!(!leaked.contains(&tensor_at), "the tensor's own wait succeeded");
    assert_eq!(misuse.seen(), []);
}

#[test]
fn segment_blocks_and_mappings_are_ordered_like_buffers() {
    let (_serial, device) = common::serial_device_without_faults();
    let (writer, reader) = (stream(&device), stream(&device));
    let prop = PhysicalMemProp::device(&device);
    let chunk = prop.round_up(1).unwrap();
    let segment = SharedSegment::new(ExpandableSegment::new(&prop, 2 * chunk, chunk).unwrap());
    segment.grow(2 * chunk).unwrap();
    // A block across the chunk boundary, and a mapping of its own.
    let block = Ordered::new(segment.block(chunk - 4 * LEN / 2, 4 * LEN).unwrap());
    let range = Arc::new(VirtualRange::reserve(chunk).unwrap());
    let physical = Arc::new(PhysicalAlloc::new(&prop, chunk).unwrap());
    let mapping = Ordered::new(OwnedMapping::new(range, 0, physical).unwrap());
    let data = pattern(0x6600_0000);
    let staging = Ordered::new(PinnedHostBuf::from_slice(&device, &data).unwrap());
    let out = Ordered::new(DeviceBuf::<u32>::zeroed(&device, LEN).unwrap());
    gated(&device, &writer, || {
        block.copy_from_host(&staging, &writer).unwrap();
        out.copy_from_device(&block, &reader).unwrap();
    });
    assert_eq!(out.into_inner().unwrap().to_vec().unwrap(), data);
    // Lengths are checked in bytes, before anything is queued.
    let refused = mapping.copy_from_device(&block, &reader);
    assert!(
        matches!(refused, Err(ascend::Error::InvalidArgument { .. })),
        "{refused:?}"
    );
    mapping.fill_bytes(3, &writer).unwrap();
    let mapping = mapping.into_inner().unwrap();
    assert!(
        mapping
            .as_slice::<u8>()
            .unwrap()
            .slice(..64)
            .unwrap()
            .to_vec()
            .unwrap()
            .iter()
            .all(|&b| b == 3)
    );
    drop(block);
    assert_eq!(segment.live_blocks(), 0);
}

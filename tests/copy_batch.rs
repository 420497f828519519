//! Batch copies of `Ordered` views (`aclrtMemcpyBatchAsync`): the data of
//! host-to-device and device-to-host batches, each destination ordered
//! after a conflicting use on another stream (held behind a gate, as in
//! `tests/ordered.rs`), each source after a write, the argument checks made
//! before any call, and a refused batch leaving nothing in flight. Fault
//! injection is software-device only; the tests run one at a time.

mod common;

use ascend::stream::{Ordered, OrderedView};
use ascend::sys::{self, soft};
use ascend::{DeviceBuf, PinnedHostBuf};
use common::gate::gated;
use common::on_software;
use common::shared_stream as stream;

const LEN: usize = 1 << 12;
const CODE: sys::aclError = sys::ACL_ERROR_RT_DRV_INTERNAL_ERROR;

fn pattern(seed: u32) -> Vec<u32> {
    (0..LEN as u32).map(|index| index ^ seed).collect()
}

#[test]
fn a_host_to_device_batch_fills_every_destination() {
    let (_serial, device) = common::serial_device_without_faults();
    let stream = stream(&device);
    let data = pattern(0x0100_0000);
    let page = Ordered::new(PinnedHostBuf::from_slice(&device, &data).unwrap());
    let (a, b) = (
        Ordered::new(DeviceBuf::<u32>::zeroed(&device, LEN / 2).unwrap()),
        Ordered::new(DeviceBuf::<u32>::zeroed(&device, LEN).unwrap()),
    );
    let pairs = [
        (a.view(), page.slice(LEN / 2..).unwrap()),
        (b.elements::<u32>(..LEN / 2).unwrap(), page.slice(..LEN / 2).unwrap()),
        // Empty pairs are skipped.
        (b.elements::<u32>(LEN..).unwrap(), page.slice(..0).unwrap()),
    ];
    OrderedView::copy_batch_from_host(&pairs, &stream).unwrap();
    assert_eq!(a.into_inner().unwrap().to_vec().unwrap(), data[LEN / 2..]);
    let b = b.into_inner().unwrap().to_vec().unwrap();
    assert_eq!(b[..LEN / 2], data[..LEN / 2]);
    assert_eq!(b[LEN / 2..], vec![0; LEN / 2]);
}

#[test]
fn a_batch_destination_waits_for_a_write_on_another_stream() {
    let (_serial, device) = common::serial_device_without_faults();
    let (first, second) = (stream(&device), stream(&device));
    let data = pattern(0x0200_0000);
    let page = Ordered::new(PinnedHostBuf::from_slice(&device, &data).unwrap());
    let tensor = Ordered::new(DeviceBuf::<u32>::zeroed(&device, LEN).unwrap());
    gated(&device, &first, || {
        // Held back: without the inserted wait the batch would run first
        // and this fill would overwrite it.
        tensor.fill_bytes(0xEE, &first).unwrap();
        OrderedView::copy_batch_from_host(&[(tensor.view(), page.view())], &second).unwrap();
    });
    assert_eq!(tensor.into_inner().unwrap().to_vec().unwrap(), data);
}

#[test]
fn a_device_to_host_batch_reads_after_the_write_it_follows() {
    let (_serial, device) = common::serial_device_without_faults();
    let (writer, reader) = (stream(&device), stream(&device));
    let data = pattern(0x0300_0000);
    let staging = Ordered::new(PinnedHostBuf::from_slice(&device, &data).unwrap());
    let (a, b) = (
        Ordered::new(DeviceBuf::<u32>::zeroed(&device, LEN).unwrap()),
        Ordered::new(DeviceBuf::<u32>::zeroed(&device, 8).unwrap()),
    );
    let mut out = Ordered::new(PinnedHostBuf::<u32>::zeroed(&device, LEN + 8).unwrap());
    gated(&device, &writer, || {
        a.copy_from_host(&staging, &writer).unwrap();
        let pairs = [
            (out.slice(..LEN).unwrap(), a.view()),
            (out.slice(LEN..).unwrap(), b.view()),
        ];
        OrderedView::copy_batch_from_device(&pairs, &reader).unwrap();
    });
    let seen = out.get_mut().unwrap().to_vec();
    assert_eq!(seen[..LEN], data[..]);
    assert_eq!(seen[LEN..], [0; 8]);
}

#[test]
fn bad_pairs_are_refused_before_any_call() {
    let (_serial, device) = common::serial_device_without_faults();
    let stream = stream(&device);
    let page = Ordered::new(PinnedHostBuf::from_slice(&device, &pattern(4)).unwrap());
    let tensor = Ordered::new(DeviceBuf::<u32>::zeroed(&device, LEN).unwrap());
    // Lengths differ.
    let short = OrderedView::copy_batch_from_host(&[(tensor.view(), page.slice(1..).unwrap())], &stream);
    assert!(matches!(short, Err(ascend::Error::InvalidArgument { .. })), "{short:?}");
    // Two destinations overlap.
    let pairs = [
        (tensor.elements::<u32>(..8).unwrap(), page.slice(..8).unwrap()),
        (tensor.elements::<u32>(4..12).unwrap(), page.slice(8..16).unwrap()),
    ];
    let overlap = OrderedView::copy_batch_from_host(&pairs, &stream);
    assert!(
        matches!(overlap, Err(ascend::Error::InvalidArgument { .. })),
        "{overlap:?}"
    );
    assert_eq!(tensor.into_inner().unwrap().to_vec().unwrap(), vec![0; LEN]);
}

#[test]
fn a_refused_batch_leaves_nothing_in_flight() {
    let (_serial, device) = common::serial_device_without_faults();
    if !on_software() {
        return;
    }
    let stream = stream(&device);
    let page = Ordered::new(PinnedHostBuf::from_slice(&device, &pattern(5)).unwrap());
    let tensor = Ordered::new(DeviceBuf::<u32>::zeroed(&device, LEN).unwrap());
    soft::inject_fault("aclrtMemcpyBatchAsync", 1, CODE).unwrap();
    let refused = OrderedView::copy_batch_from_host(&[(tensor.view(), page.view())], &stream);
    assert_eq!(refused.unwrap_err().code(), Some(ascend::ErrorCode(CODE)));
    // Nothing was queued: the owners come back at once, unchanged.
    assert_eq!(tensor.into_inner().unwrap().to_vec().unwrap(), vec![0; LEN]);
    assert_eq!(page.into_inner().unwrap().to_vec(), pattern(5));
}

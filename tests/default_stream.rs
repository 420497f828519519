//! `Device::default_stream` (`aclrtCtxGetCurrentDefaultStream`),
//! `Device::resource_limit` (`aclrtGetResInCurrentThread`) and
//! `Device::error_verbose` (`aclrtGetErrorVerbose`).

mod common;

use ascend::stream::{Event, Stream};
use ascend::{DeviceBuf, PinnedHostBuf};
use common::device;
use common::gate::gated;

#[test]
fn the_default_stream_is_one_stream_that_outlives_its_borrows() {
    let device = device();
    let first = device.default_stream().unwrap();
    let id = first.id().unwrap();
    drop(first); // leaves the stream alone
    let again = device.default_stream().unwrap();
    assert_eq!(again.id().unwrap(), id);
    assert_ne!(Stream::new(&device).unwrap().id().unwrap(), id);
    let host = PinnedHostBuf::from_slice(&device, &[9u8; 32]).unwrap();
    let (_, on_device) = again
        .upload_owned(host, DeviceBuf::<u8>::zeroed(&device, 32).unwrap())
        .unwrap()
        .wait()
        .unwrap();
    assert_eq!(on_device.to_vec().unwrap(), [9; 32]);
}

#[test]
fn work_on_two_borrows_is_ordered_on_one_stream() {
    let device = device();
    let (held, other) = (device.default_stream().unwrap(), device.default_stream().unwrap());
    let event = Event::new(&device).unwrap();
    gated(&device, &held, || {
        // Queued through the other borrow, behind the gate: not reached yet.
        event.record(&other).unwrap();
        assert!(!event.query().unwrap());
    });
    event.synchronize().unwrap();
    assert!(event.query().unwrap());
}

#[test]
fn resource_limits_are_core_counts() {
    use ascend::CoreKind;
    let device = device();
    let cube = device.resource_limit(CoreKind::Cube).unwrap();
    let vector = device.resource_limit(CoreKind::Vector).unwrap();
    assert!(cube > 0 && vector > 0);
    common::software_only(|| assert_eq!((cube, vector), (24, 48)));
}

#[test]
fn error_verbose_says_no_fault_on_a_healthy_device() {
    let device = device();
    let info = device.error_verbose().unwrap();
    assert_eq!(info.kind, ascend::info::DeviceFaultKind::None);
    assert!(!info.is_fault() && !info.try_repair && info.detail.is_none());
}

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
    let mut on_device = DeviceBuf::<u8>::zeroed(&device, 32).unwrap();
    again.scope(|s| s.copy_to_device(&host, &mut on_device)).unwrap();
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

/// Dropping a borrow of the default stream with value work queued waits for
/// that work before the flags it holds can go: the flag written behind a
/// wait is written when the drop returns.
#[test]
fn dropping_a_borrow_waits_for_its_value_work() {
    use ascend::stream::{DeviceFlag, ValueCondition};
    use std::sync::Arc;
    // One at a time with the test below, whose wait blocks the default
    // stream for `Stream::VALUE_WAIT_LIMIT`.
    let (_serial, device) = common::serial_device();
    let (gate, written) = (
        DeviceFlag::new(&device, 0).unwrap(),
        DeviceFlag::new(&device, 0).unwrap(),
    );
    let stream = device.default_stream().unwrap();
    stream.wait_value(&gate, 1, ValueCondition::Equal).unwrap();
    stream.write_value(&written, 5).unwrap();
    let opener = {
        let gate = Arc::clone(&gate);
        std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(50));
            gate.set(1).unwrap();
        })
    };
    drop(stream);
    assert_eq!(written.get().unwrap(), 5, "the drop returned before the queued write");
    assert_eq!(Arc::strong_count(&written), 1, "the hold was released");
    opener.join().unwrap();
}

/// A wait that is not satisfied within `Stream::VALUE_WAIT_LIMIT` keeps
/// (leaks) the flags its borrow held: the stream still waits on them.
#[test]
fn dropping_a_borrow_whose_wait_never_ends_keeps_its_flags() {
    use ascend::stream::{DeviceFlag, ValueCondition};
    use std::sync::Arc;
    let (_serial, device) = common::serial_device();
    let gate = DeviceFlag::new(&device, 0).unwrap();
    let stream = device.default_stream().unwrap();
    stream.wait_value(&gate, 1, ValueCondition::Equal).unwrap();
    drop(stream);
    assert_eq!(Arc::strong_count(&gate), 2, "the flag the stream waits on was kept");
    gate.set(1).unwrap(); // let the default stream go on for the other tests
    device.default_stream().unwrap().synchronize().unwrap();
}

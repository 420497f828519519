//! The device queries and event calls of issue 41 through the safe crate:
//! `Device::info`, `status`, `utilization`, `stream_priority_range`, the
//! resource limits, `Event::record_with`, `Event::id`, `Event::available`
//! and `Stream::wait_event_with`. One body for both backends; the software
//! device's own values are checked only there.

mod common;

use ascend::stream::{Event, EventFlags, Stream, StreamPriority};
use ascend::{CoreKind, DeviceAttribute, DeviceStatus, ErrorCode, RecordMode, WaitMode};
use common::software_only;
use std::time::Duration;

#[test]
fn device_information() {
    let device = common::device();
    let cube = device.info(DeviceAttribute::CubeCores).unwrap();
    let memory = device.info(DeviceAttribute::TotalGlobalMemory).unwrap();
    assert!(cube > 0 && memory > 0);
    let (_, total) = device.memory_info().unwrap();
    software_only(|| {
        assert_eq!(cube, 24);
        assert_eq!(device.info(DeviceAttribute::VectorCores).unwrap(), 48);
        assert_eq!(memory, total as i64);
        let error = device.info(DeviceAttribute::WarpSize).unwrap_err();
        assert_eq!(error.code(), Some(ErrorCode::RT_FEATURE_NOT_SUPPORT));
    });
    assert_eq!(device.status().unwrap(), DeviceStatus::Normal);
    let busy = device.utilization().unwrap();
    assert!((0..=100).contains(&busy.memory));
    software_only(|| assert_eq!((busy.cube, busy.vector, busy.aicpu), (0, 0, 0)));
}

#[test]
fn stream_priorities_come_from_the_range() {
    let device = common::device();
    let range = device.stream_priority_range().unwrap();
    assert!(range.greatest <= range.least);
    software_only(|| assert_eq!((range.least, range.greatest), (7, 0)));
    let lowest = StreamPriority::new(u8::try_from(range.least).unwrap()).unwrap();
    let stream = Stream::with_config(&device, lowest, Default::default()).unwrap();
    assert_eq!(stream.priority().unwrap(), lowest);
}

/// On device 1 where there is one (limits are process-wide and other tests
/// of this binary read device 0's).
#[test]
fn resource_limits_narrow_and_reset() {
    let Ok(device) = ascend::Device::new(1) else { return };
    let all = device.res_limit(CoreKind::Cube).unwrap();
    device.set_res_limit(CoreKind::Cube, 1).unwrap();
    assert_eq!(device.res_limit(CoreKind::Cube).unwrap(), 1);
    assert_eq!(device.resource_limit(CoreKind::Cube).unwrap(), 1);
    device.reset_res_limits().unwrap();
    assert_eq!(device.res_limit(CoreKind::Cube).unwrap(), all);
    software_only(|| {
        let error = device.set_res_limit(CoreKind::Vector, 0).unwrap_err();
        assert_eq!(error.code(), Some(ErrorCode::RT_PARAM_INVALID));
    });
}

#[test]
fn records_and_waits_with_modes() {
    let device = common::device();
    let (first, second) = (Stream::new(&device).unwrap(), Stream::new(&device).unwrap());
    let event = Event::with_flags(&device, EventFlags::SYNC).unwrap();
    event.record_with(&first, RecordMode::Default).unwrap();
    second
        .wait_event_with(&event, Some(Duration::from_millis(1500)), WaitMode::Default)
        .unwrap();
    second.wait_event_with(&event, None, WaitMode::Default).unwrap();
    second.synchronize().unwrap();
    assert!(event.query().unwrap());
    // No graph is being captured: the external forms are refused.
    assert!(event.record_with(&first, RecordMode::External).is_err());
    assert!(second.wait_event_with(&event, None, WaitMode::External).is_err());
    let refused = second
        .wait_event_with(&event, Some(Duration::from_secs(1)), WaitMode::External)
        .unwrap_err();
    assert!(matches!(refused, ascend::Error::InvalidArgument { .. }), "{refused}");
    software_only(|| {
        let error = event.record_with(&first, RecordMode::External).unwrap_err();
        assert_eq!(
            error.code(),
            Some(ErrorCode(ascend::sys::ACL_ERROR_RT_STREAM_NOT_CAPTURED))
        );
    });
}

#[test]
fn event_ids_and_events_left() {
    let device = common::device();
    let (a, b) = (Event::new(&device).unwrap(), Event::new(&device).unwrap());
    assert_ne!(a.id().unwrap(), b.id().unwrap());
    assert_eq!(a.id().unwrap(), a.id().unwrap());
    let left = Event::available(&device).unwrap();
    assert!(left > 0);
    software_only(|| assert!(left < 65_536));
}

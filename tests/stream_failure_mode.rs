//! `Stream::set_failure_mode` (`aclrtSetStreamFailureMode`) and
//! `Event::waits_passed` (`aclrtQueryEventWaitStatus`).

mod common;

use ascend::stream::{Event, EventFlags, FailureMode, Stream};
use ascend::{DeviceBuf, ErrorCode};
use common::gate::gated;
use common::{device, software_only};
use std::time::Duration;

#[test]
fn stop_mode_is_one_way() {
    let device = device();
    let stream = Stream::new(&device).unwrap();
    stream.set_failure_mode(FailureMode::Continue).unwrap();
    stream.set_failure_mode(FailureMode::Stop).unwrap();
    stream.set_failure_mode(FailureMode::Stop).unwrap();
    let refused = stream.set_failure_mode(FailureMode::Continue).unwrap_err();
    assert_eq!(refused.code(), Some(ErrorCode::RT_FEATURE_NOT_SUPPORT));
    // The stream still works.
    let buf = DeviceBuf::<u8>::zeroed(&device, 16).unwrap();
    stream.synchronize().unwrap();
    assert_eq!(buf.to_vec().unwrap(), [0; 16]);
    assert_eq!(FailureMode::default(), FailureMode::Continue);
}

/// Queues 0x11, a wait that fails after one second (an `ACL_EVENT_SYNC`
/// event never recorded: software device only), then 0x22; returns the
/// synchronisation's error code and the bytes.
fn fill_around_a_failed_wait(mode: FailureMode) -> (Option<ErrorCode>, Vec<u8>) {
    let device = device();
    let stream = Stream::new(&device).unwrap();
    stream.set_failure_mode(mode).unwrap();
    let never = Event::with_flags(&device, EventFlags::SYNC).unwrap();
    let mut buf = DeviceBuf::<u8>::zeroed(&device, 64).unwrap();
    let outcome = stream.scope(|s| {
        let held = s.hold_device(&mut buf);
        s.memset(held, 0x11)?;
        stream.wait_event_timeout(&never, Duration::from_secs(1))?;
        s.memset(held, 0x22)
    });
    let code = outcome.err().and_then(|error| error.code());
    (code, buf.to_vec().unwrap())
}

#[test]
fn continue_mode_runs_the_work_after_a_failed_task() {
    software_only(|| {
        let (code, bytes) = fill_around_a_failed_wait(FailureMode::Continue);
        assert_eq!(code, Some(ErrorCode::RT_WAIT_TIMEOUT));
        assert_eq!(bytes, [0x22; 64]);
    });
}

#[test]
fn stop_mode_skips_the_work_after_a_failed_task() {
    software_only(|| {
        let (code, bytes) = fill_around_a_failed_wait(FailureMode::Stop);
        assert_eq!(code, Some(ErrorCode::RT_WAIT_TIMEOUT));
        assert_eq!(bytes, [0x11; 64], "the memset after the failed wait must not run");
    });
}

#[test]
fn waits_passed_follows_the_stream_waits() {
    let device = device();
    let (recorder, waiter) = (Stream::new(&device).unwrap(), Stream::new(&device).unwrap());
    let event = Event::new(&device).unwrap();
    assert!(event.waits_passed().unwrap());
    gated(&device, &recorder, || {
        event.record(&recorder).unwrap();
        waiter.wait_event(&event).unwrap();
        // The record is held back behind the gate: the wait has not passed.
        assert!(!event.waits_passed().unwrap());
    });
    waiter.synchronize().unwrap();
    assert!(event.waits_passed().unwrap());
    // Events of `with_flags_ex` do not support the query.
    let ex = Event::with_flags_ex(&device, EventFlags::SYNC).unwrap();
    assert_eq!(
        ex.waits_passed().unwrap_err().code(),
        Some(ErrorCode::RT_FEATURE_NOT_SUPPORT)
    );
}

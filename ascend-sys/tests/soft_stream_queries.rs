//! `aclrtStreamQuery`, `aclrtSynchronizeEventWithTimeout`,
//! `aclrtStreamWaitEventWithTimeout` and `aclrtResetEvent` on the software
//! device: each argument rule returns the real runtime's code, queries
//! follow the work, timeouts expire on streams blocked by an event never
//! recorded (and not on others), and a reset makes an event "not recorded"
//! once its stream reaches it. Software device only.
//!
//! Tests here run in parallel threads of one process: each uses its own
//! streams, and unblocks every stream it blocks.

mod soft_common;

use ascend_sys::*;
use soft_common::raw::{
    Gate, create_stream, destroy_event, destroy_stream, event_with_flag, free, malloc, plain_event, record, sync,
    sync_within, wait_event,
};
use soft_common::{holding_device, on_device_id as on_device, recent, software, without_device};
use std::ffi::c_void;
use std::ptr::null_mut;
use std::time::{Duration, Instant};

fn ex_event(flag: u32) -> aclrtEvent {
    let mut event = null_mut();
    // SAFETY: `event` is a valid out-pointer.
    assert_eq!(unsafe { aclrtCreateEventExWithFlag(&mut event, flag) }, ACL_SUCCESS);
    event
}

fn wait_within(stream: aclrtStream, event: aclrtEvent, seconds: i32) -> aclError {
    // SAFETY: handles only.
    unsafe { aclrtStreamWaitEventWithTimeout(stream, event, seconds) }
}

fn sync_event_within(event: aclrtEvent, ms: i32) -> aclError {
    // SAFETY: a handle (live or not: validated).
    unsafe { aclrtSynchronizeEventWithTimeout(event, ms) }
}

fn reset(event: aclrtEvent, stream: aclrtStream) -> aclError {
    // SAFETY: handles only.
    unsafe { aclrtResetEvent(event, stream) }
}

fn query_event(event: aclrtEvent) -> aclrtEventRecordedStatus {
    let mut status = 99;
    // SAFETY: `status` is a valid out-pointer.
    assert_eq!(unsafe { aclrtQueryEventStatus(event, &mut status) }, ACL_SUCCESS);
    status
}

fn query_stream(stream: aclrtStream) -> Result<aclrtStreamStatus, aclError> {
    let mut status = 99;
    // SAFETY: `status` is a valid out-pointer; the handle is validated.
    match unsafe { aclrtStreamQuery(stream, &mut status) } {
        ACL_SUCCESS => Ok(status),
        code => Err(code),
    }
}

fn memset_async(ptr: *mut c_void, value: i32, count: usize, stream: aclrtStream) -> aclError {
    // SAFETY: callers pass live device memory of `count` bytes.
    unsafe { aclrtMemsetAsync(ptr, count, value, count, stream) }
}

// ---- aclrtStreamQuery ----------------------------------------------------------

#[test]
fn stream_query_follows_the_work() {
    on_device(0, || {
        const N: usize = 4096;
        let buf = malloc(N);
        let stream = create_stream();
        assert_eq!(query_stream(stream), Ok(ACL_STREAM_STATUS_COMPLETE));
        let gate = Gate::block(stream);
        assert_eq!(memset_async(buf, 0x11, N, stream), ACL_SUCCESS);
        assert_eq!(query_stream(stream), Ok(ACL_STREAM_STATUS_NOT_READY));
        gate.open();
        assert_eq!(sync(stream), ACL_SUCCESS);
        assert_eq!(query_stream(stream), Ok(ACL_STREAM_STATUS_COMPLETE));
        // Polling alone also sees the work end.
        assert_eq!(memset_async(buf, 0x22, N, stream), ACL_SUCCESS);
        let started = Instant::now();
        while query_stream(stream) != Ok(ACL_STREAM_STATUS_COMPLETE) {
            assert!(started.elapsed() < Duration::from_secs(10), "the memset never finished");
            std::thread::yield_now();
        }
        destroy_stream(stream);
        free(buf);
    });
}

#[test]
fn stream_query_argument_rules() {
    on_device(1, || {
        let stream = create_stream();
        // SAFETY: a NULL out-pointer is refused before use.
        assert_eq!(unsafe { aclrtStreamQuery(stream, null_mut()) }, ACL_ERROR_INVALID_PARAM);
        assert!(recent().contains("status is NULL"));
        // NULL: the default stream (nothing queued on it yet here).
        assert_eq!(query_stream(null_mut()), Ok(ACL_STREAM_STATUS_COMPLETE));
        destroy_stream(stream);
        let event = plain_event();
        for bad in [stream, 0x1234usize as aclrtStream, event] {
            assert_eq!(query_stream(bad), Err(ACL_ERROR_RT_INVALID_HANDLE));
        }
        destroy_event(event);
    });
    holding_device(0, || {
        let stream = on_device(0, || create_stream() as usize);
        without_device(|| {
            assert_eq!(query_stream(null_mut()), Err(ACL_ERROR_RT_CONTEXT_NULL));
            assert_eq!(query_stream(stream as aclrtStream), Err(ACL_ERROR_RT_CONTEXT_NULL));
        });
        // A stream of another device may be queried (as synchronised).
        on_device(1, || {
            assert_eq!(query_stream(stream as aclrtStream), Ok(ACL_STREAM_STATUS_COMPLETE));
        });
        on_device(0, || destroy_stream(stream as aclrtStream));
    });
}

// ---- aclrtSynchronizeEventWithTimeout ------------------------------------------

#[test]
fn synchronize_event_with_timeout_rules() {
    on_device(0, || {
        let event = plain_event();
        // The ACL layer checks the timeout first, then NULL.
        assert_eq!(sync_event_within(null_mut(), -2), ACL_ERROR_RT_PARAM_INVALID);
        assert_eq!(sync_event_within(null_mut(), -1), ACL_ERROR_INVALID_PARAM);
        for bad in [-2, i32::MIN, 0] {
            assert_eq!(sync_event_within(event, bad), ACL_ERROR_RT_PARAM_INVALID, "{bad}");
        }
        let gone = plain_event();
        destroy_event(gone);
        // The runtime validates the handle before refusing 0.
        assert_eq!(sync_event_within(gone, 0), ACL_ERROR_RT_INVALID_HANDLE);
        assert_eq!(sync_event_within(gone, 10), ACL_ERROR_RT_INVALID_HANDLE);
        let external = event_with_flag(ACL_EVENT_EXTERNAL);
        assert_eq!(sync_event_within(external, 10), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
        destroy_event(external);
        destroy_event(event);
    });
}

#[test]
fn synchronize_event_with_timeout_expires_on_a_blocked_stream() {
    on_device(0, || {
        let stream = create_stream();
        let gate = Gate::block(stream);
        let event = plain_event();
        assert_eq!(record(event, stream), ACL_SUCCESS);
        let started = Instant::now();
        assert_eq!(sync_event_within(event, 30), ACL_ERROR_RT_EVENT_SYNC_TIMEOUT);
        assert!(started.elapsed() >= Duration::from_millis(30));
        assert!(recent().contains("timeout"));
        gate.open();
        assert_eq!(sync_event_within(event, 10_000), ACL_SUCCESS);
        assert_eq!(sync_event_within(event, -1), ACL_SUCCESS);
        assert_eq!(query_event(event), ACL_EVENT_RECORDED_STATUS_COMPLETE);
        destroy_event(event);
        destroy_stream(stream);
    });
}

// ---- aclrtStreamWaitEventWithTimeout -------------------------------------------

#[test]
fn stream_wait_event_with_timeout_rules() {
    on_device(0, || {
        let stream = create_stream();
        let event = event_with_flag(ACL_EVENT_SYNC);
        // The ACL layer refuses a negative timeout before anything else.
        for bad in [-1, i32::MIN] {
            assert_eq!(wait_within(stream, event, bad), ACL_ERROR_RT_PARAM_INVALID);
            assert_eq!(
                wait_within(0x1234usize as aclrtStream, null_mut(), bad),
                ACL_ERROR_RT_PARAM_INVALID
            );
        }
        // No ACL-layer NULL check: the runtime refuses a NULL event.
        assert_eq!(wait_within(stream, null_mut(), 1), ACL_ERROR_RT_PARAM_INVALID);
        let (gone_stream, gone_event) = (create_stream(), plain_event());
        destroy_stream(gone_stream);
        destroy_event(gone_event);
        assert_eq!(wait_within(gone_stream, event, 1), ACL_ERROR_RT_INVALID_HANDLE);
        assert_eq!(wait_within(stream, gone_event, 1), ACL_ERROR_RT_INVALID_HANDLE);
        let timeline = event_with_flag(ACL_EVENT_TIME_LINE);
        assert_eq!(wait_within(stream, timeline, 1), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
        let device_only = event_with_flag(ACL_EVENT_DEVICE_USE_ONLY);
        assert_eq!(wait_within(stream, device_only, 1), ACL_ERROR_RT_PARAM_INVALID);
        // A classic event without ACL_EVENT_SYNC must be recorded first.
        let plain = plain_event();
        assert_eq!(wait_within(stream, plain, 1), ACL_ERROR_RT_PARAM_INVALID);
        assert!(recent().contains("aclrtStreamWaitEventWithTimeout"));
        // An Ex event never recorded: a no-op.
        let ex = ex_event(ACL_EVENT_SYNC);
        assert_eq!(wait_within(stream, ex, 1), ACL_SUCCESS);
        assert_eq!(sync(stream), ACL_SUCCESS);
        for event in [timeline, device_only, plain, ex, event] {
            destroy_event(event);
        }
        destroy_stream(stream);
    });
    // A stream of another device.
    holding_device(0, || {
        let stream = on_device(0, || create_stream() as usize);
        on_device(1, || {
            let event = event_with_flag(ACL_EVENT_SYNC);
            assert_eq!(
                wait_within(stream as aclrtStream, event, 1),
                ACL_ERROR_RT_STREAM_CONTEXT
            );
            destroy_event(event);
        });
        let event = on_device(0, || event_with_flag(ACL_EVENT_SYNC) as usize);
        without_device(|| {
            assert_eq!(
                wait_within(null_mut(), event as aclrtEvent, 1),
                ACL_ERROR_RT_CONTEXT_NULL
            );
        });
        on_device(0, || {
            destroy_event(event as aclrtEvent);
            destroy_stream(stream as aclrtStream);
        });
    });
}

#[test]
fn stream_wait_event_with_timeout_expires_without_the_record() {
    on_device(0, || {
        const N: usize = 1024;
        let buf = malloc(N);
        let stream = create_stream();
        // Never recorded, with ACL_EVENT_SYNC: the stream waits for the next
        // record, which never comes.
        let never = event_with_flag(ACL_EVENT_SYNC);
        let started = Instant::now();
        assert_eq!(wait_within(stream, never, 1), ACL_SUCCESS);
        assert_eq!(memset_async(buf, 0x5A, N, stream), ACL_SUCCESS);
        assert_eq!(sync(stream), ACL_ERROR_RT_WAIT_TIMEOUT);
        assert!(started.elapsed() >= Duration::from_secs(1));
        assert!(recent().contains("not reached in time"));
        // The failure was reported once; the later work ran.
        assert_eq!(sync(stream), ACL_SUCCESS);
        let mut out = [0u8; N];
        // SAFETY: `out` holds N bytes; `buf` is a live allocation of N bytes.
        let rc = unsafe { aclrtMemcpy(out.as_mut_ptr().cast(), N, buf, N, ACL_MEMCPY_DEVICE_TO_HOST) };
        assert_eq!(rc, ACL_SUCCESS);
        assert!(out.iter().all(|&x| x == 0x5A));
        destroy_event(never);
        destroy_stream(stream);
        free(buf);
    });
}

#[test]
fn stream_wait_event_with_timeout_that_does_not_expire() {
    on_device(0, || {
        let (producer, consumer) = (create_stream(), create_stream());
        let gate = Gate::block(producer);
        let produced = plain_event();
        assert_eq!(record(produced, producer), ACL_SUCCESS);
        // 0: no limit; 30 s: far away.
        for seconds in [0, 30] {
            assert_eq!(wait_within(consumer, produced, seconds), ACL_SUCCESS);
        }
        assert_eq!(query_stream(consumer), Ok(ACL_STREAM_STATUS_NOT_READY));
        assert_eq!(sync_within(consumer, 20), ACL_ERROR_RT_STREAM_SYNC_TIMEOUT);
        gate.open();
        assert_eq!(sync(consumer), ACL_SUCCESS);
        assert_eq!(query_stream(consumer), Ok(ACL_STREAM_STATUS_COMPLETE));
        destroy_event(produced);
        destroy_stream(producer);
        destroy_stream(consumer);
    });
}

// ---- aclrtResetEvent -------------------------------------------------------------

#[test]
fn reset_event_argument_rules() {
    on_device(0, || {
        let stream = create_stream();
        let event = event_with_flag(ACL_EVENT_SYNC);
        assert_eq!(reset(null_mut(), stream), ACL_ERROR_INVALID_PARAM);
        let (gone_stream, gone_event) = (create_stream(), event_with_flag(ACL_EVENT_SYNC));
        destroy_stream(gone_stream);
        destroy_event(gone_event);
        assert_eq!(reset(gone_event, stream), ACL_ERROR_RT_INVALID_HANDLE);
        assert_eq!(reset(event, gone_stream), ACL_ERROR_RT_INVALID_HANDLE);
        let device_only = event_with_flag(ACL_EVENT_DEVICE_USE_ONLY);
        assert_eq!(reset(device_only, stream), ACL_ERROR_RT_PARAM_INVALID);
        let timeline = event_with_flag(ACL_EVENT_TIME_LINE);
        assert_eq!(reset(timeline, stream), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
        let ex = ex_event(ACL_EVENT_SYNC);
        assert_eq!(reset(ex, stream), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
        // NULL: the default stream.
        assert_eq!(reset(event, null_mut()), ACL_SUCCESS);
        assert_eq!(sync(null_mut()), ACL_SUCCESS);
        for event in [device_only, timeline, ex, event] {
            destroy_event(event);
        }
        destroy_stream(stream);
    });
    holding_device(0, || {
        let stream = on_device(0, || create_stream() as usize);
        on_device(1, || {
            let event = event_with_flag(ACL_EVENT_SYNC);
            assert_eq!(reset(event, stream as aclrtStream), ACL_ERROR_RT_STREAM_CONTEXT);
            destroy_event(event);
        });
        on_device(0, || destroy_stream(stream as aclrtStream));
    });
}

#[test]
fn a_reset_event_is_not_recorded_once_its_stream_reaches_the_reset() {
    on_device(0, || {
        let (first, second) = (create_stream(), create_stream());
        let event = event_with_flag(ACL_EVENT_SYNC);
        assert_eq!(record(event, first), ACL_SUCCESS);
        assert_eq!(sync(first), ACL_SUCCESS);
        assert_eq!(query_event(event), ACL_EVENT_RECORDED_STATUS_COMPLETE);
        // The reset is asynchronous: nothing changes before the stream
        // reaches it.
        let gate = Gate::block(first);
        assert_eq!(reset(event, first), ACL_SUCCESS);
        assert_eq!(query_event(event), ACL_EVENT_RECORDED_STATUS_COMPLETE);
        gate.open();
        assert_eq!(sync(first), ACL_SUCCESS);
        assert_eq!(query_event(event), ACL_EVENT_RECORDED_STATUS_NOT_READY);
        // A wait now waits for the next record, not the forgotten one.
        assert_eq!(wait_event(second, event), ACL_SUCCESS);
        assert_eq!(sync_within(second, 20), ACL_ERROR_RT_STREAM_SYNC_TIMEOUT);
        assert_eq!(record(event, first), ACL_SUCCESS);
        assert_eq!(sync(second), ACL_SUCCESS);
        assert_eq!(query_event(event), ACL_EVENT_RECORDED_STATUS_COMPLETE);
        destroy_event(event);
        destroy_stream(first);
        destroy_stream(second);
    });
}

#[test]
fn the_four_calls_are_software_calls() {
    software();
    // The drop-in library and the dispatch see every one by its C name.
    for name in [
        "aclrtStreamQuery",
        "aclrtSynchronizeEventWithTimeout",
        "aclrtStreamWaitEventWithTimeout",
        "aclrtResetEvent",
    ] {
        assert!(FUNCTION_NAMES.contains(&name), "{name}");
    }
}

//! `aclrtQueryEvent`, `aclrtQueryEventWaitStatus` and
//! `aclrtSetStreamFailureMode` on the software device: each argument rule
//! returns the real runtime's code; the old query says complete before the
//! first record, the wait status follows the stream waits queued on an
//! event, and a stream in `ACL_STOP_ON_FAILURE` mode skips its tasks after
//! a failed one until a synchronisation reports the failure. Software device
//! only.
//!
//! Tests here run in parallel threads of one process: each uses its own
//! streams, and unblocks every stream it blocks.

mod soft_common;

use ascend_sys::*;
use soft_common::raw::{
    Gate, create_stream, destroy_event, destroy_stream, event_with_flag, free, malloc, plain_event, record, sync,
    wait_event,
};
use soft_common::{holding_device, on_device_id as on_device, recent, without_device};
use std::ffi::c_void;
use std::ptr::null_mut;

fn query_old(event: aclrtEvent) -> Result<aclrtEventStatus, aclError> {
    let mut status = 99;
    // SAFETY: `status` is a valid out-pointer; the handle is validated.
    match unsafe { aclrtQueryEvent(event, &mut status) } {
        ACL_SUCCESS => Ok(status),
        code => Err(code),
    }
}

fn query_wait(event: aclrtEvent) -> Result<aclrtEventWaitStatus, aclError> {
    let mut status = 99;
    // SAFETY: `status` is a valid out-pointer; the handle is validated.
    match unsafe { aclrtQueryEventWaitStatus(event, &mut status) } {
        ACL_SUCCESS => Ok(status),
        code => Err(code),
    }
}

fn set_mode(stream: aclrtStream, mode: u64) -> aclError {
    // SAFETY: a handle (validated) and a value.
    unsafe { aclrtSetStreamFailureMode(stream, mode) }
}

fn ex_event(flag: u32) -> aclrtEvent {
    let mut event = null_mut();
    // SAFETY: `event` is a valid out-pointer.
    assert_eq!(unsafe { aclrtCreateEventExWithFlag(&mut event, flag) }, ACL_SUCCESS);
    event
}

fn memset_async(ptr: *mut c_void, value: i32, count: usize, stream: aclrtStream) -> aclError {
    // SAFETY: callers pass live device memory of `count` bytes.
    unsafe { aclrtMemsetAsync(ptr, count, value, count, stream) }
}

fn first_byte(ptr: *mut c_void) -> u8 {
    let mut byte = 0u8;
    // SAFETY: one byte of live device memory into a local.
    let code = unsafe { aclrtMemcpy((&mut byte as *mut u8).cast(), 1, ptr, 1, ACL_MEMCPY_DEVICE_TO_HOST) };
    assert_eq!(code, ACL_SUCCESS);
    byte
}

/// Makes the next task of `stream` fail: a wait of at most one second for
/// an event that is never recorded. Returns the event (destroy it after the
/// stream was synchronised).
fn failing_wait(stream: aclrtStream) -> aclrtEvent {
    let event = event_with_flag(ACL_EVENT_SYNC);
    // SAFETY: handles only.
    assert_eq!(
        unsafe { aclrtStreamWaitEventWithTimeout(stream, event, 1) },
        ACL_SUCCESS
    );
    event
}

// ---- aclrtQueryEvent -----------------------------------------------------------

#[test]
fn old_query_is_complete_before_the_first_record_and_follows_records() {
    on_device(0, || {
        let event = plain_event();
        // Unlike aclrtQueryEventStatus (not ready), complete before any record.
        assert_eq!(query_old(event), Ok(ACL_EVENT_STATUS_COMPLETE));
        let stream = create_stream();
        let gate = Gate::block(stream);
        assert_eq!(record(event, stream), ACL_SUCCESS);
        assert_eq!(query_old(event), Ok(ACL_EVENT_STATUS_NOT_READY));
        gate.open();
        assert_eq!(sync(stream), ACL_SUCCESS);
        assert_eq!(query_old(event), Ok(ACL_EVENT_STATUS_COMPLETE));
        destroy_stream(stream);
        destroy_event(event);
    });
}

#[test]
fn old_query_argument_rules() {
    on_device(0, || {
        let event = plain_event();
        // SAFETY: NULL arguments are refused before use.
        assert_eq!(unsafe { aclrtQueryEvent(null_mut(), &mut 0) }, ACL_ERROR_INVALID_PARAM);
        // SAFETY: as above.
        assert_eq!(unsafe { aclrtQueryEvent(event, null_mut()) }, ACL_ERROR_INVALID_PARAM);
        assert_eq!(query_old(0x5a5a_0000 as aclrtEvent), Err(ACL_ERROR_RT_INVALID_HANDLE));
        // The runtime's "new mode" events and external events are refused.
        let ex = ex_event(ACL_EVENT_SYNC);
        assert_eq!(query_old(ex), Err(ACL_ERROR_RT_FEATURE_NOT_SUPPORT));
        assert!(recent().contains("aclrtQueryEventStatus"), "{}", recent());
        let external = event_with_flag(ACL_EVENT_EXTERNAL);
        assert_eq!(query_old(external), Err(ACL_ERROR_RT_FEATURE_NOT_SUPPORT));
        for event in [event, ex, external] {
            destroy_event(event);
        }
        // No current context is needed.
        let orphan = plain_event() as usize;
        without_device(move || assert_eq!(query_old(orphan as aclrtEvent), Ok(ACL_EVENT_STATUS_COMPLETE)));
        destroy_event(orphan as aclrtEvent);
    });
}

// ---- aclrtQueryEventWaitStatus --------------------------------------------------

#[test]
fn wait_status_follows_the_stream_waits() {
    on_device(0, || {
        let event = event_with_flag(ACL_EVENT_SYNC);
        assert_eq!(query_wait(event), Ok(ACL_EVENT_WAIT_STATUS_COMPLETE));
        let (waiter, recorder) = (create_stream(), create_stream());
        // A wait for the event's next record: outstanding until recorded.
        assert_eq!(wait_event(waiter, event), ACL_SUCCESS);
        assert_eq!(query_wait(event), Ok(ACL_EVENT_WAIT_STATUS_NOT_READY));
        assert_eq!(record(event, recorder), ACL_SUCCESS);
        assert_eq!(sync(recorder), ACL_SUCCESS);
        assert_eq!(sync(waiter), ACL_SUCCESS);
        assert_eq!(query_wait(event), Ok(ACL_EVENT_WAIT_STATUS_COMPLETE));
        // A wait queued behind a blocked task is outstanding too.
        let gate = Gate::block(waiter);
        assert_eq!(wait_event(waiter, event), ACL_SUCCESS);
        assert_eq!(query_wait(event), Ok(ACL_EVENT_WAIT_STATUS_NOT_READY));
        gate.open();
        assert_eq!(sync(waiter), ACL_SUCCESS);
        assert_eq!(query_wait(event), Ok(ACL_EVENT_WAIT_STATUS_COMPLETE));
        // A wait dropped with its stream is no longer outstanding.
        let doomed = create_stream();
        let gate = Gate::block(doomed);
        assert_eq!(wait_event(doomed, event), ACL_SUCCESS);
        assert_eq!(query_wait(event), Ok(ACL_EVENT_WAIT_STATUS_NOT_READY));
        // SAFETY: a live stream, destroyed once.
        assert_eq!(unsafe { aclrtDestroyStreamForce(doomed) }, ACL_SUCCESS);
        assert_eq!(query_wait(event), Ok(ACL_EVENT_WAIT_STATUS_COMPLETE));
        destroy_event(gate.0 as aclrtEvent);
        destroy_stream(waiter);
        destroy_stream(recorder);
        destroy_event(event);
    });
}

/// A synchronised stream's waits are done: the wait status says complete
/// at once, not after the worker has got round to dropping the task (a
/// narrow window: without the fix, about one round in 3000 fails).
#[test]
fn wait_status_is_complete_as_soon_as_the_waiting_stream_is_synchronised() {
    on_device(0, || {
        let event = event_with_flag(ACL_EVENT_SYNC);
        let (waiter, recorder) = (create_stream(), create_stream());
        for round in 0..20000 {
            assert_eq!(record(event, recorder), ACL_SUCCESS);
            assert_eq!(wait_event(waiter, event), ACL_SUCCESS);
            assert_eq!(sync(waiter), ACL_SUCCESS);
            assert_eq!(
                query_wait(event),
                Ok(ACL_EVENT_WAIT_STATUS_COMPLETE),
                "round {round}: the stream is synchronised"
            );
        }
        assert_eq!(sync(recorder), ACL_SUCCESS);
        destroy_stream(waiter);
        destroy_stream(recorder);
        destroy_event(event);
    });
}

#[test]
fn wait_status_argument_rules() {
    on_device(0, || {
        let event = plain_event();
        // SAFETY: NULL arguments are refused before use.
        assert_eq!(
            unsafe { aclrtQueryEventWaitStatus(null_mut(), &mut 0) },
            ACL_ERROR_INVALID_PARAM
        );
        // SAFETY: as above.
        assert_eq!(
            unsafe { aclrtQueryEventWaitStatus(event, null_mut()) },
            ACL_ERROR_INVALID_PARAM
        );
        assert_eq!(query_wait(0x5a5a_0000 as aclrtEvent), Err(ACL_ERROR_RT_INVALID_HANDLE));
        let ex = ex_event(ACL_EVENT_SYNC);
        assert_eq!(query_wait(ex), Err(ACL_ERROR_RT_FEATURE_NOT_SUPPORT));
        let external = event_with_flag(ACL_EVENT_EXTERNAL);
        assert_eq!(query_wait(external), Err(ACL_ERROR_RT_FEATURE_NOT_SUPPORT));
        // An event no stream can wait for: always complete.
        assert_eq!(query_wait(event), Ok(ACL_EVENT_WAIT_STATUS_COMPLETE));
        for event in [event, ex, external] {
            destroy_event(event);
        }
    });
}

// ---- aclrtSetStreamFailureMode ---------------------------------------------------

#[test]
fn continue_mode_runs_the_tasks_after_a_failure() {
    on_device(1, || {
        let buf = malloc(64);
        let stream = create_stream();
        assert_eq!(set_mode(stream, u64::from(ACL_CONTINUE_ON_FAILURE)), ACL_SUCCESS);
        assert_eq!(memset_async(buf, 0x11, 64, stream), ACL_SUCCESS);
        let never = failing_wait(stream);
        assert_eq!(memset_async(buf, 0x22, 64, stream), ACL_SUCCESS);
        assert_eq!(sync(stream), ACL_ERROR_RT_WAIT_TIMEOUT);
        assert_eq!(first_byte(buf), 0x22, "the memset after the failed wait ran");
        destroy_stream(stream);
        destroy_event(never);
        free(buf);
    });
}

#[test]
fn stop_mode_skips_the_tasks_after_a_failure_until_it_is_reported() {
    on_device(1, || {
        let buf = malloc(64);
        let stream = create_stream();
        let marker = plain_event();
        assert_eq!(set_mode(stream, u64::from(ACL_STOP_ON_FAILURE)), ACL_SUCCESS);
        assert_eq!(memset_async(buf, 0x11, 64, stream), ACL_SUCCESS);
        let never = failing_wait(stream);
        assert_eq!(memset_async(buf, 0x22, 64, stream), ACL_SUCCESS);
        assert_eq!(record(marker, stream), ACL_SUCCESS);
        assert_eq!(sync(stream), ACL_ERROR_RT_WAIT_TIMEOUT);
        assert_eq!(first_byte(buf), 0x11, "the memset after the failed wait was skipped");
        // The skipped record never completes: a host wait with a timeout
        // times out, and so does a stream wait with one (as on hardware,
        // where neither would ever end without the timeout).
        assert_eq!(query_old(marker), Ok(ACL_EVENT_STATUS_NOT_READY));
        let watch = soft::MisuseWatch::start();
        // SAFETY: a live event.
        assert_eq!(
            unsafe { aclrtSynchronizeEventWithTimeout(marker, 50) },
            ACL_ERROR_RT_EVENT_SYNC_TIMEOUT
        );
        let waiter = create_stream();
        // SAFETY: handles only.
        assert_eq!(
            unsafe { aclrtStreamWaitEventWithTimeout(waiter, marker, 1) },
            ACL_SUCCESS
        );
        assert_eq!(sync(waiter), ACL_ERROR_RT_WAIT_TIMEOUT);
        destroy_stream(waiter);
        assert!(
            watch
                .seen()
                .iter()
                .any(|misuse| misuse.description.contains("never completes")),
            "the wait for a skipped record is recorded: {:?}",
            watch.seen()
        );
        assert_eq!(query_old(marker), Ok(ACL_EVENT_STATUS_NOT_READY));
        // The failure was reported: the stream runs its tasks again.
        assert_eq!(memset_async(buf, 0x33, 64, stream), ACL_SUCCESS);
        assert_eq!(sync(stream), ACL_SUCCESS);
        assert_eq!(first_byte(buf), 0x33);
        destroy_stream(stream);
        destroy_event(never);
        destroy_event(marker);
        free(buf);
    });
}

#[test]
fn failure_mode_argument_rules() {
    on_device(1, || {
        let stream = create_stream();
        assert_eq!(set_mode(0x5a5a_0000 as aclrtStream, 1), ACL_ERROR_RT_INVALID_HANDLE);
        // Only bit 0 counts; the same mode again succeeds.
        assert_eq!(set_mode(stream, 0), ACL_SUCCESS);
        assert_eq!(set_mode(stream, 2), ACL_SUCCESS);
        assert_eq!(set_mode(stream, 3), ACL_SUCCESS);
        assert_eq!(set_mode(stream, 1), ACL_SUCCESS);
        // Stop back to continue is refused.
        assert_eq!(set_mode(stream, 0), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
        assert!(recent().contains("ACL_CONTINUE_ON_FAILURE"), "{}", recent());
        // NULL: the current device's default stream.
        assert_eq!(set_mode(null_mut(), 0), ACL_SUCCESS);
        destroy_stream(stream);
    });
}

#[test]
fn failure_mode_context_rules() {
    holding_device(0, || {
        let stream = on_device(0, || create_stream() as usize);
        // No current context: the handle first, then the context.
        without_device(|| {
            assert_eq!(set_mode(0x1234 as aclrtStream, 1), ACL_ERROR_RT_INVALID_HANDLE);
            assert_eq!(set_mode(stream as aclrtStream, 1), ACL_ERROR_RT_CONTEXT_NULL);
            assert_eq!(set_mode(null_mut(), 1), ACL_ERROR_RT_CONTEXT_NULL);
        });
        // Another device's stream: the unchanged mode succeeds, a change is refused.
        on_device(1, || {
            assert_eq!(set_mode(stream as aclrtStream, 0), ACL_SUCCESS);
            assert_eq!(set_mode(stream as aclrtStream, 1), ACL_ERROR_RT_STREAM_CONTEXT);
        });
        on_device(0, || destroy_stream(stream as aclrtStream));
    });
}

// ---- aclrtCtxGetCurrentDefaultStream ----------------------------------------------

fn current_default() -> Result<aclrtStream, aclError> {
    let mut stream = null_mut();
    // SAFETY: `stream` is a valid out-pointer.
    match unsafe { aclrtCtxGetCurrentDefaultStream(&mut stream) } {
        ACL_SUCCESS => Ok(stream),
        code => Err(code),
    }
}

fn stream_id(stream: aclrtStream) -> i32 {
    let mut id = -1;
    // SAFETY: `id` is a valid out-pointer.
    assert_eq!(unsafe { aclrtStreamGetId(stream, &mut id) }, ACL_SUCCESS);
    id
}

#[test]
fn default_stream_handle_rules() {
    without_device(|| {
        assert_eq!(
            // SAFETY: a NULL out-pointer is refused before use.
            unsafe { aclrtCtxGetCurrentDefaultStream(null_mut()) },
            ACL_ERROR_INVALID_PARAM
        );
        assert_eq!(current_default(), Err(ACL_ERROR_RT_CONTEXT_NULL));
    });
    on_device(1, || {
        let handle = current_default().unwrap();
        assert!(!handle.is_null());
        assert_eq!(current_default(), Ok(handle), "the same handle each time");
        // It names the default stream: the same stream as NULL.
        assert_eq!(stream_id(handle), stream_id(null_mut()));
        // SAFETY: a handle; the default stream cannot be destroyed.
        assert_eq!(unsafe { aclrtDestroyStream(handle) }, ACL_ERROR_RT_PARAM_INVALID);
        assert_eq!(sync(handle), ACL_SUCCESS, "still usable");
    });
}

#[test]
fn work_on_the_default_stream_handle_is_ordered_with_null() {
    on_device(1, || {
        let buf = malloc(256);
        let handle = current_default().unwrap();
        // Held back through the handle; work queued on NULL waits behind it.
        let gate = Gate::block(handle);
        assert_eq!(memset_async(buf, 0x5c, 256, null_mut()), ACL_SUCCESS);
        let mut status = 99;
        // SAFETY: `status` is a valid out-pointer.
        assert_eq!(unsafe { aclrtStreamQuery(handle, &mut status) }, ACL_SUCCESS);
        assert_eq!(status, ACL_STREAM_STATUS_NOT_READY);
        let event = plain_event();
        assert_eq!(record(event, handle), ACL_SUCCESS);
        gate.open();
        // SAFETY: a live event.
        assert_eq!(unsafe { aclrtSynchronizeEvent(event) }, ACL_SUCCESS);
        assert_eq!(
            first_byte(buf),
            0x5c,
            "the memset on NULL ran before the record on the handle"
        );
        assert_eq!(sync(handle), ACL_SUCCESS);
        destroy_event(event);
        free(buf);
    });
}

#[test]
fn a_default_stream_handle_of_another_device_is_refused_for_work() {
    holding_device(0, || {
        let handle = on_device(0, || current_default().unwrap() as usize);
        on_device(1, || {
            let buf = malloc(16);
            assert_eq!(
                memset_async(buf, 1, 16, handle as aclrtStream),
                ACL_ERROR_RT_STREAM_CONTEXT
            );
            // Synchronising another device's stream is allowed.
            assert_eq!(sync(handle as aclrtStream), ACL_SUCCESS);
            free(buf);
        });
    });
}

// ---- aclrtGetResInCurrentThread ----------------------------------------------------

fn res_in_thread(kind: aclrtDevResLimitType) -> Result<u32, aclError> {
    let mut value = 0;
    // SAFETY: `value` is a valid out-pointer.
    match unsafe { aclrtGetResInCurrentThread(kind, &mut value) } {
        ACL_SUCCESS => Ok(value),
        code => Err(code),
    }
}

#[test]
fn resources_in_current_thread() {
    on_device(0, || {
        assert_eq!(res_in_thread(ACL_RT_DEV_RES_CUBE_CORE), Ok(24));
        assert_eq!(res_in_thread(ACL_RT_DEV_RES_VECTOR_CORE), Ok(48));
        assert_eq!(res_in_thread(2), Err(ACL_ERROR_RT_PARAM_INVALID));
        // SAFETY: a NULL out-pointer is refused before use (before the type).
        let code = unsafe { aclrtGetResInCurrentThread(7, null_mut()) };
        assert_eq!(code, ACL_ERROR_INVALID_PARAM);
    });
    without_device(|| {
        // The type is checked before the context.
        assert_eq!(res_in_thread(2), Err(ACL_ERROR_RT_PARAM_INVALID));
        assert_eq!(res_in_thread(ACL_RT_DEV_RES_CUBE_CORE), Err(ACL_ERROR_RT_CONTEXT_NULL));
    });
}

// ---- aclrtGetErrorVerbose ------------------------------------------------------------

fn error_verbose(device: i32) -> Result<aclrtErrorInfo, aclError> {
    // SAFETY: all-zero bytes are a valid `aclrtErrorInfo` (integers, a union
    // of integers and a null pointer).
    let mut info: aclrtErrorInfo = unsafe { std::mem::zeroed() };
    info.errorType = 77;
    info.hasDetail = 9;
    // SAFETY: `info` is a valid out-pointer.
    match unsafe { aclrtGetErrorVerbose(device, &mut info) } {
        ACL_SUCCESS => Ok(info),
        code => Err(code),
    }
}

#[test]
fn error_verbose_reports_a_device_whose_task_failed() {
    // Device 0: no task of this binary fails on it (timed-out waits are no
    // device fault).
    on_device(0, || {
        let info = error_verbose(0).unwrap();
        assert_eq!(
            (info.errorType, info.hasDetail, info.tryRepair),
            (ACL_RT_NO_ERROR, 0, 0)
        );
    });
    assert_eq!(error_verbose(2).err(), Some(ACL_ERROR_RT_INVALID_DEVICEID));
    assert_eq!(error_verbose(-1).err(), Some(ACL_ERROR_RT_INVALID_DEVICEID));
    // SAFETY: a NULL out-pointer is refused before use (before the device).
    assert_eq!(unsafe { aclrtGetErrorVerbose(9, null_mut()) }, ACL_ERROR_INVALID_PARAM);
    holding_device(1, || {
        on_device(1, || {
            // A memset whose memory is freed while it is queued fails on the device.
            let buf = malloc(4096);
            let stream = create_stream();
            let gate = Gate::block(stream);
            assert_eq!(memset_async(buf, 1, 4096, stream), ACL_SUCCESS);
            free(buf);
            gate.open();
            assert_eq!(sync(stream), ACL_ERROR_RT_SYS_DMA);
            destroy_stream(stream);
        });
        let info = error_verbose(1).unwrap();
        assert_eq!(
            (info.errorType, info.hasDetail, info.tryRepair),
            (ACL_RT_ERROR_OTHERS, 0, 0)
        );
    });
}

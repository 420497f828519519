//! Entry points of 3.3 Streams and events.
#![allow(non_snake_case, clippy::too_many_arguments)]

use super::*;
use crate::soft::compose::state_callbacks;
use crate::soft::compose::streams::{self, EventCreation, ValueCall};

fn create_stream_into(stream: *mut aclrtStream, priority: u32, flag: u32) -> SoftResult {
    non_null(stream, "stream")?;
    let handle = streams::create_stream(priority, flag)?;
    // SAFETY: checked non-NULL; valid by the call's contract.
    unsafe { put(stream, handle as aclrtStream) };
    state_callbacks::stream_changed(handle as aclrtStream, ACL_RT_STREAM_STATE_CREATE_POST);
    Ok(())
}

/// Tells the stream state callbacks that a live stream is about to be
/// destroyed (not for a handle the destruction will refuse).
fn destroying(stream: aclrtStream) {
    if streams::is_created_stream(stream as usize) {
        state_callbacks::stream_changed(stream, ACL_RT_STREAM_STATE_DESTROY_PRE);
    }
}

pub(crate) unsafe fn aclrtCreateStream(stream: *mut aclrtStream) -> aclError {
    finish("aclrtCreateStream", create_stream_into(stream, 0, 0))
}

pub(crate) unsafe fn aclrtCreateStreamWithConfig(stream: *mut aclrtStream, priority: u32, flag: u32) -> aclError {
    finish(
        "aclrtCreateStreamWithConfig",
        create_stream_into(stream, priority, flag),
    )
}

pub(crate) unsafe fn aclrtDestroyStream(stream: aclrtStream) -> aclError {
    destroying(stream);
    finish(
        "aclrtDestroyStream",
        non_null(stream, "stream").and_then(|()| streams::destroy_stream(stream as usize)),
    )
}

pub(crate) unsafe fn aclrtDestroyStreamForce(stream: aclrtStream) -> aclError {
    destroying(stream);
    finish(
        "aclrtDestroyStreamForce",
        non_null(stream, "stream").and_then(|()| streams::destroy_stream_force(stream as usize)),
    )
}

pub(crate) unsafe fn aclrtSynchronizeStream(stream: aclrtStream) -> aclError {
    finish(
        "aclrtSynchronizeStream",
        streams::synchronize_stream(stream as usize, None),
    )
}

pub(crate) unsafe fn aclrtSynchronizeStreamWithTimeout(stream: aclrtStream, timeout: i32) -> aclError {
    finish(
        "aclrtSynchronizeStreamWithTimeout",
        streams::deadline(timeout).and_then(|deadline| streams::synchronize_stream(stream as usize, deadline)),
    )
}

pub(crate) unsafe fn aclrtStreamQuery(stream: aclrtStream, status: *mut aclrtStreamStatus) -> aclError {
    let outcome = non_null(status, "status").and_then(|()| {
        let value = streams::query_stream(stream as usize)?;
        // SAFETY: checked non-NULL; valid by the call's contract.
        unsafe { put(status, value) };
        Ok(())
    });
    finish("aclrtStreamQuery", outcome)
}

/// The stream getters: the ACL layer's NULL check of the out-pointer, then
/// the runtime's query.
fn get_into<T>(api: &'static str, out: *mut T, name: &str, query: impl FnOnce() -> SoftResult<T>) -> aclError {
    let outcome = non_null(out, name).and_then(|()| {
        let value = query()?;
        // SAFETY: checked non-NULL; valid by the call's contract.
        unsafe { put(out, value) };
        Ok(())
    });
    finish(api, outcome)
}

pub(crate) unsafe fn aclrtStreamGetId(stream: aclrtStream, streamId: *mut i32) -> aclError {
    get_into("aclrtStreamGetId", streamId, "streamId", || {
        streams::stream_id(stream as usize)
    })
}

pub(crate) unsafe fn aclrtStreamGetPriority(stream: aclrtStream, priority: *mut u32) -> aclError {
    get_into("aclrtStreamGetPriority", priority, "priority", || {
        streams::stream_priority(stream as usize)
    })
}

pub(crate) unsafe fn aclrtStreamGetFlags(stream: aclrtStream, flags: *mut u32) -> aclError {
    get_into("aclrtStreamGetFlags", flags, "flags", || {
        streams::stream_flags(stream as usize)
    })
}

fn create_event_into(event: *mut aclrtEvent, creation: EventCreation, flag: u32) -> SoftResult {
    non_null(event, "event")?;
    let handle = streams::create_event(creation, flag)?;
    // SAFETY: checked non-NULL; valid by the call's contract.
    unsafe { put(event, handle as aclrtEvent) };
    Ok(())
}

pub(crate) unsafe fn aclrtCreateEvent(event: *mut aclrtEvent) -> aclError {
    finish("aclrtCreateEvent", create_event_into(event, EventCreation::Plain, 0))
}

pub(crate) unsafe fn aclrtCreateEventWithFlag(event: *mut aclrtEvent, flag: u32) -> aclError {
    finish(
        "aclrtCreateEventWithFlag",
        create_event_into(event, EventCreation::WithFlag, flag),
    )
}

pub(crate) unsafe fn aclrtCreateEventExWithFlag(event: *mut aclrtEvent, flag: u32) -> aclError {
    finish(
        "aclrtCreateEventExWithFlag",
        create_event_into(event, EventCreation::ExWithFlag, flag),
    )
}

pub(crate) unsafe fn aclrtDestroyEvent(event: aclrtEvent) -> aclError {
    finish(
        "aclrtDestroyEvent",
        non_null(event, "event").and_then(|()| streams::destroy_event(event as usize)),
    )
}

pub(crate) unsafe fn aclrtRecordEvent(event: aclrtEvent, stream: aclrtStream) -> aclError {
    finish(
        "aclrtRecordEvent",
        non_null(event, "event").and_then(|()| streams::record_event(event as usize, stream as usize)),
    )
}

pub(crate) unsafe fn aclrtResetEvent(event: aclrtEvent, stream: aclrtStream) -> aclError {
    finish(
        "aclrtResetEvent",
        non_null(event, "event").and_then(|()| streams::reset_event(event as usize, stream as usize)),
    )
}

/// The ACL layer's check of `aclrtSynchronizeEventWithTimeout`'s timeout
/// (before the NULL check): -1 or more.
fn check_event_timeout(timeout: i32) -> SoftResult {
    if timeout < -1 {
        return fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("timeout {timeout} ms is below -1 (-1: no limit)"),
        );
    }
    Ok(())
}

pub(crate) unsafe fn aclrtSynchronizeEventWithTimeout(event: aclrtEvent, timeout: i32) -> aclError {
    finish(
        "aclrtSynchronizeEventWithTimeout",
        check_event_timeout(timeout)
            .and(non_null(event, "event"))
            .and_then(|()| streams::synchronize_event_timeout(event as usize, timeout)),
    )
}

pub(crate) unsafe fn aclrtSynchronizeEvent(event: aclrtEvent) -> aclError {
    finish(
        "aclrtSynchronizeEvent",
        non_null(event, "event").and_then(|()| streams::synchronize_event(event as usize)),
    )
}

pub(crate) unsafe fn aclrtQueryEventStatus(event: aclrtEvent, status: *mut aclrtEventRecordedStatus) -> aclError {
    let outcome = non_null(event, "event").and(non_null(status, "status")).and_then(|()| {
        let value = streams::query_event(event as usize)?;
        // SAFETY: checked non-NULL; valid by the call's contract.
        unsafe { put(status, value) };
        Ok(())
    });
    finish("aclrtQueryEventStatus", outcome)
}

pub(crate) unsafe fn aclrtQueryEvent(event: aclrtEvent, status: *mut aclrtEventStatus) -> aclError {
    let outcome = non_null(event, "event").and(non_null(status, "status")).and_then(|()| {
        let value = streams::query_event_old(event as usize)?;
        // SAFETY: checked non-NULL; valid by the call's contract.
        unsafe { put(status, value) };
        Ok(())
    });
    finish("aclrtQueryEvent", outcome)
}

pub(crate) unsafe fn aclrtQueryEventWaitStatus(event: aclrtEvent, status: *mut aclrtEventWaitStatus) -> aclError {
    let outcome = non_null(event, "event").and(non_null(status, "status")).and_then(|()| {
        let value = streams::query_event_wait_status(event as usize)?;
        // SAFETY: checked non-NULL; valid by the call's contract.
        unsafe { put(status, value) };
        Ok(())
    });
    finish("aclrtQueryEventWaitStatus", outcome)
}

pub(crate) unsafe fn aclrtSetStreamFailureMode(stream: aclrtStream, mode: u64) -> aclError {
    finish(
        "aclrtSetStreamFailureMode",
        streams::set_failure_mode(stream as usize, mode),
    )
}

pub(crate) unsafe fn aclrtIpcGetEventHandle(event: aclrtEvent, handle: *mut aclrtIpcEventHandle) -> aclError {
    let outcome = non_null(handle, "handle").and(non_null(event, "event")).and_then(|()| {
        let bytes = streams::ipc_event_handle(event as usize)?;
        // SAFETY: checked non-NULL; valid for a write of the handle by
        // the call's contract. The bytes are written through the raw
        // pointer (the runtime writes its own part only).
        unsafe {
            let out = (&raw mut (*handle).reserved).cast::<u8>();
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), out, bytes.len());
        }
        Ok(())
    });
    finish("aclrtIpcGetEventHandle", outcome)
}

pub(crate) unsafe fn aclrtIpcOpenEventHandle(handle: aclrtIpcEventHandle, event: *mut aclrtEvent) -> aclError {
    let outcome = non_null(event, "event").and_then(|()| {
        let bytes: [u8; 64] = handle.reserved.map(|byte| byte as u8);
        let opened = streams::open_ipc_event(&bytes)?;
        // SAFETY: checked non-NULL; valid by the call's contract.
        unsafe { put(event, opened as aclrtEvent) };
        Ok(())
    });
    finish("aclrtIpcOpenEventHandle", outcome)
}

pub(crate) unsafe fn aclrtStreamWaitEvent(stream: aclrtStream, event: aclrtEvent) -> aclError {
    finish(
        "aclrtStreamWaitEvent",
        non_null(event, "event").and_then(|()| streams::stream_wait_event(stream as usize, event as usize)),
    )
}

pub(crate) unsafe fn aclrtStreamWaitEventWithTimeout(stream: aclrtStream, event: aclrtEvent, timeout: i32) -> aclError {
    finish(
        "aclrtStreamWaitEventWithTimeout",
        streams::stream_wait_event_timeout(stream as usize, event as usize, timeout),
    )
}

pub(crate) unsafe fn aclrtEventGetTimestamp(event: aclrtEvent, timestamp: *mut u64) -> aclError {
    let outcome = non_null(timestamp, "timestamp")
        .and(non_null(event, "event"))
        .and_then(|()| {
            let value = streams::event_timestamp(event as usize)?;
            // SAFETY: checked non-NULL; valid by the call's contract.
            unsafe { put(timestamp, value) };
            Ok(())
        });
    finish("aclrtEventGetTimestamp", outcome)
}

pub(crate) unsafe fn aclrtEventElapsedTime(ms: *mut f32, startEvent: aclrtEvent, endEvent: aclrtEvent) -> aclError {
    let outcome = non_null(ms, "ms")
        .and(non_null(startEvent, "startEvent"))
        .and(non_null(endEvent, "endEvent"))
        .and_then(|()| {
            let value = streams::elapsed_time(startEvent as usize, endEvent as usize)?;
            // SAFETY: checked non-NULL; valid by the call's contract.
            unsafe { put(ms, value) };
            Ok(())
        });
    finish("aclrtEventElapsedTime", outcome)
}

// 3.4: the stream memory operations (API reference 11-09).

pub(crate) unsafe fn aclrtValueWrite(devAddr: *mut c_void, value: u64, flag: u32, stream: aclrtStream) -> aclError {
    finish(
        "aclrtValueWrite",
        non_null(devAddr, "devAddr")
            .and_then(|()| streams::enqueue_value(ValueCall::Write, devAddr as usize, value, flag, stream as usize)),
    )
}

pub(crate) unsafe fn aclrtValueWait(devAddr: *mut c_void, value: u64, flag: u32, stream: aclrtStream) -> aclError {
    finish(
        "aclrtValueWait",
        non_null(devAddr, "devAddr")
            .and_then(|()| streams::enqueue_value(ValueCall::Wait, devAddr as usize, value, flag, stream as usize)),
    )
}

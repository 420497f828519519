//! Entry points of the event and stream calls of issue 41: records and
//! waits with flags, event ids, the events left, stream abort and stop.
#![allow(non_snake_case)]

use super::*;
use crate::soft::compose::streams;

/// The ACL layer's flag check shared by both calls: 0 (`*_DEFAULT`) or 1
/// (`*_EXTERNAL`), else 100000.
fn check_flag(flag: u32, names: &str) -> SoftResult {
    if flag > 1 {
        return fail(ACL_ERROR_INVALID_PARAM, format!("flag {flag} is not {names}"));
    }
    Ok(())
}

/// `aclrtRecordEventWithFlag`: NULL event → 100000, a flag other than
/// `ACL_EVENT_RECORD_DEFAULT`/`EXTERNAL` → 100000; then
/// `aclrtRecordEvent`'s rules, or 107029 for `EXTERNAL` (no stream is
/// being captured into a graph on the software device).
pub(crate) unsafe fn aclrtRecordEventWithFlag(event: aclrtEvent, stream: aclrtStream, flag: u32) -> aclError {
    let outcome = non_null(event, "event")
        .and_then(|()| check_flag(flag, "ACL_EVENT_RECORD_DEFAULT or ACL_EVENT_RECORD_EXTERNAL"))
        .and_then(|()| streams::record_event_with_flag(event as usize, stream as usize, flag));
    finish("aclrtRecordEventWithFlag", outcome)
}

/// `aclrtStreamWaitEventWithFlag`: NULL event → 100000, a flag other than
/// `ACL_EVENT_WAIT_DEFAULT`/`EXTERNAL` → 100000, `EXTERNAL` with a
/// timeout → 100000; then `aclrtStreamWaitEventWithTimeout`'s rules
/// (seconds, 0: no limit), or 107029 for `EXTERNAL`.
pub(crate) unsafe fn aclrtStreamWaitEventWithFlag(
    stream: aclrtStream,
    event: aclrtEvent,
    timeout: u32,
    flag: u32,
) -> aclError {
    let outcome = non_null(event, "event")
        .and_then(|()| check_flag(flag, "ACL_EVENT_WAIT_DEFAULT or ACL_EVENT_WAIT_EXTERNAL"))
        .and_then(|()| {
            if flag == ACL_EVENT_WAIT_EXTERNAL && timeout != 0 {
                return fail(
                    ACL_ERROR_INVALID_PARAM,
                    format!("timeout {timeout} s: ACL_EVENT_WAIT_EXTERNAL accepts only 0"),
                );
            }
            Ok(())
        })
        .and_then(|()| streams::stream_wait_event_with_flag(stream as usize, event as usize, timeout, flag));
    finish("aclrtStreamWaitEventWithFlag", outcome)
}

/// `aclrtGetEventId`: NULL arguments → 100000, then the handle (107017) and
/// `ACL_EVENT_IPC` events (207000).
pub(crate) unsafe fn aclrtGetEventId(event: aclrtEvent, eventId: *mut u32) -> aclError {
    let outcome = non_null(event, "event")
        .and_then(|()| non_null(eventId, "eventId"))
        .and_then(|()| {
            let id = streams::event_id(event as usize)?;
            // SAFETY: checked non-NULL; valid by the call's contract.
            unsafe { put(eventId, id) };
            Ok(())
        });
    finish("aclrtGetEventId", outcome)
}

/// `aclrtGetEventAvailNum`: NULL count → 100000, no context → 107002; the
/// events the current device may still create.
pub(crate) unsafe fn aclrtGetEventAvailNum(eventCount: *mut u32) -> aclError {
    let outcome = non_null(eventCount, "eventCount").and_then(|()| {
        let count = streams::events_available()?;
        // SAFETY: checked non-NULL; valid by the call's contract.
        unsafe { put(eventCount, count) };
        Ok(())
    });
    finish("aclrtGetEventAvailNum", outcome)
}

/// `aclrtStreamAbort`: see [`streams::abort_stream`].
pub(crate) unsafe fn aclrtStreamAbort(stream: aclrtStream) -> aclError {
    finish("aclrtStreamAbort", streams::abort_stream(stream as usize))
}

/// `aclrtStreamStop`: see [`streams::stop_stream`].
pub(crate) unsafe fn aclrtStreamStop(stream: aclrtStream) -> aclError {
    finish("aclrtStreamStop", streams::stop_stream(stream as usize))
}

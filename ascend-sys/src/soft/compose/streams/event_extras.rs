//! The event calls of issue 41: `aclrtRecordEventWithFlag`,
//! `aclrtStreamWaitEventWithFlag`, `aclrtGetEventId` and
//! `aclrtGetEventAvailNum` (after the ACL layer's checks, in `entry/`).

use super::event_ops::{enqueue_wait, lookup_event};
use super::{EVENT_TAG, HANDLE_BASE, lock, lookup_stream, record_event};
use crate::soft::core::soft_result::{SoftResult, fail};
use crate::soft::started::current;
use crate::types::*;
use std::time::Duration;

/// Events one device can have at once: 65536 on the Atlas A2 and A3
/// series the software device models (the runtime's documented limit).
pub(crate) const EVENTS_PER_DEVICE: u32 = 65_536;

/// The runtime's answer to an `*_EXTERNAL` flag on a stream that is not
/// being captured into a graph: the software device captures no graphs, so
/// no stream ever is. The handles are checked first.
fn refuse_external(api: &str, stream: usize, event: usize) -> SoftResult {
    let streams = lock()?;
    lookup_stream(&streams, stream)?;
    lookup_event(&streams, event, "event")?;
    fail(
        ACL_ERROR_RT_STREAM_NOT_CAPTURED,
        format!("{api} with an *_EXTERNAL flag needs a stream being captured into a graph; the stream is not"),
    )
}

/// `aclrtRecordEventWithFlag` after the ACL layer's checks:
/// `ACL_EVENT_RECORD_DEFAULT` is `aclrtRecordEvent`;
/// `ACL_EVENT_RECORD_EXTERNAL` → 107029 (no stream is being captured).
pub(crate) fn record_event_with_flag(event: usize, stream: usize, flag: u32) -> SoftResult {
    if flag == ACL_EVENT_RECORD_EXTERNAL {
        return refuse_external("aclrtRecordEventWithFlag", stream, event);
    }
    record_event(event, stream)
}

/// `aclrtStreamWaitEventWithFlag` after the ACL layer's checks:
/// `ACL_EVENT_WAIT_DEFAULT` is `aclrtStreamWaitEventWithTimeout` with an
/// unsigned timeout (seconds, 0: no limit); `ACL_EVENT_WAIT_EXTERNAL` →
/// 107029 (no stream is being captured).
pub(crate) fn stream_wait_event_with_flag(stream: usize, event: usize, timeout: u32, flag: u32) -> SoftResult {
    if flag == ACL_EVENT_WAIT_EXTERNAL {
        return refuse_external("aclrtStreamWaitEventWithFlag", stream, event);
    }
    let timeout = (timeout != 0).then(|| Duration::from_secs(u64::from(timeout)));
    enqueue_wait("aclrtStreamWaitEventWithFlag", stream, event, timeout)
}

/// `aclrtGetEventId` after the ACL layer's checks: the handle (107017),
/// then `ACL_EVENT_IPC` events → 207000 (documented). The id is the
/// event's number among the streams and events the process created (never
/// reused), where the runtime reports its own event id.
pub(crate) fn event_id(handle: usize) -> SoftResult<u32> {
    let event = lookup_event(&*lock()?, handle, "event")?;
    if event.flags & ACL_EVENT_IPC != 0 {
        return fail(
            ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
            format!("event {handle:#x} was created with ACL_EVENT_IPC, which aclrtGetEventId does not support"),
        );
    }
    let number = (handle & !HANDLE_BASE & !EVENT_TAG) >> 4;
    u32::try_from(number).or_else(|_| {
        fail(
            ACL_ERROR_RT_INTERNAL_ERROR,
            format!("event {handle:#x}: its number does not fit 32 bits"),
        )
    })
}

/// `aclrtGetEventAvailNum` after the ACL layer's checks: no context →
/// 107002; [`EVENTS_PER_DEVICE`] minus the live events of the current
/// device.
pub(crate) fn events_available() -> SoftResult<u32> {
    let device = current::require()?;
    let streams = lock()?;
    let live = streams.events.values().filter(|event| event.device == device).count();
    let live = u32::try_from(live).unwrap_or(u32::MAX);
    Ok(EVENTS_PER_DEVICE.saturating_sub(live))
}

//! The event calls (`aclrtCreateEvent*`, `aclrtRecordEvent`,
//! `aclrtStreamWaitEvent*`, `aclrtResetEvent`, `aclrtSynchronizeEvent*`,
//! `aclrtQueryEvent*`, `aclrtEventElapsedTime`, `aclrtEventGetTimestamp`,
//! `aclrtDestroyEvent` and the IPC event handles): the runtime's checks on
//! their arguments, then the work on the event ([`super::Event`]) and the
//! stream's queue. Events live in the streams family's table ([`super::Streams`]),
//! under its lock.

use super::{EVENT_TAG, Event, EventMode, Streams, deadline, ipc_event, lock, lookup_stream, target_stream, task};
use crate::soft::check::sanitize;
use crate::soft::core::soft_result::{SoftResult, fail};
use crate::soft::started::current;
use crate::types::*;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

/// The event `handle` refers to, or `ACL_ERROR_RT_INVALID_HANDLE`.
pub(super) fn lookup_event(streams: &Streams, handle: usize, role: &str) -> SoftResult<Arc<Event>> {
    match streams.events.get(&handle) {
        Some(event) => Ok(Arc::clone(event)),
        None => fail(
            ACL_ERROR_RT_INVALID_HANDLE,
            format!("{role} {handle:#x} is not a live event (never created, or already destroyed)"),
        ),
    }
}

/// Runtime event flags (the ACL layer hands `ACL_EVENT_*` through unchanged;
/// 0x4 is a runtime-only bit that `aclrtCreateEvent` sets).
const EVENT_SYNC: u32 = ACL_EVENT_SYNC;
const EVENT_STREAM_MARK: u32 = ACL_EVENT_CAPTURE_STREAM_PROGRESS;
const EVENT_DDSYNC: u32 = 0x4;
const EVENT_TIME_LINE: u32 = ACL_EVENT_TIME_LINE;
const EVENT_DEVICE_ONLY: u32 = ACL_EVENT_DEVICE_USE_ONLY;
const EVENT_EXTERNAL: u32 = ACL_EVENT_EXTERNAL;
const EVENT_IPC: u32 = ACL_EVENT_IPC;
/// The flags `aclrtCreateEvent` gives its events.
const EVENT_DEFAULT: u32 = EVENT_DDSYNC | EVENT_TIME_LINE | EVENT_STREAM_MARK;

/// Which creation call made an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EventCreation {
    /// `aclrtCreateEvent`.
    Plain,
    /// `aclrtCreateEventWithFlag`.
    WithFlag,
    /// `aclrtCreateEventExWithFlag`.
    ExWithFlag,
}

fn check_event_flag(creation: EventCreation, flag: u32) -> SoftResult<u32> {
    let alone = |bit: u32| flag & bit != 0 && flag & !bit != 0;
    match creation {
        EventCreation::Plain => Ok(EVENT_DEFAULT),
        EventCreation::WithFlag => {
            let valid =
                EVENT_SYNC | EVENT_STREAM_MARK | EVENT_DDSYNC | EVENT_TIME_LINE | EVENT_DEVICE_ONLY | EVENT_EXTERNAL;
            if flag & valid == 0 || flag > valid {
                return fail(
                    ACL_ERROR_RT_PARAM_INVALID,
                    format!(
                        "flag {flag:#x} is not an OR of ACL_EVENT_SYNC, ACL_EVENT_CAPTURE_STREAM_PROGRESS, ACL_EVENT_TIME_LINE (or ACL_EVENT_DEVICE_USE_ONLY / ACL_EVENT_EXTERNAL alone)"
                    ),
                );
            }
            if alone(EVENT_DEVICE_ONLY) || alone(EVENT_EXTERNAL) {
                return fail(
                    ACL_ERROR_RT_PARAM_INVALID,
                    format!(
                        "flag {flag:#x}: ACL_EVENT_DEVICE_USE_ONLY and ACL_EVENT_EXTERNAL cannot be combined with other flags"
                    ),
                );
            }
            Ok(flag)
        }
        EventCreation::ExWithFlag => {
            if alone(EVENT_DEVICE_ONLY) || alone(EVENT_EXTERNAL) || alone(EVENT_IPC) {
                return fail(
                    ACL_ERROR_RT_PARAM_INVALID,
                    format!("flag {flag:#x}: ACL_EVENT_IPC cannot be combined with other flags"),
                );
            }
            let valid = EVENT_SYNC | EVENT_STREAM_MARK | EVENT_DDSYNC | EVENT_TIME_LINE | EVENT_IPC;
            if flag & valid == 0 || flag > valid {
                return fail(
                    ACL_ERROR_RT_PARAM_INVALID,
                    format!(
                        "flag {flag:#x} is not an OR of ACL_EVENT_SYNC, ACL_EVENT_CAPTURE_STREAM_PROGRESS and ACL_EVENT_TIME_LINE (or ACL_EVENT_IPC alone)"
                    ),
                );
            }
            Ok(flag)
        }
    }
}

/// `aclrtCreateEvent*`: an event on the current device.
pub(crate) fn create_event(creation: EventCreation, flag: u32) -> SoftResult<usize> {
    let flags = check_event_flag(creation, flag)?;
    timestamp_origin();
    let device = current::require()?;
    let mode = if creation == EventCreation::ExWithFlag {
        EventMode::Ex
    } else {
        EventMode::Classic
    };
    let ipc = if flags == EVENT_IPC {
        Some(ipc_event::IpcShared::create()?)
    } else {
        None
    };
    let mut streams = lock()?;
    let (_, handle) = streams.next_handle(EVENT_TAG);
    streams
        .events
        .insert(handle, Arc::new(Event::new(handle, device, flags, mode, ipc)));
    Ok(handle)
}

/// `aclrtIpcGetEventHandle` (the ACL layer has refused NULL arguments):
/// the handle (107017), then an event not created with `ACL_EVENT_IPC`
/// alone → `ACL_ERROR_RT_PARAM_INVALID`. The handle names the event's
/// shared page; it stays valid while the event lives.
pub(crate) fn ipc_event_handle(event: usize) -> SoftResult<[u8; ipc_event::HANDLE_BYTES]> {
    let event = lookup_event(&*lock()?, event, "event")?;
    match &event.ipc {
        Some(ipc) => Ok(ipc.handle()),
        None => fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!(
                "event {:#x} (flag {:#x}) was not created with ACL_EVENT_IPC (aclrtCreateEventExWithFlag)",
                event.handle, event.flags
            ),
        ),
    }
}

/// `aclrtIpcOpenEventHandle` (the ACL layer has refused a NULL out-pointer):
/// a current context (107002), then the page the handle names: another
/// process's IPC event or this process's own (107000 when it names no live
/// IPC event, 207006 for a process of another user). The opened event is an
/// IPC event of the current device: record it, wait for it, synchronise
/// with it, query it; destroy it with `aclrtDestroyEvent`.
pub(crate) fn open_ipc_event(handle: &[u8; ipc_event::HANDLE_BYTES]) -> SoftResult<usize> {
    let device = current::require()?;
    let ipc = ipc_event::IpcShared::open(handle)?;
    let mut streams = lock()?;
    let (_, handle) = streams.next_handle(EVENT_TAG);
    let event = Event::new(handle, device, EVENT_IPC, EventMode::Ex, Some(ipc));
    streams.events.insert(handle, Arc::new(event));
    Ok(handle)
}

/// `aclrtDestroyEvent`: does not wait; records still queued complete
/// harmlessly, and a stream waiting for a record that will now never be
/// issued stops waiting.
pub(crate) fn destroy_event(handle: usize) -> SoftResult {
    let mut streams = lock()?;
    let event = lookup_event(&streams, handle, "event")?;
    streams.events.remove(&handle);
    event.destroy();
    sanitize::event_destroyed(handle);
    Ok(())
}

fn refuse_device_only(event: &Event, api: &str) -> SoftResult {
    if event.flags & EVENT_DEVICE_ONLY != 0 {
        return fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!(
                "event {:#x} was created with ACL_EVENT_DEVICE_USE_ONLY and cannot be used by {api} on the host",
                event.handle
            ),
        );
    }
    Ok(())
}

fn refuse_external(event: &Event, what: &str) -> SoftResult {
    refuse_flags(event, EVENT_EXTERNAL | EVENT_IPC, what)
}

/// Refuses `ACL_EVENT_EXTERNAL` events only: IPC events may be
/// synchronised and queried (the runtime's IPC query and sync).
fn refuse_external_only(event: &Event, what: &str) -> SoftResult {
    refuse_flags(event, EVENT_EXTERNAL, what)
}

fn refuse_flags(event: &Event, refused: u32, what: &str) -> SoftResult {
    if event.flags & refused != 0 {
        let flag = if event.flags & EVENT_IPC != 0 {
            "ACL_EVENT_IPC"
        } else {
            "ACL_EVENT_EXTERNAL"
        };
        return fail(
            ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
            format!(
                "event {:#x} was created with {flag}, which does not support {what}",
                event.handle
            ),
        );
    }
    Ok(())
}

/// `aclrtRecordEvent`: enqueues a marker on the stream (NULL: the default
/// stream); the event's latest record is that marker from now on.
pub(crate) fn record_event(event: usize, stream: usize) -> SoftResult {
    let mut streams = lock()?;
    let event = lookup_event(&streams, event, "event")?;
    let explicit = lookup_stream(&streams, stream)?;
    refuse_device_only(&event, "aclrtRecordEvent")?;
    let device = current::require()?;
    let stream = target_stream(&mut streams, explicit, device)?;
    let number = event.issue();
    sanitize::record(stream.site(), event.handle);
    stream.submit(task::Task::record(event, number));
    Ok(())
}

/// Refuses events no stream can wait for (nor reset): those without
/// `ACL_EVENT_SYNC` (the runtime's "event without wait task").
fn refuse_without_wait_task(event: &Event, api: &str) -> SoftResult {
    if event.flags & (EVENT_SYNC | EVENT_DDSYNC | EVENT_EXTERNAL | EVENT_IPC) == 0 {
        return fail(
            ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
            format!(
                "event {:#x} (flag {:#x}) has no ACL_EVENT_SYNC: {api} does not support it",
                event.handle, event.flags
            ),
        );
    }
    Ok(())
}

/// `aclrtStreamWaitEvent`: the stream's later tasks wait until the event's
/// latest record (at the time of this call) is reached.
///
/// An event never recorded (or reset since its latest record):
/// `aclrtCreateEventExWithFlag` events make this a no-op (documented);
/// other events with `ACL_EVENT_SYNC` wait for the event's next record;
/// others are refused (`ACL_ERROR_RT_PARAM_INVALID`, "record first"), as
/// the runtime does.
pub(crate) fn stream_wait_event(stream: usize, event: usize) -> SoftResult {
    enqueue_wait("aclrtStreamWaitEvent", stream, event, None)
}

/// `aclrtStreamWaitEventWithTimeout`: as [`stream_wait_event`], and the
/// wait fails on the stream with `ACL_ERROR_RT_WAIT_TIMEOUT` when the record
/// is not reached `timeout` seconds after the stream started waiting (0: no
/// limit; the ACL layer refuses negative values with
/// `ACL_ERROR_RT_PARAM_INVALID`). A NULL event is refused by the runtime
/// with `ACL_ERROR_RT_PARAM_INVALID` (this call has no ACL-layer NULL
/// check).
pub(crate) fn stream_wait_event_timeout(stream: usize, event: usize, timeout: i32) -> SoftResult {
    let timeout = match u64::try_from(timeout) {
        Ok(0) => None,
        Ok(seconds) => Some(Duration::from_secs(seconds)),
        Err(_) => {
            return fail(
                ACL_ERROR_RT_PARAM_INVALID,
                format!("timeout {timeout} s is negative (0: no limit, or a number of seconds)"),
            );
        }
    };
    enqueue_wait("aclrtStreamWaitEventWithTimeout", stream, event, timeout)
}

pub(super) fn enqueue_wait(api: &'static str, stream: usize, event: usize, timeout: Option<Duration>) -> SoftResult {
    let mut streams = lock()?;
    let explicit = lookup_stream(&streams, stream)?;
    if event == 0 {
        return fail(ACL_ERROR_RT_PARAM_INVALID, "event is NULL");
    }
    let event = lookup_event(&streams, event, "event")?;
    refuse_device_only(&event, api)?;
    refuse_without_wait_task(&event, api)?;
    let device = current::require()?;
    let stream = target_stream(&mut streams, explicit, device)?;
    let target = match event.latest() {
        0 if event.mode == EventMode::Ex => {
            sanitize::wait_event(stream.site(), event.handle, sanitize::WaitFor::Nothing, api);
            return Ok(());
        }
        0 if event.flags & (EVENT_SYNC | EVENT_EXTERNAL) != 0 => event.next_record(),
        0 => {
            return fail(
                ACL_ERROR_RT_PARAM_INVALID,
                format!(
                    "event {:#x} has not been recorded: call aclrtRecordEvent before {api}",
                    event.handle
                ),
            );
        }
        latest => latest,
    };
    let waits_for = if target == event.latest() {
        sanitize::WaitFor::Latest
    } else {
        sanitize::WaitFor::Next
    };
    sanitize::wait_event(stream.site(), event.handle, waits_for, api);
    stream.submit(task::Task::wait(api, event, target, timeout));
    Ok(())
}

/// `aclrtResetEvent`: enqueues a reset on the stream (NULL: the default
/// stream); when the stream reaches it, the records issued up to this call
/// are forgotten and the event counts as never recorded (a query says not
/// ready, a wait waits for the next record). The runtime's rules: handles
/// first (event, then stream: 107017), `ACL_EVENT_DEVICE_USE_ONLY` events
/// 107000, IPC events and events without `ACL_EVENT_SYNC` 207000, no
/// context 107002, `aclrtCreateEventExWithFlag` events 207000, a stream of
/// another device 107003.
pub(crate) fn reset_event(event: usize, stream: usize) -> SoftResult {
    let mut streams = lock()?;
    let event = lookup_event(&streams, event, "event")?;
    let explicit = lookup_stream(&streams, stream)?;
    refuse_device_only(&event, "aclrtResetEvent")?;
    if event.flags & EVENT_IPC != 0 {
        return fail(
            ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
            format!(
                "event {:#x} is an IPC event, which aclrtResetEvent does not support",
                event.handle
            ),
        );
    }
    refuse_without_wait_task(&event, "aclrtResetEvent")?;
    let device = current::require()?;
    if event.mode == EventMode::Ex {
        return fail(
            ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
            format!(
                "event {:#x} was created by aclrtCreateEventExWithFlag, which aclrtResetEvent does not support",
                event.handle
            ),
        );
    }
    let stream = target_stream(&mut streams, explicit, device)?;
    let through = event.next_record() - 1;
    stream.submit(task::Task::reset(event, through));
    Ok(())
}

/// `aclrtSynchronizeEvent`: waits until the event's latest record is
/// reached; an event never recorded returns at once (as the runtime does).
pub(crate) fn synchronize_event(event: usize) -> SoftResult {
    let event = lookup_event(&*lock()?, event, "event")?;
    wait_for_event(&event, None, "aclrtSynchronizeEvent")
}

/// `aclrtSynchronizeEventWithTimeout` (the ACL layer has refused timeouts
/// below -1 and a NULL event): after the handle, a `timeout` of 0 is refused
/// with `ACL_ERROR_RT_PARAM_INVALID` as the runtime does; a record not
/// reached within `timeout` ms gives `ACL_ERROR_RT_EVENT_SYNC_TIMEOUT`.
pub(crate) fn synchronize_event_timeout(event: usize, timeout: i32) -> SoftResult {
    let event = lookup_event(&*lock()?, event, "event")?;
    let deadline = deadline(timeout)?;
    wait_for_event(&event, deadline, "aclrtSynchronizeEventWithTimeout")
}

fn wait_for_event(event: &Event, deadline: Option<Instant>, api: &'static str) -> SoftResult {
    refuse_external_only(event, "synchronisation")?;
    match event.latest() {
        0 => {
            sanitize::host_synchronized_event(event.handle, false, api);
            Ok(())
        }
        latest => {
            if !event.wait_reached(latest, None, deadline) {
                return fail(
                    ACL_ERROR_RT_EVENT_SYNC_TIMEOUT,
                    format!(
                        "record {latest} of event {:#x} was not reached when the timeout expired",
                        event.handle
                    ),
                );
            }
            sanitize::host_synchronized_event(event.handle, true, api);
            Ok(())
        }
    }
}

/// `aclrtQueryEventStatus`: whether the latest record was reached. Before
/// the first record: complete for `aclrtCreateEventExWithFlag` events
/// (documented), not ready for the others (as the runtime does).
pub(crate) fn query_event(event: usize) -> SoftResult<aclrtEventRecordedStatus> {
    let event = lookup_event(&*lock()?, event, "event")?;
    refuse_external_only(&event, "status queries")?;
    let complete = match event.latest() {
        0 => event.mode == EventMode::Ex,
        latest => event.is_reached(latest),
    };
    if complete {
        sanitize::host_saw_event(event.handle);
    }
    Ok(if complete {
        ACL_EVENT_RECORDED_STATUS_COMPLETE
    } else {
        ACL_EVENT_RECORDED_STATUS_NOT_READY
    })
}

/// The runtime's refusals shared by `aclrtQueryEvent` and
/// `aclrtQueryEventWaitStatus` after the handle: events of
/// `aclrtCreateEventExWithFlag` (its "new mode"), `ACL_EVENT_EXTERNAL` and
/// IPC events, each `ACL_ERROR_RT_FEATURE_NOT_SUPPORT`.
fn refuse_for_old_queries(event: &Event, api: &str) -> SoftResult {
    if event.mode == EventMode::Ex {
        return fail(
            ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
            format!(
                "event {:#x} was created by aclrtCreateEventExWithFlag, which {api} does not support \
                 (use aclrtQueryEventStatus)",
                event.handle
            ),
        );
    }
    refuse_external(event, api)
}

/// `aclrtQueryEvent` (deprecated by the runtime): complete unless the
/// event's latest record was issued and not reached yet, so an event never
/// recorded (or reset since) is complete, unlike `aclrtQueryEventStatus`.
/// The runtime's rules after the handle (107017): see
/// [`refuse_for_old_queries`]. "Complete" after a record tells the
/// sanitizer the host saw the event.
pub(crate) fn query_event_old(event: usize) -> SoftResult<aclrtEventStatus> {
    let event = lookup_event(&*lock()?, event, "event")?;
    refuse_for_old_queries(&event, "aclrtQueryEvent")?;
    let complete = match event.latest() {
        0 => true,
        latest => {
            let reached = event.is_reached(latest);
            if reached {
                sanitize::host_saw_event(event.handle);
            }
            reached
        }
    };
    Ok(if complete {
        ACL_EVENT_STATUS_COMPLETE
    } else {
        ACL_EVENT_STATUS_NOT_READY
    })
}

/// `aclrtQueryEventWaitStatus`: complete when no stream wait for the event
/// (`aclrtStreamWaitEvent*`) is enqueued and unfinished, as the runtime
/// answers from its table of the event's wait tasks. The rules after the
/// handle (107017): see [`refuse_for_old_queries`]; no current context is
/// needed.
pub(crate) fn query_event_wait_status(event: usize) -> SoftResult<aclrtEventWaitStatus> {
    let event = lookup_event(&*lock()?, event, "event")?;
    refuse_for_old_queries(&event, "aclrtQueryEventWaitStatus")?;
    Ok(if event.has_waiters() {
        ACL_EVENT_WAIT_STATUS_NOT_READY
    } else {
        ACL_EVENT_WAIT_STATUS_COMPLETE
    })
}

/// `aclrtEventElapsedTime`: milliseconds from `start`'s latest record to
/// `end`'s (negative when `end` was reached first). An event never recorded
/// gives `ACL_ERROR_RT_INTERNAL_ERROR` (the runtime's "event recorder null"
/// maps there); a record not yet reached gives
/// `ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID` (its timestamp is not valid yet).
pub(crate) fn elapsed_time(start: usize, end: usize) -> SoftResult<f32> {
    let (start, end) = {
        let streams = lock()?;
        (
            lookup_event(&streams, start, "startEvent")?,
            lookup_event(&streams, end, "endEvent")?,
        )
    };
    refuse_external(&start, "elapsed time")?;
    refuse_external(&end, "elapsed time")?;
    for (event, role) in [(&start, "startEvent"), (&end, "endEvent")] {
        if event.latest() == 0 {
            return fail(
                ACL_ERROR_RT_INTERNAL_ERROR,
                format!("{role} {:#x} has never been recorded", event.handle),
            );
        }
    }
    let stamp = |event: &Event, role: &str| {
        event.timestamp().map_or_else(
            || {
                fail(
                    ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID,
                    format!(
                        "{role} {:#x}: its latest record has not been reached yet (synchronise first)",
                        event.handle
                    ),
                )
            },
            Ok,
        )
    };
    let (from, to) = (stamp(&start, "startEvent")?, stamp(&end, "endEvent")?);
    let millis = if to >= from {
        to.duration_since(from).as_secs_f64() * 1e3
    } else {
        -(from.duration_since(to).as_secs_f64() * 1e3)
    };
    Ok(millis as f32)
}

/// The software device's time origin for `aclrtEventGetTimestamp` (set when
/// the first event is created, or asked about).
static TIMESTAMP_ORIGIN: OnceLock<Instant> = OnceLock::new();

fn timestamp_origin() -> Instant {
    *TIMESTAMP_ORIGIN.get_or_init(Instant::now)
}

/// `aclrtEventGetTimestamp` (the ACL layer has refused NULL arguments): the
/// time of the event's latest record in microseconds since an origin of the
/// software device, as the runtime divides the device's system counter by
/// its ticks per microsecond. The runtime's rules after the handle (107017):
/// `ACL_EVENT_EXTERNAL` and IPC events 207000; an event never recorded (or
/// reset since) `ACL_ERROR_RT_INTERNAL_ERROR` ("event recorder null"); a
/// record not reached yet `ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID`.
pub(crate) fn event_timestamp(event: usize) -> SoftResult<u64> {
    let event = lookup_event(&*lock()?, event, "event")?;
    refuse_external(&event, "timestamps")?;
    if event.latest() == 0 {
        return fail(
            ACL_ERROR_RT_INTERNAL_ERROR,
            format!("event {:#x} has never been recorded", event.handle),
        );
    }
    match event.timestamp() {
        Some(stamp) => {
            let micros = stamp.saturating_duration_since(timestamp_origin()).as_micros();
            Ok(u64::try_from(micros).unwrap_or(u64::MAX))
        }
        None => fail(
            ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID,
            format!(
                "event {:#x}: its latest record has not been reached yet (synchronise first)",
                event.handle
            ),
        ),
    }
}

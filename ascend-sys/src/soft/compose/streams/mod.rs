//! Streams and events: one worker thread per stream runs its tasks in order.
//!
//! - A stream belongs to the device current when it was created. Its handle
//!   is an opaque token looked up in [`Streams`]; a destroyed or unknown
//!   handle is refused with `ACL_ERROR_RT_INVALID_HANDLE`, as the runtime's
//!   handle check does. NULL means the current device's default stream,
//!   created on first use.
//! - Asynchronous calls check their arguments (translating addresses, so a
//!   bad range fails at the call), enqueue a [`task::Task`] and return. The
//!   stream's worker moves the bytes with the same core as the synchronous
//!   calls ([`crate::soft::compose::copy`]). A failure inside a task is kept on the stream
//!   and reported by its next synchronisation.
//! - An event counts its records: recording enqueues a marker that the
//!   worker "reaches" (stamping the time); waiting and synchronising wait
//!   for the record that was the latest one when they were called. The
//!   event calls are in `event_ops.rs`, the event itself in `event.rs`.
//!
//! Locking: this family's lock (the table of streams and events) may be
//! held while a stream's or an event's own lock is taken (in that order,
//! streams → event → stream queue), never the other way round, and no lock
//! is held while a worker moves bytes or while anybody waits. The family's
//! place among the others is in [`crate::soft::core::lock_order`].

mod abort;
mod batch;
mod callbacks;
mod cmo;
mod event;
mod event_extras;
mod event_ops;
mod faulted_devices;
mod force;
mod indirect;
mod ipc_event;
mod notify;
mod notify_ops;
mod notify_page;
mod queue;
mod rows;
mod task;
mod teardown;
mod transfer;
mod value;

pub(crate) use abort::{abort_stream, stop_stream};
pub(crate) use batch::{Batch, BatchEntry, memcpy_batch, memcpy_batch_async};
pub(crate) use callbacks::{
    SubscriptionKind, launch_callback, launch_host_func, process as process_callbacks,
    subscribe as subscribe_callbacks, unsubscribe as unsubscribe_callbacks,
};
pub(crate) use cmo::{
    DESC_SIZE as CMO_DESC_SIZE, cmo_async, desc_async as cmo_desc_async, set_desc as cmo_set_desc, wait_barrier,
};
pub(crate) use event::{Event, EventMode};
pub(crate) use event_extras::{event_id, events_available, record_event_with_flag, stream_wait_event_with_flag};
pub(crate) use event_ops::{
    EventCreation, create_event, destroy_event, elapsed_time, event_timestamp, ipc_event_handle, open_ipc_event,
    query_event, query_event_old, query_event_wait_status, record_event, reset_event, stream_wait_event,
    stream_wait_event_timeout, synchronize_event, synchronize_event_timeout,
};
pub(crate) use faulted_devices::of as device_fault;
pub(crate) use force::destroy_stream_force;
pub(crate) use indirect::{MEMCPY_DESC_SIZE, memcpy_async_with_desc, memcpy_async_with_offset, set_memcpy_desc};
pub(crate) use notify::Kind as NotifyKind;
pub(crate) use notify_ops::{
    batch_reset as notify_batch_reset, cnt_record as cnt_notify_record, cnt_reset as cnt_notify_reset,
    cnt_wait as cnt_notify_wait, create_cnt_notify, create_notify, destroy as destroy_notify,
    export_key as notify_export_key, id as notify_id, import_by_key as notify_import_by_key, record_notify,
    set_import_pids as notify_set_import_pids, set_import_pids_inter_server as notify_set_import_pids_inter_server,
    wait_and_reset as wait_and_reset_notify,
};
pub(crate) use queue::Stream;
pub(crate) use rows::Rows;
pub(crate) use transfer::{memcpy_2d, memcpy_2d_async, memcpy_async, memset_async, memset_d32_async};
pub(crate) use value::{ValueCall, enqueue as enqueue_value};

use crate::soft::check::misuse_log;
use crate::soft::check::sanitize;
use crate::soft::core::lock_order::{self, Rank, Ranked};
use crate::soft::core::resource::{LiveResource, ResourceKind};
use crate::soft::core::soft_result::{SoftResult, fail};
use crate::soft::started;
use crate::soft::started::current;
use crate::types::*;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Handles live in the kernel half of the address space, which no user
/// pointer can reach, so they never collide with another kind of handle or
/// with memory; the numbers are never reused, so a stale handle stays stale.
const HANDLE_BASE: usize = 0xffff_8000_0000_0000;
const STREAM_TAG: usize = 0x1;
const EVENT_TAG: usize = 0x2;

/// A live stream and its worker.
struct StreamEntry {
    stream: Arc<Stream>,
    worker: Option<JoinHandle<()>>,
    /// Creation sequence number ([`crate::soft::sequence_now`]).
    created: u64,
}

/// Every live stream and event: this family's state, behind its own lock.
pub(crate) struct Streams {
    next_id: u64,
    /// Streams created by `aclrtCreateStream*`, by handle.
    created: BTreeMap<usize, StreamEntry>,
    /// Each device's default stream (made on first use; lives as long as the
    /// process).
    defaults: BTreeMap<i32, StreamEntry>,
    /// Events by handle.
    events: BTreeMap<usize, Arc<Event>>,
    /// Notifies and count notifies by handle.
    notifies: BTreeMap<usize, Arc<notify::Signal>>,
    /// The id the next notify gets (`aclrtGetNotifyId`).
    next_notify_id: u32,
    /// The id the next count notify gets (`aclrtCntNotifyGetId`).
    next_cnt_notify_id: u32,
    /// Handles `aclrtCtxGetCurrentDefaultStream` gave out, each naming the
    /// default stream of a device (by device), accepted wherever a stream
    /// is; a device's last reset withdraws its handle, as its context and
    /// that context's default stream end on hardware.
    default_aliases: BTreeMap<usize, i32>,
}

impl std::fmt::Debug for Streams {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Streams")
            .field("created", &self.created.len())
            .field("defaults", &self.defaults.len())
            .field("events", &self.events.len())
            .field("notifies", &self.notifies.len())
            .finish()
    }
}

static STREAMS: Mutex<Streams> = Mutex::new(Streams {
    next_id: 0,
    created: BTreeMap::new(),
    defaults: BTreeMap::new(),
    events: BTreeMap::new(),
    notifies: BTreeMap::new(),
    next_notify_id: 0,
    next_cnt_notify_id: 0,
    default_aliases: BTreeMap::new(),
});

/// The family's state, locked ([`Rank::Streams`]); fails only if the
/// software device cannot start.
pub(crate) fn lock() -> SoftResult<Ranked<'static, Streams>> {
    started::core()?;
    Ok(locked())
}

/// The family's state, locked, without starting the software device (for
/// introspection).
pub(crate) fn locked() -> Ranked<'static, Streams> {
    lock_order::lock(&STREAMS, Rank::Streams)
}

impl Streams {
    fn next_handle(&mut self, tag: usize) -> (u64, usize) {
        self.next_id += 1;
        let id = self.next_id;
        (id, HANDLE_BASE | ((id as usize) << 4) | tag)
    }

    /// Number of live streams created by `aclrtCreateStream*` (default
    /// streams are not counted).
    pub(crate) fn stream_count(&self) -> usize {
        self.created.len()
    }

    /// Number of live events.
    pub(crate) fn event_count(&self) -> usize {
        self.events.len()
    }

    /// Number of live notifies and count notifies.
    pub(crate) fn notify_count(&self) -> usize {
        self.notifies.len()
    }

    /// One line per live created stream and event, for the leak report.
    pub(crate) fn report(&self) -> Vec<String> {
        let streams = self.created.iter().map(|(handle, entry)| {
            let blocked = entry
                .stream
                .blocked()
                .map(|blocked| format!(", blocked in {blocked}"))
                .unwrap_or_default();
            format!(
                "stream {handle:#x} on device {}: {} task(s) not yet run{blocked}",
                entry.stream.device,
                entry.stream.backlog()
            )
        });
        let events = self
            .events
            .iter()
            .map(|(handle, event)| format!("event {handle:#x} created on device {}", event.device));
        let notifies = self
            .notifies
            .values()
            .map(|signal| format!("{} created on device {}", signal.name(), signal.device));
        streams.chain(events).chain(notifies).collect()
    }

    /// The created streams and the events made at or after sequence number
    /// `since` (default streams are not listed).
    pub(crate) fn created_since(&self, since: u64) -> Vec<LiveResource> {
        let streams = self
            .created
            .iter()
            .filter(|(_, entry)| entry.created >= since)
            .map(|(&handle, entry)| {
                LiveResource::new(ResourceKind::Stream, handle, 0, entry.created)
                    .on(entry.stream.device)
                    .detail(format!("{} task(s) not yet run", entry.stream.backlog()))
            });
        let events = self
            .events
            .iter()
            .filter(|(_, event)| event.created >= since)
            .map(|(&handle, event)| LiveResource::new(ResourceKind::Event, handle, 0, event.created).on(event.device));
        let notifies = self
            .notifies
            .iter()
            .filter(|(_, signal)| signal.created >= since)
            .map(|(&handle, signal)| {
                LiveResource::new(ResourceKind::Notify, handle, 0, signal.created)
                    .on(signal.device)
                    .detail(signal.name())
            });
        streams.chain(events).chain(notifies).collect()
    }

    /// Every stream (created and default) of `device`.
    fn of_device(&self, device: i32) -> Vec<Arc<Stream>> {
        self.created
            .values()
            .chain(self.defaults.values())
            .filter(|entry| entry.stream.device == device)
            .map(|entry| Arc::clone(&entry.stream))
            .collect()
    }

    fn all(&self) -> impl Iterator<Item = &Arc<Stream>> {
        self.created
            .values()
            .chain(self.defaults.values())
            .map(|entry| &entry.stream)
    }
}

/// Whether `handle` names a live stream made by `aclrtCreateStream*`.
pub(crate) fn is_created_stream(handle: usize) -> bool {
    locked().created.contains_key(&handle)
}

/// Starts a stream's worker thread.
fn start(device: i32, id: u64, handle: usize, priority: u32, flags: u32) -> SoftResult<StreamEntry> {
    let stream = Arc::new(Stream::new(device, handle, id, priority, flags));
    let runner = Arc::clone(&stream);
    let worker = std::thread::Builder::new()
        .name(format!("ascend-soft-stream-{id}"))
        .spawn(move || queue::run(&runner))
        .or_else(|error| {
            fail(
                ACL_ERROR_RT_RESOURCE_ALLOC_FAIL,
                format!("cannot start the stream's worker thread: {error}"),
            )
        })?;
    Ok(StreamEntry {
        stream,
        worker: Some(worker),
        created: crate::soft::core::sequence::next(),
    })
}

/// The stream `handle` refers to (NULL: none), or
/// `ACL_ERROR_RT_INVALID_HANDLE` — the runtime validates handles before any
/// other runtime check.
pub(crate) fn lookup_stream(streams: &Streams, handle: usize) -> SoftResult<Option<Arc<Stream>>> {
    if handle == 0 {
        return Ok(None);
    }
    let default = || {
        let device = streams.default_aliases.get(&handle)?;
        streams.defaults.get(device)
    };
    match streams.created.get(&handle).or_else(default) {
        Some(entry) => Ok(Some(Arc::clone(&entry.stream))),
        None => fail(
            ACL_ERROR_RT_INVALID_HANDLE,
            format!("stream {handle:#x} is not a live stream (never created, or already destroyed)"),
        ),
    }
}

/// The stream an asynchronous call on `device` (the current device) runs on:
/// `explicit`, which must belong to `device` (`ACL_ERROR_RT_STREAM_CONTEXT`
/// otherwise), or the device's default stream.
pub(crate) fn target_stream(
    streams: &mut Streams,
    explicit: Option<Arc<Stream>>,
    device: i32,
) -> SoftResult<Arc<Stream>> {
    match explicit {
        Some(stream) if stream.device != device => fail(
            ACL_ERROR_RT_STREAM_CONTEXT,
            format!(
                "stream {:#x} belongs to device {}, not to the current device {device}",
                stream.handle, stream.device
            ),
        ),
        Some(stream) => Ok(stream),
        None => default_stream(streams, device),
    }
}

/// `device`'s default stream, started on first use.
fn default_stream(streams: &mut Streams, device: i32) -> SoftResult<Arc<Stream>> {
    if let Some(entry) = streams.defaults.get(&device) {
        return Ok(Arc::clone(&entry.stream));
    }
    let (id, _) = streams.next_handle(STREAM_TAG);
    // The default stream has no handle a caller could hold (NULL names it).
    let entry = start(device, id, 0, 0, 0)?;
    let stream = Arc::clone(&entry.stream);
    streams.defaults.insert(device, entry);
    Ok(stream)
}

/// `aclrtCtxGetCurrentDefaultStream`: a handle naming the current
/// device's default stream (started if need be), which every call taking a
/// stream accepts as that stream (NULL still names it too). The same handle
/// each time until the device's last reset; no current context → 107002.
pub(crate) fn current_default_stream() -> SoftResult<usize> {
    let device = current::require()?;
    let mut streams = lock()?;
    default_stream(&mut streams, device)?;
    let existing = streams
        .default_aliases
        .iter()
        .find(|&(_, &of)| of == device)
        .map(|(&handle, _)| handle);
    if let Some(handle) = existing {
        return Ok(handle);
    }
    let (_, handle) = streams.next_handle(STREAM_TAG);
    streams.default_aliases.insert(handle, device);
    Ok(handle)
}

/// The stream an ordered call of another family names (`handle`; NULL: the
/// current device's default stream): a live stream of the current device
/// (`ACL_ERROR_RT_INVALID_HANDLE`, `ACL_ERROR_RT_STREAM_CONTEXT`).
pub(crate) fn ordering_stream(handle: usize) -> SoftResult<Arc<Stream>> {
    let mut streams = lock()?;
    let explicit = lookup_stream(&streams, handle)?;
    let device = current::require()?;
    target_stream(&mut streams, explicit, device)
}

/// Queues on `stream` a marker that sets `done` when the worker reaches
/// it (for `api`, whose position on the stream it is).
pub(crate) fn enqueue_signal(api: &'static str, stream: &Stream, done: Arc<std::sync::atomic::AtomicBool>) {
    stream.submit(task::Task::new(api, task::Work::Signal { done }, Vec::new()));
}

/// Flags of `aclrtCreateStreamWithConfig` the software device emulates:
/// their effect is about speed or capacity only.
const HINT_FLAGS: u32 = ACL_STREAM_FAST_LAUNCH | ACL_STREAM_FAST_SYNC | ACL_STREAM_HUGE;
/// Flags for streams that only models, AI CPU scheduling or device-side code
/// use, which the software device does not have.
const UNSUPPORTED_FLAGS: u32 = ACL_STREAM_PERSISTENT | ACL_STREAM_CPU_SCHEDULE | ACL_STREAM_DEVICE_USE_ONLY;

/// `aclrtCreateStream` / `aclrtCreateStreamWithConfig`: a stream on the
/// current device. `priority` is a reserved parameter (the runtime clamps it
/// to 0–7 silently, and `aclrtStreamGetPriority` reports the clamped value);
/// bits of `flag` that are no `ACL_STREAM_*` flag are ignored, as the ACL
/// layer does (it forwards only the flags it knows).
pub(crate) fn create_stream(priority: u32, flag: u32) -> SoftResult<usize> {
    let priority = priority.min(LEAST_PRIORITY);
    let known = flag & (HINT_FLAGS | UNSUPPORTED_FLAGS);
    if known & ACL_STREAM_DEVICE_USE_ONLY != 0 && known != ACL_STREAM_DEVICE_USE_ONLY {
        return fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("flag {flag:#x}: ACL_STREAM_DEVICE_USE_ONLY cannot be combined with other flags"),
        );
    }
    let device = current::require()?;
    if known & UNSUPPORTED_FLAGS != 0 {
        return fail(
            ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
            format!(
                "flag {flag:#x}: ACL_STREAM_PERSISTENT, ACL_STREAM_CPU_SCHEDULE and ACL_STREAM_DEVICE_USE_ONLY streams \
                 serve models, AI CPU scheduling and device-side code, which the software device does not have"
            ),
        );
    }
    let mut streams = lock()?;
    started::core()?.device(device)?;
    let (id, handle) = streams.next_handle(STREAM_TAG);
    let entry = start(device, id, handle, priority, known & HINT_FLAGS)?;
    streams.created.insert(handle, entry);
    Ok(handle)
}

/// The runtime's lowest stream priority (`RT_STREAM_LEAST_PRIORITY`); 0 is
/// the highest.
pub(crate) const LEAST_PRIORITY: u32 = 7;

/// The stream a getter asks about: `handle`, or (NULL) the current device's
/// default stream, started if need be. Handle first (107017); then, when
/// `context_always`, or for NULL, a current context (107002). A stream of
/// another device may be asked about.
fn stream_for_getter(handle: usize, context_always: bool) -> SoftResult<Arc<Stream>> {
    let mut streams = lock()?;
    let explicit = lookup_stream(&streams, handle)?;
    match explicit {
        Some(stream) => {
            if context_always {
                current::require()?;
            }
            Ok(stream)
        }
        None => {
            let device = current::require()?;
            default_stream(&mut streams, device)
        }
    }
}

/// `aclrtStreamGetId`: the stream's number among every stream of the
/// process. The runtime asks for a current context only for NULL.
pub(crate) fn stream_id(handle: usize) -> SoftResult<i32> {
    let stream = stream_for_getter(handle, false)?;
    match i32::try_from(stream.id) {
        Ok(id) => Ok(id),
        Err(_) => fail(
            ACL_ERROR_RT_INTERNAL_ERROR,
            format!("the ID {} of {} does not fit in an int32_t", stream.id, stream.name()),
        ),
    }
}

/// `aclrtStreamGetPriority`: the clamped priority the stream was created
/// with (0 for `aclrtCreateStream` and default streams). The runtime asks
/// for a current context even for an explicit stream.
pub(crate) fn stream_priority(handle: usize) -> SoftResult<u32> {
    Ok(stream_for_getter(handle, true)?.priority)
}

/// `aclrtStreamGetFlags`: the `ACL_STREAM_*` flags the stream was created
/// with (the software device creates only streams with
/// `ACL_STREAM_FAST_LAUNCH`, `ACL_STREAM_FAST_SYNC` and `ACL_STREAM_HUGE`;
/// 0 for a default stream). The runtime asks for a current context even for
/// an explicit stream.
pub(crate) fn stream_flags(handle: usize) -> SoftResult<u32> {
    Ok(stream_for_getter(handle, true)?.flags)
}

/// Takes the created stream `handle` out of the table for its destruction:
/// NULL, unknown, no current context, or a stream of another device are
/// refused as the runtime does (100000, 107017, 107002, 107003).
fn take_for_destruction(handle: usize) -> SoftResult<StreamEntry> {
    let mut streams = lock()?;
    let Some(stream) = lookup_stream(&streams, handle)? else {
        return fail(ACL_ERROR_INVALID_PARAM, "stream is NULL");
    };
    let device = current::require()?;
    target_stream(&mut streams, Some(stream), device)?;
    // A host function running on the stream's own worker cannot wait for
    // the stream's queue to drain: it is part of that queue.
    let on_its_worker = streams.created.get(&handle).is_some_and(|entry| {
        entry
            .worker
            .as_ref()
            .is_some_and(|worker| worker.thread().id() == std::thread::current().id())
    });
    if on_its_worker {
        return fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!(
                "stream {handle:#x} cannot be destroyed by a host function running on it (it would wait for itself)"
            ),
        );
    }
    match streams.created.remove(&handle) {
        Some(entry) => Ok(entry),
        None if streams.default_aliases.contains_key(&handle) => fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("stream {handle:#x} is the default stream of the current context, which cannot be destroyed"),
        ),
        None => fail(ACL_ERROR_RT_INTERNAL_ERROR, "stream vanished from the table"),
    }
}

/// Joins the worker of a destroyed stream; a task failure nobody
/// synchronised is dropped, with a log line.
fn join_destroyed(mut entry: StreamEntry, handle: usize) -> SoftResult {
    if let Some(worker) = entry.worker.take()
        && worker.join().is_err()
    {
        return fail(
            ACL_ERROR_RT_INTERNAL_ERROR,
            format!("the worker of stream {handle:#x} panicked"),
        );
    }
    if let Some(failure) = entry.stream.take_failure() {
        log::warn!(
            "stream {handle:#x} destroyed with an unreported task failure: {} (error {})",
            failure.message,
            failure.code
        );
    }
    Ok(())
}

/// `aclrtDestroyStream`: only a stream of the current device
/// (`ACL_ERROR_RT_STREAM_CONTEXT` otherwise). Queued work runs to the end
/// first (documented: the stream is destroyed once its tasks finish), then
/// the worker thread is joined. A task failure nobody synchronised is
/// dropped, with a log line.
pub(crate) fn destroy_stream(handle: usize) -> SoftResult {
    let entry = take_for_destruction(handle)?;
    entry.stream.close();
    let site = entry.stream.site();
    let id = entry.stream.id;
    join_destroyed(entry, handle)?;
    callbacks::forget_stream(id, "aclrtDestroyStream");
    sanitize::stream_destroyed(site);
    Ok(())
}
/// Converts an `int32_t timeout` in milliseconds (-1 = no limit, 0 and other
/// negative values refused with `ACL_ERROR_RT_PARAM_INVALID`, as the
/// runtime does) into a deadline.
pub(crate) fn deadline(timeout: i32) -> SoftResult<Option<Instant>> {
    match timeout {
        -1 => Ok(None),
        t if t > 0 => Ok(Some(Instant::now() + Duration::from_millis(t as u64))),
        t => fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("timeout {t} ms is neither -1 (no limit) nor positive"),
        ),
    }
}

/// `aclrtSynchronizeStream(WithTimeout)`: waits until every task enqueued
/// before the call has run, then reports (and clears) the first task
/// failure since the last synchronisation. NULL is the current device's
/// default stream. An explicit stream of another device may be synchronised
/// (the runtime switches context for it).
pub(crate) fn synchronize_stream(handle: usize, deadline: Option<Instant>) -> SoftResult {
    let stream = {
        let streams = lock()?;
        let explicit = lookup_stream(&streams, handle)?;
        let device = current::require()?;
        match explicit {
            Some(stream) => stream,
            None => match streams.defaults.get(&device) {
                Some(entry) => Arc::clone(&entry.stream),
                // No default stream yet: nothing was ever queued on it.
                None => return Ok(()),
            },
        }
    };
    let outcome = stream.synchronize(deadline);
    joined(&stream, &outcome);
    outcome
}

/// `aclrtSynchronizeDevice(WithTimeout)`: waits for every stream of the
/// current device (all with the one deadline) and reports the first task
/// failure found (clearing the failures of all of them).
pub(crate) fn synchronize_device(deadline: Option<Instant>) -> SoftResult {
    let device = current::require()?;
    let streams = lock()?.of_device(device);
    let mut first = None;
    for stream in streams {
        let outcome = stream.synchronize(deadline);
        joined(&stream, &outcome);
        if let Err(failure) = outcome {
            if failure.code == ACL_ERROR_RT_STREAM_SYNC_TIMEOUT {
                return Err(failure);
            }
            first.get_or_insert(failure);
        }
    }
    first.map_or(Ok(()), Err)
}

/// `aclrtStreamQuery`: whether every task queued on the stream (NULL: the
/// current device's default stream) has finished. Like synchronisation, an
/// explicit stream of another device may be queried; a task failure is not
/// reported (nor cleared) by a query. "Complete" tells the sanitizer the
/// host has seen the stream's work done.
pub(crate) fn query_stream(handle: usize) -> SoftResult<aclrtStreamStatus> {
    let stream = {
        let streams = lock()?;
        let explicit = lookup_stream(&streams, handle)?;
        let device = current::require()?;
        match explicit {
            Some(stream) => stream,
            None => match streams.defaults.get(&device) {
                Some(entry) => Arc::clone(&entry.stream),
                // No default stream yet: nothing was ever queued on it.
                None => return Ok(ACL_STREAM_STATUS_COMPLETE),
            },
        }
    };
    if stream.backlog() == 0 {
        sanitize::host_synchronized_stream(stream.site());
        Ok(ACL_STREAM_STATUS_COMPLETE)
    } else {
        Ok(ACL_STREAM_STATUS_NOT_READY)
    }
}

/// Tells the sanitizer that the host waited for `stream`'s work, unless
/// the wait timed out (a task failure is reported after the work ended).
fn joined(stream: &Stream, outcome: &SoftResult) {
    match outcome {
        Err(failure) if failure.code == ACL_ERROR_RT_STREAM_SYNC_TIMEOUT => {}
        _ => sanitize::host_synchronized_stream(stream.site()),
    }
}

/// `aclrtMemManagedPrefetch(Batch)Async`: resolves `stream` (its handle is
/// checked first; NULL is the current device's default stream), runs
/// `check` (the call's remaining argument checks) and, when it passes,
/// enqueues a task that moves nothing: managed memory is one memory on the
/// software device, so a prefetch only takes its place in the stream's
/// order. Nothing is enqueued when a check fails.
pub(crate) fn enqueue_prefetch(
    api: &'static str,
    stream: usize,
    (first, ranges): (usize, usize),
    check: impl FnOnce() -> SoftResult,
) -> SoftResult {
    let mut streams = lock()?;
    let stream = match lookup_stream(&streams, stream)? {
        Some(stream) => stream,
        None => {
            let device = current::require()?;
            default_stream(&mut streams, device)?
        }
    };
    check()?;
    stream.submit(task::Task::new(api, task::Work::Prefetch { first, ranges }, Vec::new()));
    Ok(())
}

/// `aclrtSetStreamFailureMode`: bit 0 of `mode` (the runtime ignores the
/// others) selects `ACL_CONTINUE_ON_FAILURE` (0, every stream's mode at
/// creation) or `ACL_STOP_ON_FAILURE` (1). The runtime's rules: the handle
/// (107017), a current context (107002), the same mode again succeeds, stop
/// back to continue is refused (`ACL_ERROR_RT_FEATURE_NOT_SUPPORT`), a
/// stream of another device 107003. NULL sets the default stream's mode.
/// In stop mode, once a task of the stream fails, its later tasks are
/// skipped until a synchronisation reports the failure; a record skipped so
/// never completes, and a wait for it does not end (as on hardware) unless
/// it has a timeout.
pub(crate) fn set_failure_mode(stream: usize, mode: u64) -> SoftResult {
    let mut streams = lock()?;
    let explicit = lookup_stream(&streams, stream)?;
    let device = current::require()?;
    let stop = mode & 0x1 != 0;
    let target = match &explicit {
        Some(stream) => Arc::clone(stream),
        None => target_stream(&mut streams, None, device)?,
    };
    if target.stops_on_failure() == stop {
        return Ok(());
    }
    if !stop {
        return fail(
            ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
            format!(
                "{} is in ACL_STOP_ON_FAILURE mode, which cannot be changed back to ACL_CONTINUE_ON_FAILURE",
                target.name()
            ),
        );
    }
    let target = target_stream(&mut streams, explicit, device)?;
    target.stop_on_failure();
    Ok(())
}

// ---- host memory -------------------------------------------------------------

/// Tasks that were running on a freed host range when it was freed.
#[must_use = "wait before releasing the memory"]
pub(crate) struct InFlight(Vec<(Arc<Stream>, u64)>);

impl InFlight {
    /// Waits until those tasks have finished (call without the runtime
    /// lock). Queued tasks are not waited for: they were cancelled.
    pub(crate) fn wait(self) {
        for (stream, task) in self.0 {
            stream.wait_finished(task);
        }
    }
}

/// Called by `aclrtFreeHost*` (with this family's lock held) before it frees
/// the host range `[start, end)`: each queued task that still uses the range
/// is recorded as misuse and cancelled (its worker will skip it rather than
/// touch freed memory); tasks running on it right now are returned so the
/// caller can wait for them to finish before releasing the memory. The free
/// itself does not wait for queued work, as on hardware.
pub(crate) fn host_memory_freed(streams: &Streams, start: usize, end: usize) -> InFlight {
    let mut running = Vec::new();
    for stream in streams.all() {
        let (cancelled, busy) = stream.cancel_host_users(start, end);
        for task in cancelled {
            misuse_log::record(
                "aclrtFreeHost",
                format!(
                    "host memory {start:#x}..{end:#x} freed while {task} was still queued; \
                     the task will not run (on hardware it would touch freed memory)"
                ),
            );
        }
        if let Some(task) = busy {
            running.push((Arc::clone(stream), task));
        }
    }
    InFlight(running)
}

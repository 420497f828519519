//! Stream callbacks and host functions (`aclrtLaunchCallback`,
//! `aclrtLaunchHostFunc` and their report threads).
//!
//! A callback is a task of its stream: when the worker reaches it (every
//! task queued before it has run), it hands the call to the thread
//! subscribed to the stream, which runs it in its next `aclrtProcess*`
//! call. A blocking callback (`ACL_CALLBACK_BLOCK`, and every host
//! function) holds the worker until the call has returned, so the work
//! queued after it waits. A host function on a stream with no
//! `aclrtSubscribeHostFunc` thread runs on the runtime's own thread for the
//! stream: here, the stream's worker itself.
//!
//! The sanitizer orders the host accesses a callback makes after the work
//! queued before it, and those of a blocking callback before the work
//! queued after it ([`sanitize::in_callback`]).

mod subscriptions;

pub(crate) use subscriptions::forget_stream;
use subscriptions::{Call, Delivery, Done, Kind, StreamRef, Taken};

use super::queue::Stream;
use super::task::{Task, Work};
use crate::soft::check::misuse_log;
use crate::soft::check::sanitize::{self, CallbackMark};
use crate::soft::core::soft_result::{SoftResult, fail};
use crate::soft::started::current;
use crate::types::*;
use std::ffi::c_void;
use std::sync::Arc;
use std::time::{Duration, Instant};

pub(crate) use subscriptions::Kind as SubscriptionKind;

/// A callback on its stream's queue.
pub(crate) struct Queued {
    kind: Kind,
    call: Call,
    blocking: bool,
    mark: Option<CallbackMark>,
}

impl Queued {
    pub(crate) fn describe(&self) -> String {
        match (self.kind, self.blocking) {
            (Kind::Report, true) => format!("a blocking callback {:p}", self.call.func as *const ()),
            (Kind::Report, false) => format!("a callback {:p}", self.call.func as *const ()),
            (Kind::HostFunc, _) => format!("a host function {:p}", self.call.func as *const ()),
        }
    }
}

fn stream_ref(stream: &Stream) -> (u64, i32, String) {
    (stream.id, stream.device, stream.name())
}

/// The explicit stream `handle` names for a subscription call (NULL:
/// `ACL_ERROR_RT_PARAM_INVALID`; unknown: `ACL_ERROR_RT_INVALID_HANDLE`).
fn named_stream(handle: usize) -> SoftResult<Arc<Stream>> {
    if handle == 0 {
        return fail(
            ACL_ERROR_RT_PARAM_INVALID,
            "stream is NULL: a callback thread is subscribed to a created stream",
        );
    }
    let streams = super::lock()?;
    match super::lookup_stream(&streams, handle)? {
        Some(stream) => Ok(stream),
        None => fail(ACL_ERROR_RT_PARAM_INVALID, "stream is NULL"),
    }
}

/// `aclrtSubscribeReport` / `aclrtSubscribeHostFunc`.
pub(crate) fn subscribe(kind: SubscriptionKind, thread: u64, handle: usize) -> SoftResult {
    let stream = named_stream(handle)?;
    let (id, device, name) = stream_ref(&stream);
    subscriptions::subscribe(
        kind,
        thread,
        StreamRef {
            id,
            device,
            name: &name,
        },
    )
}

/// `aclrtUnSubscribeReport` / `aclrtUnSubscribeHostFunc`.
pub(crate) fn unsubscribe(kind: SubscriptionKind, thread: u64, handle: usize, api: &'static str) -> SoftResult {
    let stream = named_stream(handle)?;
    let (id, device, name) = stream_ref(&stream);
    subscriptions::unsubscribe(
        kind,
        thread,
        StreamRef {
            id,
            device,
            name: &name,
        },
        api,
    )
}

/// The stream a launch names: a live stream of the current device (NULL:
/// `ACL_ERROR_RT_PARAM_INVALID`, as no thread can be subscribed to it).
fn launch_stream(handle: usize) -> SoftResult<Arc<Stream>> {
    if handle == 0 {
        return fail(
            ACL_ERROR_RT_PARAM_INVALID,
            "stream is NULL: callbacks go on a created stream a thread is subscribed to",
        );
    }
    super::ordering_stream(handle)
}

/// `aclrtLaunchCallback` (the block type already checked): the stream
/// needs a subscribed thread (`ACL_ERROR_RT_STREAM_NO_CB_REG`).
pub(crate) fn launch_callback(
    func: unsafe extern "C" fn(*mut c_void),
    data: *mut c_void,
    blocking: bool,
    handle: usize,
) -> SoftResult {
    let stream = launch_stream(handle)?;
    if !subscriptions::subscribed(Kind::Report, stream.id) {
        return fail(
            ACL_ERROR_RT_STREAM_NO_CB_REG,
            format!(
                "{} has no thread subscribed to run its callbacks: call aclrtSubscribeReport first",
                stream.name()
            ),
        );
    }
    let mark = sanitize::callback_queued(stream.site(), blocking);
    let queued = Queued {
        kind: Kind::Report,
        call: Call { func, data },
        blocking,
        mark,
    };
    stream.submit(Task::new("aclrtLaunchCallback", Work::Callback(queued), Vec::new()));
    Ok(())
}

/// `aclrtLaunchHostFunc`: runs on the stream's `aclrtSubscribeHostFunc`
/// thread if it has one, else on the runtime's own thread; always blocking.
pub(crate) fn launch_host_func(
    func: unsafe extern "C" fn(*mut c_void),
    data: *mut c_void,
    handle: usize,
) -> SoftResult {
    let stream = launch_stream(handle)?;
    let (id, device, name) = stream_ref(&stream);
    subscriptions::use_own_thread(StreamRef {
        id,
        device,
        name: &name,
    })?;
    let mark = sanitize::callback_queued(stream.site(), true);
    let queued = Queued {
        kind: Kind::HostFunc,
        call: Call { func, data },
        blocking: true,
        mark,
    };
    stream.submit(Task::new("aclrtLaunchHostFunc", Work::Callback(queued), Vec::new()));
    Ok(())
}

/// How often a worker held by a blocking callback looks whether the stream
/// is being destroyed by force.
const GIVE_UP_POLL: Duration = Duration::from_millis(20);

/// The worker reached `queued` (task `task` of `stream`): hands it to its
/// thread and, when it blocks, waits until it has run.
pub(crate) fn reach(stream: &Stream, task: &Task, queued: &Queued) {
    let inbox = subscriptions::inbox_of(queued.kind, stream.id);
    let Some(inbox) = inbox else {
        if queued.kind == Kind::HostFunc {
            // The runtime's own thread runs it with the stream's device
            // current, so it may call the runtime.
            current::set(Some(stream.device));
            run(queued.call, queued.mark.as_ref());
            current::set(None);
            return;
        }
        misuse_log::record(
            task.api,
            format!(
                "{} dropped without running: no thread was subscribed to {} when the stream reached it",
                task.describe(),
                stream.name()
            ),
        );
        return;
    };
    let done = queued.blocking.then(|| Arc::new(Done::default()));
    inbox.post(Delivery {
        call: queued.call,
        stream: stream.id,
        stream_name: stream.name(),
        mark: queued.mark.clone(),
        done: done.clone(),
    });
    let Some(done) = done else { return };
    while !done.wait_until(Instant::now() + GIVE_UP_POLL) {
        if stream.given_up(task.number, true).is_some() {
            return;
        }
    }
}

/// Runs one call on this thread, ordered by the sanitizer at `mark`.
fn run(call: Call, mark: Option<&CallbackMark>) {
    sanitize::in_callback(mark, || {
        // SAFETY: the caller of `aclrtLaunchCallback`/`aclrtLaunchHostFunc`
        // handed this function and argument to be called on the subscribed
        // thread once the stream reached it, which is now.
        unsafe { (call.func)(call.data) }
    });
}

/// `aclrtProcessReport` / `aclrtProcessHostFunc` (`deadline` already
/// converted from a checked timeout): waits for calls for the calling
/// thread and runs every one waiting, in order. A thread serving no stream
/// gets `ACL_ERROR_RT_THREAD_SUBSCRIBE` (also when its last subscription
/// ends during the wait); nothing before the deadline,
/// `ACL_ERROR_RT_REPORT_TIMEOUT`.
pub(crate) fn process(kind: SubscriptionKind, deadline: Option<Instant>) -> SoftResult {
    let thread = crate::current_thread_id();
    let inbox = subscriptions::own_inbox(kind, thread)?;
    match inbox.take(deadline) {
        Taken::Calls(calls) => {
            for delivery in calls {
                run(delivery.call, delivery.mark.as_ref());
                if let Some(done) = delivery.done {
                    done.set();
                }
            }
            Ok(())
        }
        Taken::TimedOut => fail(
            ACL_ERROR_RT_REPORT_TIMEOUT,
            format!(
                "{}: no callback for thread {thread:#x} before the timeout",
                kind.process_call()
            ),
        ),
        Taken::Closed => fail(
            ACL_ERROR_RT_THREAD_SUBSCRIBE,
            format!(
                "{}: the last subscription of thread {thread:#x} ended while it waited",
                kind.process_call()
            ),
        ),
    }
}

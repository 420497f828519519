//! Which thread runs the callbacks (or the host functions) of which stream,
//! and each such thread's inbox of calls the streams handed it.
//!
//! Its lock is a leaf (outside [`crate::soft::core::lock_order`]): nothing
//! is called while it is held, and no call runs under it.

use crate::soft::check::misuse_log;
use crate::soft::check::sanitize::CallbackMark;
use crate::soft::core::soft_result::{SoftResult, fail};
use crate::types::*;
use std::collections::{HashMap, HashSet, VecDeque};
use std::ffi::c_void;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Instant;

/// The two kinds of subscription: a stream may have one of each, and a
/// thread serves each kind through its own `aclrtProcess*` call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Kind {
    /// `aclrtSubscribeReport`, served by `aclrtProcessReport`.
    Report,
    /// `aclrtSubscribeHostFunc`, served by `aclrtProcessHostFunc`.
    HostFunc,
}

impl Kind {
    pub(crate) fn process_call(self) -> &'static str {
        match self {
            Kind::Report => "aclrtProcessReport",
            Kind::HostFunc => "aclrtProcessHostFunc",
        }
    }

    fn subscribe_call(self) -> &'static str {
        match self {
            Kind::Report => "aclrtSubscribeReport",
            Kind::HostFunc => "aclrtSubscribeHostFunc",
        }
    }
}

/// A C function and its argument, as `aclrtCallback` and `aclrtHostFunc`
/// take them.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Call {
    pub(crate) func: unsafe extern "C" fn(*mut c_void),
    pub(crate) data: *mut c_void,
}

// SAFETY: the C contract of `aclrtLaunchCallback` and `aclrtLaunchHostFunc`
// is that the function runs on another thread (the subscribed one) with its
// argument; the caller made both fit for that when it queued them.
unsafe impl Send for Call {}

/// Set when a blocking call has returned (or will never run): the stream
/// that waits for it goes on.
#[derive(Debug, Default)]
pub(crate) struct Done {
    flag: Mutex<bool>,
    changed: Condvar,
}

impl Done {
    pub(crate) fn set(&self) {
        *self.flag.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = true;
        self.changed.notify_all();
    }

    /// Waits until set or until `deadline`; returns whether it is set.
    pub(crate) fn wait_until(&self, deadline: Instant) -> bool {
        let mut flag = self.flag.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        while !*flag {
            let now = Instant::now();
            if now >= deadline {
                return false;
            }
            flag = self
                .changed
                .wait_timeout(flag, deadline - now)
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .0;
        }
        true
    }
}

/// A call a stream reached, waiting for its thread.
pub(crate) struct Delivery {
    pub(crate) call: Call,
    /// The stream's id (for unsubscription) and name (for messages).
    pub(crate) stream: u64,
    pub(crate) stream_name: String,
    pub(crate) mark: Option<CallbackMark>,
    /// Set when it has run, for a call the stream waits for.
    pub(crate) done: Option<Arc<Done>>,
}

/// A subscribed thread's calls, in the order its streams reached them.
#[derive(Default)]
pub(crate) struct Inbox {
    state: Mutex<InboxState>,
    changed: Condvar,
}

#[derive(Default)]
struct InboxState {
    calls: VecDeque<Delivery>,
    /// Set when the thread's last subscription of this kind ended.
    closed: bool,
}

/// What [`Inbox::take`] found.
pub(crate) enum Taken {
    Calls(Vec<Delivery>),
    TimedOut,
    Closed,
}

impl Inbox {
    fn lock(&self) -> MutexGuard<'_, InboxState> {
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    pub(crate) fn post(&self, delivery: Delivery) {
        self.lock().calls.push_back(delivery);
        self.changed.notify_all();
    }

    /// Waits (until `deadline`, if any) for at least one call and takes
    /// every call waiting.
    pub(crate) fn take(&self, deadline: Option<Instant>) -> Taken {
        let mut state = self.lock();
        loop {
            if !state.calls.is_empty() {
                return Taken::Calls(state.calls.drain(..).collect());
            }
            if state.closed {
                return Taken::Closed;
            }
            state = match deadline {
                None => self
                    .changed
                    .wait(state)
                    .unwrap_or_else(|poisoned| poisoned.into_inner()),
                Some(deadline) => {
                    let now = Instant::now();
                    if now >= deadline {
                        return Taken::TimedOut;
                    }
                    self.changed
                        .wait_timeout(state, deadline - now)
                        .unwrap_or_else(|poisoned| poisoned.into_inner())
                        .0
                }
            };
        }
    }

    /// Drops the waiting calls of stream `stream` (all, for `None`),
    /// releasing the streams that wait for them; returns how many.
    fn drop_calls(&self, stream: Option<u64>, api: &'static str) -> usize {
        let mut state = self.lock();
        let (dropped, kept): (Vec<_>, Vec<_>) = state
            .calls
            .drain(..)
            .partition(|delivery| stream.is_none_or(|stream| delivery.stream == stream));
        state.calls = kept.into();
        drop(state);
        for delivery in &dropped {
            misuse_log::record(
                api,
                format!(
                    "a callback of {} was dropped without running: its thread's subscription ended before \
                     it processed it",
                    delivery.stream_name
                ),
            );
            if let Some(done) = &delivery.done {
                done.set();
            }
        }
        dropped.len()
    }

    fn close(&self) {
        self.lock().closed = true;
        self.changed.notify_all();
    }
}

/// One thread's subscriptions of one kind.
struct Subscriber {
    inbox: Arc<Inbox>,
    device: i32,
    streams: usize,
}

/// Every subscription.
#[derive(Default)]
struct Table {
    /// `(kind, stream id)` → thread id.
    by_stream: HashMap<(Kind, u64), u64>,
    /// `(kind, thread id)` → its inbox.
    subscribers: HashMap<(Kind, u64), Subscriber>,
    /// Streams whose host functions run on the runtime's own thread (an
    /// `aclrtLaunchHostFunc` with no `aclrtSubscribeHostFunc` thread).
    own_thread: HashSet<u64>,
}

static TABLE: Mutex<Option<Table>> = Mutex::new(None);

fn with_table<R>(f: impl FnOnce(&mut Table) -> R) -> R {
    let mut guard = TABLE.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    f(guard.get_or_insert_with(Table::default))
}

/// The stream a subscription names.
#[derive(Debug, Clone, Copy)]
pub(crate) struct StreamRef<'a> {
    pub(crate) id: u64,
    pub(crate) device: i32,
    pub(crate) name: &'a str,
}

/// `aclrtSubscribe*`: thread `thread` serves `kind` for `stream`. One
/// thread per stream and kind, and a stream whose host functions run on
/// the runtime's own thread takes none (`ACL_ERROR_RT_STREAM_SUBSCRIBE`);
/// one thread serves streams of one device only.
pub(crate) fn subscribe(kind: Kind, thread: u64, stream: StreamRef<'_>) -> SoftResult {
    with_table(|table| {
        if let Some(&other) = table.by_stream.get(&(kind, stream.id)) {
            return fail(
                ACL_ERROR_RT_STREAM_SUBSCRIBE,
                format!(
                    "{} already has thread {other:#x} subscribed through {}: one thread per stream",
                    stream.name,
                    kind.subscribe_call()
                ),
            );
        }
        if table.own_thread.contains(&stream.id) {
            return fail(
                ACL_ERROR_RT_STREAM_SUBSCRIBE,
                format!(
                    "{} runs its host functions on the runtime's own thread (aclrtLaunchHostFunc was called on it \
                     first): the two ways of running callbacks cannot be mixed on one stream",
                    stream.name
                ),
            );
        }
        if let Some(subscriber) = table.subscribers.get(&(kind, thread))
            && subscriber.device != stream.device
        {
            return fail(
                ACL_ERROR_RT_STREAM_SUBSCRIBE,
                format!(
                    "thread {thread:#x} serves streams of device {}; {} is on device {}: one thread serves the \
                     streams of one device",
                    subscriber.device, stream.name, stream.device
                ),
            );
        }
        let subscriber = table.subscribers.entry((kind, thread)).or_insert_with(|| Subscriber {
            inbox: Arc::default(),
            device: stream.device,
            streams: 0,
        });
        subscriber.streams += 1;
        table.by_stream.insert((kind, stream.id), thread);
        Ok(())
    })
}

/// `aclrtUnSubscribe*`: `thread` no longer serves `kind` for `stream`
/// (`ACL_ERROR_RT_STREAM_SUBSCRIBE` when it did not). Calls it had not run
/// yet are dropped (as misuse), so no stream waits for them forever.
pub(crate) fn unsubscribe(kind: Kind, thread: u64, stream: StreamRef<'_>, api: &'static str) -> SoftResult {
    let inbox = with_table(|table| {
        match table.by_stream.get(&(kind, stream.id)) {
            Some(&subscribed) if subscribed == thread => {}
            Some(&subscribed) => {
                return fail(
                    ACL_ERROR_RT_STREAM_SUBSCRIBE,
                    format!(
                        "{} is subscribed to thread {subscribed:#x}, not to thread {thread:#x}",
                        stream.name
                    ),
                );
            }
            None => {
                return fail(
                    ACL_ERROR_RT_STREAM_SUBSCRIBE,
                    format!(
                        "{} has no thread subscribed through {}",
                        stream.name,
                        kind.subscribe_call()
                    ),
                );
            }
        }
        table.by_stream.remove(&(kind, stream.id));
        Ok(release(table, kind, thread))
    })?;
    if let Some((inbox, last)) = inbox {
        inbox.drop_calls(Some(stream.id), api);
        if last {
            inbox.close();
        }
    }
    Ok(())
}

/// Counts one subscription of `thread` gone; returns its inbox and whether
/// it was the last.
fn release(table: &mut Table, kind: Kind, thread: u64) -> Option<(Arc<Inbox>, bool)> {
    let subscriber = table.subscribers.get_mut(&(kind, thread))?;
    subscriber.streams = subscriber.streams.saturating_sub(1);
    let inbox = Arc::clone(&subscriber.inbox);
    let last = subscriber.streams == 0;
    if last {
        table.subscribers.remove(&(kind, thread));
    }
    Some((inbox, last))
}

/// The inbox of the thread serving `kind` for stream `stream`, if any.
pub(crate) fn inbox_of(kind: Kind, stream: u64) -> Option<Arc<Inbox>> {
    with_table(|table| {
        let thread = table.by_stream.get(&(kind, stream))?;
        table
            .subscribers
            .get(&(kind, *thread))
            .map(|subscriber| Arc::clone(&subscriber.inbox))
    })
}

/// Whether stream `stream` has a thread serving `kind`.
pub(crate) fn subscribed(kind: Kind, stream: u64) -> bool {
    with_table(|table| table.by_stream.contains_key(&(kind, stream)))
}

/// The calling thread's inbox for `kind` (`ACL_ERROR_RT_THREAD_SUBSCRIBE`
/// when it serves no stream).
pub(crate) fn own_inbox(kind: Kind, thread: u64) -> SoftResult<Arc<Inbox>> {
    with_table(|table| match table.subscribers.get(&(kind, thread)) {
        Some(subscriber) => Ok(Arc::clone(&subscriber.inbox)),
        None => fail(
            ACL_ERROR_RT_THREAD_SUBSCRIBE,
            format!(
                "thread {thread:#x} serves no stream: subscribe it with {} first",
                kind.subscribe_call()
            ),
        ),
    })
}

/// `aclrtLaunchHostFunc` on a stream with no `aclrtSubscribeHostFunc`
/// thread: its host functions run on the runtime's own thread from now on.
/// A stream with an `aclrtSubscribeReport` thread refuses
/// (`ACL_ERROR_RT_STREAM_SUBSCRIBE`): the two ways cannot be mixed.
pub(crate) fn use_own_thread(stream: StreamRef<'_>) -> SoftResult {
    with_table(|table| {
        if table.by_stream.contains_key(&(Kind::Report, stream.id)) {
            return fail(
                ACL_ERROR_RT_STREAM_SUBSCRIBE,
                format!(
                    "{} has a thread subscribed through aclrtSubscribeReport: aclrtLaunchHostFunc and \
                     aclrtLaunchCallback cannot be mixed on one stream",
                    stream.name
                ),
            );
        }
        if !table.by_stream.contains_key(&(Kind::HostFunc, stream.id)) {
            table.own_thread.insert(stream.id);
        }
        Ok(())
    })
}

/// A destroyed stream's subscriptions end (their waiting calls dropped).
pub(crate) fn forget_stream(stream: u64, api: &'static str) {
    let released: Vec<_> = with_table(|table| {
        table.own_thread.remove(&stream);
        [Kind::Report, Kind::HostFunc]
            .into_iter()
            .filter_map(|kind| {
                let thread = table.by_stream.remove(&(kind, stream))?;
                release(table, kind, thread)
            })
            .collect()
    });
    for (inbox, last) in released {
        inbox.drop_calls(Some(stream), api);
        if last {
            inbox.close();
        }
    }
}

//! One event: the records issued on it and which of them were reached.

use super::ipc_event::IpcShared;
use crate::soft::check::misuse_log;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// How often a wait for an IPC event's record looks at the shared page.
const IPC_POLL: Duration = Duration::from_millis(1);

/// How an event behaves before its first record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EventMode {
    /// `aclrtCreateEvent` / `aclrtCreateEventWithFlag`.
    Classic,
    /// `aclrtCreateEventExWithFlag`: complete before the first record, and
    /// waiting for it is a no-op.
    Ex,
}

#[derive(Default)]
struct Records {
    /// Number of the latest record issued (records are numbered from 1).
    latest: u64,
    /// Records issued whose marker no worker has reached yet.
    pending: BTreeSet<u64>,
    /// When the latest record was reached, if it was.
    reached_at: Option<Instant>,
    destroyed: bool,
    /// Records whose marker was dropped before a worker reached it, with the
    /// reason (`aclrtDestroyStreamForce`): they will never be reached, and
    /// whoever waits for them stops waiting.
    dropped: BTreeMap<u64, &'static str>,
    /// Records a stream in `ACL_STOP_ON_FAILURE` mode skipped after a failed
    /// task: they never complete, and a wait for one does not end either (as
    /// on hardware) unless it has a timeout or its stream is destroyed by
    /// force.
    skipped: BTreeSet<u64>,
    /// Stream waits for the event enqueued and not finished yet
    /// (`aclrtQueryEventWaitStatus`), counted by [`WaitTicket`]s.
    waiting: u64,
    /// Records numbered up to this one were forgotten by a reset
    /// (`aclrtResetEvent`) a stream reached: the event counts as never
    /// recorded until its next record.
    forgotten: u64,
}

/// An event.
pub(crate) struct Event {
    pub(crate) handle: usize,
    /// The device current at creation.
    pub(crate) device: i32,
    /// Runtime event flags.
    pub(crate) flags: u32,
    pub(crate) mode: EventMode,
    /// Creation sequence number ([`crate::soft::sequence_now`]).
    pub(crate) created: u64,
    /// An IPC event's shared page (`ACL_EVENT_IPC`): its record numbers
    /// are shared with the other processes that opened it, and waits poll.
    pub(crate) ipc: Option<IpcShared>,
    records: Mutex<Records>,
    changed: Condvar,
}

impl Event {
    pub(crate) fn new(handle: usize, device: i32, flags: u32, mode: EventMode, ipc: Option<IpcShared>) -> Self {
        Self {
            handle,
            device,
            flags,
            mode,
            created: crate::soft::core::sequence::next(),
            ipc,
            records: Mutex::new(Records::default()),
            changed: Condvar::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Records> {
        self.records.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Issues a new record (its marker is about to be enqueued); returns its
    /// number.
    pub(crate) fn issue(&self) -> u64 {
        let mut records = self.lock();
        records.latest = match &self.ipc {
            Some(ipc) => ipc.issue(),
            None => records.latest + 1,
        };
        let number = records.latest;
        records.pending.insert(number);
        records.reached_at = None;
        number
    }

    /// Number of the latest record issued (0: never recorded, or reset
    /// since its latest record).
    pub(crate) fn latest(&self) -> u64 {
        if let Some(ipc) = &self.ipc {
            return ipc.latest();
        }
        let records = self.lock();
        if records.latest > records.forgotten {
            records.latest
        } else {
            0
        }
    }

    /// Number the next record will have (a wait for "the next record").
    pub(crate) fn next_record(&self) -> u64 {
        self.lock().latest + 1
    }

    /// A stream reached an `aclrtResetEvent` issued when record `through`
    /// was the latest: records up to it are forgotten, and the event counts
    /// as never recorded until a later record.
    pub(crate) fn reset(&self, through: u64) {
        let mut records = self.lock();
        records.forgotten = records.forgotten.max(through);
        drop(records);
        self.changed.notify_all();
    }

    /// Marks record `number` reached by a worker.
    pub(crate) fn reach(&self, number: u64) {
        if let Some(ipc) = &self.ipc {
            ipc.reach(number);
        }
        let mut records = self.lock();
        records.pending.remove(&number);
        if number == records.latest {
            records.reached_at = Some(Instant::now());
        }
        drop(records);
        self.changed.notify_all();
    }

    fn reached(&self, records: &Records, number: u64) -> bool {
        match &self.ipc {
            Some(ipc) => ipc.is_reached(number),
            None => number <= records.latest && !records.pending.contains(&number),
        }
    }

    /// Whether record `number` was reached.
    pub(crate) fn is_reached(&self, number: u64) -> bool {
        self.reached(&self.lock(), number)
    }

    /// When the latest record was reached (`None` if it was not yet, or if
    /// it was reset since).
    pub(crate) fn timestamp(&self) -> Option<Instant> {
        let records = self.lock();
        records.reached_at.filter(|_| records.latest > records.forgotten)
    }

    /// Blocks until record `number` is reached. A record that was never
    /// issued (a wait for the "next" record) is given up when the event is
    /// destroyed, and that is recorded as misuse (`waiter` names the task).
    /// Returns `false` only when `deadline` passed first (`None`: no limit).
    pub(crate) fn wait_reached(&self, number: u64, waiter: Option<&str>, deadline: Option<Instant>) -> bool {
        self.wait_reached_unless(number, waiter, &|| None, deadline)
    }

    /// [`Event::wait_reached`], also ending (recorded as misuse) when the
    /// record was dropped by `aclrtDestroyStreamForce`, or when `give_up`
    /// names a call that ends the wait (checked whenever [`Event::wake`] is
    /// called). A record skipped by a stream in `ACL_STOP_ON_FAILURE` mode
    /// is never reached: the wait goes on (recorded as misuse once, so that
    /// the hang is explained). Returns `false` only when `deadline` passed
    /// first.
    pub(crate) fn wait_reached_unless(
        &self,
        number: u64,
        waiter: Option<&str>,
        give_up: &dyn Fn() -> Option<&'static str>,
        deadline: Option<Instant>,
    ) -> bool {
        let waiter = waiter.unwrap_or("a stream");
        let mut records = self.lock();
        let mut skip_noted = false;
        loop {
            if self.reached(&records, number) {
                return true;
            }
            if !skip_noted && records.skipped.contains(&number) {
                skip_noted = true;
                drop(records);
                misuse_log::record(
                    "ACL_STOP_ON_FAILURE",
                    format!(
                        "{waiter} waits for record {number} of event {:#x}, which its stream skipped after a failed \
                         task (ACL_STOP_ON_FAILURE): the record never completes, so the wait does not end",
                        self.handle
                    ),
                );
                records = self.lock();
                continue;
            }
            let ended = if records.destroyed && number > records.latest {
                Some((
                    "aclrtDestroyEvent",
                    format!(
                        "event {:#x} destroyed before the record {waiter} waited for was issued; the wait ends",
                        self.handle
                    ),
                ))
            } else if let Some(&why) = records.dropped.get(&number) {
                Some((
                    why,
                    format!(
                        "record {number} of event {:#x} was dropped before it was reached ({why}); {waiter} \
                         stops waiting for it",
                        self.handle
                    ),
                ))
            } else {
                give_up().map(|api| {
                    (
                        api,
                        format!("{waiter} ended without record {number} of event {:#x}", self.handle),
                    )
                })
            };
            if let Some((api, description)) = ended {
                drop(records);
                misuse_log::record(api, description);
                return true;
            }
            // An IPC event's record may be reached in another process,
            // which cannot wake this one: poll.
            let poll = self.ipc.as_ref().map(|_| IPC_POLL);
            let now = Instant::now();
            let pause = match (deadline, poll) {
                (Some(deadline), _) if now >= deadline => return false,
                (Some(deadline), Some(poll)) => Some((deadline - now).min(poll)),
                (Some(deadline), None) => Some(deadline - now),
                (None, poll) => poll,
            };
            records = match pause {
                None => self
                    .changed
                    .wait(records)
                    .unwrap_or_else(|poisoned| poisoned.into_inner()),
                Some(pause) => {
                    self.changed
                        .wait_timeout(records, pause)
                        .unwrap_or_else(|poisoned| poisoned.into_inner())
                        .0
                }
            };
        }
    }

    /// Notes that the marker of record `number` was dropped (`why`: its
    /// stream was destroyed by force): whoever waits for it stops waiting.
    pub(crate) fn drop_record(&self, number: u64, why: &'static str) {
        self.lock().dropped.insert(number, why);
        self.changed.notify_all();
    }

    /// Notes that the marker of record `number` was skipped by a stream in
    /// `ACL_STOP_ON_FAILURE` mode: the record never completes, and whoever
    /// waits for it keeps waiting.
    pub(crate) fn skip_record(&self, number: u64) {
        self.lock().skipped.insert(number);
        self.changed.notify_all();
    }

    /// Wakes every waiter, to check whether it must give up.
    pub(crate) fn wake(&self) {
        let _records = self.lock();
        self.changed.notify_all();
    }

    /// `aclrtDestroyEvent`: wakes waiters for records that will never come.
    pub(crate) fn destroy(&self) {
        self.lock().destroyed = true;
        self.changed.notify_all();
    }
}

/// One stream wait for an event, from its enqueueing until its task is
/// dropped (it ran, failed, was skipped, or its stream was destroyed by
/// force): while it lives, `aclrtQueryEventWaitStatus` says not ready.
/// Dropping it takes the event's records lock (a leaf lock): a task is
/// never dropped while its stream's queue lock is held.
pub(crate) struct WaitTicket(Arc<Event>);

impl WaitTicket {
    pub(crate) fn new(event: &Arc<Event>) -> Self {
        event.lock().waiting += 1;
        Self(Arc::clone(event))
    }
}

impl Drop for WaitTicket {
    fn drop(&mut self) {
        let mut records = self.0.lock();
        records.waiting = records.waiting.saturating_sub(1);
    }
}

impl Event {
    /// Whether a stream wait for the event is enqueued and not finished.
    pub(crate) fn has_waiters(&self) -> bool {
        self.lock().waiting > 0
    }
}

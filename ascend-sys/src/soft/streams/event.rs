//! One event: the records issued on it and which of them were reached.

use crate::soft::misuse;
use std::collections::BTreeSet;
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Instant;

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
    records: Mutex<Records>,
    changed: Condvar,
}

impl Event {
    pub(crate) fn new(handle: usize, device: i32, flags: u32, mode: EventMode) -> Self {
        Self {
            handle,
            device,
            flags,
            mode,
            created: crate::soft::sequence::next(),
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
        records.latest += 1;
        let number = records.latest;
        records.pending.insert(number);
        records.reached_at = None;
        number
    }

    /// Number of the latest record issued (0: never recorded).
    pub(crate) fn latest(&self) -> u64 {
        self.lock().latest
    }

    /// Marks record `number` reached by a worker.
    pub(crate) fn reach(&self, number: u64) {
        let mut records = self.lock();
        records.pending.remove(&number);
        if number == records.latest {
            records.reached_at = Some(Instant::now());
        }
        drop(records);
        self.changed.notify_all();
    }

    fn reached(records: &Records, number: u64) -> bool {
        number <= records.latest && !records.pending.contains(&number)
    }

    /// Whether record `number` was reached.
    pub(crate) fn is_reached(&self, number: u64) -> bool {
        Self::reached(&self.lock(), number)
    }

    /// When the latest record was reached (`None` if it was not yet).
    pub(crate) fn timestamp(&self) -> Option<Instant> {
        self.lock().reached_at
    }

    /// Blocks until record `number` is reached. A record that was never
    /// issued (a wait for the "next" record) is given up when the event is
    /// destroyed, and that is recorded as misuse (`waiter` names the task).
    pub(crate) fn wait_reached(&self, number: u64, waiter: Option<&str>) {
        let mut records = self.lock();
        loop {
            if Self::reached(&records, number) {
                return;
            }
            if records.destroyed && number > records.latest {
                drop(records);
                misuse::record(
                    "aclrtDestroyEvent",
                    format!(
                        "event {:#x} destroyed before the record {} waited for was issued; the wait ends",
                        self.handle,
                        waiter.unwrap_or("a stream")
                    ),
                );
                return;
            }
            records = self
                .changed
                .wait(records)
                .unwrap_or_else(|poisoned| poisoned.into_inner());
        }
    }

    /// `aclrtDestroyEvent`: wakes waiters for records that will never come.
    pub(crate) fn destroy(&self) {
        self.lock().destroyed = true;
        self.changed.notify_all();
    }
}

//! One notify (`aclrtCreateNotify`) or count notify (`aclrtCntNotifyCreate`):
//! a 32-bit word that tasks of streams change and wait on.
//!
//! A notify's word is a bit: a record sets it, a wait-and-reset waits until
//! it is set and clears it in the same step (so one record releases one
//! wait; a second record before the wait is lost, as on hardware). A count
//! notify's word is a counter that a record sets, adds to, ORs or ANDs, and
//! a wait compares (optionally clearing it once the wait ends). An exported
//! notify's bit lives in a page shared with the processes that import it
//! ([`super::notify_page`]). The word and its waiters are behind the
//! notify's own lock, a leaf lock (nothing else is taken while it is held).

use super::notify_page::NotifyPage;
use super::queue::Stream;
use crate::soft::check::misuse_log;
use crate::soft::core::soft_result::{Failure, SoftResult, fail};
use crate::types::*;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// How often a wait looks again without being woken: the word of an
/// exported notify may change in another process, and a stream destroyed
/// by force must be able to end the wait.
const POLL_SHARED: Duration = Duration::from_millis(1);
const POLL_LOCAL: Duration = Duration::from_millis(20);

/// Which creation call made it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// `aclrtCreateNotify` or `aclrtNotifyImportByKey`.
    Notify,
    /// `aclrtCntNotifyCreate`.
    Count,
}

/// What a wait waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Condition {
    /// The notify's bit set; it is cleared by the wait.
    Set,
    /// A count notify's counter compared with `value` (an
    /// `aclrtCntNotifyWaitMode`), cleared afterwards if `clear`.
    Count { mode: u32, value: u32, clear: bool },
}

impl Condition {
    fn holds(self, word: u32) -> bool {
        match self {
            Condition::Set => word != 0,
            Condition::Count { mode, value, .. } => match mode {
                ACL_RT_CNT_NOTIFY_WAIT_LESS_MODE => word < value,
                ACL_RT_CNT_NOTIFY_WAIT_EQUAL_MODE => word == value,
                ACL_RT_CNT_NOTIFY_WAIT_BIGGER_MODE => word > value,
                ACL_RT_CNT_NOTIFY_WAIT_BIGGER_OR_EQUAL_MODE => word >= value,
                _ => word & value == value,
            },
        }
    }

    fn clears(self) -> bool {
        match self {
            Condition::Set => true,
            Condition::Count { clear, .. } => clear,
        }
    }

    fn describe(self) -> String {
        match self {
            Condition::Set => "the notify is recorded".to_string(),
            Condition::Count { mode, value, .. } => {
                let relation = match mode {
                    ACL_RT_CNT_NOTIFY_WAIT_LESS_MODE => "<",
                    ACL_RT_CNT_NOTIFY_WAIT_EQUAL_MODE => "==",
                    ACL_RT_CNT_NOTIFY_WAIT_BIGGER_MODE => ">",
                    ACL_RT_CNT_NOTIFY_WAIT_BIGGER_OR_EQUAL_MODE => ">=",
                    _ => "has every bit of",
                };
                format!("the counter {relation} {value:#x}")
            }
        }
    }
}

#[derive(Default)]
struct Word {
    /// The word, until the notify is exported.
    local: u32,
    /// The shared page, once exported or when imported.
    page: Option<Arc<NotifyPage>>,
    destroyed: bool,
    /// Records issued by calls (for the sanitizer: whether a wait has a
    /// record to order after).
    records: u64,
    /// Records queued and not yet run (nor dropped): a destroyed notify's
    /// waits still wait for them.
    pending: u64,
    /// Waits issued by calls.
    waits: u64,
}

/// A notify or a count notify.
pub(crate) struct Signal {
    pub(crate) handle: usize,
    pub(crate) kind: Kind,
    /// The device current at creation (or import).
    pub(crate) device: i32,
    /// What `aclrtGetNotifyId` / `aclrtCntNotifyGetId` report.
    pub(crate) id: u32,
    /// Imported by key from another process (or this one).
    pub(crate) imported: bool,
    /// Creation sequence number ([`crate::soft::sequence_now`]).
    pub(crate) created: u64,
    word: Mutex<Word>,
    changed: Condvar,
}

/// What a task does to a notify.
pub(crate) enum NotifyWork {
    /// `aclrtRecordNotify`: sets the bit.
    Record(PendingRecord),
    /// `aclrtCntNotifyRecord`: changes the counter (`mode`: an
    /// `aclrtCntNotifyRecordMode`).
    Count {
        record: PendingRecord,
        mode: u32,
        value: u32,
    },
    /// `aclrtCntNotifyReset`: clears the counter.
    Clear(Arc<Signal>),
    /// `aclrtWaitAndResetNotify`, `aclrtCntNotifyWaitWithTimeout`: blocks
    /// the stream until the condition holds; with a `timeout` (counted from
    /// when the worker starts the wait) the task fails with
    /// `ACL_ERROR_RT_WAIT_TIMEOUT` once it passes.
    Wait {
        signal: Arc<Signal>,
        condition: Condition,
        timeout: Option<Duration>,
    },
}

impl Signal {
    pub(crate) fn new(handle: usize, kind: Kind, device: i32, id: u32, page: Option<Arc<NotifyPage>>) -> Self {
        let imported = page.is_some();
        Self {
            handle,
            kind,
            device,
            id,
            imported,
            created: crate::soft::core::sequence::next(),
            word: Mutex::new(Word {
                page,
                ..Word::default()
            }),
            changed: Condvar::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Word> {
        self.word.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Names it in messages.
    pub(crate) fn name(&self) -> String {
        match self.kind {
            Kind::Notify => format!("notify {:#x}", self.handle),
            Kind::Count => format!("count notify {:#x}", self.handle),
        }
    }

    /// Reads the word.
    fn read(word: &Word) -> u32 {
        match &word.page {
            Some(page) => page.bit().load(Ordering::Acquire),
            None => word.local,
        }
    }

    /// Changes the word with `change` (under the notify's lock).
    fn write(&self, change: impl Fn(u32) -> u32) {
        let mut word = self.lock();
        match &word.page {
            Some(page) => {
                let _ = page
                    .bit()
                    .fetch_update(Ordering::AcqRel, Ordering::Acquire, |old| Some(change(old)));
            }
            None => word.local = change(word.local),
        }
        drop(word);
        self.changed.notify_all();
    }

    /// Notes a record issued by a call; the record counts as pending until
    /// the returned guard (held by its task) drops.
    pub(crate) fn record_issued(self: &Arc<Self>) -> PendingRecord {
        let mut word = self.lock();
        word.records += 1;
        word.pending += 1;
        PendingRecord(Arc::clone(self))
    }

    /// Notes a wait issued by a call; returns whether a record issued
    /// earlier is there for it to order after (not yet taken by an earlier
    /// wait).
    pub(crate) fn wait_issued(&self) -> bool {
        let mut word = self.lock();
        word.waits += 1;
        match self.kind {
            Kind::Notify => word.records >= word.waits,
            Kind::Count => word.records > 0,
        }
    }

    /// `aclrtNotifyBatchReset`: clears the word now.
    pub(crate) fn reset_now(&self) {
        self.write(|_| 0);
    }

    /// The shared page, made on the first export (the bit moves into it).
    pub(crate) fn export(&self, id: u32) -> SoftResult<Arc<NotifyPage>> {
        let mut word = self.lock();
        if let Some(page) = &word.page {
            return Ok(Arc::clone(page));
        }
        let page = Arc::new(NotifyPage::create(id, word.local)?);
        word.page = Some(Arc::clone(&page));
        Ok(page)
    }

    /// The shared page, if exported.
    pub(crate) fn page(&self) -> Option<Arc<NotifyPage>> {
        self.lock().page.clone()
    }

    /// `aclrtDestroyNotify` / `aclrtCntNotifyDestroy`: waits still queued
    /// end (recorded as misuse) once no record of it is queued any more,
    /// rather than wait for a notify nobody can record.
    pub(crate) fn destroy(&self) {
        self.lock().destroyed = true;
        self.changed.notify_all();
    }

    /// Takes the condition if it holds (clearing the word if it says so).
    fn take(word: &mut Word, condition: Condition) -> bool {
        match &word.page {
            Some(page) if condition == Condition::Set => page
                .bit()
                .compare_exchange(1, 0, Ordering::AcqRel, Ordering::Acquire)
                .is_ok(),
            _ => {
                if !condition.holds(Self::read(word)) {
                    return false;
                }
                if condition.clears() {
                    match &word.page {
                        Some(page) => page.bit().store(0, Ordering::Release),
                        None => word.local = 0,
                    }
                }
                true
            }
        }
    }

    /// Blocks until `condition` holds. Ends early (recorded as misuse,
    /// counted as met) when the notify is destroyed or `give_up` names a
    /// call that ends the wait; returns `false` only when `deadline` passed
    /// first.
    fn wait(
        &self,
        condition: Condition,
        waiter: &str,
        give_up: &dyn Fn() -> Option<&'static str>,
        deadline: Option<Instant>,
    ) -> bool {
        let mut word = self.lock();
        loop {
            if Self::take(&mut word, condition) {
                drop(word);
                self.changed.notify_all();
                return true;
            }
            let ended = if word.destroyed && word.pending == 0 {
                Some("aclrtDestroyNotify")
            } else {
                give_up()
            };
            if let Some(api) = ended {
                drop(word);
                misuse_log::record(
                    api,
                    format!(
                        "{waiter} ended before {} ({} is gone, or its stream was destroyed by force)",
                        condition.describe(),
                        self.name()
                    ),
                );
                return true;
            }
            let poll = if word.page.is_some() { POLL_SHARED } else { POLL_LOCAL };
            let now = Instant::now();
            let pause = match deadline {
                Some(deadline) if now >= deadline => return false,
                Some(deadline) => (deadline - now).min(poll),
                None => poll,
            };
            word = self
                .changed
                .wait_timeout(word, pause)
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .0;
        }
    }
}

/// A record queued on a stream: pending until its task drops (it ran, was
/// skipped, or its stream was destroyed by force). Dropping it takes the
/// notify's lock (a leaf lock): a task is never dropped while its stream's
/// queue lock is held.
pub(crate) struct PendingRecord(Arc<Signal>);

impl Drop for PendingRecord {
    fn drop(&mut self) {
        let mut word = self.0.lock();
        word.pending = word.pending.saturating_sub(1);
        drop(word);
        self.0.changed.notify_all();
    }
}

impl NotifyWork {
    /// Says what the task does, for messages.
    pub(crate) fn describe(&self) -> String {
        match self {
            NotifyWork::Record(record) => format!("a record of {}", record.0.name()),
            NotifyWork::Count { record, mode, value } => {
                format!("a record (mode {mode}, value {value:#x}) of {}", record.0.name())
            }
            NotifyWork::Clear(signal) => format!("a reset of {}", signal.name()),
            NotifyWork::Wait {
                signal,
                condition,
                timeout,
            } => {
                let limit = timeout.map_or(String::new(), |t| format!(" (at most {} s)", t.as_secs()));
                format!("a wait on {} until {}{limit}", signal.name(), condition.describe())
            }
        }
    }

    /// Runs the task on `stream`'s worker (`number`: its place on the
    /// stream, `what`: its description).
    pub(crate) fn run(&self, stream: &Stream, number: u64, what: &str) -> SoftResult {
        match self {
            NotifyWork::Record(record) => record.0.write(|_| 1),
            NotifyWork::Count { record, mode, value } => {
                let (mode, value) = (*mode, *value);
                record.0.write(move |old| match mode {
                    ACL_RT_CNT_NOTIFY_RECORD_SET_VALUE_MODE => value,
                    ACL_RT_CNT_NOTIFY_RECORD_ADD_MODE => old.wrapping_add(value),
                    ACL_RT_CNT_NOTIFY_RECORD_BIT_OR_MODE => old | value,
                    _ => old & value,
                });
            }
            NotifyWork::Clear(signal) => signal.write(|_| 0),
            NotifyWork::Wait {
                signal,
                condition,
                timeout,
            } => {
                let give_up = || stream.given_up(number, true);
                let deadline = timeout.map(|timeout| Instant::now() + timeout);
                if !signal.wait(*condition, what, &give_up, deadline) {
                    return Err(Failure {
                        code: ACL_ERROR_RT_WAIT_TIMEOUT,
                        message: format!("{} did not happen in time", condition.describe()),
                    });
                }
            }
        }
        Ok(())
    }
}

/// Refuses a record mode that is no `aclrtCntNotifyRecordMode`.
pub(crate) fn check_record_mode(mode: u32) -> SoftResult {
    match mode {
        ACL_RT_CNT_NOTIFY_RECORD_SET_VALUE_MODE
        | ACL_RT_CNT_NOTIFY_RECORD_ADD_MODE
        | ACL_RT_CNT_NOTIFY_RECORD_BIT_OR_MODE
        | ACL_RT_CNT_NOTIFY_RECORD_BIT_AND_MODE => Ok(()),
        _ => fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("record mode {mode} is not an aclrtCntNotifyRecordMode (0, 1, 2 or 4)"),
        ),
    }
}

/// Refuses a wait mode that is no `aclrtCntNotifyWaitMode`.
pub(crate) fn check_wait_mode(mode: u32) -> SoftResult {
    if mode <= ACL_RT_CNT_NOTIFY_WAIT_EQUAL_WITH_BITMASK_MODE {
        Ok(())
    } else {
        fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("wait mode {mode} is not an aclrtCntNotifyWaitMode (0 to 4)"),
        )
    }
}

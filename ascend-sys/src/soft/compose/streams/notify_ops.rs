//! The notify calls (`aclrtCreateNotify` ... `aclrtNotifyImportByKey`) and
//! the count notify calls (`aclrtCntNotify*`): the runtime's checks on their
//! arguments (the ACL layer's NULL checks are in the entry points), then
//! the work on the notify ([`super::notify::Signal`]) and the stream's
//! queue. Notifies live in the streams family's table ([`super::Streams`]),
//! under its lock, beside the events; their handles come from the same
//! counter, so a handle of one kind is never a live handle of another.

use super::notify::{Condition, Kind, NotifyWork, Signal, check_record_mode, check_wait_mode};
use super::notify_page::NotifyPage;
use super::{Streams, lock, lookup_stream, target_stream, task};
use crate::soft::check::sanitize;
use crate::soft::core::soft_result::{SoftResult, fail};
use crate::soft::started::current;
use crate::types::*;
use std::sync::Arc;
use std::time::Duration;

const NOTIFY_TAG: usize = 0x3;
const CNT_NOTIFY_TAG: usize = 0x4;

/// Live notifies one device holds at most (Atlas A2 and A3: 8192).
pub(crate) const MAX_NOTIFIES_PER_DEVICE: usize = 8192;

/// The notify (`kind`) `handle` refers to, or `ACL_ERROR_RT_INVALID_HANDLE`.
fn lookup(streams: &Streams, handle: usize, kind: Kind) -> SoftResult<Arc<Signal>> {
    match streams.notifies.get(&handle) {
        Some(signal) if signal.kind == kind => Ok(Arc::clone(signal)),
        _ => {
            let what = match kind {
                Kind::Notify => "notify",
                Kind::Count => "count notify",
            };
            fail(
                ACL_ERROR_RT_INVALID_HANDLE,
                format!("{handle:#x} is not a live {what} (never created, or already destroyed)"),
            )
        }
    }
}

fn insert(streams: &mut Streams, kind: Kind, device: i32, page: Option<Arc<NotifyPage>>) -> usize {
    let tag = match kind {
        Kind::Notify => NOTIFY_TAG,
        Kind::Count => CNT_NOTIFY_TAG,
    };
    let (_, handle) = streams.next_handle(tag);
    let id = match (&page, kind) {
        (Some(page), _) => page.id(),
        (None, Kind::Notify) => {
            streams.next_notify_id += 1;
            streams.next_notify_id - 1
        }
        (None, Kind::Count) => {
            streams.next_cnt_notify_id += 1;
            streams.next_cnt_notify_id - 1
        }
    };
    streams
        .notifies
        .insert(handle, Arc::new(Signal::new(handle, kind, device, id, page)));
    handle
}

fn refuse_full(streams: &Streams, device: i32) -> SoftResult {
    let live = streams
        .notifies
        .values()
        .filter(|signal| signal.kind == Kind::Notify && signal.device == device)
        .count();
    if live >= MAX_NOTIFIES_PER_DEVICE {
        return fail(
            ACL_ERROR_RT_NO_NOTIFY_RESOURCE,
            format!("device {device} already has {live} notifies, the most one device holds"),
        );
    }
    Ok(())
}

/// `aclrtCreateNotify`: `flag` is `ACL_NOTIFY_DEFAULT` or
/// `ACL_NOTIFY_DEVICE_USE_ONLY` (107000 otherwise), then a current context
/// (107002), then room on the device (207009).
pub(crate) fn create_notify(flag: u64) -> SoftResult<usize> {
    if flag != ACL_NOTIFY_DEFAULT && flag != ACL_NOTIFY_DEVICE_USE_ONLY {
        return fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("flag {flag:#x} is neither ACL_NOTIFY_DEFAULT (0) nor ACL_NOTIFY_DEVICE_USE_ONLY (1)"),
        );
    }
    let device = current::require()?;
    let mut streams = lock()?;
    refuse_full(&streams, device)?;
    Ok(insert(&mut streams, Kind::Notify, device, None))
}

/// `aclrtCntNotifyCreate`: `flag` is reserved and must be 0 (107000), then
/// a current context (107002).
pub(crate) fn create_cnt_notify(flag: u64) -> SoftResult<usize> {
    if flag != 0 {
        return fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("flag {flag:#x}: the flag of aclrtCntNotifyCreate is reserved and must be 0"),
        );
    }
    let device = current::require()?;
    let mut streams = lock()?;
    Ok(insert(&mut streams, Kind::Count, device, None))
}

/// `aclrtDestroyNotify` / `aclrtCntNotifyDestroy`: does not wait; records
/// still queued complete harmlessly, and waits still queued end (recorded
/// as misuse). An exported notify's page stays with the processes that
/// imported it; new imports of its key fail.
pub(crate) fn destroy(handle: usize, kind: Kind) -> SoftResult {
    let mut streams = lock()?;
    let signal = lookup(&streams, handle, kind)?;
    streams.notifies.remove(&handle);
    signal.destroy();
    sanitize::event_destroyed(handle);
    Ok(())
}

/// The id `aclrtGetNotifyId` / `aclrtCntNotifyGetId` report: numbered
/// from 0 in creation order, per kind; an imported notify has its
/// exporter's id.
pub(crate) fn id(handle: usize, kind: Kind) -> SoftResult<u32> {
    Ok(lookup(&*lock()?, handle, kind)?.id)
}

/// Queues `work` on `stream` (NULL: the default stream) for the notify
/// `handle`: handles first (notify, then stream: 107017), a current context
/// (107002), a stream of another device (107003).
fn enqueue(
    api: &'static str,
    handle: usize,
    kind: Kind,
    stream: usize,
    work: impl FnOnce(Arc<Signal>) -> (NotifyWork, Option<sanitize::WaitFor>),
) -> SoftResult {
    let mut streams = lock()?;
    let signal = lookup(&streams, handle, kind)?;
    let explicit = lookup_stream(&streams, stream)?;
    let device = current::require()?;
    let stream = target_stream(&mut streams, explicit, device)?;
    let (work, waits) = work(signal);
    match waits {
        Some(what) => sanitize::wait_event(stream.site(), handle, what, api),
        None => sanitize::record(stream.site(), handle),
    }
    stream.submit(task::Task::new(api, task::Work::Notify(work), Vec::new()));
    Ok(())
}

/// What the sanitizer orders a wait after.
fn waits_for(signal: &Signal) -> sanitize::WaitFor {
    if signal.wait_issued() {
        sanitize::WaitFor::Latest
    } else {
        sanitize::WaitFor::Next
    }
}

/// `aclrtRecordNotify`: a task that sets the notify's bit.
pub(crate) fn record_notify(notify: usize, stream: usize) -> SoftResult {
    enqueue("aclrtRecordNotify", notify, Kind::Notify, stream, |signal| {
        (NotifyWork::Record(signal.record_issued()), None)
    })
}

/// `aclrtWaitAndResetNotify`: a task that waits until the bit is set and
/// clears it. `timeout` in seconds: 0 (documented) and `u32::MAX` (the
/// runtime's "no timeout") wait without limit.
pub(crate) fn wait_and_reset(notify: usize, stream: usize, timeout: u32) -> SoftResult {
    let timeout = match timeout {
        0 | u32::MAX => None,
        seconds => Some(Duration::from_secs(u64::from(seconds))),
    };
    enqueue("aclrtWaitAndResetNotify", notify, Kind::Notify, stream, |signal| {
        let what = waits_for(&signal);
        (
            NotifyWork::Wait {
                signal,
                condition: Condition::Set,
                timeout,
            },
            Some(what),
        )
    })
}

/// `aclrtNotifyBatchReset` (the ACL layer has refused a NULL array): `num`
/// 0 → 107000; then each notify in order, stopping at the first that is not
/// a live notify (107017), a current context (107002) first. The bits are
/// cleared now, from the host (not ordered on any stream).
pub(crate) fn batch_reset(handles: &[usize]) -> SoftResult {
    if handles.is_empty() {
        return fail(ACL_ERROR_RT_PARAM_INVALID, "num is 0");
    }
    current::require()?;
    let streams = lock()?;
    for &handle in handles {
        lookup(&streams, handle, Kind::Notify)?.reset_now();
    }
    Ok(())
}

/// The shortest key buffer (`aclrtNotifyGetExportKey`'s `len`).
pub(crate) const KEY_BUFFER_MIN: usize = 65;

/// `aclrtNotifyGetExportKey` (the ACL layer has refused NULL arguments):
/// the handle (107017), `len` below 65 or `flags` other than
/// `ACL_RT_NOTIFY_EXPORT_FLAG_DEFAULT` / `..._DISABLE_PID_VALIDATION`
/// (107000), an imported notify (107000). Exporting again gives the same
/// key; `..._DISABLE_PID_VALIDATION` on any export opens it to every
/// process from then on.
pub(crate) fn export_key(notify: usize, len: usize, flags: u64) -> SoftResult<String> {
    let signal = lookup(&*lock()?, notify, Kind::Notify)?;
    if len < KEY_BUFFER_MIN {
        return fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("len {len} is below {KEY_BUFFER_MIN}, the shortest key buffer"),
        );
    }
    if flags != ACL_RT_NOTIFY_EXPORT_FLAG_DEFAULT && flags != ACL_RT_NOTIFY_EXPORT_FLAG_DISABLE_PID_VALIDATION {
        return fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!(
                "flags {flags:#x} are neither ACL_RT_NOTIFY_EXPORT_FLAG_DEFAULT (0) nor \
                 ACL_RT_NOTIFY_EXPORT_FLAG_DISABLE_PID_VALIDATION (2)"
            ),
        );
    }
    if signal.imported {
        return fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!(
                "{} was imported by key; only the process that created it exports it",
                signal.name()
            ),
        );
    }
    let page = signal.export(signal.id)?;
    if flags == ACL_RT_NOTIFY_EXPORT_FLAG_DISABLE_PID_VALIDATION {
        page.open_to_all();
    }
    Ok(page.key())
}

/// The page of an exported notify of this process, for a whitelist call:
/// the handle (107017), then an imported or never exported notify (107000).
fn exported_page(notify: usize) -> SoftResult<Arc<NotifyPage>> {
    let signal = lookup(&*lock()?, notify, Kind::Notify)?;
    match signal.page() {
        Some(page) if !signal.imported => Ok(page),
        _ => fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!(
                "{} was not exported by this process: call aclrtNotifyGetExportKey first",
                signal.name()
            ),
        ),
    }
}

/// `aclrtNotifySetImportPid` (the ACL layer has refused NULL arguments):
/// the handle (107017), `num` 0, a pid that is not positive, or a notify
/// not exported by this process (107000), a current context (107002).
pub(crate) fn set_import_pids(notify: usize, pids: &[i32]) -> SoftResult {
    let page = exported_page(notify)?;
    if pids.is_empty() {
        return fail(
            ACL_ERROR_RT_PARAM_INVALID,
            "num is not positive (the runtime takes it as an int)",
        );
    }
    if let Some(index) = pids.iter().position(|&pid| pid <= 0) {
        return fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("pid[{index}] = {} is not a process id", pids[index]),
        );
    }
    current::require()?;
    page.add_pids(pids)
}

/// `aclrtNotifySetImportPidInterServer` (no ACL-layer checks; NULL, 0 and
/// an entry without pids were refused with 107000 by the entry point): the
/// handle (107017), a notify not exported (107000), then
/// `ACL_ERROR_RT_FEATURE_NOT_SUPPORT`: whitelisting processes of other
/// servers exists only on Atlas A3 super nodes.
pub(crate) fn set_import_pids_inter_server(notify: usize) -> SoftResult {
    exported_page(notify)?;
    fail(
        ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
        "whitelisting processes of other servers exists only on Atlas A3; the software device models the common chips",
    )
}

/// `aclrtNotifyImportByKey` (the ACL layer has refused NULL arguments):
/// `flags` other than `ACL_RT_NOTIFY_IMPORT_FLAG_DEFAULT` /
/// `..._ENABLE_PEER_ACCESS` (107000), a current context (107002), then the
/// page the key names (107000 when it names no live IPC notify, 207006 for
/// a process of another user or one not on the whitelist). The notify
/// returned is a notify of the current device sharing the exporter's bit
/// and id: record it, wait on it, destroy it with `aclrtDestroyNotify`.
pub(crate) fn import_by_key(key: &str, flags: u64) -> SoftResult<usize> {
    if flags != ACL_RT_NOTIFY_IMPORT_FLAG_DEFAULT && flags != ACL_RT_NOTIFY_IMPORT_FLAG_ENABLE_PEER_ACCESS {
        return fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!(
                "flags {flags:#x} are neither ACL_RT_NOTIFY_IMPORT_FLAG_DEFAULT (0) nor \
                 ACL_RT_NOTIFY_IMPORT_FLAG_ENABLE_PEER_ACCESS (2)"
            ),
        );
    }
    let device = current::require()?;
    let page = Arc::new(NotifyPage::open(key)?);
    let mut streams = lock()?;
    Ok(insert(&mut streams, Kind::Notify, device, Some(page)))
}

/// `aclrtCntNotifyRecord` (the ACL layer has refused a NULL `info`): the
/// mode (107000), then as [`enqueue`]; a task that changes the counter.
pub(crate) fn cnt_record(handle: usize, stream: usize, mode: u32, value: u32) -> SoftResult {
    lookup(&*lock()?, handle, Kind::Count)?;
    check_record_mode(mode)?;
    enqueue("aclrtCntNotifyRecord", handle, Kind::Count, stream, |signal| {
        let record = signal.record_issued();
        (NotifyWork::Count { record, mode, value }, None)
    })
}

/// `aclrtCntNotifyWaitWithTimeout` (the ACL layer has refused a NULL
/// `info`): the mode (107000), then as [`enqueue`]; a task that waits until
/// the counter meets the condition (`timeout` seconds, 0 no limit) and
/// clears it if `clear`.
pub(crate) fn cnt_wait(handle: usize, stream: usize, mode: u32, value: u32, timeout: u32, clear: bool) -> SoftResult {
    lookup(&*lock()?, handle, Kind::Count)?;
    check_wait_mode(mode)?;
    let timeout = (timeout != 0).then(|| Duration::from_secs(u64::from(timeout)));
    enqueue("aclrtCntNotifyWaitWithTimeout", handle, Kind::Count, stream, |signal| {
        let what = waits_for(&signal);
        (
            NotifyWork::Wait {
                signal,
                condition: Condition::Count { mode, value, clear },
                timeout,
            },
            Some(what),
        )
    })
}

/// `aclrtCntNotifyReset`: as [`enqueue`]; a task that clears the counter
/// (ordered like a record for the sanitizer).
pub(crate) fn cnt_reset(handle: usize, stream: usize) -> SoftResult {
    enqueue("aclrtCntNotifyReset", handle, Kind::Count, stream, |signal| {
        (NotifyWork::Clear(signal), None)
    })
}

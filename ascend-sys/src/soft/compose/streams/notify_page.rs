//! The cross-process part of an IPC notify (`aclrtNotifyGetExportKey`).
//!
//! Exporting a notify moves its bit into one page of a `memfd` of the
//! exporting process, mapped shared: a magic, a random token, the notify's
//! id, the bit itself, the whitelist state and up to [`MAX_PIDS`]
//! whitelisted pids. The key names the exporter's pid, the descriptor and
//! the token (`ascend-soft-notify:<pid>:<fd>:<token>`, at most 58
//! characters); another process of the same user opens the page through
//! `/proc/<pid>/fd/<fd>`, as IPC events are ([`super::ipc_event`]), checks
//! the token and the whitelist, and maps it too. Records and waits in any
//! process change the shared bit with atomic operations; a wait polls it
//! (another process cannot wake this one's threads). Nothing is created in
//! a file system; the page goes when the last process holding it closes it.

use crate::soft::core::soft_result::{SoftResult, fail};
use crate::soft::share::{TokenHeader, TokenLayout, TokenPage, own_pid};
use crate::types::*;
use std::sync::atomic::{AtomicI32, AtomicU32, Ordering};

/// The key's prefix.
const KEY_PREFIX: &str = "ascend-soft-notify:";
/// Whitelisted pids one page holds.
pub(crate) const MAX_PIDS: usize = 1000;

/// The shared page.
#[repr(C)]
struct Page {
    header: TokenHeader,
    /// The notify's id in the exporting process.
    id: AtomicU32,
    /// The notify's bit (0 or 1).
    bit: AtomicU32,
    /// 1: any process may import (`ACL_RT_NOTIFY_EXPORT_FLAG_DISABLE_PID_VALIDATION`).
    open_to_all: AtomicU32,
    /// Whitelisted pids in `pids`.
    count: AtomicU32,
    pids: [AtomicI32; MAX_PIDS],
}

// SAFETY: `#[repr(C)]`, the header first, atomics only, valid all-zero,
// and within a page (checked where it is mapped).
unsafe impl TokenLayout for Page {
    const MAGIC: u64 = u64::from_le_bytes(*b"ASNTFIPC");
    const NAME: &'static str = "ipc-notify";
    const WHAT: &'static str = "IPC notify";
    fn header(&self) -> &TokenHeader {
        &self.header
    }
}

/// One process's mapping of an IPC notify's page.
pub(crate) struct NotifyPage(TokenPage<Page>);

/// The parts of a key: the exporter's pid, its descriptor, the token.
fn parse(key: &str) -> Option<(u32, u32, u64)> {
    let mut parts = key.strip_prefix(KEY_PREFIX)?.split(':');
    let pid = parts.next()?.parse().ok()?;
    let fd = parts.next()?.parse().ok()?;
    let token = u64::from_str_radix(parts.next()?, 16).ok()?;
    parts.next().is_none().then_some((pid, fd, token))
}

impl NotifyPage {
    /// A new page for a notify of this process with id `id` whose bit is
    /// `bit` now.
    pub(crate) fn create(id: u32, bit: u32) -> SoftResult<Self> {
        TokenPage::create(|page: &Page| {
            page.id.store(id, Ordering::Relaxed);
            page.bit.store(bit, Ordering::Relaxed);
        })
        .map(Self)
    }

    /// Opens the page `key` names for this process: a key that names no
    /// live IPC notify → `ACL_ERROR_RT_PARAM_INVALID`; an exporter of
    /// another user, or this process not on the whitelist →
    /// `ACL_ERROR_RT_NO_PERMISSION` (the exporting process itself is always
    /// allowed).
    pub(crate) fn open(key: &str) -> SoftResult<Self> {
        let Some((pid, exporter_fd, token)) = parse(key) else {
            return fail(
                ACL_ERROR_RT_PARAM_INVALID,
                format!("\"{key}\" is not a notify key (aclrtNotifyGetExportKey makes them)"),
            );
        };
        let shared = Self(TokenPage::open(pid, exporter_fd, token)?);
        let me = own_pid();
        if me != pid && !shared.allows(me as i32) {
            return fail(
                ACL_ERROR_RT_NO_PERMISSION,
                format!(
                    "process {me} is not on the whitelist of the notify (aclrtNotifySetImportPid in process {pid}, \
                     or export it with ACL_RT_NOTIFY_EXPORT_FLAG_DISABLE_PID_VALIDATION)"
                ),
            );
        }
        Ok(shared)
    }

    fn page(&self) -> &Page {
        self.0.page()
    }

    /// The key: prefix, pid, descriptor, token.
    pub(crate) fn key(&self) -> String {
        format!(
            "{KEY_PREFIX}{}:{}:{:016x}",
            self.0.pid(),
            self.0.exporter_fd(),
            self.0.token()
        )
    }

    /// The bit (0 or 1).
    pub(crate) fn bit(&self) -> &AtomicU32 {
        &self.page().bit
    }

    /// The exporter's id of the notify.
    pub(crate) fn id(&self) -> u32 {
        self.page().id.load(Ordering::Relaxed)
    }

    /// Lets any process import.
    pub(crate) fn open_to_all(&self) {
        self.page().open_to_all.store(1, Ordering::Release);
    }

    /// Whether `pid` may import.
    fn allows(&self, pid: i32) -> bool {
        let page = self.page();
        if page.open_to_all.load(Ordering::Acquire) != 0 {
            return true;
        }
        let count = (page.count.load(Ordering::Acquire) as usize).min(MAX_PIDS);
        page.pids[..count]
            .iter()
            .any(|entry| entry.load(Ordering::Relaxed) == pid)
    }

    /// Adds `pids` to the whitelist (the caller holds the notify's lock, so
    /// one process appends at a time: only the exporter appends).
    pub(crate) fn add_pids(&self, pids: &[i32]) -> SoftResult {
        let page = self.page();
        let mut count = page.count.load(Ordering::Acquire) as usize;
        for &pid in pids {
            if page.pids[..count.min(MAX_PIDS)]
                .iter()
                .any(|entry| entry.load(Ordering::Relaxed) == pid)
            {
                continue;
            }
            if count >= MAX_PIDS {
                return fail(
                    ACL_ERROR_RT_PARAM_INVALID,
                    format!("the whitelist of an IPC notify holds at most {MAX_PIDS} pids on the software device"),
                );
            }
            page.pids[count].store(pid, Ordering::Relaxed);
            count += 1;
            page.count.store(count as u32, Ordering::Release);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::parse;

    #[test]
    fn keys_parse_back() {
        assert_eq!(parse("ascend-soft-notify:12:7:00000000000000ff"), Some((12, 7, 0xff)));
        assert_eq!(parse("ascend-soft-notify:12:7"), None);
        assert_eq!(parse("other:1:2:3"), None);
    }
}

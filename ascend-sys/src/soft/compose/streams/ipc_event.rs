//! The cross-process part of an IPC event (`ACL_EVENT_IPC`).
//!
//! The exporting process keeps one page in a `memfd` of its own, mapped
//! shared: a magic, a random token, the number of the latest record issued
//! and the highest record reached. Its handle (`aclrtIpcEventHandle`) names
//! the exporter's pid, the descriptor and the token; another process (of the
//! same user) opens the page through `/proc/<pid>/fd/<fd>` as shared memory
//! is ([`crate::soft::share`]) and maps it too. Records made in either
//! process count the shared numbers up; a wait or a synchronisation in
//! either process waits for the shared "reached" number, polling (the other
//! process cannot wake this one's threads). Nothing is created in a file
//! system; the page goes when the last process holding it closes it.

use crate::soft::core::soft_result::{SoftResult, fail};
use crate::soft::share::{TokenHeader, TokenLayout, TokenPage};
use crate::types::*;
use std::sync::atomic::{AtomicU64, Ordering};

const MAGIC: u64 = u64::from_le_bytes(*b"ASEVTIPC");
/// Bytes of `aclrtIpcEventHandle`.
pub(crate) const HANDLE_BYTES: usize = 64;

/// The shared page.
#[repr(C)]
struct Page {
    header: TokenHeader,
    /// Number of the latest record issued (records are numbered from 1).
    issued: AtomicU64,
    /// Highest record number reached.
    reached: AtomicU64,
}

// SAFETY: `#[repr(C)]`, the header first, atomics only, valid all-zero,
// and far below a page.
unsafe impl TokenLayout for Page {
    const MAGIC: u64 = MAGIC;
    const NAME: &'static str = "ipc-event";
    const WHAT: &'static str = "IPC event";
    fn header(&self) -> &TokenHeader {
        &self.header
    }
}

/// One process's mapping of an IPC event's page.
pub(crate) struct IpcShared(TokenPage<Page>);

impl IpcShared {
    /// A new page for an event this process creates with `ACL_EVENT_IPC`.
    pub(crate) fn create() -> SoftResult<Self> {
        TokenPage::create(|_| {}).map(Self)
    }

    /// Opens the page `handle` names (this process's own included). A
    /// handle that names no live IPC event: `ACL_ERROR_RT_PARAM_INVALID`.
    pub(crate) fn open(handle: &[u8; HANDLE_BYTES]) -> SoftResult<Self> {
        let word = |at: usize| {
            let mut bytes = [0u8; 8];
            bytes.copy_from_slice(&handle[at..at + 8]);
            u64::from_le_bytes(bytes)
        };
        if word(0) != MAGIC {
            return fail(
                ACL_ERROR_RT_PARAM_INVALID,
                "the handle is not an IPC event handle (aclrtIpcGetEventHandle makes them)",
            );
        }
        let (pid, exporter_fd, token) = (word(8) as u32, (word(8) >> 32) as u32, word(16));
        TokenPage::open(pid, exporter_fd, token).map(Self)
    }

    fn page(&self) -> &Page {
        self.0.page()
    }

    /// The handle bytes: magic, pid and descriptor, token, then zeros.
    pub(crate) fn handle(&self) -> [u8; HANDLE_BYTES] {
        let mut bytes = [0u8; HANDLE_BYTES];
        bytes[..8].copy_from_slice(&MAGIC.to_le_bytes());
        let place = u64::from(self.0.pid()) | (u64::from(self.0.exporter_fd()) << 32);
        bytes[8..16].copy_from_slice(&place.to_le_bytes());
        bytes[16..24].copy_from_slice(&self.0.token().to_le_bytes());
        bytes
    }

    /// Issues a record; returns its number.
    pub(crate) fn issue(&self) -> u64 {
        self.page().issued.fetch_add(1, Ordering::AcqRel) + 1
    }

    /// Number of the latest record issued (0: none).
    pub(crate) fn latest(&self) -> u64 {
        self.page().issued.load(Ordering::Acquire)
    }

    /// Marks record `number` reached.
    pub(crate) fn reach(&self, number: u64) {
        self.page().reached.fetch_max(number, Ordering::AcqRel);
    }

    /// Whether record `number` (or a later one) was reached.
    pub(crate) fn is_reached(&self, number: u64) -> bool {
        self.page().reached.load(Ordering::Acquire) >= number
    }
}

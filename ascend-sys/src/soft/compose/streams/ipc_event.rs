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
use crate::soft::share::{ProcFdRefusal, open_proc_fd, random_token};
use crate::types::*;
use rustix::fd::{AsRawFd, OwnedFd};
use rustix::fs::{MemfdFlags, ftruncate, memfd_create};
use rustix::mm::{MapFlags, ProtFlags, mmap, munmap};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, Ordering};

/// The `memfd` name (after `ascend-soft-`).
const NAME: &str = "ipc-event";
const MAGIC: u64 = u64::from_le_bytes(*b"ASEVTIPC");
/// Bytes of the page.
const PAGE: usize = 4096;
/// Bytes of `aclrtIpcEventHandle`.
pub(crate) const HANDLE_BYTES: usize = 64;

/// The shared page.
#[repr(C)]
struct Page {
    magic: AtomicU64,
    token: AtomicU64,
    /// Number of the latest record issued (records are numbered from 1).
    issued: AtomicU64,
    /// Highest record number reached.
    reached: AtomicU64,
}

/// One process's mapping of an IPC event's page.
pub(crate) struct IpcShared {
    page: NonNull<Page>,
    /// The `memfd` (the exporter's own, or the importer's open of it).
    fd: OwnedFd,
    /// The exporter's pid.
    pid: u32,
    /// The exporter's descriptor number (the handle names it).
    exporter_fd: u32,
    token: u64,
}

// SAFETY: the page is shared memory accessed through atomics only, mapped
// for as long as the value lives.
unsafe impl Send for IpcShared {}
// SAFETY: as above.
unsafe impl Sync for IpcShared {}

fn map(fd: &OwnedFd) -> SoftResult<NonNull<Page>> {
    // SAFETY: a fresh mapping of PAGE bytes of `fd`, which has at least
    // that many (checked or set by the callers); nothing else is at the
    // address the kernel picks.
    let address = unsafe {
        mmap(
            std::ptr::null_mut(),
            PAGE,
            ProtFlags::READ | ProtFlags::WRITE,
            MapFlags::SHARED,
            fd,
            0,
        )
    };
    match address {
        Ok(address) => NonNull::new(address.cast::<Page>()).map_or_else(
            || fail(ACL_ERROR_RT_INTERNAL_ERROR, "mmap of an IPC event's page returned NULL"),
            Ok,
        ),
        Err(error) => fail(
            ACL_ERROR_RT_MEMORY_ALLOCATION,
            format!("mmap of an IPC event's page failed: {error}"),
        ),
    }
}

impl IpcShared {
    /// A new page for an event this process creates with `ACL_EVENT_IPC`.
    pub(crate) fn create() -> SoftResult<Self> {
        let token = random_token()?;
        let fd = memfd_create(format!("ascend-soft-{NAME}"), MemfdFlags::CLOEXEC).or_else(|error| {
            fail(
                ACL_ERROR_RT_MEMORY_ALLOCATION,
                format!("memfd_create for an IPC event failed: {error}"),
            )
        })?;
        ftruncate(&fd, PAGE as u64).or_else(|error| {
            fail(
                ACL_ERROR_RT_MEMORY_ALLOCATION,
                format!("sizing an IPC event's page failed: {error}"),
            )
        })?;
        let page = map(&fd)?;
        let shared = Self {
            page,
            exporter_fd: fd.as_raw_fd() as u32,
            fd,
            pid: crate::soft::share::own_pid(),
            token,
        };
        shared.page().token.store(token, Ordering::Release);
        shared.page().magic.store(MAGIC, Ordering::Release);
        Ok(shared)
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
        let (fd, size) = open_proc_fd(pid, exporter_fd, NAME).or_else(|refusal| match refusal {
            ProcFdRefusal::Gone(why) => fail(
                ACL_ERROR_RT_PARAM_INVALID,
                format!("the IPC event is gone (destroyed, or its process exited): {why}"),
            ),
            ProcFdRefusal::Denied(why) => fail(ACL_ERROR_RT_NO_PERMISSION, why),
        })?;
        if size < PAGE as u64 {
            return fail(ACL_ERROR_RT_PARAM_INVALID, "the handle names no IPC event's page");
        }
        let page = map(&fd)?;
        let shared = Self {
            page,
            fd,
            pid,
            exporter_fd,
            token,
        };
        let page = shared.page();
        if page.magic.load(Ordering::Acquire) != MAGIC || page.token.load(Ordering::Acquire) != token {
            return fail(
                ACL_ERROR_RT_PARAM_INVALID,
                "the handle's token does not match: the IPC event it named is gone",
            );
        }
        Ok(shared)
    }

    fn page(&self) -> &Page {
        // SAFETY: mapped for as long as `self` lives; only atomics.
        unsafe { self.page.as_ref() }
    }

    /// The handle bytes: magic, pid and descriptor, token, then zeros.
    pub(crate) fn handle(&self) -> [u8; HANDLE_BYTES] {
        let mut bytes = [0u8; HANDLE_BYTES];
        bytes[..8].copy_from_slice(&MAGIC.to_le_bytes());
        let place = u64::from(self.pid) | (u64::from(self.exporter_fd) << 32);
        bytes[8..16].copy_from_slice(&place.to_le_bytes());
        bytes[16..24].copy_from_slice(&self.token.to_le_bytes());
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

impl Drop for IpcShared {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `map`, unmapped once; no reference
        // into it outlives `self`.
        if let Err(error) = unsafe { munmap(self.page.as_ptr().cast(), PAGE) } {
            log::warn!("munmap of an IPC event's page failed: {error}");
        }
        let _ = &self.fd;
    }
}

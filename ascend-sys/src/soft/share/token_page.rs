//! One page of shared memory that other processes open by name: a `memfd`
//! named `ascend-soft-<name>` holding a page whose first words are a magic
//! and a random token ([`TokenHeader`]), mapped shared. The exporter names
//! the page to others by its pid, its descriptor number and the token;
//! another process of the same user opens it through
//! `/proc/<pid>/fd/<fd>` ([`open_proc_fd`](super::open_proc_fd)), maps it,
//! and checks the magic and the token (a reused descriptor number is never
//! taken for the page). The IPC events' and IPC notifies' pages are such
//! pages; what follows the header is theirs, accessed through atomics only.

use super::{ProcFdRefusal, open_proc_fd, own_pid, random_token};
use crate::soft::core::soft_result::{SoftResult, fail};
use crate::types::*;
use rustix::fd::{AsRawFd, OwnedFd};
use rustix::fs::{MemfdFlags, ftruncate, memfd_create};
use rustix::mm::{MapFlags, ProtFlags, mmap, munmap};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, Ordering};

/// Bytes of a page.
const PAGE: usize = 4096;

/// The words every token page starts with.
#[repr(C)]
pub(crate) struct TokenHeader {
    magic: AtomicU64,
    token: AtomicU64,
}

/// What a kind of token page is: its layout (starting with a
/// [`TokenHeader`], then atomics only), its magic and its names.
///
/// # Safety
///
/// `Self` is `#[repr(C)]`, starts with a `TokenHeader`, fits in a page,
/// is valid all-zero, and holds atomics only (it is shared with other
/// processes).
pub(crate) unsafe trait TokenLayout: Sync {
    /// The page's magic.
    const MAGIC: u64;
    /// The `memfd` name (after `ascend-soft-`).
    const NAME: &'static str;
    /// What it is, for messages ("IPC event").
    const WHAT: &'static str;
    /// The header.
    fn header(&self) -> &TokenHeader;
}

/// One process's mapping of a token page of kind `P`.
pub(crate) struct TokenPage<P: TokenLayout> {
    page: NonNull<P>,
    /// The `memfd` (the exporter's own, or this process's open of it).
    _fd: OwnedFd,
    /// The exporter's pid.
    pid: u32,
    /// The exporter's descriptor number.
    exporter_fd: u32,
    token: u64,
}

// SAFETY: the page is shared memory accessed through atomics only
// (`TokenLayout`'s contract), mapped for as long as the value lives.
unsafe impl<P: TokenLayout> Send for TokenPage<P> {}
// SAFETY: as above.
unsafe impl<P: TokenLayout> Sync for TokenPage<P> {}

fn map<P: TokenLayout>(fd: &OwnedFd) -> SoftResult<NonNull<P>> {
    const { assert!(size_of::<P>() <= PAGE) };
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
        Ok(address) => NonNull::new(address.cast::<P>()).map_or_else(
            || {
                fail(
                    ACL_ERROR_RT_INTERNAL_ERROR,
                    format!("mmap of an {}'s page returned NULL", P::WHAT),
                )
            },
            Ok,
        ),
        Err(error) => fail(
            ACL_ERROR_RT_MEMORY_ALLOCATION,
            format!("mmap of an {}'s page failed: {error}", P::WHAT),
        ),
    }
}

impl<P: TokenLayout> TokenPage<P> {
    /// A new page of this process, all zero, set up by `init` before its
    /// token and magic are written.
    pub(crate) fn create(init: impl FnOnce(&P)) -> SoftResult<Self> {
        let token = random_token()?;
        let fd = memfd_create(format!("ascend-soft-{}", P::NAME), MemfdFlags::CLOEXEC).or_else(|error| {
            fail(
                ACL_ERROR_RT_MEMORY_ALLOCATION,
                format!("memfd_create for an {} failed: {error}", P::WHAT),
            )
        })?;
        ftruncate(&fd, PAGE as u64).or_else(|error| {
            fail(
                ACL_ERROR_RT_MEMORY_ALLOCATION,
                format!("sizing an {}'s page failed: {error}", P::WHAT),
            )
        })?;
        let page = map::<P>(&fd)?;
        let shared = Self {
            page,
            exporter_fd: fd.as_raw_fd() as u32,
            _fd: fd,
            pid: own_pid(),
            token,
        };
        init(shared.page());
        let header = shared.page().header();
        header.token.store(token, Ordering::Release);
        header.magic.store(P::MAGIC, Ordering::Release);
        Ok(shared)
    }

    /// Opens the page of process `pid`, descriptor `exporter_fd`, whose
    /// token is `token` (this process's own included). One that is gone,
    /// or is not such a page: `ACL_ERROR_RT_PARAM_INVALID`; one of another
    /// user: `ACL_ERROR_RT_NO_PERMISSION`.
    pub(crate) fn open(pid: u32, exporter_fd: u32, token: u64) -> SoftResult<Self> {
        let (fd, size) = open_proc_fd(pid, exporter_fd, P::NAME).or_else(|refusal| match refusal {
            ProcFdRefusal::Gone(why) => fail(
                ACL_ERROR_RT_PARAM_INVALID,
                format!("the {} is gone (destroyed, or its process exited): {why}", P::WHAT),
            ),
            ProcFdRefusal::Denied(why) => fail(ACL_ERROR_RT_NO_PERMISSION, why),
        })?;
        if size < PAGE as u64 {
            return fail(ACL_ERROR_RT_PARAM_INVALID, format!("that names no {}'s page", P::WHAT));
        }
        let page = map::<P>(&fd)?;
        let shared = Self {
            page,
            _fd: fd,
            pid,
            exporter_fd,
            token,
        };
        let header = shared.page().header();
        if header.magic.load(Ordering::Acquire) != P::MAGIC || header.token.load(Ordering::Acquire) != token {
            return fail(
                ACL_ERROR_RT_PARAM_INVALID,
                format!("the token does not match: the {} it named is gone", P::WHAT),
            );
        }
        Ok(shared)
    }

    /// The page.
    pub(crate) fn page(&self) -> &P {
        // SAFETY: mapped for as long as `self` lives; atomics only.
        unsafe { self.page.as_ref() }
    }

    /// The exporter's pid.
    pub(crate) fn pid(&self) -> u32 {
        self.pid
    }

    /// The exporter's descriptor number.
    pub(crate) fn exporter_fd(&self) -> u32 {
        self.exporter_fd
    }

    /// The page's token.
    pub(crate) fn token(&self) -> u64 {
        self.token
    }
}

impl<P: TokenLayout> Drop for TokenPage<P> {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `map`, unmapped once; no reference
        // into it outlives `self`.
        if let Err(error) = unsafe { munmap(self.page.as_ptr().cast(), PAGE) } {
            log::warn!("munmap of an {}'s page failed: {error}", P::WHAT);
        }
    }
}

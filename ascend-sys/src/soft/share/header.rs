//! The sharing header: the first page of an exported `memfd`, written by
//! the exporting process and read by importers, and the pid whitelist that
//! follows the file's data.
//!
//! The same layout serves both families:
//! - a physical allocation's own `memfd` (its first page is reserved for
//!   this header by [`PhysicalMemory`](crate::soft::core::physical_memory::PhysicalMemory));
//! - the small metadata `memfd` behind one IPC key (its first page is the
//!   header; the key's bytes stay in the device's arena).
//!
//! Every field is an atomic: importers in other processes read the page
//! while the exporter may still change the state bits or grow the
//! whitelist. The exporter fills the fields first and stores [`Header::magic`]
//! last (release); an importer that sees the magic (acquire) sees them all.
//! The whitelist is append-only: its entries are written with `pwrite` into
//! a sparse region of the file before [`Header::pid_count`] is raised
//! (release), so a reader that loads the count (acquire) reads complete
//! entries.

use crate::soft::core::soft_result::{SoftResult, fail};
use crate::types::*;
use rustix::fd::{AsFd, BorrowedFd};
use rustix::mm::{MapFlags, ProtFlags, mmap, munmap};
use std::ffi::c_void;
use std::io::Read;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// Size of the header page.
pub(crate) const PAGE: u64 = 4096;

/// Most pids one whitelist holds (the driver's limit).
pub(crate) const MAX_PIDS: usize = 65_535;

/// Bytes reserved for the whitelist (sparse until written).
pub(crate) const WHITELIST_BYTES: u64 = 65_536 * 4;

/// Magic of a physical allocation exported as a shareable handle.
pub(crate) const MAGIC_PHYSICAL: u64 = u64::from_le_bytes(*b"ASCshPHY");

/// Magic of an IPC key's metadata file.
pub(crate) const MAGIC_IPC: u64 = u64::from_le_bytes(*b"ASCshIPC");

/// [`Header::state`] bit: imports skip the whitelist
/// (`*_DISABLE_PID_VALIDATION`).
pub(crate) const DISABLED: u32 = 1;

/// [`Header::state`] bit: the exporter withdrew the export (freed the
/// handle, destroyed the key, or freed the memory); new imports are refused.
pub(crate) const WITHDRAWN: u32 = 2;

/// Slots in which IPC importers register their pid while they hold an
/// import, so the exporter can tell whether any is left when it destroys
/// the key (a misuse the documents forbid).
pub(crate) const IMPORTER_SLOTS: usize = 256;

/// [`Header::place`] values.
pub(crate) const PLACE_DEVICE: u32 = 0;
pub(crate) const PLACE_HOST: u32 = 1;
pub(crate) const PLACE_HOST_NUMA: u32 = 2;

/// The header page's layout (shared between processes; every field atomic).
#[repr(C)]
pub(crate) struct Header {
    /// [`MAGIC_PHYSICAL`] or [`MAGIC_IPC`] once published; 0 before.
    pub(crate) magic: AtomicU64,
    /// The export's random 64-bit token.
    pub(crate) token: AtomicU64,
    /// Bytes shared.
    pub(crate) size: AtomicU64,
    /// IPC: byte offset of the shared range in the exporter's device arena.
    pub(crate) offset: AtomicU64,
    /// File offset of the whitelist.
    pub(crate) whitelist_at: AtomicU64,
    /// The exporting process.
    pub(crate) exporter: AtomicU32,
    /// [`DISABLED`] and [`WITHDRAWN`] bits.
    pub(crate) state: AtomicU32,
    /// Entries in the whitelist.
    pub(crate) pid_count: AtomicU32,
    /// Physical: [`PLACE_DEVICE`], [`PLACE_HOST`] or [`PLACE_HOST_NUMA`].
    pub(crate) place: AtomicU32,
    /// Physical: the location id (device id for device memory).
    pub(crate) place_id: AtomicU32,
    /// Physical: 0 normal, 1 huge, 2 giant pages.
    pub(crate) pages: AtomicU32,
    /// Physical: 1 for a P2P attribute.
    pub(crate) p2p: AtomicU32,
    /// IPC: the exporter's device.
    pub(crate) device: AtomicU32,
    /// IPC: the exporter's fd number of its device arena `memfd`.
    pub(crate) arena_fd: AtomicU32,
    /// Padding to keep the slots 8-byte aligned.
    _reserved: AtomicU32,
    /// IPC: pids of importers holding an import (0 = free slot).
    pub(crate) importers: [AtomicU32; IMPORTER_SLOTS],
}

const _: () = assert!(std::mem::size_of::<Header>() as u64 <= PAGE);

impl Header {
    /// Whether `bit` is set in [`Header::state`].
    pub(crate) fn has(&self, bit: u32) -> bool {
        self.state.load(Ordering::Acquire) & bit != 0
    }

    /// Sets `bit` in [`Header::state`].
    pub(crate) fn set(&self, bit: u32) {
        self.state.fetch_or(bit, Ordering::AcqRel);
    }

    /// Registers `pid` as a live importer; the slot to release, or `None`
    /// when every slot is taken (then the import is simply not tracked).
    pub(crate) fn claim_slot(&self, pid: u32) -> Option<usize> {
        self.importers.iter().position(|slot| {
            slot.compare_exchange(0, pid, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
        })
    }

    /// Releases a slot taken by [`Header::claim_slot`].
    pub(crate) fn release_slot(&self, slot: usize, pid: u32) {
        if let Some(entry) = self.importers.get(slot) {
            let _ = entry.compare_exchange(pid, 0, Ordering::AcqRel, Ordering::Relaxed);
        }
    }

    /// Pids of registered importers whose process is still alive.
    pub(crate) fn live_importers(&self) -> Vec<u32> {
        self.importers
            .iter()
            .map(|slot| slot.load(Ordering::Acquire))
            .filter(|&pid| pid != 0 && process_alive(pid))
            .collect()
    }
}

/// Whether process `pid` exists (a signal-0 probe; "no permission" means
/// it exists).
fn process_alive(pid: u32) -> bool {
    let Some(pid) = i32::try_from(pid).ok().and_then(rustix::process::Pid::from_raw) else {
        return false;
    };
    !matches!(rustix::process::test_kill_process(pid), Err(rustix::io::Errno::SRCH))
}

/// A shared mapping of the header page of a file (an IPC key's metadata
/// file, or an exported `memfd` being checked before it is imported).
pub(crate) struct HeaderPage {
    base: NonNull<Header>,
}

// SAFETY: the mapping is owned by this value; the page is only accessed
// through atomics, which are safe to share between threads (and processes).
unsafe impl Send for HeaderPage {}
// SAFETY: as for `Send`.
unsafe impl Sync for HeaderPage {}

impl HeaderPage {
    /// Maps the first page of `fd`, which the caller checked is at least a
    /// page long (a mapping past the end of a file faults on access).
    pub(crate) fn map(fd: BorrowedFd<'_>) -> SoftResult<Self> {
        // SAFETY: a fresh shared mapping of one page of a file we hold, at
        // an address the kernel picks.
        match unsafe {
            mmap(
                std::ptr::null_mut(),
                PAGE as usize,
                ProtFlags::READ | ProtFlags::WRITE,
                MapFlags::SHARED,
                fd,
                0,
            )
        } {
            Ok(base) => match NonNull::new(base.cast::<Header>()) {
                Some(base) => Ok(Self { base }),
                None => fail(ACL_ERROR_RT_INTERNAL_ERROR, "mmap returned NULL"),
            },
            Err(error) => fail(
                ACL_ERROR_RT_MEMORY_ALLOCATION,
                format!("cannot map a sharing header: {error}"),
            ),
        }
    }

    /// The header.
    pub(crate) fn get(&self) -> &Header {
        // SAFETY: the page is mapped for the life of `self`, page-aligned
        // (so aligned for `Header`), and only accessed through atomics.
        unsafe { self.base.as_ref() }
    }
}

impl Drop for HeaderPage {
    fn drop(&mut self) {
        // SAFETY: the page was mapped in `map` and is owned by this value.
        if let Err(error) = unsafe { munmap(self.base.as_ptr().cast::<c_void>(), PAGE as usize) } {
            log::warn!("software device: munmap of a sharing header failed: {error}");
        }
    }
}

/// The header at `page`, the start of a mapped header page.
///
/// # Safety
///
/// `page` must point to a mapped, page-aligned header page that stays
/// mapped for `'a` and is only accessed through atomics.
pub(crate) unsafe fn header_at<'a>(page: *mut u8) -> &'a Header {
    // SAFETY: guaranteed by the caller.
    unsafe { &*page.cast::<Header>() }
}

/// A fresh random 64-bit token (never 0).
pub(crate) fn random_token() -> SoftResult<u64> {
    let mut bytes = [0u8; 8];
    let read = std::fs::File::open("/dev/urandom").and_then(|mut file| file.read_exact(&mut bytes));
    match read {
        Ok(()) => Ok(u64::from_le_bytes(bytes).max(1)),
        Err(error) => fail(
            ACL_ERROR_RT_INTERNAL_ERROR,
            format!("cannot read /dev/urandom for an export token: {error}"),
        ),
    }
}

/// Whether `pid` is on the whitelist of the file `fd` whose header is
/// `header`.
pub(crate) fn whitelisted(fd: BorrowedFd<'_>, header: &Header, pid: i32) -> SoftResult<bool> {
    let count = (header.pid_count.load(Ordering::Acquire) as usize).min(MAX_PIDS);
    let at = header.whitelist_at.load(Ordering::Relaxed);
    let mut bytes = vec![0u8; count * 4];
    let mut done = 0;
    while done < bytes.len() {
        match rustix::io::pread(fd, &mut bytes[done..], at + done as u64) {
            Ok(0) => break,
            Ok(read) => done += read,
            Err(rustix::io::Errno::INTR) => {}
            Err(error) => {
                return fail(
                    ACL_ERROR_RT_DRV_INTERNAL_ERROR,
                    format!("cannot read the exporter's pid whitelist: {error}"),
                );
            }
        }
    }
    Ok(bytes[..done]
        .chunks_exact(4)
        .any(|entry| i32::from_le_bytes([entry[0], entry[1], entry[2], entry[3]]) == pid))
}

/// Appends `pids` to the whitelist of the file `fd` (the exporter's side;
/// calls are serialised by the sharing tables' lock).
pub(crate) fn append_whitelist(fd: BorrowedFd<'_>, header: &Header, pids: &[i32]) -> SoftResult {
    if pids.is_empty() {
        return Ok(());
    }
    let count = header.pid_count.load(Ordering::Acquire);
    let at = header.whitelist_at.load(Ordering::Relaxed) + u64::from(count) * 4;
    let bytes: Vec<u8> = pids.iter().flat_map(|pid| pid.to_le_bytes()).collect();
    let mut done = 0;
    while done < bytes.len() {
        match rustix::io::pwrite(fd.as_fd(), &bytes[done..], at + done as u64) {
            Ok(written) => done += written,
            Err(rustix::io::Errno::INTR) => {}
            Err(error) => {
                return fail(
                    ACL_ERROR_RT_DRV_INTERNAL_ERROR,
                    format!("cannot write the pid whitelist: {error}"),
                );
            }
        }
    }
    header.pid_count.store(count + pids.len() as u32, Ordering::Release);
    Ok(())
}

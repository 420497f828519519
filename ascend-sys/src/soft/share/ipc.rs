//! Key-based IPC memory (`aclrtIpcMem*`): sharing part of an `aclrtMalloc`
//! allocation with other processes by name.
//!
//! `aclrtMalloc` memory lives inside the device's one big arena `memfd`, so
//! a key gets a small metadata `memfd` of its own: its header page holds the
//! token, the exporter's pid, the fd number of the arena in the exporter,
//! the range's offset and size, the state bits and the whitelist. The key
//! is the `/proc` path of that metadata file plus the token:
//! `/proc/<pid>/fd/<fd>#<16 hex digits>` (at most 41 characters).
//!
//! An importer opens the metadata file, checks the token, the state and the
//! whitelist, opens the exporter's arena the same way and maps the pages
//! containing the range; the range gets a device address in a fresh
//! `PROT_NONE` reservation of the importer, so a host dereference faults
//! and copies translate through [`resolve`].

use super::Share;
use super::add_pids;
use super::header::{self, HeaderPage, MAGIC_IPC, PAGE, WHITELIST_BYTES};
use super::import_view::ImportView;
use super::proc_fd::{self, Refusal};
use crate::soft::check::misuse_log;
use crate::soft::core::segments::{Segment, Segments};
use crate::soft::core::soft_result::{SoftResult, fail};
use crate::soft::started;
use crate::soft::started::current;
use crate::types::*;
use rustix::fd::{AsFd, AsRawFd, OwnedFd};
use rustix::fs::{MemfdFlags, ftruncate, memfd_create};
use rustix::mm::{MapFlags, ProtFlags, mmap, mmap_anonymous, munmap};
use std::collections::BTreeSet;
use std::ffi::c_void;
use std::sync::Arc;
use std::sync::atomic::Ordering;

/// The shortest key buffer: the driver needs more than 64 bytes.
pub(crate) const KEY_BUFFER_MIN: usize = 65;

/// A key this process exported.
pub(crate) struct IpcKey {
    /// The metadata file; its `/proc` entry is the key's name.
    meta: OwnedFd,
    page: HeaderPage,
    /// The allocation's device address.
    pub(crate) address: usize,
    /// Bytes shared from its start.
    pub(crate) size: u64,
    pub(crate) device: i32,
    pids: BTreeSet<i32>,
    disabled: bool,
    /// Creation sequence number ([`crate::soft::sequence_now`]).
    pub(crate) created: u64,
}

/// An import of a key in this process.
pub(crate) struct IpcImport {
    pub(crate) key: String,
    /// Order of imports (close releases the first import of a key).
    seq: u64,
    /// The device address handed out.
    pub(crate) address: usize,
    pub(crate) size: usize,
    /// The device current at the import (the memory counts as its memory
    /// for location queries).
    pub(crate) device: i32,
    /// This process's mapping of the exporter's arena pages.
    view: Arc<ImportView>,
    /// Bytes of `view`, and of the reservation.
    length: usize,
    /// The `PROT_NONE` range the address lies in.
    reservation: usize,
    page: HeaderPage,
    slot: Option<usize>,
    /// Creation sequence number ([`crate::soft::sequence_now`]).
    pub(crate) created: u64,
}

impl Drop for IpcImport {
    fn drop(&mut self) {
        if let Some(slot) = self.slot {
            self.page.get().release_slot(slot, proc_fd::own_pid());
        }
        // The view goes with its last holder (`ImportView`).
        // SAFETY: the reservation was mapped by `import` with `length` bytes
        // and is owned by this value.
        if let Err(error) = unsafe { munmap(self.reservation as *mut c_void, self.length) } {
            log::warn!("software device: munmap of an IPC reservation failed: {error}");
        }
    }
}

/// `(pid, fd, token)` of a key, or why it is not one.
fn parse(key: &str) -> SoftResult<(u32, u32, u64)> {
    let parsed = key.strip_prefix("/proc/").and_then(|rest| {
        let (pid, rest) = rest.split_once("/fd/")?;
        let (fd, token) = rest.split_once('#')?;
        let digits = |text: &str| !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit());
        if !digits(pid) || !digits(fd) || token.len() != 16 || !token.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        Some((
            pid.parse().ok()?,
            fd.parse().ok()?,
            u64::from_str_radix(token, 16).ok()?,
        ))
    });
    parsed.map_or_else(
        || {
            fail(
                ACL_ERROR_RT_PARAM_INVALID,
                format!("key {key:?} is not a key from aclrtIpcMemGetExportKey"),
            )
        },
        Ok,
    )
}

/// Where the `aclrtMalloc` allocation an IPC key shares lies: its device
/// and its offset in that device's arena.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ArenaRange {
    pub(crate) device: i32,
    pub(crate) offset: u64,
}

/// `aclrtIpcMemGetExportKey` after the argument checks and the caller's
/// check (unlocked) that `[address, address + size)` starts a live
/// `aclrtMalloc` allocation: the key naming it. `mark_exported` marks the
/// allocation starting at `address` as exported, so that its free withdraws
/// the key, and says where it lies (`None`: no allocation of `size` bytes
/// or more starts there any more); it is called with the sharing tables
/// locked, which rank before the device memory's locks.
pub(crate) fn export_key(
    address: usize,
    size: usize,
    flags: u64,
    mark_exported: impl FnOnce() -> Option<ArenaRange>,
) -> SoftResult<String> {
    let mut share = super::write()?;
    // From here its free withdraws its keys (under this lock). The caller's
    // checks ran unlocked: the allocation there now is the one exported.
    let Some(allocation) = mark_exported() else {
        return fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!(
                "devPtr {address:#x} was freed meanwhile (what starts there now is not a live allocation of \
                 {size} bytes or more)"
            ),
        );
    };
    let arena_fd = started::core()?.device(allocation.device)?.arena.fd().as_raw_fd() as u32;
    let failed = |what: &str, error: rustix::io::Errno| {
        fail(
            ACL_ERROR_RT_MEMORY_ALLOCATION,
            format!("cannot create the key's metadata: {what} failed: {error}"),
        )
    };
    let meta = match memfd_create("ascend-soft-ipc-key", MemfdFlags::CLOEXEC) {
        Ok(fd) => fd,
        Err(error) => return failed("memfd_create", error),
    };
    if let Err(error) = ftruncate(&meta, PAGE + WHITELIST_BYTES) {
        return failed("ftruncate", error);
    }
    let page = HeaderPage::map(meta.as_fd())?;
    let token = header::random_token()?;
    let pid = proc_fd::own_pid();
    let disabled = flags & ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION != 0;
    {
        let header = page.get();
        header.token.store(token, Ordering::Relaxed);
        header.size.store(size as u64, Ordering::Relaxed);
        header.offset.store(allocation.offset, Ordering::Relaxed);
        header.whitelist_at.store(PAGE, Ordering::Relaxed);
        header.exporter.store(pid, Ordering::Relaxed);
        header.device.store(allocation.device as u32, Ordering::Relaxed);
        header.arena_fd.store(arena_fd, Ordering::Relaxed);
        header
            .state
            .store(if disabled { header::DISABLED } else { 0 }, Ordering::Relaxed);
        header.magic.store(MAGIC_IPC, Ordering::Release);
    }
    let key = format!("/proc/{pid}/fd/{}#{token:016x}", meta.as_raw_fd());
    share.keys.insert(
        key.clone(),
        IpcKey {
            meta,
            page,
            address,
            size: size as u64,
            device: allocation.device,
            pids: BTreeSet::new(),
            disabled,
            created: crate::soft::core::sequence::next(),
        },
    );
    Ok(key)
}

/// `aclrtIpcMemSetImportPid` after the argument checks.
pub(crate) fn set_import_pids(key: &str, pids: &[i32]) -> SoftResult {
    current::require()?;
    let mut share = super::write()?;
    let Some(exported) = share.keys.get_mut(key) else {
        return fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("key {key:?} is not a live key of this process (pids are set by the exporter)"),
        );
    };
    if exported.disabled {
        return fail(
            ACL_ERROR_RT_NO_PERMISSION,
            format!(
                "key {key:?} was exported with ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION; it has no whitelist"
            ),
        );
    }
    let fresh = add_pids(&exported.pids, pids)?;
    header::append_whitelist(exported.meta.as_fd(), exported.page.get(), &fresh)?;
    exported.pids.extend(fresh);
    Ok(())
}

/// `aclrtIpcMemImportByKey` after the argument checks: maps the range in
/// this process and returns its device address.
pub(crate) fn import(key: &str) -> SoftResult<usize> {
    let device = current::require()?;
    let (pid, fd, token) = parse(key)?;
    let own = proc_fd::own_pid();
    if pid == own {
        return fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("key {key:?} was exported by this process; import is for other processes"),
        );
    }
    let gone = |why: String| {
        fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!(
                "key {key:?} is not a live key (destroyed or freed by its exporter, or the exporter exited): {why}"
            ),
        )
    };
    let (meta, meta_size) = match proc_fd::open(pid, fd, "ipc-key") {
        Ok(opened) => opened,
        Err(Refusal::Gone(why)) => return gone(why),
        Err(Refusal::Denied(why)) => return fail(ACL_ERROR_RT_NO_PERMISSION, why),
    };
    if meta_size < PAGE {
        return gone("the key's file has no header".into());
    }
    let page = HeaderPage::map(meta.as_fd())?;
    let header = page.get();
    if header.magic.load(Ordering::Acquire) != MAGIC_IPC
        || header.token.load(Ordering::Relaxed) != token
        || header.exporter.load(Ordering::Relaxed) != pid
    {
        return gone("the token does not match".into());
    }
    if header.has(header::WITHDRAWN) {
        return gone("the exporter destroyed the key or freed the memory".into());
    }
    if !header.has(header::DISABLED) && !header::whitelisted(meta.as_fd(), header, own as i32)? {
        return fail(
            ACL_ERROR_RT_NO_PERMISSION,
            format!(
                "this process (pid {own}) is not on the whitelist of key {key:?}: the exporter must call \
                 aclrtIpcMemSetImportPid with it, or export with ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION"
            ),
        );
    }
    let offset = header.offset.load(Ordering::Relaxed);
    let Ok(size) = usize::try_from(header.size.load(Ordering::Relaxed)) else {
        return gone("the size does not fit this process".into());
    };
    let arena_fd = header.arena_fd.load(Ordering::Relaxed);
    let (arena, arena_size) = match proc_fd::open(pid, arena_fd, "device-") {
        Ok(opened) => opened,
        Err(Refusal::Gone(why)) => return gone(why),
        Err(Refusal::Denied(why)) => return fail(ACL_ERROR_RT_NO_PERMISSION, why),
    };
    let first_page = offset / PAGE * PAGE;
    let inside = (offset - first_page) as usize;
    let length = (inside + size).next_multiple_of(PAGE as usize);
    if first_page + length as u64 > arena_size {
        return gone("the range lies past the end of the exporter's device memory".into());
    }
    // SAFETY: a fresh shared mapping of pages of a file we hold (checked to
    // be long enough), at an address the kernel picks.
    let view = match unsafe {
        mmap(
            std::ptr::null_mut(),
            length,
            ProtFlags::READ | ProtFlags::WRITE,
            MapFlags::SHARED | MapFlags::NORESERVE,
            &arena,
            first_page,
        )
    } {
        Ok(view) => view.cast::<u8>(),
        Err(error) => {
            return fail(
                ACL_ERROR_RT_MEMORY_ALLOCATION,
                format!("cannot map the exporter's memory: {error}"),
            );
        }
    };
    drop(arena);
    // SAFETY: a fresh inaccessible reservation at an address the kernel picks.
    let reservation = match unsafe {
        mmap_anonymous(
            std::ptr::null_mut(),
            length,
            ProtFlags::empty(),
            MapFlags::PRIVATE | MapFlags::NORESERVE,
        )
    } {
        Ok(base) => base as usize,
        Err(error) => {
            // SAFETY: `view` was mapped above with `length` bytes and is not
            // referenced anywhere else.
            let _ = unsafe { munmap(view.cast::<c_void>(), length) };
            return fail(
                ACL_ERROR_RT_MEMORY_ALLOCATION,
                format!("cannot reserve device addresses for the import: {error}"),
            );
        }
    };
    let slot = header.claim_slot(own);
    drop(meta);
    let mut share = super::write()?;
    share.next_seq += 1;
    let import = IpcImport {
        key: key.to_owned(),
        seq: share.next_seq,
        address: reservation + inside,
        size,
        device,
        // SAFETY: mapped above with `length` bytes; only the view unmaps it.
        view: Arc::new(unsafe { ImportView::adopt(view, length) }),
        length,
        reservation,
        page,
        slot,
        created: crate::soft::core::sequence::next(),
    };
    let address = import.address;
    crate::soft::core::address_map::insert(reservation, length);
    share.imports.insert(reservation, import);
    Ok(address)
}

/// Withdraws an exported key: new imports are refused. Importers still
/// holding it are a misuse (the documents require them to close first).
fn destroy(api: &'static str, key: &str, exported: IpcKey) {
    let header = exported.page.get();
    header.set(header::WITHDRAWN);
    let live = header.live_importers();
    if !live.is_empty() {
        misuse_log::record(
            api,
            format!(
                "IPC key {key} (device {} memory at {:#x}, {} bytes) is destroyed while process(es) {live:?} \
                 still import it; importers must call aclrtIpcMemClose first",
                exported.device, exported.address, exported.size
            ),
        );
    }
}

/// `aclrtIpcMemClose` after the argument checks: closes this process's
/// first import of `key`, or destroys `key` if this process exported it.
pub(crate) fn close(key: &str) -> SoftResult {
    current::require()?;
    let mut share = super::write()?;
    let first = share
        .imports
        .iter()
        .filter(|(_, import)| import.key == key)
        .min_by_key(|(_, import)| import.seq)
        .map(|(&base, _)| base);
    if let Some(base) = first {
        let import = share.imports.remove(&base);
        crate::soft::core::address_map::remove(base);
        drop(share);
        drop(import);
        return Ok(());
    }
    match share.keys.remove(key) {
        Some(exported) => {
            destroy("aclrtIpcMemClose", key, exported);
            Ok(())
        }
        None => fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("key {key:?} was neither exported nor imported (and not yet closed) by this process"),
        ),
    }
}

/// `aclrtFree` of the allocation at `address`: its keys are destroyed.
pub(crate) fn forget_allocation(share: &mut Share, address: usize) {
    let keys: Vec<String> = share
        .keys
        .iter()
        .filter(|(_, exported)| exported.address == address)
        .map(|(key, _)| key.clone())
        .collect();
    for key in keys {
        if let Some(exported) = share.keys.remove(&key) {
            destroy("aclrtFree", &key, exported);
        }
    }
}

/// The importing device of the IPC import whose reserved range contains
/// `address`, if any (for location queries).
pub(crate) fn import_device(share: &Share, address: usize) -> Option<i32> {
    let (&base, import) = share.imports.range(..=address).next_back()?;
    (address - base < import.length).then_some(import.device)
}

/// Translates a range inside an IPC import, or `None` when `address` is not
/// in one.
pub(crate) fn resolve(share: &Share, address: usize, length: usize, role: &str) -> SoftResult<Option<Segments>> {
    let Some((&base, import)) = share.imports.range(..=address).next_back() else {
        return Ok(None);
    };
    if address - base >= import.length {
        return Ok(None);
    }
    let end = address.saturating_add(length);
    if address < import.address || end > import.address + import.size {
        return fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!(
                "{role} range {address:#x}+{length} is not inside the memory imported with key {} ({:#x}+{})",
                import.key, import.address, import.size
            ),
        );
    }
    // `address - base < length` of the view (checked above).
    let pointer = import.view.at(address - base);
    Ok(Some(Segments::starting(Segment::held(
        pointer,
        length,
        import.view.clone(),
    ))))
}

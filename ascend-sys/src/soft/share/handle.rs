//! Shareable handles: exporting a physical allocation to other processes,
//! whitelisting importers, and importing.
//!
//! A shareable handle names the export: the exporter's pid (22 bits), the
//! fd number of the allocation's `memfd` in the exporter (20 bits) and the
//! low 22 bits of the export's random token. An importer opens
//! `/proc/<pid>/fd/<fd>`, checks the header's magic and token, the
//! whitelist, and maps the file. A FABRIC handle carries the same `u64` plus
//! the full 64-bit token.

use super::header::{self, Header, HeaderPage, MAGIC_PHYSICAL, WHITELIST_BYTES};
use super::proc_fd::{self, Refusal};
use super::{Export, add_pids};
use crate::soft::core::memory_kind::{Kind, Pages, Place};
use crate::soft::core::physical_memory::{HEADER, PhysicalMemory};
use crate::soft::core::soft_result::{SoftResult, fail};
use crate::types::*;
use rustix::fd::{AsFd, AsRawFd};
use std::sync::Arc;
use std::sync::atomic::Ordering;

const PID_BITS: u32 = 22;
const FD_BITS: u32 = 20;
const TOKEN_BITS: u32 = 22;
const TOKEN_MASK: u64 = (1 << TOKEN_BITS) - 1;

/// First bytes of a FABRIC handle made by the software device.
const FABRIC_MAGIC: u64 = u64::from_le_bytes(*b"ASCshFAB");

/// The `u64` naming an export.
pub(crate) fn encode(pid: u32, fd: u32, token: u64) -> u64 {
    (u64::from(pid) << (FD_BITS + TOKEN_BITS)) | (u64::from(fd) << TOKEN_BITS) | (token & TOKEN_MASK)
}

/// `(pid, fd, low token bits)` of a shareable handle.
pub(crate) fn decode(handle: u64) -> (u32, u32, u64) {
    (
        (handle >> (FD_BITS + TOKEN_BITS)) as u32,
        ((handle >> TOKEN_BITS) & ((1 << FD_BITS) - 1)) as u32,
        handle & TOKEN_MASK,
    )
}

/// The 128 bytes of a FABRIC handle: a magic, the `u64` handle and the full
/// token.
pub(crate) fn fabric(handle: u64, token: u64) -> aclrtMemFabricHandle {
    let mut data = [0u8; 128];
    data[..8].copy_from_slice(&FABRIC_MAGIC.to_le_bytes());
    data[8..16].copy_from_slice(&handle.to_le_bytes());
    data[16..24].copy_from_slice(&token.to_le_bytes());
    aclrtMemFabricHandle { data }
}

/// `(u64 handle, full token)` of a FABRIC handle.
pub(crate) fn parse_fabric(fabric: &aclrtMemFabricHandle) -> SoftResult<(u64, u64)> {
    let word = |at: usize| {
        let mut bytes = [0u8; 8];
        bytes.copy_from_slice(&fabric.data[at..at + 8]);
        u64::from_le_bytes(bytes)
    };
    if word(0) != FABRIC_MAGIC {
        return fail(
            ACL_ERROR_RT_PARAM_INVALID,
            "shareableHandle is not a FABRIC handle from aclrtMemExportToShareableHandleV2",
        );
    }
    Ok((word(8), word(16)))
}

fn place_code(place: Place) -> (u32, u32) {
    match place {
        Place::Device(id) => (header::PLACE_DEVICE, id as u32),
        Place::Host { numa: false, id } => (header::PLACE_HOST, id),
        Place::Host { numa: true, id } => (header::PLACE_HOST_NUMA, id),
    }
}

fn pages_code(pages: Pages) -> u32 {
    match pages {
        Pages::Normal => 0,
        Pages::Huge => 1,
        Pages::Giant => 2,
    }
}

/// The header of a local physical allocation's `memfd`.
fn header_of(memory: &PhysicalMemory) -> &Header {
    // SAFETY: the first page of the allocation's file is mapped for the
    // life of `memory`, page-aligned, reserved for this header and only
    // accessed through atomics.
    unsafe { header::header_at(memory.header()) }
}

/// What an export reads of the physical allocation it exports. The caller
/// reads it from the VMM tables and keeps them locked during the export, so
/// the allocation is not freed under it.
pub(crate) struct Exportable<'a> {
    pub(crate) memory: &'a Arc<PhysicalMemory>,
    pub(crate) kind: Kind,
    pub(crate) size: u64,
    /// Whether it came from another process (an import).
    pub(crate) imported: bool,
}

/// `aclrtMemExportToShareableHandle(V2)` after the argument checks and the
/// handle's lookup: exports the physical allocation `handle` and returns
/// `(shareable handle, full token)`.
pub(crate) fn export(handle: usize, physical: Exportable<'_>, flags: u64) -> SoftResult<(u64, u64)> {
    if physical.imported {
        return fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("handle {handle:#x} was imported from another process and cannot be exported again"),
        );
    }
    let mut share = super::write()?;
    if let Some(existing) = share.by_physical.get(&handle) {
        return fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!(
                "handle {handle:#x} is already exported as shareable handle {existing:#x}; \
                 a handle is exported once per process"
            ),
        );
    }
    let memory = Arc::clone(physical.memory);
    let (kind, size) = (physical.kind, physical.size);
    let fd = memory.fd().as_raw_fd() as u32;
    if fd >= 1 << FD_BITS {
        return fail(
            ACL_ERROR_RT_OVER_LIMIT,
            format!("the allocation's file descriptor {fd} does not fit a shareable handle (at most 2^20 - 1)"),
        );
    }
    let pid = proc_fd::own_pid();
    if pid >= 1 << PID_BITS {
        return fail(
            ACL_ERROR_RT_OVER_LIMIT,
            format!("this process's id {pid} does not fit a shareable handle (at most 2^22 - 1)"),
        );
    }
    let token = header::random_token()?;
    if let Err(error) = rustix::fs::ftruncate(memory.fd(), HEADER + size + WHITELIST_BYTES) {
        return fail(
            ACL_ERROR_RT_MEMORY_ALLOCATION,
            format!("cannot make room for the pid whitelist: {error}"),
        );
    }
    let header = header_of(&memory);
    let (place, place_id) = place_code(kind.place);
    header.token.store(token, Ordering::Relaxed);
    header.size.store(size, Ordering::Relaxed);
    header.whitelist_at.store(HEADER + size, Ordering::Relaxed);
    header.exporter.store(pid, Ordering::Relaxed);
    header.place.store(place, Ordering::Relaxed);
    header.place_id.store(place_id, Ordering::Relaxed);
    header.pages.store(pages_code(kind.pages), Ordering::Relaxed);
    header.p2p.store(u32::from(kind.p2p), Ordering::Relaxed);
    // The driver exports first and applies "no pid validation" afterwards.
    let disabled = flags & ACL_RT_VMM_EXPORT_FLAG_DISABLE_PID_VALIDATION != 0;
    header
        .state
        .store(if disabled { header::DISABLED } else { 0 }, Ordering::Relaxed);
    // From here another process may map it: never reused here.
    memory.mark_exported();
    header.magic.store(MAGIC_PHYSICAL, Ordering::Release);
    let shareable = encode(pid, fd, token);
    share.by_physical.insert(handle, shareable);
    share.exports.insert(
        shareable,
        Export {
            physical: handle,
            memory,
            token,
            pids: Default::default(),
            disabled,
            created: crate::soft::core::sequence::next(),
        },
    );
    Ok((shareable, token))
}

/// Withdraws the export of `handle` (its last handle reference is gone):
/// new imports are refused; memory already imported stays. Called with the
/// VMM tables locked (the lock order).
pub(crate) fn withdraw(handle: usize) {
    // The software device has started: its VMM tables hold the handle.
    let Ok(mut share) = super::write() else {
        return;
    };
    if let Some(shareable) = share.by_physical.remove(&handle)
        && let Some(export) = share.exports.remove(&shareable)
    {
        header_of(&export.memory).set(header::WITHDRAWN);
    }
}

/// `aclrtMemSetPidToShareableHandle(V2)` after the argument checks
/// (`full_token`: from a FABRIC handle).
pub(crate) fn set_pids(shareable: u64, full_token: Option<u64>, pids: &[i32]) -> SoftResult {
    let mut share = super::write()?;
    let export = match share.exports.get_mut(&shareable) {
        Some(export) if full_token.is_none_or(|token| token == export.token) => export,
        _ => {
            return fail(
                ACL_ERROR_RT_PARAM_INVALID,
                format!(
                    "shareableHandle {shareable:#x} is not a live export of this process \
                     (pids are set in the exporting process, before the handle is freed)"
                ),
            );
        }
    };
    if export.disabled {
        return fail(
            ACL_ERROR_RT_NO_PERMISSION,
            format!(
                "shareableHandle {shareable:#x} was exported with ACL_RT_VMM_EXPORT_FLAG_DISABLE_PID_VALIDATION; \
                 it has no whitelist"
            ),
        );
    }
    let fresh = add_pids(&export.pids, pids)?;
    header::append_whitelist(export.memory.fd(), header_of(&export.memory), &fresh)?;
    export.pids.extend(fresh);
    Ok(())
}

/// An export opened in another process, ready to become a handle here.
pub(crate) struct Opened {
    memory: PhysicalMemory,
    size: u64,
    place: (u32, u32),
    pages: Pages,
    p2p: bool,
}

/// Opens the export named by `shareable` (and `full_token` for a FABRIC
/// handle): the cross-process half of an import, done without the lock.
pub(crate) fn open(shareable: u64, full_token: Option<u64>) -> SoftResult<Opened> {
    let (pid, fd, low) = decode(shareable);
    let own = proc_fd::own_pid();
    if pid == 0 {
        return fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("shareableHandle {shareable:#x} is not a shareable handle"),
        );
    }
    if pid == own {
        return fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!(
                "shareableHandle {shareable:#x} was exported by this process; \
                 import is for other processes (use the handle itself here)"
            ),
        );
    }
    let gone = |why: String| {
        fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!(
                "shareableHandle {shareable:#x} does not name a live export (freed by its exporter, or the exporter exited): {why}"
            ),
        )
    };
    let (file, file_size) = match proc_fd::open(pid, fd, "physical") {
        Ok(opened) => opened,
        Err(Refusal::Gone(why)) => return gone(why),
        Err(Refusal::Denied(why)) => return fail(ACL_ERROR_RT_NO_PERMISSION, why),
    };
    if file_size < HEADER {
        return gone("the file has no header".into());
    }
    let page = HeaderPage::map(file.as_fd())?;
    let header = page.get();
    let token = header.token.load(Ordering::Relaxed);
    if header.magic.load(Ordering::Acquire) != MAGIC_PHYSICAL
        || token & TOKEN_MASK != low
        || full_token.is_some_and(|full| full != token)
        || header.exporter.load(Ordering::Relaxed) != pid
    {
        return gone("the token does not match (the descriptor now holds another allocation)".into());
    }
    if header.has(header::WITHDRAWN) {
        return gone("the exporter freed the allocation's handle".into());
    }
    if !header.has(header::DISABLED) && !header::whitelisted(file.as_fd(), header, own as i32)? {
        return fail(
            ACL_ERROR_RT_NO_PERMISSION,
            format!(
                "this process (pid {own}) is not on the whitelist of shareableHandle {shareable:#x}: \
                 the exporter must call aclrtMemSetPidToShareableHandle with it, or export with \
                 ACL_RT_VMM_EXPORT_FLAG_DISABLE_PID_VALIDATION"
            ),
        );
    }
    let size = header.size.load(Ordering::Relaxed);
    let place = (
        header.place.load(Ordering::Relaxed),
        header.place_id.load(Ordering::Relaxed),
    );
    let pages = match header.pages.load(Ordering::Relaxed) {
        0 => Pages::Normal,
        1 => Pages::Huge,
        _ => Pages::Giant,
    };
    let p2p = header.p2p.load(Ordering::Relaxed) != 0;
    drop(page);
    if file_size < HEADER + size {
        return gone("the file is shorter than its header says".into());
    }
    let memory = PhysicalMemory::map(file, size)?;
    Ok(Opened {
        memory,
        size,
        place,
        pages,
        p2p,
    })
}

impl Opened {
    /// The opened export as a physical allocation imported on `device`:
    /// `(kind, size, memory)` (device memory is reached from the importing
    /// device; host memory keeps its location).
    pub(crate) fn into_physical(self, device: i32) -> (Kind, u64, PhysicalMemory) {
        let place = match self.place {
            (header::PLACE_HOST, id) => Place::Host { numa: false, id },
            (header::PLACE_HOST_NUMA, id) => Place::Host { numa: true, id },
            _ => Place::Device(device),
        };
        let kind = Kind {
            place,
            pages: self.pages,
            p2p: self.p2p,
        };
        (kind, self.size, self.memory)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handles_round_trip() {
        let handle = encode(4_194_303, 1_048_575, 0xdead_beef_1234_5678);
        assert_eq!(
            decode(handle),
            (4_194_303, 1_048_575, 0xdead_beef_1234_5678 & TOKEN_MASK)
        );
        let fabric = fabric(handle, 77);
        assert_eq!(parse_fabric(&fabric).unwrap(), (handle, 77));
        assert!(parse_fabric(&aclrtMemFabricHandle { data: [0; 128] }).is_err());
    }
}

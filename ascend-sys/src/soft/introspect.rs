//! What tests can ask the software device: live resources and leaks.

use crate::soft::core::resource::LiveResource;
use crate::soft::share::{self, Share, ShareReader};
use crate::soft::started;
use crate::soft::vmm::{self, Vmm, VmmReader};

/// Counts and bytes of the live resources of the software device.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Live {
    /// Live `aclrtMalloc*` allocations.
    pub device_allocations: usize,
    /// Bytes they reserve (after rounding and padding).
    pub device_bytes: u64,
    /// Live `aclrtMallocHost*` allocations.
    pub host_allocations: usize,
    /// Bytes they reserve (after rounding).
    pub host_bytes: u64,
    /// Live host registrations (`aclrtHostRegister*`).
    pub host_registrations: usize,
    /// Host bytes they cover.
    pub registered_bytes: u64,
    /// Live contexts created by `aclrtCreateContext` (primary contexts are
    /// balanced by `aclrtResetDevice` and not counted).
    pub contexts: usize,
    /// Live custom allocator descriptors (`aclrtAllocatorCreateDesc`).
    pub allocator_descriptors: usize,
    /// Live stream-ordered memory pools (`aclrtMemPoolCreate`); their
    /// blocks count as device memory.
    pub mem_pools: usize,
    /// Live physical allocations (`aclrtMallocPhysical`, imports), including
    /// ones freed but still mapped.
    pub physical_allocations: usize,
    /// Their bytes.
    pub physical_bytes: u64,
    /// Live reserved address ranges.
    pub reservations: usize,
    /// Live mappings.
    pub mappings: usize,
    /// Live streams created by `aclrtCreateStream*` (each has a worker
    /// thread; a device's default stream is not counted).
    pub streams: usize,
    /// Live events (`aclrtCreateEvent*`).
    pub events: usize,
    /// Live notifies and count notifies (`aclrtCreateNotify`,
    /// `aclrtNotifyImportByKey`, `aclrtCntNotifyCreate`).
    pub notifies: usize,
    /// Physical allocations this process exported as shareable handles
    /// (until their handle is freed).
    pub shareable_exports: usize,
    /// Physical allocations imported from other processes (also counted in
    /// `physical_allocations`).
    pub shareable_imports: usize,
    /// IPC keys this process exported and has not destroyed.
    pub ipc_keys: usize,
    /// IPC imports this process has not closed.
    pub ipc_imports: usize,
    /// Live mbuf headers (`aclrtAllocBuf`, `aclrtCopyBufRef`), chain members
    /// included.
    pub mbufs: usize,
    /// Bytes of their data areas (an area shared by reference copies counts
    /// once).
    pub mbuf_bytes: u64,
}

impl Live {
    /// Whether nothing is live.
    pub fn is_empty(&self) -> bool {
        *self == Live::default()
    }
}

/// The live resources now (all zero if the software device has not started).
pub fn live() -> Live {
    if started::core_if_started().is_none() {
        return Live::default();
    }
    let (streams, events, notifies) = {
        let streams = crate::soft::compose::streams::locked();
        (streams.stream_count(), streams.event_count(), streams.notify_count())
    };
    tables().map_or_else(Live::default, |(vmm, share)| {
        count(&vmm, &share, streams, events, notifies)
    })
}

/// The VMM and sharing tables, read-locked in the lock order, if the
/// software device has started.
fn tables() -> Option<(VmmReader, ShareReader)> {
    let vmm = vmm::read_if_started()?;
    Some((vmm, share::read_if_started()?))
}

/// The counts of every family, one family at a time (streams, events and
/// notifies, read before the VMM and sharing tables, passed in).
fn count(vmm: &Vmm, share: &Share, streams: usize, events: usize, notifies: usize) -> Live {
    let host = crate::soft::host_mem::all();
    let registrations = crate::soft::host_register::live();
    let (device_allocations, device_bytes) = crate::soft::device_mem::live();
    let (mbufs, mbuf_bytes) = crate::soft::mbuf::live();
    Live {
        device_allocations,
        device_bytes,
        host_allocations: host.len(),
        host_bytes: host.iter().map(|(_, a)| a.size as u64).sum(),
        host_registrations: registrations.0,
        registered_bytes: registrations.1,
        contexts: crate::soft::context::created_count(),
        allocator_descriptors: crate::soft::allocator_desc::descriptor_count(),
        mem_pools: crate::soft::compose::mem_pool::pool_count(),
        physical_allocations: vmm.physicals.len(),
        physical_bytes: vmm.physicals.values().map(|p| p.size).sum(),
        reservations: vmm.reservations.len(),
        mappings: vmm.mappings.len(),
        streams,
        events,
        notifies,
        shareable_exports: share.exports.len(),
        shareable_imports: vmm.physicals.values().filter(|p| p.imported).count(),
        ipc_keys: share.keys.len(),
        ipc_imports: share.imports.len(),
        mbufs,
        mbuf_bytes,
    }
}

/// Every live resource created at or after sequence number `since` (see
/// [`super::sequence_now`]), by identity: what a test's code made and did
/// not release, however many older resources it released meanwhile. Empty
/// if the software device has not started.
///
/// The kinds are those [`live`] counts; a device's default stream and
/// primary contexts are not listed.
pub fn live_since(since: u64) -> Vec<LiveResource> {
    if started::core_if_started().is_none() {
        return Vec::new();
    }
    let streams = crate::soft::compose::streams::locked().created_since(since);
    tables().map_or_else(Vec::new, |(vmm, share)| created_since(&vmm, &share, since, streams))
}

fn created_since(vmm: &Vmm, share: &Share, since: u64, streams: Vec<LiveResource>) -> Vec<LiveResource> {
    let mut all: Vec<LiveResource> = crate::soft::device_mem::created_since(since).collect();
    all.extend(crate::soft::host_mem::created_since(since));
    all.extend(crate::soft::host_register::created_since(since));
    all.extend(crate::soft::context::created_since(since));
    all.extend(crate::soft::allocator_desc::created_since(since));
    all.extend(crate::soft::compose::mem_pool::created_since(since));
    all.extend(vmm.created_since(since));
    all.extend(streams);
    all.extend(share.created_since(since));
    all.extend(crate::soft::mbuf::created_since(since));
    all.sort_by_key(|resource| resource.created);
    all
}

/// A readable list of every live resource (empty when nothing is live).
pub fn leak_report() -> String {
    if started::core_if_started().is_none() {
        return String::new();
    }
    let streams = crate::soft::compose::streams::locked().report();
    tables().map_or_else(String::new, |(vmm, share)| report(&vmm, &share, streams))
}

fn report(vmm: &Vmm, share: &Share, streams: Vec<String>) -> String {
    let mut lines = Vec::new();
    for (address, allocation) in crate::soft::device_mem::all() {
        lines.push(format!(
            "device memory {address:#x}: {} bytes requested ({} reserved) on device {}",
            allocation.requested, allocation.size, allocation.device
        ));
    }
    for (address, allocation) in crate::soft::host_mem::all() {
        lines.push(format!("host memory {address:#x}: {} bytes", allocation.size));
    }
    lines.extend(crate::soft::host_register::report());
    for (handle, device) in crate::soft::context::created() {
        lines.push(format!("context {handle:#x} on device {device}: not destroyed"));
    }
    for handle in crate::soft::allocator_desc::descriptor_handles() {
        lines.push(format!("allocator descriptor {handle:#x}: not destroyed"));
    }
    for pool in crate::soft::compose::mem_pool::created_since(0) {
        lines.push(format!(
            "memory pool {:#x} on device {}: not destroyed ({})",
            pool.id,
            pool.device.unwrap_or(0),
            pool.detail
        ));
    }
    for (handle, physical) in &vmm.physicals {
        lines.push(format!(
            "physical allocation {handle:#x}: {} bytes, {} handle reference(s), {} mapping(s){}",
            physical.size,
            physical.handle_refs,
            physical.mappings,
            if physical.imported { ", imported" } else { "" }
        ));
    }
    for (base, reservation) in &vmm.reservations {
        lines.push(format!(
            "reserved range {base:#x}: {} bytes, {} mapping(s)",
            reservation.size, reservation.mappings
        ));
    }
    for (address, mapping) in vmm.mappings.iter() {
        lines.push(format!(
            "mapping {address:#x}: {} bytes of physical allocation {:#x}",
            mapping.size, mapping.physical
        ));
    }
    lines.extend(streams);
    lines.extend(share.report());
    lines.extend(crate::soft::mbuf::report());
    lines.join("\n")
}

/// Logs the leak report at `warn` level when something is still live.
pub(crate) fn log_leaks() {
    let text = leak_report();
    if !text.is_empty() {
        log::warn!("software device: resources still live at aclFinalize:\n{text}");
    }
}

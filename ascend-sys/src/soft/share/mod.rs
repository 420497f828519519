//! Sharing memory with other processes: shareable handles of physical
//! allocations ([`handle`]), key-based IPC memory ([`ipc`]), and the
//! one-page shared records the IPC events and notifies keep ([`token_page`]).
//!
//! Memory really crosses processes. Each export is a `memfd` (a physical
//! allocation's own, or a small metadata file naming a range of the
//! device's arena); an importer opens it through `/proc/<pid>/fd/<fd>`,
//! which the kernel allows for processes of the same user only. The first
//! page of the file ([`header`]) holds the sharing metadata: a magic, a
//! random token, the exporter's pid, the size, the kind of memory, the
//! state bits and the pid whitelist, which the software device enforces.
//! Nothing is ever created in a file system, and the memory is freed when
//! the last process holding it closes it or exits.

mod handle;
mod header;
mod import_view;
mod ipc;
mod proc_fd;
mod tables;
mod token_page;

pub(crate) use handle::{Exportable, export, fabric, open as open_export, parse_fabric, set_pids, withdraw};
pub(crate) use header::random_token;
pub(crate) use ipc::{
    ArenaRange, KEY_BUFFER_MIN, close, export_key, forget_allocation, import, import_device, resolve, set_import_pids,
};
pub(crate) use proc_fd::{Refusal as ProcFdRefusal, open as open_proc_fd, own_pid};
pub(crate) use tables::{ShareReader, read, read_if_started, write};
pub(crate) use token_page::{TokenHeader, TokenLayout, TokenPage};

use crate::soft::core::physical_memory::PhysicalMemory;
use crate::soft::core::resource::{LiveResource, ResourceKind};
use crate::soft::core::soft_result::{SoftResult, fail};
use crate::types::*;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// One physical allocation exported by this process.
pub(crate) struct Export {
    /// The physical-memory handle exported.
    pub(crate) physical: usize,
    /// Its memory (the header lives in its first page).
    memory: Arc<PhysicalMemory>,
    /// The full token.
    token: u64,
    /// Pids whitelisted so far.
    pids: BTreeSet<i32>,
    /// Exported with `DISABLE_PID_VALIDATION`.
    disabled: bool,
    /// Creation sequence number ([`crate::soft::sequence_now`]).
    created: u64,
}

/// The sharing tables of this process.
pub(crate) struct Share {
    /// Exports by shareable handle.
    pub(crate) exports: BTreeMap<u64, Export>,
    /// Shareable handle of each exported physical handle.
    by_physical: BTreeMap<usize, u64>,
    /// IPC keys this process exported.
    pub(crate) keys: BTreeMap<String, ipc::IpcKey>,
    /// IPC imports by the base of their reserved range.
    pub(crate) imports: BTreeMap<usize, ipc::IpcImport>,
    /// Counter ordering IPC imports.
    next_seq: u64,
}

impl Share {
    /// Empty tables.
    const fn new() -> Self {
        Self {
            exports: BTreeMap::new(),
            by_physical: BTreeMap::new(),
            keys: BTreeMap::new(),
            imports: BTreeMap::new(),
            next_seq: 0,
        }
    }

    /// Leak-report lines of the sharing tables.
    pub(crate) fn report(&self) -> Vec<String> {
        let mut lines = Vec::new();
        for (shareable, export) in &self.exports {
            lines.push(format!(
                "shareable handle {shareable:#x}: export of physical allocation {:#x}",
                export.physical
            ));
        }
        for (key, exported) in &self.keys {
            lines.push(format!(
                "IPC key {key}: {} bytes of device {} memory at {:#x}",
                exported.size, exported.device, exported.address
            ));
        }
        for import in self.imports.values() {
            lines.push(format!(
                "IPC import {:#x}: {} bytes of key {}",
                import.address, import.size, import.key
            ));
        }
        lines
    }

    /// The exports, IPC keys and IPC imports made at or after sequence
    /// number `since`.
    pub(crate) fn created_since(&self, since: u64) -> Vec<LiveResource> {
        let exports = self
            .exports
            .iter()
            .filter(|(_, export)| export.created >= since)
            .map(|(&shareable, export)| {
                LiveResource::new(ResourceKind::ShareableExport, 0, 0, export.created)
                    .with_id(shareable)
                    .detail(format!("export of physical allocation {:#x}", export.physical))
            });
        let keys = self
            .keys
            .iter()
            .filter(|(_, key)| key.created >= since)
            .map(|(name, key)| {
                LiveResource::new(ResourceKind::IpcKey, key.address, key.size, key.created)
                    .on(key.device)
                    .detail(format!("key {name}"))
            });
        let imports = self
            .imports
            .values()
            .filter(|import| import.created >= since)
            .map(|import| {
                LiveResource::new(
                    ResourceKind::IpcImport,
                    import.address,
                    import.size as u64,
                    import.created,
                )
                .on(import.device)
                .detail(format!("key {}", import.key))
            });
        exports.chain(keys).chain(imports).collect()
    }
}

/// The pids of `pids` not already in `existing`, checked: each must be a
/// process id (positive), and the whitelist holds at most 65535 pids.
pub(crate) fn add_pids(existing: &BTreeSet<i32>, pids: &[i32]) -> SoftResult<Vec<i32>> {
    if let Some((index, pid)) = pids.iter().enumerate().find(|(_, pid)| **pid <= 0) {
        return fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("pid[{index}] {pid} is not a process id"),
        );
    }
    let fresh: Vec<i32> = pids
        .iter()
        .copied()
        .collect::<BTreeSet<i32>>()
        .into_iter()
        .filter(|pid| !existing.contains(pid))
        .collect();
    if existing.len() + fresh.len() > header::MAX_PIDS {
        return fail(
            ACL_ERROR_RT_OVER_LIMIT,
            format!(
                "the whitelist would hold {} pids; at most {} are allowed",
                existing.len() + fresh.len(),
                header::MAX_PIDS
            ),
        );
    }
    Ok(fresh)
}

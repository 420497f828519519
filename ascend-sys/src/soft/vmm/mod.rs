//! Virtual memory management: physical allocations, reserved address
//! ranges, and the mappings between them.
//!
//! - A **physical allocation** ([`Physical`]) is memory with no address; its
//!   handle is an opaque token validated against the table (never
//!   dereferenced). It lives while its handle references (the allocation,
//!   each retain, each import) or its mappings remain: `aclrtFreePhysical`
//!   on a mapped allocation defers the release to the last unmap.
//! - A **reservation** is a range of device addresses, reserved `PROT_NONE`
//!   in the process (a host dereference faults).
//! - A **mapping** ties a whole physical allocation to an aligned address
//!   inside one reservation. Copies translate mapped addresses to the
//!   physical memory's device view, across adjacent mappings.

mod kept;
mod mapping;
mod physical;
mod prop_rules;
mod tables;
#[cfg(test)]
pub(crate) use prop_rules::tests::prop as test_prop;
mod mapping_table;
mod properties;
mod query;
mod reservation;

pub(crate) use mapping::{get_access, map, set_access, unmap};
pub(crate) use physical::{
    adopt_import, drop_handle_ref, malloc_physical, properties_from_handle, release_if_unused, retain_handle,
};
pub(crate) use query::{granularity, mapped_range};
pub(crate) use reservation::{release, reserve};
pub(crate) use tables::{VmmReader, read, read_if_started, write};

use crate::soft::core::physical_memory::PhysicalMemory;
use crate::soft::core::resource::{LiveResource, ResourceKind};
use crate::soft::core::segments::{Segment, Segments};
use crate::soft::core::soft_result::{SoftResult, fail};
use crate::types::*;
use properties::{Kind, Place};
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

/// High bits of every physical-memory handle: not a user-space address, so a
/// handle is never mistaken for memory.
const HANDLE_TAG: usize = 0xA5C0_0000_0000_0000;

/// One physical allocation.
pub(crate) struct Physical {
    pub(crate) kind: Kind,
    pub(crate) size: u64,
    pub(crate) memory: Arc<PhysicalMemory>,
    /// `aclrtMallocPhysical` + retains + imports − `aclrtFreePhysical` calls.
    pub(crate) handle_refs: u32,
    /// Live mappings of this allocation.
    pub(crate) mappings: u32,
    /// Whether it came from another process (an import).
    pub(crate) imported: bool,
    /// Creation sequence number ([`crate::soft::sequence_now`]).
    pub(crate) created: u64,
}

/// One reserved address range.
pub(crate) struct Reservation {
    pub(crate) size: usize,
    /// The device of the first mapping (a reservation maps one device).
    pub(crate) device: Option<i32>,
    /// Whether its mappings are of imported allocations (no mixing).
    pub(crate) imported: Option<bool>,
    pub(crate) mappings: usize,
    /// Creation sequence number ([`crate::soft::sequence_now`]).
    pub(crate) created: u64,
}

/// One mapping.
pub(crate) struct Mapping {
    pub(crate) size: usize,
    pub(crate) physical: usize,
    pub(crate) reservation: usize,
    pub(crate) memory: Arc<PhysicalMemory>,
    /// Whether any device may touch it (false after `aclrtMemMapNoAccess`
    /// until `aclrtMemSetAccess`).
    pub(crate) accessible: bool,
    /// Access granted per location: `(location type, id) → flags`.
    pub(crate) access: Vec<((aclrtMemLocationType, u32), u64)>,
    /// Creation sequence number ([`crate::soft::sequence_now`]).
    pub(crate) created: u64,
}

/// The VMM tables.
#[derive(Default)]
pub(crate) struct Vmm {
    next_id: usize,
    /// Freed physical memory kept for reuse.
    kept: kept::Kept,
    pub(crate) physicals: HashMap<usize, Physical>,
    pub(crate) reservations: BTreeMap<usize, Reservation>,
    pub(crate) mappings: mapping_table::MappingTable,
}

impl Vmm {
    /// A fresh handle token.
    pub(crate) fn new_handle(&mut self) -> usize {
        self.next_id += 1;
        HANDLE_TAG | self.next_id
    }

    /// The physical allocations, reservations and mappings made at or after
    /// sequence number `since`.
    pub(crate) fn created_since(&self, since: u64) -> Vec<LiveResource> {
        let physicals = self
            .physicals
            .iter()
            .filter(|(_, physical)| physical.created >= since)
            .map(|(&handle, physical)| {
                let device = match physical.kind.place {
                    Place::Device(device) => Some(device),
                    Place::Host { .. } => None,
                };
                LiveResource::new(
                    ResourceKind::PhysicalAllocation,
                    handle,
                    physical.size,
                    physical.created,
                )
                .on(device)
                .detail(format!(
                    "{} handle reference(s), {} mapping(s){}",
                    physical.handle_refs,
                    physical.mappings,
                    if physical.imported { ", imported" } else { "" }
                ))
            });
        let reservations = self
            .reservations
            .iter()
            .filter(|(_, reservation)| reservation.created >= since)
            .map(|(&base, reservation)| {
                LiveResource::new(
                    ResourceKind::Reservation,
                    base,
                    reservation.size as u64,
                    reservation.created,
                )
                .on(reservation.device)
                .detail(format!("{} mapping(s)", reservation.mappings))
            });
        let mappings = self
            .mappings
            .iter()
            .filter(|(_, mapping)| mapping.created >= since)
            .map(|(address, mapping)| {
                LiveResource::new(ResourceKind::Mapping, address, mapping.size as u64, mapping.created)
                    .detail(format!("of physical allocation {:#x}", mapping.physical))
            });
        let mut all: Vec<LiveResource> = physicals.chain(reservations).collect();
        all.extend(mappings);
        all
    }

    /// The live physical allocation behind `handle` (one with handle
    /// references left), or `ACL_ERROR_RT_INVALID_HANDLE`.
    pub(crate) fn physical(&self, handle: usize) -> SoftResult<&Physical> {
        match self.physicals.get(&handle) {
            Some(physical) if physical.handle_refs > 0 => Ok(physical),
            Some(_) => fail(
                ACL_ERROR_RT_INVALID_HANDLE,
                format!("handle {handle:#x} was already freed with aclrtFreePhysical"),
            ),
            None => fail(
                ACL_ERROR_RT_INVALID_HANDLE,
                format!("{handle:#x} is not a physical-memory handle of this process"),
            ),
        }
    }

    /// The reservation containing `address`, with its base.
    pub(crate) fn reservation_of(&self, address: usize) -> Option<(usize, &Reservation)> {
        let (&base, reservation) = self.reservations.range(..=address).next_back()?;
        (address - base < reservation.size).then_some((base, reservation))
    }

    /// The mapping containing `address`, with its start.
    pub(crate) fn mapping_of(&self, address: usize) -> Option<(usize, &Mapping)> {
        self.mappings.find(address)
    }

    /// Translates `[address, address + length)`, which lies in the
    /// reservation at `base`, into segments of physical memory. Every byte
    /// must be mapped and accessible; the range may span adjacent mappings
    /// of the reservation.
    pub(crate) fn resolve(&self, base: usize, address: usize, length: usize, role: &str) -> SoftResult<Segments> {
        let reservation_end = base + self.reservations.get(&base).map_or(0, |r| r.size);
        if address + length > reservation_end {
            return fail(
                ACL_ERROR_RT_PARAM_INVALID,
                format!("{role} range {address:#x}+{length} runs past the end of its reserved range"),
            );
        }
        let mut segments: Option<Segments> = None;
        let mut cursor = address;
        let end = address + length;
        while cursor < end || segments.is_none() {
            let Some((start, mapping)) = self.mapping_of(cursor) else {
                return fail(
                    ACL_ERROR_RT_PARAM_INVALID,
                    format!("{role} range {address:#x}+{length}: {cursor:#x} is reserved but not mapped"),
                );
            };
            if !mapping.accessible {
                return fail(
                    ACL_ERROR_RT_PARAM_INVALID,
                    format!(
                        "{role} range {address:#x}+{length}: the mapping at {start:#x} was made with \
                         aclrtMemMapNoAccess and has no access yet (call aclrtMemSetAccess)"
                    ),
                );
            }
            let offset = cursor - start;
            let take = (mapping.size - offset).min(end - cursor);
            let segment = Segment::held(mapping.memory.data(offset as u64), take, mapping.memory.clone());
            match &mut segments {
                None => segments = Some(Segments::starting(segment)),
                Some(list) => list.push(segment),
            }
            cursor += take;
            if length == 0 {
                break;
            }
        }
        segments.map_or_else(|| fail(ACL_ERROR_RT_INTERNAL_ERROR, "empty translation"), Ok)
    }
}

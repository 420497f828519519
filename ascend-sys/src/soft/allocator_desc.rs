//! Custom allocator descriptors and their registration on streams
//! (`acl-behaviour.md` §10): pure bookkeeping, no device involved.
//!
//! A descriptor handle is an opaque token (the address of a one-byte heap
//! allocation the table owns); every handle a caller passes is looked up in
//! the table, never dereferenced. The real runtime dereferences (and
//! `delete`s) whatever it is given, so an unknown handle corrupts memory
//! there; the software device refuses it with `ACL_ERROR_INVALID_PARAM` and
//! records the misuse.

use crate::soft::check::misuse_log;
use crate::soft::core::lock_order::{self, Rank, Ranked};
use crate::soft::core::resource::{LiveResource, ResourceKind};
use crate::soft::core::soft_result::{SoftResult, fail};
use crate::soft::started;
use crate::types::*;
use std::collections::BTreeMap;
use std::sync::Mutex;

/// The five fields of a descriptor. All start NULL.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Fields {
    /// The user's allocator object.
    pub(crate) obj: usize,
    pub(crate) alloc: aclrtAllocatorAllocFunc,
    pub(crate) free: aclrtAllocatorFreeFunc,
    pub(crate) alloc_advise: aclrtAllocatorAllocAdviseFunc,
    pub(crate) get_addr_from_block: aclrtAllocatorGetAddrFromBlockFunc,
}

/// A live descriptor.
#[derive(Debug)]
struct Descriptor {
    fields: Fields,
    /// The allocation whose address is the handle.
    _token: Box<u8>,
    /// Creation sequence number ([`crate::soft::sequence_now`]).
    created: u64,
}

/// A stream's registered allocator: the descriptor handle given at
/// registration and a copy of its fields at that time.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Registered {
    pub(crate) descriptor: usize,
    pub(crate) fields: Fields,
}

/// Every descriptor and every stream's registered allocator: this family's
/// state, behind its own lock.
#[derive(Debug)]
struct Allocators {
    descriptors: BTreeMap<usize, Descriptor>,
    /// By stream handle (not validated, as in the runtime).
    by_stream: BTreeMap<usize, Registered>,
}

static ALLOCATORS: Mutex<Allocators> = Mutex::new(Allocators {
    descriptors: BTreeMap::new(),
    by_stream: BTreeMap::new(),
});

/// The family's state, locked ([`Rank::Allocators`]). Fails only if the
/// software device cannot start (as every call does then).
fn lock() -> SoftResult<Ranked<'static, Allocators>> {
    started::core()?;
    Ok(locked())
}

/// The family's state, locked, without starting the software device.
fn locked() -> Ranked<'static, Allocators> {
    lock_order::lock(&ALLOCATORS, Rank::Allocators)
}

/// Number of live descriptors (for introspection: does not start the
/// software device).
pub(crate) fn descriptor_count() -> usize {
    locked().descriptors.len()
}

/// Handles of the live descriptors (for introspection).
pub(crate) fn descriptor_handles() -> Vec<usize> {
    locked().descriptors.keys().copied().collect()
}

/// The descriptors created at or after sequence number `since` (for
/// introspection).
pub(crate) fn created_since(since: u64) -> Vec<LiveResource> {
    locked()
        .descriptors
        .iter()
        .filter(|(_, descriptor)| descriptor.created >= since)
        .map(|(&handle, descriptor)| {
            LiveResource::new(ResourceKind::AllocatorDescriptor, handle, 0, descriptor.created)
        })
        .collect()
}

/// The live descriptor `handle`, or `ACL_ERROR_INVALID_PARAM` (recorded as
/// misuse: the runtime would dereference it).
fn descriptor<'a>(state: &'a mut Allocators, api: &'static str, handle: usize) -> SoftResult<&'a mut Fields> {
    match state.descriptors.get_mut(&handle) {
        Some(descriptor) => Ok(&mut descriptor.fields),
        None => {
            misuse_log::record(
                api,
                format!("allocatorDesc {handle:#x} is not a live descriptor (the runtime would dereference it)"),
            );
            fail(
                ACL_ERROR_INVALID_PARAM,
                format!("allocatorDesc {handle:#x} is not a live descriptor (never created, or already destroyed)"),
            )
        }
    }
}

/// `aclrtAllocatorCreateDesc`: a new descriptor with every field NULL.
pub(crate) fn create() -> SoftResult<usize> {
    let mut state = lock()?;
    let token = Box::new(0u8);
    let handle = std::ptr::from_ref::<u8>(&token) as usize;
    state.descriptors.insert(
        handle,
        Descriptor {
            fields: Fields::default(),
            _token: token,
            created: crate::soft::core::sequence::next(),
        },
    );
    Ok(handle)
}

/// `aclrtAllocatorDestroyDesc` after the NULL check. Streams it was
/// registered on keep their copy, as in the runtime.
pub(crate) fn destroy(handle: usize) -> SoftResult {
    let mut state = lock()?;
    descriptor(&mut state, "aclrtAllocatorDestroyDesc", handle)?;
    state.descriptors.remove(&handle);
    Ok(())
}

/// The `aclrtAllocatorSet*ToDesc` calls after their NULL checks: `set`
/// stores the value.
pub(crate) fn set_field(api: &'static str, handle: usize, set: impl FnOnce(&mut Fields)) -> SoftResult {
    let mut state = lock()?;
    set(descriptor(&mut state, api, handle)?);
    Ok(())
}

/// `aclrtAllocatorRegister` after the NULL checks of `stream` and the
/// descriptor: the object, alloc, free and get-address fields must be set
/// (alloc-advise is optional); a copy is stored for `stream`, replacing any
/// earlier one.
pub(crate) fn register(stream: usize, handle: usize) -> SoftResult {
    let mut state = lock()?;
    let fields = *descriptor(&mut state, "aclrtAllocatorRegister", handle)?;
    let missing = [
        (fields.obj == 0, "allocatorDesc->obj"),
        (fields.alloc.is_none(), "allocatorDesc->allocFunc"),
        (fields.free.is_none(), "allocatorDesc->freeFunc"),
        (
            fields.get_addr_from_block.is_none(),
            "allocatorDesc->getAddrFromBlockFunc",
        ),
    ];
    if let Some((_, name)) = missing.iter().find(|(unset, _)| *unset) {
        return fail(ACL_ERROR_INVALID_PARAM, format!("{name} is NULL"));
    }
    state.by_stream.insert(
        stream,
        Registered {
            descriptor: handle,
            fields,
        },
    );
    Ok(())
}

/// `aclrtAllocatorGetByStream` after the NULL checks: what was registered
/// for `stream`, or `ACL_ERROR_INVALID_PARAM` when nothing is.
pub(crate) fn get(stream: usize) -> SoftResult<Registered> {
    let state = lock()?;
    match state.by_stream.get(&stream) {
        Some(registered) => Ok(*registered),
        None => fail(
            ACL_ERROR_INVALID_PARAM,
            format!("stream {stream:#x} has no registered allocator"),
        ),
    }
}

/// `aclrtAllocatorUnregister` after the NULL check: forgets `stream`'s
/// allocator; an unknown stream or a repeated call succeeds.
pub(crate) fn unregister(stream: usize) -> SoftResult {
    lock()?.by_stream.remove(&stream);
    Ok(())
}

//! The contexts "as far as the memory API needs them": their handles, the
//! primary contexts' retains, and which of them is current on a thread
//! (kept in [`crate::soft::started::current`], where every family reads
//! it).
//!
//! - `aclrtSetDevice` makes the device's **primary context** current; its
//!   handle (what `aclrtGetCurrentContext` returns) is stable per device and
//!   valid while the device is set (its retain count is above zero).
//! - `aclrtCreateContext` creates a further context on a device and makes
//!   it current; it lives until `aclrtDestroyContext`. It does not count as
//!   an `aclrtSetDevice` retain (`aclrtResetDevice` balances only those), as
//!   in the runtime, where a created context is separate from the primary
//!   context's reference count.
//!
//! A context handle is an opaque token: the address of a one-byte heap
//! allocation the table owns, so it is unique among live handles of every
//! kind and never dereferenced. Every handle a caller passes is looked up in
//! the table first.

use crate::soft::core::lock_order::{self, Rank, Ranked};
use crate::soft::core::resource::{LiveResource, ResourceKind};
use crate::soft::core::soft_result::{SoftResult, fail};
use crate::soft::started::{self, current};
use crate::types::{ACL_ERROR_RT_CONTEXT_NULL, ACL_ERROR_RT_CONTEXT_RELEASE_ERROR, ACL_ERROR_RT_PARAM_INVALID};
use std::collections::BTreeMap;
use std::sync::Mutex;

/// `aclrtSetDevice(id)`: one more retain of `id`'s primary context.
pub(crate) fn retain_primary(id: i32) -> SoftResult {
    started::core()?.device(id)?;
    *contexts()?.retains.entry(id).or_insert(0) += 1;
    Ok(())
}

/// `aclrtResetDevice(id)` (`force`: every retain): one retain less, and
/// this thread loses its current context if it is `id`'s primary context
/// (a created context stays). Returns whether that was the last retain;
/// `ACL_ERROR_RT_CONTEXT_RELEASE_ERROR` when the device is not set.
pub(crate) fn release_primary(id: i32, force: bool) -> SoftResult<bool> {
    started::core()?.device(id)?;
    let last = {
        let mut contexts = contexts()?;
        let retains = contexts.retains.entry(id).or_insert(0);
        if *retains == 0 {
            return fail(
                ACL_ERROR_RT_CONTEXT_RELEASE_ERROR,
                format!("device {id} is not set (aclrtSetDevice was not called, or it was already reset)"),
            );
        }
        *retains = if force { 0 } else { *retains - 1 };
        *retains == 0
    };
    let primary = current::created_handle() == 0;
    if primary && current::device() == Some(id) {
        current::set(None);
    }
    Ok(last)
}

/// The contexts' lock, held while a device has no retain: until it is
/// dropped no `aclrtSetDevice` retains any device. A teardown that found
/// the device unretained frees the device's memory under it, so nothing
/// made under a later retain can be taken with it.
pub(crate) struct Unretained {
    _contexts: Ranked<'static, Contexts>,
}

/// [`Unretained`] when `id`'s primary context has no retain; `None` when
/// the device was set again meanwhile.
pub(crate) fn unretained(id: i32) -> SoftResult<Option<Unretained>> {
    started::core()?.device(id)?;
    let contexts = contexts()?;
    Ok((contexts.retains(id) == 0).then_some(Unretained { _contexts: contexts }))
}

/// A live created context.
#[derive(Debug)]
struct Created {
    device: i32,
    /// The allocation whose address is the handle.
    _token: Box<u8>,
    /// Creation sequence number ([`crate::soft::sequence_now`]).
    created: u64,
}

/// Every context handle handed out, and the primary contexts' retains:
/// this family's state, behind its own lock.
#[derive(Debug)]
struct Contexts {
    /// Created contexts by handle.
    created: BTreeMap<usize, Created>,
    /// The token of each device's primary context, made on first request.
    primary: BTreeMap<i32, Box<u8>>,
    /// `aclrtSetDevice` retains minus `aclrtResetDevice` releases, by
    /// device (none: 0).
    retains: BTreeMap<i32, u32>,
}

static CONTEXTS: Mutex<Contexts> = Mutex::new(Contexts {
    created: BTreeMap::new(),
    primary: BTreeMap::new(),
    retains: BTreeMap::new(),
});

/// The family's state, locked ([`Rank::Contexts`]); fails only if the
/// software device cannot start.
fn contexts() -> SoftResult<Ranked<'static, Contexts>> {
    started::core()?;
    Ok(locked())
}

/// The family's state, locked, without starting the software device.
fn locked() -> Ranked<'static, Contexts> {
    lock_order::lock(&CONTEXTS, Rank::Contexts)
}

/// Number of live created contexts (for introspection).
pub(crate) fn created_count() -> usize {
    locked().created.len()
}

/// `(handle, device)` of every live created context (for introspection).
pub(crate) fn created() -> Vec<(usize, i32)> {
    locked()
        .created
        .iter()
        .map(|(&handle, context)| (handle, context.device))
        .collect()
}

/// The created contexts made at or after sequence number `since` (for
/// introspection).
pub(crate) fn created_since(since: u64) -> Vec<LiveResource> {
    locked()
        .created
        .iter()
        .filter(|(_, context)| context.created >= since)
        .map(|(&handle, context)| {
            LiveResource::new(ResourceKind::Context, handle, 0, context.created).on(context.device)
        })
        .collect()
}

fn token_address(token: &u8) -> usize {
    std::ptr::from_ref(token) as usize
}

impl Contexts {
    /// The retains of `device`'s primary context.
    fn retains(&self, device: i32) -> u32 {
        self.retains.get(&device).copied().unwrap_or(0)
    }

    /// The handle of `device`'s primary context.
    fn primary_handle(&mut self, device: i32) -> usize {
        token_address(self.primary.entry(device).or_insert_with(|| Box::new(0)))
    }

    /// The device of the primary context `handle`, if it is one.
    fn primary_device(&self, handle: usize) -> Option<i32> {
        self.primary
            .iter()
            .find(|(_, token)| token_address(token) == handle)
            .map(|(&device, _)| device)
    }
}

/// `aclrtCreateContext`: a new context on `device`, made current.
pub(crate) fn create(device: i32) -> SoftResult<usize> {
    started::core()?.device(device)?;
    let mut contexts = contexts()?;
    let token = Box::new(0u8);
    let handle = token_address(&token);
    contexts.created.insert(
        handle,
        Created {
            device,
            _token: token,
            created: crate::soft::core::sequence::next(),
        },
    );
    current::set_created(device, handle);
    Ok(handle)
}

/// `aclrtDestroyContext`: only a live created context. The primary context
/// and unknown or destroyed handles are refused with
/// `ACL_ERROR_RT_CONTEXT_NULL`, as the runtime does. A thread whose current
/// context it was has none afterwards.
pub(crate) fn destroy(handle: usize) -> SoftResult {
    let mut contexts = contexts()?;
    if contexts.created.remove(&handle).is_none() {
        let why = match contexts.primary_device(handle) {
            Some(device) => format!(
                "context {handle:#x} is the primary context of device {device}, which cannot be destroyed explicitly (use aclrtResetDevice)"
            ),
            None => format!("context {handle:#x} is not a live context (never created, or already destroyed)"),
        };
        return fail(ACL_ERROR_RT_CONTEXT_NULL, why);
    }
    if current::created_handle() == handle {
        current::set(None);
    }
    Ok(())
}

/// The device of a context handle that may be made current, or
/// `ACL_ERROR_RT_PARAM_INVALID` (the runtime's code for an invalid context
/// passed to `aclrtSetCurrentContext`).
fn device_of_handle(contexts: &Contexts, handle: usize) -> SoftResult<(i32, bool)> {
    if let Some(context) = contexts.created.get(&handle) {
        return Ok((context.device, false));
    }
    match contexts.primary_device(handle) {
        Some(device) if contexts.retains(device) > 0 => Ok((device, true)),
        Some(device) => fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("context {handle:#x} is the primary context of device {device}, which has been reset"),
        ),
        None => fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("context {handle:#x} is not a live context (never created, or already destroyed)"),
        ),
    }
}

/// `aclrtSetCurrentContext`: the thread's current device becomes the
/// context's device.
pub(crate) fn set_current(handle: usize) -> SoftResult {
    let (device, primary) = device_of_handle(&*contexts()?, handle)?;
    if primary {
        current::set(Some(device));
    } else {
        current::set_created(device, handle);
    }
    Ok(())
}

/// `aclrtGetCurrentContext`: the created context made current on this
/// thread, or the current device's primary context; `ACL_ERROR_RT_CONTEXT_NULL`
/// when there is none (or it has been destroyed or reset meanwhile).
pub(crate) fn get_current() -> SoftResult<usize> {
    let device = current::require()?;
    let created = current::created_handle();
    let mut contexts = contexts()?;
    if created != 0 {
        if contexts.created.contains_key(&created) {
            return Ok(created);
        }
        return fail(
            ACL_ERROR_RT_CONTEXT_NULL,
            format!("this thread's current context {created:#x} has been destroyed"),
        );
    }
    if contexts.retains(device) == 0 {
        return fail(
            ACL_ERROR_RT_CONTEXT_NULL,
            format!("the primary context of device {device} has been reset"),
        );
    }
    Ok(contexts.primary_handle(device))
}

//! Translating an address range into the bytes behind it.
//!
//! A device range becomes one or more segments of the device's own view of
//! physical memory (several when it spans adjacent mappings); a host range
//! is itself. The rules of what may be touched live here, so synchronous and
//! stream copies enforce the same ones.

use super::fail::{SoftResult, fail};
use super::runtime::{self, State, StateReader};
use super::{device_mem, host_mem, host_register};
use crate::types::*;

/// A run of bytes to touch: `len` bytes at `pointer`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Segment {
    pub(crate) pointer: *mut u8,
    pub(crate) len: usize,
}

/// The segments of one range, in address order.
#[derive(Debug, Clone)]
pub(crate) struct Segments {
    first: Segment,
    rest: Vec<Segment>,
    /// The device whose memory this is (`None`: host memory, or not known).
    pub(crate) device: Option<i32>,
}

impl Segments {
    pub(crate) fn one(pointer: *mut u8, len: usize) -> Self {
        Self {
            first: Segment { pointer, len },
            rest: Vec::new(),
            device: None,
        }
    }

    /// The same segments, marked as memory of `device`.
    pub(crate) fn on_device(mut self, device: i32) -> Self {
        self.device = Some(device);
        self
    }

    pub(crate) fn push(&mut self, segment: Segment) {
        self.rest.push(segment);
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = &Segment> {
        std::iter::once(&self.first).chain(self.rest.iter())
    }
}

// SAFETY: segments are addresses of device views (live for the process) or
// host memory owned by the caller of the operation; they are plain data.
unsafe impl Send for Segments {}

/// Translation that takes the state's read lock only when an address needs
/// it: device memory from `aclrtMalloc` is translated by its own family, so
/// a copy between two such buffers takes no process-wide lock.
#[derive(Default)]
pub(crate) struct Translator {
    state: Option<StateReader>,
}

impl Translator {
    /// The state, read-locked on first use and held until the translator
    /// is dropped (the lock order puts it before the families' locks).
    fn state(&mut self) -> SoftResult<&State> {
        Ok(match self.state {
            Some(ref state) => state,
            None => self.state.insert(runtime::read()?),
        })
    }

    /// As [`resolve`].
    pub(crate) fn resolve(&mut self, address: usize, length: usize, role: &str) -> SoftResult<Segments> {
        resolve_with(|| self.state(), address, length, role)
    }
}

/// Translates `[address, address + length)`, refusing ranges the runtime
/// would refuse.
pub(crate) fn resolve(state: &State, address: usize, length: usize, role: &str) -> SoftResult<Segments> {
    resolve_with(|| Ok(state), address, length, role)
}

/// As [`resolve`], with the state fetched only when the address is not
/// `aclrtMalloc` memory.
fn resolve_with<'s>(
    state: impl FnOnce() -> SoftResult<&'s State>,
    address: usize,
    length: usize,
    role: &str,
) -> SoftResult<Segments> {
    let Some(end) = address.checked_add(length) else {
        return fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("{role} range wraps around the address space"),
        );
    };
    let core = runtime::core()?;
    if let Some(device) = core.device_of(address) {
        let Some((start, allocation)) = device_mem::find(address) else {
            return fail(
                ACL_ERROR_RT_PARAM_INVALID,
                format!("{role} {address:#x} on device {device} is not inside a live allocation"),
            );
        };
        let limit = start + allocation.size as usize;
        if end > limit {
            return fail(
                ACL_ERROR_RT_PARAM_INVALID,
                format!(
                    "{role} range {address:#x}+{length} runs {} bytes past the end of the allocation at {start:#x} ({} bytes)",
                    end - limit,
                    allocation.size
                ),
            );
        }
        let offset = allocation.offset + (address - start) as u64;
        let pointer = core.device(allocation.device)?.arena.view_at(offset);
        return Ok(Segments::one(pointer, length).on_device(allocation.device));
    }
    if !super::address_map::touches(address, end) {
        // Plain host memory is the caller's responsibility, as on
        // hardware.
        return Ok(Segments::one(address as *mut u8, length));
    }
    let state = state()?;
    if let Some((base, reservation)) = state.vmm.reservation_of(address) {
        let segments = state.vmm.resolve(base, address, length, role)?;
        // Memory of one device (a reservation maps one device); host-located
        // physical memory has no device.
        return Ok(match reservation.device {
            Some(device) => segments.on_device(device),
            None => segments,
        });
    }
    if let Some(segments) = super::share::resolve(state, address, length, role)? {
        return Ok(segments);
    }
    host_register::refuse_device_window(address, end, role)?;
    if let Some((start, allocation)) = host_mem::find(address)
        && end > start + allocation.size
    {
        return fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!(
                "{role} range {address:#x}+{length} runs past the end of the pinned host allocation at {start:#x} ({} bytes)",
                allocation.size
            ),
        );
    }
    // Other host memory (pageable) is the caller's responsibility, as on
    // hardware.
    Ok(Segments::one(address as *mut u8, length))
}

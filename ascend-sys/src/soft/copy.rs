//! `aclrtMemcpy` / `aclrtMemset`: synchronous copies and fills.
//!
//! The direction comes from the addresses (the runtime hands the driver no
//! kind; `kind` is only range-checked). A device range must lie inside one
//! live allocation; the bytes are reached through the device view. The lock
//! is held only to translate addresses, not while bytes move.

use super::context;
use super::fail::{SoftResult, fail};
use super::{device_mem, host_mem, runtime};
use crate::types::*;

/// Where one side of a copy really is.
struct Resolved {
    pointer: *mut u8,
}

/// Translates `[address, address + length)` for the calling operation.
fn resolve(state: &runtime::State, address: usize, length: usize, role: &str) -> SoftResult<Resolved> {
    let Some(end) = address.checked_add(length) else {
        return fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("{role} range wraps around the address space"),
        );
    };
    if let Some(device) = state.device_of(address) {
        let Some((start, allocation)) = device_mem::find(state, address) else {
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
        let pointer = state.devices[allocation.device as usize].arena.view_at(offset);
        return Ok(Resolved { pointer });
    }
    if let Some((start, allocation)) = host_mem::find(state, address)
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
    Ok(Resolved {
        pointer: address as *mut u8,
    })
}

/// `aclrtMemcpy`, after the NULL checks of the ACL layer.
///
/// # Safety
///
/// Host ranges must be valid for the copy (the caller's contract).
pub(crate) unsafe fn memcpy(
    dst: usize,
    dest_max: usize,
    src: usize,
    count: usize,
    kind: aclrtMemcpyKind,
) -> SoftResult {
    if kind > ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE {
        return fail(
            ACL_ERROR_INVALID_PARAM,
            format!("kind {kind} is not accepted by aclrtMemcpy (0 to 5)"),
        );
    }
    if dest_max == 0 {
        return fail(ACL_ERROR_RT_PARAM_INVALID, "destMax is 0");
    }
    if count > dest_max {
        return fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("count {count} is larger than destMax {dest_max}"),
        );
    }
    if dst == src {
        return Ok(());
    }
    context::require()?;
    let (to, from) = {
        let state = runtime::lock()?;
        (resolve(&state, dst, count, "dst")?, resolve(&state, src, count, "src")?)
    };
    // SAFETY: device sides were translated into the device view inside live
    // allocations; host sides are valid by the caller's contract. `copy`
    // tolerates overlap.
    unsafe { std::ptr::copy(from.pointer, to.pointer, count) };
    Ok(())
}

/// `aclrtMemset`, after the NULL check of the ACL layer. The value is
/// truncated to its low 8 bits, as the runtime does.
///
/// # Safety
///
/// A host range must be valid for the write (the caller's contract).
pub(crate) unsafe fn memset(address: usize, max_count: usize, value: i32, count: usize) -> SoftResult {
    context::require()?;
    if count > max_count {
        // The open runtime leaves this to the driver; the software device
        // refuses it as the asynchronous variant does.
        return fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("count {count} is larger than maxCount {max_count}"),
        );
    }
    let target = {
        let state = runtime::lock()?;
        resolve(&state, address, count, "devPtr")?
    };
    // SAFETY: as in `memcpy`.
    unsafe { std::ptr::write_bytes(target.pointer, value as u8, count) };
    Ok(())
}

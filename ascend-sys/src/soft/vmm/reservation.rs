//! `aclrtReserveMemAddress` / `aclrtReleaseMemAddress`.

use super::Reservation;
use super::Vmm;
use crate::soft::core::soft_result::{SoftResult, fail};
use crate::types::*;
use rustix::mm::{MapFlags, ProtFlags, mmap_anonymous, munmap};
use std::ffi::c_void;

/// The alignment a reservation of `size` bytes gets (and an `expectPtr`
/// must have): the next power of two ≥ `size`, at least `granularity`, and
/// 1 GiB above 512 MiB (the driver's rule for requested addresses).
fn alignment(size: usize, granularity: usize) -> usize {
    if size > 512 << 20 {
        1 << 30
    } else {
        size.next_power_of_two().max(granularity)
    }
}

/// `aclrtReserveMemAddress`, after the ACL checks (NULL out-pointer, size 0,
/// flags): returns the base.
pub(crate) fn reserve(vmm: &mut Vmm, size: usize, align: usize, expect: usize) -> SoftResult<usize> {
    if align != 0 {
        return fail(ACL_ERROR_RT_PARAM_INVALID, format!("alignment {align} must be 0"));
    }
    let granularity = crate::soft::started::core()?.config.granularity as usize;
    if !size.is_multiple_of(granularity) {
        return fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("size {size} is not a multiple of the allocation granularity {granularity}"),
        );
    }
    let alignment = alignment(size, granularity);
    let base = if expect != 0 {
        if !expect.is_multiple_of(alignment) {
            return fail(
                ACL_ERROR_RT_PARAM_INVALID,
                format!("expectPtr {expect:#x} is not aligned to {alignment:#x} (required for a {size}-byte range)"),
            );
        }
        // SAFETY: FIXED_NOREPLACE never replaces an existing mapping: the
        // call fails if any page of the range is in use.
        match unsafe {
            mmap_anonymous(
                expect as *mut c_void,
                size,
                ProtFlags::empty(),
                MapFlags::PRIVATE | MapFlags::NORESERVE | MapFlags::FIXED_NOREPLACE,
            )
        } {
            Ok(base) if base as usize == expect => expect,
            Ok(base) => {
                // An old kernel ignored FIXED_NOREPLACE; give it back.
                // SAFETY: `base` was just mapped with `size` bytes.
                let _ = unsafe { munmap(base, size) };
                return fail(
                    ACL_ERROR_RT_PARAM_INVALID,
                    format!("expectPtr {expect:#x} is not available"),
                );
            }
            Err(error) => {
                return fail(
                    ACL_ERROR_RT_PARAM_INVALID,
                    format!("expectPtr {expect:#x}+{size} is not available: {error}"),
                );
            }
        }
    } else {
        reserve_aligned(size, alignment)?
    };
    crate::soft::core::address_map::insert(base, size);
    vmm.reservations.insert(
        base,
        Reservation {
            size,
            device: None,
            imported: None,
            mappings: 0,
            created: crate::soft::core::sequence::next(),
        },
    );
    Ok(base)
}

/// Reserves `size` inaccessible bytes at a multiple of `alignment`.
fn reserve_aligned(size: usize, alignment: usize) -> SoftResult<usize> {
    let Some(padded) = size.checked_add(alignment) else {
        return fail(ACL_ERROR_RT_MEMORY_ALLOCATION, format!("size {size} is too large"));
    };
    // SAFETY: a fresh inaccessible reservation at an address the kernel picks.
    let raw = match unsafe {
        mmap_anonymous(
            std::ptr::null_mut(),
            padded,
            ProtFlags::empty(),
            MapFlags::PRIVATE | MapFlags::NORESERVE,
        )
    } {
        Ok(raw) => raw as usize,
        Err(error) => {
            return fail(
                ACL_ERROR_RT_MEMORY_ALLOCATION,
                format!("cannot reserve {size} bytes of address space: {error}"),
            );
        }
    };
    let base = raw.next_multiple_of(alignment);
    // SAFETY: the head and tail trimmed here are parts of the reservation
    // just made and not handed out.
    unsafe {
        if base > raw {
            let _ = munmap(raw as *mut c_void, base - raw);
        }
        let tail = raw + padded - (base + size);
        if tail > 0 {
            let _ = munmap((base + size) as *mut c_void, tail);
        }
    }
    Ok(base)
}

/// `aclrtReleaseMemAddress`: only a reservation's base, and only when no
/// mapping is left in it.
pub(crate) fn release(vmm: &mut Vmm, base: usize) -> SoftResult {
    let Some(reservation) = vmm.reservations.get(&base) else {
        let why = match vmm.reservation_of(base) {
            Some((start, _)) => format!("{base:#x} is inside the reserved range at {start:#x}, not its start"),
            None => format!("{base:#x} is not a reserved range (never reserved, or already released)"),
        };
        return fail(ACL_ERROR_RT_PARAM_INVALID, why);
    };
    if reservation.mappings > 0 {
        let end = base + reservation.size;
        let blocking: Vec<String> = vmm
            .mappings
            .range(base..end)
            .map(|(start, mapping)| format!("{start:#x}+{:#x}", mapping.size))
            .collect();
        return fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!(
                "the range at {base:#x} still has {} mapping(s): {}; unmap them first",
                blocking.len(),
                blocking.join(", ")
            ),
        );
    }
    let size = reservation.size;
    vmm.reservations.remove(&base);
    crate::soft::core::address_map::remove(base);
    // SAFETY: the reservation was mapped by `reserve` with `size` bytes and
    // has just been removed from the table, so it is unmapped once.
    if let Err(error) = unsafe { munmap(base as *mut c_void, size) } {
        log::warn!("software device: munmap of a released range failed: {error}");
    }
    Ok(())
}

//! Moving bytes: the core of `aclrtMemcpy*` and `aclrtMemset*`.
//!
//! The direction comes from the addresses (the runtime hands the driver no
//! kind; `kind` is only range-checked). Device ranges are translated through
//! the address table ([`crate::soft::compose::translate`]); a lock is held only to
//! translate, never while bytes move. Bytes move in chunk-sized steps under
//! the [`crate::soft::core::byte_locks`] of their chunks, so two workers never write the
//! same bytes at once.
//!
//! [`copy_bytes`] and [`fill_bytes`] are shared by the synchronous calls here
//! and by stream tasks, which run them on the stream's worker thread.

use crate::soft::check::sanitize::Range;
use crate::soft::compose::sanitize_ranges;
use crate::soft::compose::translate::Translator;
use crate::soft::core::byte_locks;
use crate::soft::core::segments::Segments;
use crate::soft::core::soft_result::{SoftResult, fail};
use crate::soft::device_mem;
use crate::soft::peer;
use crate::soft::started::current;
use crate::types::*;

/// Copies `count` bytes from `src` to `dst`, each either device memory
/// (translated) or host memory.
///
/// # Safety
///
/// Host ranges must be valid for the copy (the caller's contract).
pub(crate) unsafe fn copy_bytes(dst: usize, src: usize, count: usize) -> SoftResult {
    let (to, from) = {
        let mut translator = Translator::default();
        let to = translator.resolve(dst, count, "dst")?;
        let from = translator.resolve(src, count, "src")?;
        // A copy between two devices needs peer access.
        peer::check_sides(&to, &from)?;
        (to, from)
    };
    // SAFETY: forwarded contract (host segments are the caller's ranges).
    unsafe { copy_segments(&to, &from, count) }
}

/// Copies `count` bytes between translated ranges (each at least `count`
/// bytes long).
///
/// # Safety
///
/// Host segments must be valid for the copy (the caller's contract); device
/// segments are live views, as [`Translator::resolve`] returns them.
pub(crate) unsafe fn copy_segments(to: &Segments, from: &Segments, count: usize) -> SoftResult {
    let mut done = 0;
    let (mut to_segments, mut from_segments) = (to.iter(), from.iter());
    let (mut to_segment, mut from_segment) = (to_segments.next(), from_segments.next());
    let (mut to_used, mut from_used) = (0, 0);
    while done < count {
        let (Some(t), Some(f)) = (to_segment, from_segment) else {
            return fail(ACL_ERROR_RT_INTERNAL_ERROR, "translation returned too few bytes");
        };
        // SAFETY: `to_used < t.len` and `from_used < f.len`: inside the
        // segments.
        let (to_pointer, from_pointer) = unsafe { (t.pointer.add(to_used), f.pointer.add(from_used)) };
        let step = (t.len - to_used)
            .min(f.len - from_used)
            .min(count - done)
            .min(byte_locks::room(to_pointer as usize))
            .min(byte_locks::room(from_pointer as usize));
        let _held = byte_locks::lock(to_pointer as usize, from_pointer as usize);
        // SAFETY: device segments point into live device views for their
        // length; host segments are valid by the caller's contract. `copy`
        // tolerates overlap.
        unsafe { std::ptr::copy(from_pointer, to_pointer, step) };
        done += step;
        to_used += step;
        from_used += step;
        if to_used == t.len {
            to_segment = to_segments.next();
            to_used = 0;
        }
        if from_used == f.len {
            from_segment = from_segments.next();
            from_used = 0;
        }
    }
    Ok(())
}

/// Sets `count` bytes at `address` (device or host) to `value`.
///
/// # Safety
///
/// A host range must be valid for the write (the caller's contract).
pub(crate) unsafe fn fill_bytes(address: usize, value: u8, count: usize) -> SoftResult {
    // Inside the allocation this thread placed or translated last (a
    // buffer zeroed as it is made): one segment, translated without a lock
    // (what `Translator::resolve` would answer, without building its
    // `Translator` and `Segments`: 121 instructions of a zeroed 4 KiB
    // buffer's ~1,280 beside the fill, benches/zeroed_instructions.rs).
    if let Some((pointer, _)) = device_mem::remembered_view(address, count) {
        // SAFETY: `count` bytes of a live allocation's device view.
        unsafe { fill_run(pointer, value, count) };
        return Ok(());
    }
    let target = Translator::default().resolve(address, count, "devPtr")?;
    for segment in target.iter() {
        // SAFETY: as in `copy_bytes`: a translated segment.
        unsafe { fill_run(segment.pointer, value, segment.len) };
    }
    Ok(())
}

/// Sets the `len` bytes at `pointer` (one translated segment) to `value`,
/// a chunk at a time under its byte lock.
///
/// # Safety
///
/// As [`copy_segments`]: a device view's bytes or the caller's host
/// memory, valid for `len` bytes.
unsafe fn fill_run(pointer: *mut u8, value: u8, len: usize) {
    let mut done = 0;
    while done < len {
        // SAFETY: `done < len`: inside the run.
        let pointer = unsafe { pointer.add(done) };
        let step = (len - done).min(byte_locks::room(pointer as usize));
        let _held = byte_locks::lock_one(pointer as usize);
        // SAFETY: inside the run (the caller's contract).
        unsafe { std::ptr::write_bytes(pointer, value, step) };
        done += step;
    }
}

/// Sets `count` 32-bit elements at `address` (device or host) to `value`,
/// in native byte order. Segments and lock steps may split an element; each
/// byte takes the pattern byte of its offset from `address`, so the result
/// is the same either way.
///
/// # Safety
///
/// A host range must be valid for the write (the caller's contract).
pub(crate) unsafe fn fill_u32(address: usize, value: u32, count: usize) -> SoftResult {
    let Some(bytes) = count.checked_mul(4) else {
        return fail(ACL_ERROR_INVALID_PARAM, format!("{count} 32-bit elements overflow"));
    };
    let pattern = value.to_ne_bytes();
    let target = Translator::default().resolve(address, bytes, "ptr")?;
    let mut offset = 0usize;
    for segment in target.iter() {
        let mut done = 0;
        while done < segment.len {
            // SAFETY: `done < segment.len`: inside the segment.
            let pointer = unsafe { segment.pointer.add(done) };
            let step = (segment.len - done).min(byte_locks::room(pointer as usize));
            let _held = byte_locks::lock_one(pointer as usize);
            for index in 0..step {
                // SAFETY: `index < step`, inside the segment; as in
                // `copy_bytes` for validity.
                unsafe { pointer.add(index).write(pattern[(offset + index) % 4]) };
            }
            done += step;
            offset += step;
        }
    }
    Ok(())
}

/// `aclrtMemsetD32`, after the ACL layer's checks (in `entry::memory`).
///
/// # Safety
///
/// A host range must be valid for the write (the caller's contract).
pub(crate) unsafe fn memset_d32(address: usize, value: u32, count: usize) -> SoftResult {
    current::require()?;
    // SAFETY: forwarded contract.
    unsafe { fill_u32(address, value, count) }?;
    sanitize_ranges::host("aclrtMemsetD32", &[Range::write(address, count * 4)]);
    Ok(())
}

/// The argument checks `aclrtMemcpy` and `aclrtMemcpyAsync` share after the
/// ACL layer's NULL checks: the kind, `destMax` and `count > destMax`.
pub(crate) fn check_copy_arguments(dest_max: usize, count: usize, kind: aclrtMemcpyKind) -> SoftResult {
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
    Ok(())
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
    check_copy_arguments(dest_max, count, kind)?;
    if dst == src {
        return Ok(());
    }
    current::require()?;
    // SAFETY: forwarded contract.
    unsafe { copy_bytes(dst, src, count) }?;
    sanitize_ranges::host("aclrtMemcpy", &[Range::write(dst, count), Range::read(src, count)]);
    Ok(())
}

/// `aclrtMemset`, after the NULL check of the ACL layer. The value is
/// truncated to its low 8 bits, as the runtime does.
///
/// # Safety
///
/// A host range must be valid for the write (the caller's contract).
pub(crate) unsafe fn memset(address: usize, max_count: usize, value: i32, count: usize) -> SoftResult {
    current::require()?;
    if count > max_count {
        // The open runtime leaves this to the driver; the software device
        // refuses it as the asynchronous variant does.
        return fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("count {count} is larger than maxCount {max_count}"),
        );
    }
    // SAFETY: forwarded contract.
    unsafe { fill_bytes(address, value as u8, count) }?;
    sanitize_ranges::host("aclrtMemset", &[Range::write(address, count)]);
    Ok(())
}

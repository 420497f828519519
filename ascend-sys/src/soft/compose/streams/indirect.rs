//! Copies whose addresses the device reads from device memory when the copy
//! runs: `aclrtMemcpyAsyncWithOffset` (two pointers held in device memory,
//! plus offsets) and the memory-copy descriptors (`aclrtSetMemcpyDesc`,
//! `aclrtMemcpyAsyncWithDesc`), after the ACL layer's checks (done by the
//! entry points): the runtime's checks in its order (`hicann/runtime`
//! `src/runtime/api/api_c_standard_soc.cc` `rtMemcpyD2DAddrAsync`,
//! `api_impl/api_error.cc` `ApiErrorDecorator::MemcpyAsync`,
//! `MemcpyAsyncCheckAddrCfg`, `SetMemcpyDesc`, `MemcpyAsyncWithDesc`,
//! `MemcpyAsyncPtr`; `core/src/context/context.cc` `Context::SetMemcpyDesc`).
//!
//! A descriptor is 32 bytes of device memory laid out as the runtime's
//! `rtMemcpyAddrInfo`: three reserved 32-bit words (0), the length (`u32`),
//! the source address (`u64`), the destination address (`u64`), in native
//! byte order. The stream task reads the descriptor (or the two pointers)
//! when it runs, so work queued before it may change what it copies; both
//! addresses it reads must then be device memory, or the task fails
//! (`ACL_ERROR_RT_SYS_DMA` at the next synchronisation) without touching
//! them: the device reaches no host memory through them. The
//! sanitizer is told the descriptor's (or the pointers') read and, as a best
//! effort, the data ranges they name at the call.

use super::task::{Task, Work};
use super::transfer::{Location, location};
use super::{lookup_stream, target_stream};
use crate::soft::check::sanitize::{self, Range};
use crate::soft::compose::copy;
use crate::soft::compose::sanitize_ranges;
use crate::soft::compose::translate::Translator;
use crate::soft::core::segments::{Segments, Side};
use crate::soft::core::soft_result::{SoftResult, fail};
use crate::soft::peer;
use crate::soft::started::current;
use crate::types::*;

/// What `aclrtGetMemcpyDescSize` reports: the size of the runtime's
/// `rtMemcpyAddrInfo` (`MEMCPY_DESC_SIZE_V1`, the common chips).
pub(crate) const MEMCPY_DESC_SIZE: usize = 32;
/// The most bytes one device-to-device address copy moves (the runtime's
/// `MAX_MEMCPY_SIZE_OF_D2D`, 4 GiB).
const MAX_D2D: usize = 4 << 30;
/// The largest offset the task's 48-bit offset fields hold.
const MAX_OFFSET: usize = 0xFFFF_FFFF_FFFF;

/// Reads `N` bytes at `address`, which must be device memory.
fn peek<const N: usize>(address: usize) -> SoftResult<[u8; N]> {
    let mut out = [0u8; N];
    let from = Translator::default().resolve_device(address, N, "address")?;
    // SAFETY: the destination is a local of `N` bytes; the source is device
    // memory, translated (a live view of at least `N` bytes).
    unsafe { copy::copy_segments(&Segments::one(out.as_mut_ptr(), N), &from, N) }?;
    Ok(out)
}

/// The 64-bit address held at `slot`.
fn pointer_at(slot: usize) -> SoftResult<usize> {
    Ok(u64::from_ne_bytes(peek::<8>(slot)?) as usize)
}

/// A descriptor's copy: `(dst, src, len)`.
fn read_desc(desc: usize) -> SoftResult<(usize, usize, usize)> {
    let bytes = peek::<MEMCPY_DESC_SIZE>(desc)?;
    let word = |at: usize| -> [u8; 8] { bytes[at..at + 8].try_into().unwrap_or([0; 8]) };
    let len = u32::from_ne_bytes([bytes[12], bytes[13], bytes[14], bytes[15]]) as usize;
    let src = u64::from_ne_bytes(word(16)) as usize;
    let dst = u64::from_ne_bytes(word(24)) as usize;
    Ok((dst, src, len))
}

/// Copies `count` bytes between two addresses read from device memory when
/// the task runs. Both must be device memory: the device reaches nothing
/// else through them, so any other address (host memory, an unmapped or
/// freed range, a value that is no address at all) fails the task
/// (`ACL_ERROR_RT_SYS_DMA` at the stream's synchronisation) and is never
/// touched.
fn copy_device(dst: usize, src: usize, count: usize) -> SoftResult {
    let (to, from) = {
        let mut tables = Translator::default();
        let to = tables.resolve_device(dst, count, "dst")?;
        let from = tables.resolve_device(src, count, "src")?;
        peer::check_sides(&to, &from)?;
        (to, from)
    };
    // SAFETY: both ranges are device memory, translated to live views of at
    // least `count` bytes; no host address is touched.
    unsafe { copy::copy_segments(&to, &from, count) }
}

/// The task of `aclrtMemcpyAsyncWithOffset`, when it runs.
pub(super) fn run_through(dst: usize, dst_offset: usize, src: usize, src_offset: usize, count: usize) -> SoftResult {
    let to = pointer_at(dst)?.wrapping_add(dst_offset);
    let from = pointer_at(src)?.wrapping_add(src_offset);
    copy_device(to, from, count)
}

/// The task of `aclrtMemcpyAsyncWithDesc`, when it runs.
pub(super) fn run_desc(desc: usize) -> SoftResult {
    let (dst, src, len) = read_desc(desc)?;
    copy_device(dst, src, len)
}

/// Fails unless `address` is device memory.
fn device_memory(tables: &mut Translator, address: usize, role: &str) -> SoftResult<u32> {
    match tables.side_of(address)? {
        Side::Device(Some(device)) => Ok(device as u32),
        _ => fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("{role} {address:#x} is not device memory"),
        ),
    }
}

/// The data ranges a task will touch, as the memory says now, translated
/// (for the sanitizer only; a range that is not device memory, or cannot be
/// translated, is left out: the task fails on it).
fn data_ranges(dst: usize, src: usize, count: usize) -> Vec<(Range, bool, Segments)> {
    let mut tables = Translator::default();
    let mut out = Vec::new();
    for (range, address) in [(Range::write(dst, count), dst), (Range::read(src, count), src)] {
        let device = matches!(location(&mut tables, address), Ok(Location::Device));
        if let Ok(segments) = tables.resolve_device(address, count, "data") {
            out.push((range, device, segments));
        }
    }
    out
}

/// `aclrtMemcpyAsyncWithOffset` after the ACL layer (count 0) and the kind
/// check: the stream handle, NULL pointers, `count` against `destMax` and 4
/// GiB, the offsets (at most 48 bits; `dstDataOffset` below `destMax`,
/// `count` within `destMax - dstDataOffset`), all 107000; the context; both
/// pointers in device memory (107000); the stream's device; one task.
pub(crate) fn memcpy_async_with_offset(
    dst: usize,
    dest_max: usize,
    dst_offset: usize,
    src: usize,
    count: usize,
    src_offset: usize,
    stream: usize,
) -> SoftResult {
    const API: &str = "aclrtMemcpyAsyncWithOffset";
    let mut streams = super::lock()?;
    let explicit = lookup_stream(&streams, stream)?;
    let invalid = |message: String| fail(ACL_ERROR_RT_PARAM_INVALID, message);
    if dst == 0 {
        return invalid("dst is NULL".into());
    }
    if src == 0 {
        return invalid("src is NULL".into());
    }
    if count > dest_max {
        return invalid(format!("count {count} is larger than destMax {dest_max}"));
    }
    if count > MAX_D2D {
        return invalid(format!("count {count} is larger than 4 GiB"));
    }
    if src_offset > MAX_OFFSET {
        return invalid(format!("srcDataOffset {src_offset:#x} is larger than 0xFFFFFFFFFFFF"));
    }
    if dst_offset > MAX_OFFSET {
        return invalid(format!("dstDataOffset {dst_offset:#x} is larger than 0xFFFFFFFFFFFF"));
    }
    if dst_offset >= dest_max {
        return invalid(format!(
            "dstDataOffset {dst_offset} must be less than destMax {dest_max}"
        ));
    }
    if count > dest_max - dst_offset {
        return invalid(format!(
            "count {count} is larger than destMax - dstDataOffset ({})",
            dest_max - dst_offset
        ));
    }
    let device = current::require()?;
    let mut tables = Translator::default();
    device_memory(&mut tables, src, "src")?;
    device_memory(&mut tables, dst, "dst")?;
    let stream = target_stream(&mut streams, explicit, device)?;
    let dst_slot = tables.resolve(dst, 8, "dst")?;
    let src_slot = tables.resolve(src, 8, "src")?;
    drop((tables, streams));
    let data = match (pointer_at(dst), pointer_at(src)) {
        (Ok(to), Ok(from)) => data_ranges(to.wrapping_add(dst_offset), from.wrapping_add(src_offset), count),
        _ => Vec::new(),
    };
    let mut ranges = vec![
        (Range::read(dst, 8), true, &dst_slot),
        (Range::read(src, 8), true, &src_slot),
    ];
    ranges.extend(data.iter().map(|(range, device, segments)| (*range, *device, segments)));
    sanitize::queued(stream.site(), API, &ranges);
    let work = Work::CopyThrough {
        dst,
        dst_offset,
        src,
        src_offset,
        count,
    };
    stream.submit(Task::new(API, work, Vec::new()));
    Ok(())
}

/// `aclrtSetMemcpyDesc` after the ACL layer (NULLs, count 0, `config`) and
/// the kind check: `count` at most 4 GiB, and below it (the length field's
/// 32 bits; the runtime truncates 4 GiB to 0), `desc` 64-byte aligned, `desc`
/// device memory, `srcAddr` and `dstAddr` device memory of one device (all
/// 107000), the context, then the 32 bytes written at once.
pub(crate) fn set_memcpy_desc(desc: usize, src: usize, dst: usize, count: usize) -> SoftResult {
    const API: &str = "aclrtSetMemcpyDesc";
    if count > MAX_D2D {
        return fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("count {count} is larger than 4 GiB"),
        );
    }
    // The descriptor's length is 32 bits: the runtime accepts 4 GiB and
    // stores it as 0 (`static_cast<uint32_t>`); the software device refuses
    // it rather than truncate it.
    let Ok(len) = u32::try_from(count) else {
        return fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("count {count} does not fit the descriptor's 32-bit length (at most 4 GiB - 1)"),
        );
    };
    if !desc.is_multiple_of(64) {
        return fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("desc {desc:#x} is not 64-byte aligned"),
        );
    }
    let mut tables = Translator::default();
    device_memory(&mut tables, desc, "desc")?;
    let (to, from) = (tables.side_of(dst)?, tables.side_of(src)?);
    let same_device = matches!((to, from), (Side::Device(Some(a)), Side::Device(Some(b))) if a == b);
    if !same_device {
        return fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("dstAddr {dst:#x} and srcAddr {src:#x} must be device memory of one device"),
        );
    }
    drop(tables);
    current::require()?;
    let mut bytes = [0u8; MEMCPY_DESC_SIZE];
    bytes[12..16].copy_from_slice(&len.to_ne_bytes());
    bytes[16..24].copy_from_slice(&(src as u64).to_ne_bytes());
    bytes[24..32].copy_from_slice(&(dst as u64).to_ne_bytes());
    // SAFETY: `bytes` is a local of the size copied; `desc` is translated.
    unsafe { copy::copy_bytes(desc, bytes.as_ptr() as usize, MEMCPY_DESC_SIZE) }?;
    sanitize_ranges::host(API, &[Range::write(desc, MEMCPY_DESC_SIZE)]);
    Ok(())
}

/// `aclrtMemcpyAsyncWithDesc` after the ACL layer (NULL `desc` and stream,
/// the kind's range): the stream handle, the kind check (done by the
/// caller, after the handle), `desc` device memory and 64-byte aligned
/// (107000), the context, the stream's device, one task.
pub(crate) fn memcpy_async_with_desc(
    desc: usize,
    stream: usize,
    kind_check: impl FnOnce() -> SoftResult,
) -> SoftResult {
    const API: &str = "aclrtMemcpyAsyncWithDesc";
    let mut streams = super::lock()?;
    let explicit = lookup_stream(&streams, stream)?;
    kind_check()?;
    let mut tables = Translator::default();
    device_memory(&mut tables, desc, "desc")?;
    if !desc.is_multiple_of(64) {
        return fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("desc {desc:#x} is not 64-byte aligned"),
        );
    }
    let device = current::require()?;
    let stream = target_stream(&mut streams, explicit, device)?;
    let slot = tables.resolve(desc, MEMCPY_DESC_SIZE, "desc")?;
    drop((tables, streams));
    let data = match read_desc(desc) {
        Ok((dst, src, len)) => data_ranges(dst, src, len),
        Err(_) => Vec::new(),
    };
    let mut ranges = vec![(Range::read(desc, MEMCPY_DESC_SIZE), true, &slot)];
    ranges.extend(data.iter().map(|(range, device, segments)| (*range, *device, segments)));
    sanitize::queued(stream.site(), API, &ranges);
    stream.submit(Task::new(API, Work::CopyDesc { desc }, Vec::new()));
    Ok(())
}

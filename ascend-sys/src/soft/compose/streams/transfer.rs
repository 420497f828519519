//! `aclrtMemcpyAsync`, `aclrtMemsetAsync`, `aclrtMemsetD32Async`,
//! `aclrtMemcpy2d` and `aclrtMemcpy2dAsync`, after the ACL layer's checks (done by the entry
//! points): the runtime's checks in the runtime's order, the kind
//! correction from the real location of each pointer, and the task.
//!
//! Locations: device memory (an `aclrtMalloc*` range, a VMM range, or the
//! device pointer of a host registration, which translation then refuses),
//! host memory the device can reach (from `aclrtMallocHost*`, or registered
//! with `aclrtHostRegister*`), and pageable host memory (anything else). As on hardware, an asynchronous copy that
//! involves pageable memory is turned into a synchronisation of the stream
//! followed by a synchronous copy, so the call returns after the copy.

use super::rows::{Rows, copy_rows};
use super::task::{Task, Work};
use super::{Stream, Streams, lookup_stream, target_stream};
use crate::soft::check::sanitize::{self, Range};
use crate::soft::compose::copy;
use crate::soft::compose::sanitize_ranges;
use crate::soft::compose::translate::Translator;
use crate::soft::core::segments::Side;
use crate::soft::core::soft_result::{SoftResult, fail};
use crate::soft::peer;
use crate::soft::started::current;
use crate::types::*;
use std::sync::Arc;

/// Where an address lives, as the runtime's location query sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Location {
    Device,
    /// Host memory the device can reach (pinned).
    Host,
    /// Host memory the device cannot reach.
    Pageable,
}

impl Location {
    pub(super) fn name(self) -> &'static str {
        match self {
            Location::Device => "device memory",
            Location::Host => "pinned host memory",
            Location::Pageable => "pageable host memory",
        }
    }
}

/// Where `address` lives, as the runtime's pointer-attribute query sees it.
pub(super) fn location(tables: &mut Translator, address: usize) -> SoftResult<Location> {
    Ok(match tables.side_of(address)? {
        Side::Device(_) => Location::Device,
        Side::PinnedHost => Location::Host,
        Side::Pageable => Location::Pageable,
    })
}

fn kind_name(kind: aclrtMemcpyKind) -> &'static str {
    match kind {
        ACL_MEMCPY_HOST_TO_HOST => "ACL_MEMCPY_HOST_TO_HOST",
        ACL_MEMCPY_HOST_TO_DEVICE => "ACL_MEMCPY_HOST_TO_DEVICE",
        ACL_MEMCPY_DEVICE_TO_HOST => "ACL_MEMCPY_DEVICE_TO_HOST",
        ACL_MEMCPY_DEVICE_TO_DEVICE => "ACL_MEMCPY_DEVICE_TO_DEVICE",
        ACL_MEMCPY_DEFAULT => "ACL_MEMCPY_DEFAULT",
        ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE => "ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE",
        _ => "an unknown kind",
    }
}

/// The runtime's kind correction: a pair of pinned/device locations forces
/// the matching kind whatever was passed; with pageable memory only some
/// kinds are accepted and `ACL_MEMCPY_DEFAULT` picks one.
/// `ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE` is not corrected: it needs a host
/// source and a device destination and then behaves as host-to-device.
fn correct_kind(kind: aclrtMemcpyKind, src: Location, dst: Location) -> SoftResult<aclrtMemcpyKind> {
    use Location::*;
    const H2H: aclrtMemcpyKind = ACL_MEMCPY_HOST_TO_HOST;
    const H2D: aclrtMemcpyKind = ACL_MEMCPY_HOST_TO_DEVICE;
    const D2H: aclrtMemcpyKind = ACL_MEMCPY_DEVICE_TO_HOST;
    const D2D: aclrtMemcpyKind = ACL_MEMCPY_DEVICE_TO_DEVICE;
    let refuse = || {
        fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!(
                "kind {} ({kind}) does not fit a copy from {} to {}",
                kind_name(kind),
                src.name(),
                dst.name()
            ),
        )
    };
    if kind == ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE {
        return if src != Device && dst == Device {
            Ok(H2D)
        } else {
            refuse()
        };
    }
    let (allowed, default): (&[aclrtMemcpyKind], aclrtMemcpyKind) = match (src, dst) {
        (Host, Device) => return Ok(H2D),
        (Device, Host) => return Ok(D2H),
        (Host, Host) => return Ok(H2H),
        (Device, Device) => return Ok(D2D),
        (Pageable, Device) => (&[H2D, D2D], H2D),
        (Device, Pageable) => (&[D2H, D2D], D2H),
        (Host, Pageable) => (&[H2H, H2D], H2H),
        (Pageable, Host) => (&[H2H, D2H], H2H),
        (Pageable, Pageable) => (&[H2H, H2D, D2H, D2D], H2H),
    };
    if kind == ACL_MEMCPY_DEFAULT {
        Ok(default)
    } else if allowed.contains(&kind) {
        Ok(kind)
    } else {
        refuse()
    }
}

/// Host ranges of a task on pinned memory (for `aclrtFreeHost`).
pub(super) fn pinned_ranges(sides: &[(Location, usize, usize)]) -> Vec<(usize, usize)> {
    sides
        .iter()
        .filter(|(place, _, _)| *place == Location::Host)
        .map(|&(_, address, length)| (address, address.saturating_add(length)))
        .collect()
}

/// The pageable path: synchronise the stream the call names (NULL: the
/// current device's default stream, if it exists), then copy at once.
fn synchronize_for_pageable(streams: &Streams, explicit: Option<Arc<Stream>>, device: i32) -> Option<Arc<Stream>> {
    explicit.or_else(|| streams.defaults.get(&device).map(|entry| Arc::clone(&entry.stream)))
}

/// `aclrtMemcpyAsync` after the ACL checks (count 0, NULL pointers, kind
/// outside 0–5), under the name of the call that asked for it (`api`:
/// `aclrtMemcpyAsyncWithCondition` too), for messages, the sanitizer and
/// the task.
///
/// # Safety
///
/// Host ranges must be valid for the copy until it has run (the C API's
/// contract).
pub(crate) unsafe fn memcpy_async(
    api: &'static str,
    dst: usize,
    dest_max: usize,
    src: usize,
    count: usize,
    kind: aclrtMemcpyKind,
    stream: usize,
) -> SoftResult {
    let mut streams = super::lock()?;
    let mut tables = Translator::default();
    let explicit = lookup_stream(&streams, stream)?;
    if count > dest_max {
        return fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("count {count} is larger than destMax {dest_max}"),
        );
    }
    let device = current::require()?;
    let (from, to) = (location(&mut tables, src)?, location(&mut tables, dst)?);
    let resolved = correct_kind(kind, from, to)?;
    if resolved == ACL_MEMCPY_HOST_TO_HOST {
        return fail(
            ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
            "asynchronous host-to-host copies are not supported with a device card (run mode ACL_HOST); use memcpy",
        );
    }
    if dst == src {
        return Ok(());
    }
    if from == Location::Pageable || to == Location::Pageable {
        let sync = synchronize_for_pageable(&streams, explicit, device);
        drop((tables, streams));
        if let Some(stream) = sync {
            stream.synchronize(None)?;
            sanitize::host_synchronized_stream(stream.site());
        }
        // SAFETY: forwarded contract.
        unsafe { copy::copy_bytes(dst, src, count) }?;
        sanitize_ranges::host(api, &[Range::write(dst, count), Range::read(src, count)]);
        return Ok(());
    }
    let stream = target_stream(&mut streams, explicit, device)?;
    let to_bytes = tables.resolve(dst, count, "dst")?;
    let from_bytes = tables.resolve(src, count, "src")?;
    peer::check_sides(&to_bytes, &from_bytes)?;
    drop((tables, streams));
    sanitize::queued(
        stream.site(),
        api,
        &[
            (Range::write(dst, count), to == Location::Device, &to_bytes),
            (Range::read(src, count), from == Location::Device, &from_bytes),
        ],
    );
    let host = pinned_ranges(&[(to, dst, count), (from, src, count)]);
    stream.submit(Task::new(api, Work::Copy { dst, src, count }, host));
    Ok(())
}

/// `aclrtMemsetAsync` after the ACL checks (count 0, NULL pointer). The value
/// is truncated to its low 8 bits, as the runtime does.
pub(crate) fn memset_async(address: usize, max_count: usize, value: i32, count: usize, stream: usize) -> SoftResult {
    let mut streams = super::lock()?;
    let mut tables = Translator::default();
    let explicit = lookup_stream(&streams, stream)?;
    if count > max_count {
        return fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("count {count} is larger than maxCount {max_count}"),
        );
    }
    let device = current::require()?;
    let stream = target_stream(&mut streams, explicit, device)?;
    let place = location(&mut tables, address)?;
    if place == Location::Pageable {
        return fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!(
                "devPtr {address:#x} is pageable host memory, which a stream task cannot reach \
                 (use device memory or memory from aclrtMallocHost)"
            ),
        );
    }
    let bytes = tables.resolve(address, count, "devPtr")?;
    drop((tables, streams));
    sanitize::queued(
        stream.site(),
        "aclrtMemsetAsync",
        &[(Range::write(address, count), place == Location::Device, &bytes)],
    );
    let host = pinned_ranges(&[(place, address, count)]);
    let work = Work::Fill {
        address,
        value: value as u8,
        count,
    };
    stream.submit(Task::new("aclrtMemsetAsync", work, host));
    Ok(())
}

/// `aclrtMemsetD32Async` after the ACL checks (NULL, `count` 0, alignment,
/// capacity, memory kind). As in the runtime, pinned host memory is set
/// during the call, without the stream; device memory gets a task on the
/// stream (NULL: the current device's default stream).
pub(crate) fn memset_d32_async(address: usize, value: u32, count: usize, stream: usize) -> SoftResult {
    let bytes = count.saturating_mul(4);
    let mut streams = super::lock()?;
    let mut tables = Translator::default();
    let explicit = lookup_stream(&streams, stream)?;
    let device = current::require()?;
    let place = location(&mut tables, address)?;
    if place != Location::Device {
        drop((tables, streams));
        // SAFETY: pinned host memory the software device owns (the ACL
        // checks refused anything else).
        unsafe { copy::fill_u32(address, value, count) }?;
        sanitize_ranges::host("aclrtMemsetD32Async", &[Range::write(address, bytes)]);
        return Ok(());
    }
    let stream = target_stream(&mut streams, explicit, device)?;
    let segments = tables.resolve(address, bytes, "ptr")?;
    drop((tables, streams));
    sanitize::queued(
        stream.site(),
        "aclrtMemsetD32Async",
        &[(Range::write(address, bytes), true, &segments)],
    );
    let work = Work::Fill32 { address, value, count };
    stream.submit(Task::new("aclrtMemsetD32Async", work, Vec::new()));
    Ok(())
}

/// The largest height and width a 2-D copy accepts.
const MAX_2D_HEIGHT: usize = 5 * 1024 * 1024;
const MAX_2D_WIDTH: usize = 5_000_000;

/// The runtime's checks shared by both 2-D copies.
fn check_2d(rows: &Rows) -> SoftResult {
    if rows.dpitch == 0 || rows.spitch == 0 {
        return fail(ACL_ERROR_RT_PARAM_INVALID, "dpitch and spitch must not be 0");
    }
    if rows.height > MAX_2D_HEIGHT {
        return fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("height {} is larger than {MAX_2D_HEIGHT}", rows.height),
        );
    }
    if rows.width > MAX_2D_WIDTH {
        return fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("width {} is larger than {MAX_2D_WIDTH}", rows.width),
        );
    }
    Ok(())
}

/// `aclrtMemcpy2d` after the ACL checks (width or height 0, NULL pointers,
/// width larger than a pitch, kind outside H2D/D2H/D2D/DEFAULT).
///
/// # Safety
///
/// Host spans must be valid for the copy (the caller's contract).
pub(crate) unsafe fn memcpy_2d(rows: Rows, kind: aclrtMemcpyKind) -> SoftResult {
    check_2d(&rows)?;
    if kind == ACL_MEMCPY_DEVICE_TO_DEVICE {
        return fail(
            ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
            "synchronous 2-D copies support only ACL_MEMCPY_HOST_TO_DEVICE, ACL_MEMCPY_DEVICE_TO_HOST and ACL_MEMCPY_DEFAULT",
        );
    }
    current::require()?;
    let (from, to) = {
        let mut tables = Translator::default();
        (location(&mut tables, rows.src)?, location(&mut tables, rows.dst)?)
    };
    match correct_kind(kind, from, to) {
        Ok(ACL_MEMCPY_HOST_TO_DEVICE | ACL_MEMCPY_DEVICE_TO_HOST) => {}
        _ => {
            return fail(
                ACL_ERROR_RT_PARAM_INVALID,
                format!(
                    "a synchronous 2-D copy from {} to {} with kind {} is not host-to-device or device-to-host",
                    from.name(),
                    to.name(),
                    kind_name(kind)
                ),
            );
        }
    }
    // SAFETY: forwarded contract.
    unsafe { copy_rows(rows) }?;
    sanitize_rows(None, "aclrtMemcpy2d", &rows);
    Ok(())
}

/// Hands a 2-D copy's rows to the sanitizer (`None`: a copy of the host).
fn sanitize_rows(site: Option<sanitize::Site>, api: &'static str, rows: &Rows) {
    let side = |address, pitch, kind| sanitize::Rows {
        address,
        pitch,
        width: rows.width,
        height: rows.height,
        kind,
    };
    sanitize_ranges::rows(
        site,
        api,
        side(rows.dst, rows.dpitch, sanitize::Kind::Write),
        side(rows.src, rows.spitch, sanitize::Kind::Read),
    );
}

/// `aclrtMemcpy2dAsync` after the ACL checks (as `aclrtMemcpy2d`).
///
/// # Safety
///
/// Host spans must be valid for the copy until it has run.
pub(crate) unsafe fn memcpy_2d_async(rows: Rows, kind: aclrtMemcpyKind, stream: usize) -> SoftResult {
    let mut streams = super::lock()?;
    let mut tables = Translator::default();
    let explicit = lookup_stream(&streams, stream)?;
    check_2d(&rows)?;
    let device = current::require()?;
    let (from, to) = (location(&mut tables, rows.src)?, location(&mut tables, rows.dst)?);
    match correct_kind(kind, from, to) {
        Ok(ACL_MEMCPY_HOST_TO_DEVICE | ACL_MEMCPY_DEVICE_TO_HOST | ACL_MEMCPY_DEVICE_TO_DEVICE) => {}
        _ => {
            return fail(
                ACL_ERROR_RT_PARAM_INVALID,
                format!(
                    "an asynchronous 2-D copy from {} to {} with kind {} is not host-to-device, device-to-host or device-to-device",
                    from.name(),
                    to.name(),
                    kind_name(kind)
                ),
            );
        }
    }
    if from == Location::Pageable || to == Location::Pageable {
        let sync = synchronize_for_pageable(&streams, explicit, device);
        drop((tables, streams));
        if let Some(stream) = sync {
            stream.synchronize(None)?;
            sanitize::host_synchronized_stream(stream.site());
        }
        // SAFETY: forwarded contract.
        unsafe { copy_rows(rows) }?;
        sanitize_rows(None, "aclrtMemcpy2dAsync", &rows);
        return Ok(());
    }
    let stream = target_stream(&mut streams, explicit, device)?;
    let (dst_span, src_span) = (rows.dst_span()?, rows.src_span()?);
    let to_bytes = tables.resolve(rows.dst, dst_span, "dst")?;
    let from_bytes = tables.resolve(rows.src, src_span, "src")?;
    peer::check_sides(&to_bytes, &from_bytes)?;
    drop((tables, streams));
    sanitize_rows(Some(stream.site()), "aclrtMemcpy2dAsync", &rows);
    let host = pinned_ranges(&[(to, rows.dst, dst_span), (from, rows.src, src_span)]);
    stream.submit(Task::new("aclrtMemcpy2dAsync", Work::Copy2d(rows), host));
    Ok(())
}

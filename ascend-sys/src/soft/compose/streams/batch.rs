//! `aclrtMemcpyBatch(V2)` and `aclrtMemcpyBatchAsync(V2)` after the ACL
//! layer's checks (done by the entry points): the runtime's checks in its
//! order (`hicann/runtime` `src/runtime/api/impl/api_error.cc`
//! `ApiErrorDecorator::MemcpyBatch(Async)`, then `api_impl.cc`
//! `ApiImpl::MemcpyBatch`, `CheckMemCpyAttr`,
//! `ValidateMemCpyParamsAndAttributes`), and the copies.
//!
//! A batch is all or nothing: every entry is checked (and translated) before
//! a byte moves, so a refused batch leaves every destination as it was. The
//! failing index is the first entry that fails a check; a failure that is
//! about no entry leaves it at `usize::MAX` (`SIZE_MAX`).

use super::task::{Task, Work};
use super::transfer::{Location, location, pinned_ranges};
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

/// The most entries a synchronous batch takes (the driver's
/// `DEVMM_MEMCPY_BATCH_MAX_COUNT`, `pkg_inc/driver/ascend_hal_define.h`).
pub(crate) const MAX_SYNC_BATCH: usize = 4096;

/// One copy of a batch, as the caller's arrays give it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct BatchEntry {
    pub(crate) dst: usize,
    pub(crate) dest_max: usize,
    pub(crate) src: usize,
    pub(crate) size: usize,
}

/// A batch after the ACL layer: its entries, and its attributes with the
/// index each starts at.
pub(crate) struct Batch {
    pub(crate) entries: Vec<BatchEntry>,
    pub(crate) attrs: Vec<aclrtMemcpyBatchAttr>,
    pub(crate) starts: Vec<usize>,
    /// `numAttrs` as the caller gave it (`attrs` and `starts` are empty when
    /// it is larger than the entry count: refused before they are read).
    pub(crate) num_attrs: usize,
}

/// `ApiErrorDecorator::MemcpyBatch(Async)`'s checks of the attribute
/// indexes (the NULL and count checks were the ACL layer's): `numAttrs` not
/// 0 and at most the count, (synchronous only) the count at most
/// [`MAX_SYNC_BATCH`], `attrsIndexes[0]` 0, each later index greater than the
/// one before and less than the count. All `ACL_ERROR_RT_PARAM_INVALID`.
fn check_indexes(batch: &Batch, sync: bool) -> SoftResult {
    let count = batch.entries.len();
    let attrs = batch.num_attrs;
    if attrs == 0 {
        return fail(ACL_ERROR_RT_PARAM_INVALID, "numAttrs must be greater than 0");
    }
    if attrs > count {
        return fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("numAttrs {attrs} must be less than or equal to numBatches {count}"),
        );
    }
    if sync && count > MAX_SYNC_BATCH {
        return fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("numBatches {count} must be less than or equal to {MAX_SYNC_BATCH}"),
        );
    }
    if batch.starts[0] != 0 {
        return fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("attrsIndexes[0] is {}, must be 0", batch.starts[0]),
        );
    }
    for i in 1..attrs {
        let (before, here) = (batch.starts[i - 1], batch.starts[i]);
        if here <= before {
            return fail(
                ACL_ERROR_RT_PARAM_INVALID,
                format!(
                    "attrsIndexes[{i}] ({here}) must be greater than attrsIndexes[{}] ({before})",
                    i - 1
                ),
            );
        }
        if here >= count {
            return fail(
                ACL_ERROR_RT_PARAM_INVALID,
                format!("attrsIndexes[{i}] ({here}) must be less than numBatches {count}"),
            );
        }
    }
    Ok(())
}

/// The attribute entry `index` uses: `attrs[n]` applies from
/// `attrsIndexes[n]` up to the next start.
fn attr_of(batch: &Batch, index: usize) -> &aclrtMemcpyBatchAttr {
    let n = batch.starts.partition_point(|&start| start <= index).saturating_sub(1);
    &batch.attrs[n]
}

/// What the runtime's pointer-attribute query says of `address`, with
/// UNREGISTERED (pageable) folded into HOST as `CheckMemCpyAttr` does: the
/// location type and, for device memory, the device.
fn real_location(tables: &mut Translator, address: usize) -> SoftResult<(aclrtMemLocationType, u32)> {
    Ok(match tables.side_of(address)? {
        Side::Device(Some(device)) => (ACL_MEM_LOCATION_TYPE_DEVICE, device as u32),
        Side::Device(None) | Side::PinnedHost | Side::Pageable => (ACL_MEM_LOCATION_TYPE_HOST, 0),
    })
}

/// `CheckMemCpyAttr` for one side: the real location must be the one the
/// attribute gives (HOST_NUMA counts as HOST), and for device memory on the
/// device it names.
fn check_side(
    tables: &mut Translator,
    address: usize,
    expected: &aclrtMemLocation,
    role: &str,
) -> SoftResult<aclrtMemLocationType> {
    let (kind, id) = real_location(tables, address)?;
    let wanted = if expected.type_ == ACL_MEM_LOCATION_TYPE_HOST_NUMA {
        ACL_MEM_LOCATION_TYPE_HOST
    } else {
        expected.type_
    };
    if kind != wanted || (kind == ACL_MEM_LOCATION_TYPE_DEVICE && id != expected.id) {
        return fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!(
                "{role} {address:#x}: the attribute says location type {} (id {}), the memory is type {kind} (id {id})",
                expected.type_, expected.id
            ),
        );
    }
    Ok(kind)
}

/// The checks of one entry: for the asynchronous call first the size (not 0,
/// at most `destMax`) and the pointers (not NULL); then both sides against
/// the attribute, and the direction (host to device or device to host only).
/// The synchronous call, which the runtime does not check for NULL here,
/// refuses a NULL pointer with the same code (the software device's choice).
fn check_entry(tables: &mut Translator, batch: &Batch, index: usize, sync: bool) -> SoftResult {
    let entry = batch.entries[index];
    if !sync && (entry.size > entry.dest_max || entry.size == 0) {
        return fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!(
                "entry {index}: size {} must be greater than 0 and at most destMax {}",
                entry.size, entry.dest_max
            ),
        );
    }
    if entry.src == 0 {
        return fail(ACL_ERROR_RT_PARAM_INVALID, format!("entry {index}: src is NULL"));
    }
    if entry.dst == 0 {
        return fail(ACL_ERROR_RT_PARAM_INVALID, format!("entry {index}: dst is NULL"));
    }
    let attr = attr_of(batch, index);
    let to = check_side(tables, entry.dst, &attr.dstLoc, "dst")?;
    let from = check_side(tables, entry.src, &attr.srcLoc, "src")?;
    if to == from {
        let name = if to == ACL_MEM_LOCATION_TYPE_DEVICE {
            "device"
        } else {
            "host"
        };
        return fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("entry {index}: {name} to {name}: only host-to-device and device-to-host copies are supported"),
        );
    }
    Ok(())
}

/// Checks every entry and translates its ranges; `failed` gets the index
/// of the first entry that fails.
fn check_entries(
    tables: &mut Translator,
    batch: &Batch,
    sync: bool,
    failed: &mut Option<usize>,
) -> SoftResult<Vec<(Segments, Segments)>> {
    let mut translated = Vec::with_capacity(batch.entries.len());
    for (index, entry) in batch.entries.iter().enumerate() {
        let checked = check_entry(tables, batch, index, sync).and_then(|()| {
            let to = tables.resolve(entry.dst, entry.size, "dst")?;
            let from = tables.resolve(entry.src, entry.size, "src")?;
            peer::check_sides(&to, &from)?;
            Ok((to, from))
        });
        match checked {
            Ok(pair) => translated.push(pair),
            Err(error) => {
                *failed = Some(index);
                return Err(error);
            }
        }
    }
    Ok(translated)
}

/// The copies of a checked batch, during the call.
///
/// # Safety
///
/// Host ranges must be valid for the copies (the caller's contract).
unsafe fn copy_now(api: &'static str, batch: &Batch) -> SoftResult {
    for entry in &batch.entries {
        // SAFETY: forwarded contract.
        unsafe { copy::copy_bytes(entry.dst, entry.src, entry.size) }?;
    }
    let ranges: Vec<Range> = batch
        .entries
        .iter()
        .flat_map(|entry| [Range::write(entry.dst, entry.size), Range::read(entry.src, entry.size)])
        .collect();
    sanitize_ranges::host(api, &ranges);
    Ok(())
}

/// `ApiImpl::MemcpyBatch`: every entry checked, then the copies.
///
/// # Safety
///
/// As [`copy_now`].
unsafe fn run_sync(api: &'static str, batch: &Batch, failed: &mut Option<usize>) -> SoftResult {
    let mut tables = Translator::default();
    check_entries(&mut tables, batch, true, failed)?;
    drop(tables);
    // SAFETY: forwarded contract.
    unsafe { copy_now(api, batch) }
}

/// `aclrtMemcpyBatch(V2)` after the ACL layer. `failed` is `None` while no
/// failing index is set (the ACL layer's failures leave it alone), then
/// `Some(usize::MAX)`, then the failing entry's index.
///
/// # Safety
///
/// Host ranges must be valid for the copies (the caller's contract).
pub(crate) unsafe fn memcpy_batch(api: &'static str, batch: &Batch, failed: &mut Option<usize>) -> SoftResult {
    *failed = Some(usize::MAX);
    check_indexes(batch, true)?;
    current::require()?;
    // SAFETY: forwarded contract.
    unsafe { run_sync(api, batch, failed) }
}

/// `aclrtMemcpyBatchAsync(V2)` after the ACL layer: the stream handle
/// first, then the index checks, the stream's device (NULL: the current
/// device's default stream), every entry; with
/// pageable memory in any entry the stream is synchronised and the batch
/// copied during the call, otherwise one task on the stream does the copies
/// in order.
///
/// # Safety
///
/// Host ranges must be valid for the copies until they have run (the C
/// API's contract).
pub(crate) unsafe fn memcpy_batch_async(
    api: &'static str,
    batch: &Batch,
    stream: usize,
    failed: &mut Option<usize>,
) -> SoftResult {
    let mut streams = super::lock()?;
    let explicit = lookup_stream(&streams, stream)?;
    *failed = Some(usize::MAX);
    check_indexes(batch, false)?;
    let device = current::require()?;
    let stream = target_stream(&mut streams, explicit, device)?;
    let mut tables = Translator::default();
    let translated = check_entries(&mut tables, batch, false, failed)?;
    let mut sides = Vec::with_capacity(batch.entries.len() * 2);
    for entry in &batch.entries {
        sides.push((location(&mut tables, entry.dst)?, entry.dst, entry.size));
        sides.push((location(&mut tables, entry.src)?, entry.src, entry.size));
    }
    if sides.iter().any(|side| side.0 == Location::Pageable) {
        drop((tables, streams));
        stream.synchronize(None)?;
        sanitize::host_synchronized_stream(stream.site());
        // SAFETY: forwarded contract; the entries were checked above.
        return unsafe { copy_now(api, batch) };
    }
    drop((tables, streams));
    let mut ranges = Vec::with_capacity(sides.len());
    for ((entry, (to, from)), pair) in batch.entries.iter().zip(&translated).zip(sides.chunks(2)) {
        ranges.push((Range::write(entry.dst, entry.size), pair[0].0 == Location::Device, to));
        ranges.push((Range::read(entry.src, entry.size), pair[1].0 == Location::Device, from));
    }
    sanitize::queued(stream.site(), api, &ranges);
    let pieces = batch
        .entries
        .iter()
        .map(|entry| (entry.dst, entry.src, entry.size))
        .collect();
    stream.submit(Task::new(api, Work::CopyBatch(pieces), pinned_ranges(&sides)));
    Ok(())
}

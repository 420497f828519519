//! `aclrtCmoAsync`, `aclrtCmoAsyncWithBarrier`, `aclrtCmoAsyncWithDesc` and
//! `aclrtCmoWaitBarrier` after the ACL layer's checks (done by the entry
//! points): the stream and the range, then a task that moves nothing.
//!
//! A cache maintenance operation changes no byte the software device
//! holds (it has no cache), so its task only takes its place on the stream:
//! later work on the stream runs after it and a synchronisation waits for
//! it. For the stream-hazard sanitizer it is an access of its range: an
//! invalidation (`ACL_RT_CMO_TYPE_INVALID`, which may drop data not yet
//! written back) a write, the other operations a read.
//!
//! A barrier wait (`aclrtCmoWaitBarrier`) makes the stream wait for the
//! invalidations queued with its barrier ids; on one in-order stream those
//! were queued before it, so its task too only takes its place.

use super::task::{Task, Work};
use super::{lookup_stream, target_stream};
use crate::soft::check::sanitize::{self, Range};
use crate::soft::compose::copy;
use crate::soft::compose::sanitize_ranges;
use crate::soft::compose::translate::Translator;
use crate::soft::core::segments::{Segments, Side};
use crate::soft::core::soft_result::{SoftResult, fail};
use crate::soft::started::current;
use crate::types::*;

/// Queues the operation `op` (an `aclrtCmoType`, already checked) on
/// `len` bytes of device memory at `address`. `api` names the call.
/// The range must be device memory, inside one allocation or mapping
/// (`ACL_ERROR_RT_PARAM_INVALID` otherwise; the driver's decision on
/// hardware, see `docs/runtime-choices.md`).
pub(crate) fn cmo_async(api: &'static str, address: usize, len: usize, op: u32, stream: usize) -> SoftResult {
    let mut streams = super::lock()?;
    let explicit = lookup_stream(&streams, stream)?;
    let device = current::require()?;
    let mut tables = Translator::default();
    let segments = device_range(&mut tables, address, len, "src")?;
    let stream = target_stream(&mut streams, explicit, device)?;
    drop((tables, streams));
    let range = if op == ACL_RT_CMO_TYPE_INVALID {
        Range::write(address, len)
    } else {
        Range::read(address, len)
    };
    sanitize::queued(stream.site(), api, &[(range, true, &segments)]);
    stream.submit(Task::new(api, Work::Cache { address, len, op }, Vec::new()));
    Ok(())
}

/// `[address, address + len)` translated, when it is device memory inside
/// one allocation or mapping (`ACL_ERROR_RT_PARAM_INVALID` otherwise).
fn device_range(tables: &mut Translator, address: usize, len: usize, role: &str) -> SoftResult<Segments> {
    if !matches!(tables.side_of(address)?, Side::Device(Some(_))) {
        return fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("{role} {address:#x} is not device memory"),
        );
    }
    tables.resolve(address, len, role)
}

/// The size of a descriptor (`aclrtCmoGetDescSize`): the runtime's
/// `rtCmoAddrInfo` of the 910B family, 32 bytes.
pub(crate) const DESC_SIZE: usize = 32;
/// Where `rtCmoAddrInfo` keeps the length (`len_inner`, 32 bits) and the
/// source address (`src`, 64 bits).
const DESC_LEN_AT: usize = 12;
const DESC_SRC_AT: usize = 16;

/// `aclrtCmoSetDesc` after the runtime's NULL and size checks: writes the
/// descriptor of `src`, `len` into the device memory at `desc`, as the
/// runtime does with a synchronous host-to-device copy.
pub(crate) fn set_desc(desc: usize, src: usize, len: usize) -> SoftResult {
    current::require()?;
    let mut bytes = [0u8; DESC_SIZE];
    // The runtime stores the length in 32 bits.
    bytes[DESC_LEN_AT..DESC_LEN_AT + 4].copy_from_slice(&(len as u32).to_ne_bytes());
    bytes[DESC_SRC_AT..DESC_SRC_AT + 8].copy_from_slice(&(src as u64).to_ne_bytes());
    device_range(&mut Translator::default(), desc, DESC_SIZE, "cmoDesc")?;
    // SAFETY: `desc` was checked to be device memory holding DESC_SIZE
    // bytes; the source is this local array.
    unsafe { copy::copy_bytes(desc, bytes.as_ptr() as usize, DESC_SIZE) }?;
    sanitize_ranges::host("aclrtCmoSetDesc", &[Range::write(desc, DESC_SIZE)]);
    Ok(())
}

/// `aclrtCmoAsyncWithDesc` after the `reserve` check, in the runtime's
/// order: the stream, `cmoDesc` not NULL, the operation in range (all
/// `ACL_ERROR_RT_PARAM_INVALID`), then the range the descriptor holds,
/// read when the call is made (a descriptor is written synchronously by
/// `aclrtCmoSetDesc`).
pub(crate) fn desc_async(desc: usize, op: u32, stream: usize) -> SoftResult {
    {
        let streams = super::lock()?;
        lookup_stream(&streams, stream)?;
    }
    if desc == 0 {
        return fail(ACL_ERROR_RT_PARAM_INVALID, "cmoDesc is NULL");
    }
    if op > ACL_RT_CMO_TYPE_FLUSH {
        return fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("cmoType {op} is not an aclrtCmoType"),
        );
    }
    current::require()?;
    device_range(&mut Translator::default(), desc, DESC_SIZE, "cmoDesc")?;
    let mut bytes = [0u8; DESC_SIZE];
    // SAFETY: `desc` holds DESC_SIZE bytes of device memory; the
    // destination is this local array.
    unsafe { copy::copy_bytes(bytes.as_mut_ptr() as usize, desc, DESC_SIZE) }?;
    sanitize_ranges::host("aclrtCmoAsyncWithDesc", &[Range::read(desc, DESC_SIZE)]);
    let mut len = [0u8; 4];
    len.copy_from_slice(&bytes[DESC_LEN_AT..DESC_LEN_AT + 4]);
    let mut src = [0u8; 8];
    src.copy_from_slice(&bytes[DESC_SRC_AT..DESC_SRC_AT + 8]);
    let (src, len) = (u64::from_ne_bytes(src) as usize, u32::from_ne_bytes(len) as usize);
    if src == 0 || len == 0 {
        return fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("cmoDesc {desc:#x} holds no range (never set by aclrtCmoSetDesc?)"),
        );
    }
    cmo_async("aclrtCmoAsyncWithDesc", src, len, op, stream)
}

/// Queues a barrier wait for `count` barriers on `stream`.
pub(crate) fn wait_barrier(count: usize, stream: usize) -> SoftResult {
    let mut streams = super::lock()?;
    let explicit = lookup_stream(&streams, stream)?;
    let device = current::require()?;
    let stream = target_stream(&mut streams, explicit, device)?;
    drop(streams);
    stream.submit(Task::new("aclrtCmoWaitBarrier", Work::Barrier { count }, Vec::new()));
    Ok(())
}

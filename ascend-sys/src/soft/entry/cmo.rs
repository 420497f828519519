//! Entry points of 3.12 Cache maintenance and memory checks.
//!
//! The checks and codes are those of `hicann/runtime`: the ACL layer in
//! `src/acl/aclrt_impl/memory.cpp`, `kernel.cpp` (`aclrtCmoWaitBarrier`),
//! `event.cpp` (the UCE calls) and `device.cpp` (`aclrtDeviceL2CacheFlush`),
//! then the runtime layer in `src/runtime/api/api_c_standard_soc.cc`,
//! `api_c_memory.cc` and `impl/api_error.cc`. The software device has no
//! cache and no uncorrectable memory errors: the cache calls validate and
//! order, and move nothing.
#![allow(non_snake_case)]

use super::*;
use crate::soft::check::sanitize::Range;
use crate::soft::compose::sanitize_ranges;
use crate::soft::compose::streams;
use crate::soft::compose::translate::Translator;
use crate::soft::core::segments::Side;

/// The runtime's check of an `aclrtCmoType` in `rtCmoAsync`: an operation
/// it does not know is `ACL_ERROR_RT_FEATURE_NOT_SUPPORT`.
fn supported_op(cmoType: aclrtCmoType) -> SoftResult {
    if cmoType > ACL_RT_CMO_TYPE_FLUSH {
        return fail(
            ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
            format!("cmoType {cmoType} is not supported (prefetch, writeback, invalid or flush)"),
        );
    }
    Ok(())
}

pub(crate) unsafe fn aclrtCmoAsync(
    src: *mut c_void,
    size: usize,
    cmoType: aclrtCmoType,
    stream: aclrtStream,
) -> aclError {
    let outcome = non_null(src, "src")
        .and_then(|()| positive(size, "size"))
        .and_then(|()| supported_op(cmoType))
        .and_then(|()| streams::cmo_async("aclrtCmoAsync", src as usize, size, cmoType, stream as usize));
    finish("aclrtCmoAsync", outcome)
}

/// The runtime's checks of `rtsCmoAsyncWithBarrier` after the ACL layer's
/// NULL check: `size` not 0, then the barrier id by operation (an
/// invalidation needs one, the others must have none), all
/// `ACL_ERROR_RT_PARAM_INVALID`; an unknown operation is
/// `ACL_ERROR_RT_FEATURE_NOT_SUPPORT`.
fn check_barrier_op(size: usize, cmoType: aclrtCmoType, barrierId: u32) -> SoftResult {
    if size == 0 {
        return fail(ACL_ERROR_RT_PARAM_INVALID, "size must be greater than 0");
    }
    match cmoType {
        ACL_RT_CMO_TYPE_INVALID if barrierId == 0 => fail(
            ACL_ERROR_RT_PARAM_INVALID,
            "barrierId must not be 0 for ACL_RT_CMO_TYPE_INVALID",
        ),
        ACL_RT_CMO_TYPE_INVALID => Ok(()),
        ACL_RT_CMO_TYPE_PREFETCH | ACL_RT_CMO_TYPE_WRITEBACK | ACL_RT_CMO_TYPE_FLUSH if barrierId != 0 => fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("barrierId must be 0 for cmoType {cmoType} (it is {barrierId})"),
        ),
        ACL_RT_CMO_TYPE_PREFETCH | ACL_RT_CMO_TYPE_WRITEBACK | ACL_RT_CMO_TYPE_FLUSH => Ok(()),
        _ => fail(
            ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
            format!("cmoType {cmoType} is not supported (prefetch, writeback, invalid or flush)"),
        ),
    }
}

pub(crate) unsafe fn aclrtCmoAsyncWithBarrier(
    src: *mut c_void,
    size: usize,
    cmoType: aclrtCmoType,
    barrierId: u32,
    stream: aclrtStream,
) -> aclError {
    let outcome = non_null(src, "src")
        .and_then(|()| check_barrier_op(size, cmoType, barrierId))
        .and_then(|()| streams::cmo_async("aclrtCmoAsyncWithBarrier", src as usize, size, cmoType, stream as usize));
    finish("aclrtCmoAsyncWithBarrier", outcome)
}

/// `aclrtCmoWaitBarrier`'s checks: `taskInfo` not NULL and `barrierNum` in
/// 1..=6 (ACL layer, `ACL_ERROR_INVALID_PARAM`), then each barrier an
/// invalidation with a nonzero id (runtime, `ACL_ERROR_RT_PARAM_INVALID`).
/// `flag` is documented as reserved but checked by neither layer.
///
/// # Safety
///
/// `taskInfo`, when not NULL, must be valid for reads.
unsafe fn check_barrier_task(taskInfo: *const aclrtBarrierTaskInfo) -> SoftResult<usize> {
    non_null(taskInfo, "taskInfo")?;
    // SAFETY: checked non-NULL; valid by the call's contract.
    let info = unsafe { &*taskInfo };
    let count = info.barrierNum;
    if count == 0 || count > ACL_RT_CMO_MAX_BARRIER_NUM as usize {
        return fail(
            ACL_ERROR_INVALID_PARAM,
            format!("taskInfo->barrierNum {count} must be in (0, {ACL_RT_CMO_MAX_BARRIER_NUM}]"),
        );
    }
    for (index, barrier) in info.cmoInfo[..count].iter().enumerate() {
        if barrier.cmoType != ACL_RT_CMO_TYPE_INVALID {
            return fail(
                ACL_ERROR_RT_PARAM_INVALID,
                format!(
                    "taskInfo->cmoInfo[{index}].cmoType {} must be ACL_RT_CMO_TYPE_INVALID",
                    barrier.cmoType
                ),
            );
        }
        if barrier.barrierId == 0 {
            return fail(
                ACL_ERROR_RT_PARAM_INVALID,
                format!("taskInfo->cmoInfo[{index}].barrierId must not be 0"),
            );
        }
    }
    Ok(count)
}

pub(crate) unsafe fn aclrtCmoWaitBarrier(
    taskInfo: *mut aclrtBarrierTaskInfo,
    stream: aclrtStream,
    flag: u32,
) -> aclError {
    let _ = flag;
    // SAFETY: forwarded contract.
    let outcome =
        unsafe { check_barrier_task(taskInfo) }.and_then(|count| streams::wait_barrier(count, stream as usize));
    finish("aclrtCmoWaitBarrier", outcome)
}

pub(crate) unsafe fn aclrtCmoGetDescSize(size: *mut usize) -> aclError {
    let outcome = if size.is_null() {
        fail(ACL_ERROR_RT_PARAM_INVALID, "size is NULL")
    } else {
        // SAFETY: checked non-NULL; valid by the call's contract.
        unsafe { put(size, streams::CMO_DESC_SIZE) };
        Ok(())
    };
    finish("aclrtCmoGetDescSize", outcome)
}

pub(crate) unsafe fn aclrtCmoSetDesc(cmoDesc: *mut c_void, src: *mut c_void, size: usize) -> aclError {
    let rt_non_null = |pointer: *mut c_void, name: &str| {
        if pointer.is_null() {
            fail(ACL_ERROR_RT_PARAM_INVALID, format!("{name} is NULL"))
        } else {
            Ok(())
        }
    };
    let outcome = rt_non_null(cmoDesc, "cmoDesc")
        .and_then(|()| rt_non_null(src, "src"))
        .and_then(|()| {
            if size == 0 {
                fail(ACL_ERROR_RT_PARAM_INVALID, "size must be greater than 0")
            } else {
                Ok(())
            }
        })
        .and_then(|()| streams::cmo_set_desc(cmoDesc as usize, src as usize, size));
    finish("aclrtCmoSetDesc", outcome)
}

pub(crate) unsafe fn aclrtCmoAsyncWithDesc(
    cmoDesc: *mut c_void,
    cmoType: aclrtCmoType,
    stream: aclrtStream,
    reserve: *const c_void,
) -> aclError {
    let outcome = if reserve.is_null() {
        streams::cmo_desc_async(cmoDesc as usize, cmoType, stream as usize)
    } else {
        fail(ACL_ERROR_RT_PARAM_INVALID, "reserve must be NULL")
    };
    finish("aclrtCmoAsyncWithDesc", outcome)
}

/// Fails with `ACL_ERROR_INVALID_PARAM` when `value` is 0.
fn positive(value: usize, name: &str) -> SoftResult {
    if value == 0 {
        fail(ACL_ERROR_INVALID_PARAM, format!("{name} must be positive"))
    } else {
        Ok(())
    }
}

/// `aclrtMemFlush` and `aclrtMemInvalidate` after the ACL layer's checks
/// (`devPtr` not NULL, `size` not 0): the range must be device memory or
/// pinned host memory, inside its allocation (`ACL_ERROR_RT_PARAM_INVALID`
/// otherwise; the driver decides on hardware). Nothing moves, but the
/// sanitizer sees a synchronous access of the host, as `aclrtCmoAsync`
/// one of its stream: an invalidation may drop data not yet written back
/// (a write), a flush reads the range.
fn cache_range(api: &'static str, devPtr: *mut c_void, size: usize, access: fn(usize, usize) -> Range) -> SoftResult {
    non_null(devPtr, "devPtr")?;
    positive(size, "size")?;
    current::require()?;
    let address = devPtr as usize;
    let mut tables = Translator::default();
    if tables.side_of(address)? == Side::Pageable {
        return fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("devPtr {address:#x} is neither device memory nor pinned host memory"),
        );
    }
    tables.resolve(address, size, "devPtr")?;
    drop(tables);
    sanitize_ranges::host(api, &[access(address, size)]);
    Ok(())
}

pub(crate) unsafe fn aclrtMemFlush(devPtr: *mut c_void, size: usize) -> aclError {
    finish("aclrtMemFlush", cache_range("aclrtMemFlush", devPtr, size, Range::read))
}

pub(crate) unsafe fn aclrtMemInvalidate(devPtr: *mut c_void, size: usize) -> aclError {
    finish(
        "aclrtMemInvalidate",
        cache_range("aclrtMemInvalidate", devPtr, size, Range::write),
    )
}

pub(crate) unsafe fn aclrtDeviceL2CacheFlush(rsv: *mut c_void) -> aclError {
    let outcome = if rsv.is_null() {
        current::require().map(drop)
    } else {
        fail(ACL_ERROR_INVALID_PARAM, "rsv must be NULL")
    };
    finish("aclrtDeviceL2CacheFlush", outcome)
}

/// The memory types the runtime's `rtsCheckMemType` accepts:
/// `RT_MEM_MASK_DEV_TYPE` (0x2), `RT_MEM_MASK_DVPP_TYPE` (0x8) and
/// `RT_MEM_MASK_RSVD_TYPE` (0x20, not the header's `ACL_RT_MEM_TYPE_RSVD`
/// 0x10, which it refuses).
const CHECKED_TYPES: u32 = 0x2 | 0x8 | 0x20;
const RT_MEM_MASK_RSVD_TYPE: u32 = 0x20;

/// Whether `address` is memory of one of the types in `memType`: device
/// memory (`ACL_RT_MEM_TYPE_DEV`) is any address with a device
/// (allocations, mapped VMM ranges, imports, registered device pointers);
/// reserved memory (`RT_MEM_MASK_RSVD_TYPE`) an address inside an
/// `aclrtReserveMemAddress` range; the software device has no DVPP memory.
fn has_type(tables: &mut Translator, address: usize, memType: u32) -> SoftResult<bool> {
    if memType & ACL_RT_MEM_TYPE_DEV != 0 && matches!(tables.side_of(address)?, Side::Device(Some(_))) {
        return Ok(true);
    }
    if memType & RT_MEM_MASK_RSVD_TYPE != 0 && tables.vmm()?.reservation_of(address).is_some() {
        return Ok(true);
    }
    Ok(false)
}

/// # Safety
///
/// `addrList` must hold `size` addresses and `checkResult` be writable,
/// when not NULL.
unsafe fn check_mem_type(
    addrList: *mut *mut c_void,
    size: u32,
    memType: u32,
    checkResult: *mut u32,
    reserve: u32,
) -> SoftResult {
    non_null(addrList, "addrList")?;
    non_null(checkResult, "checkResult")?;
    // SAFETY: checked non-NULL; valid by the call's contract. The runtime
    // clears the result before its own checks.
    unsafe { put(checkResult, 0) };
    if reserve != 0 {
        return fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("reserve must be 0 (it is {reserve})"),
        );
    }
    if size == 0 {
        return fail(ACL_ERROR_RT_PARAM_INVALID, "size must be greater than 0");
    }
    if memType & !CHECKED_TYPES != 0 {
        return fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("memType {memType:#x} is not an OR of 0x2 (device), 0x20 (reserved) and 0x8 (DVPP)"),
        );
    }
    current::require()?;
    let mut tables = Translator::default();
    let mut all = true;
    for index in 0..size as usize {
        // SAFETY: `index < size`: inside the caller's list.
        let address = unsafe { addrList.add(index).read() } as usize;
        all &= has_type(&mut tables, address, memType)?;
    }
    // SAFETY: as above.
    unsafe { put(checkResult, u32::from(all)) };
    Ok(())
}

pub(crate) unsafe fn aclrtCheckMemType(
    addrList: *mut *mut c_void,
    size: u32,
    memType: u32,
    checkResult: *mut u32,
    reserve: u32,
) -> aclError {
    // SAFETY: forwarded contract.
    let outcome = unsafe { check_mem_type(addrList, size, memType, checkResult, reserve) };
    finish("aclrtCheckMemType", outcome)
}

/// `aclrtMemP2PMap`: the ACL layer's checks (`devPtr` not NULL, `size` not
/// 0, `flags` 0: `ACL_ERROR_INVALID_PARAM`), `dstDevId` a device
/// (`ACL_ERROR_RT_INVALID_DEVICEID`), then what the driver decides on
/// hardware: the range device memory inside its allocation, and, when it
/// is another device's, peer access from `dstDevId` to it enabled
/// (`ACL_ERROR_RT_PARAM_INVALID` otherwise). Nothing else changes.
fn p2p_map(devPtr: *mut c_void, size: usize, dstDevId: i32, flags: u64) -> SoftResult {
    non_null(devPtr, "devPtr")?;
    positive(size, "size")?;
    if flags != 0 {
        return fail(ACL_ERROR_INVALID_PARAM, format!("flags must be 0 (it is {flags:#x})"));
    }
    crate::soft::started::core()?.device(dstDevId)?;
    let address = devPtr as usize;
    let mut tables = Translator::default();
    let Side::Device(Some(owner)) = tables.side_of(address)? else {
        return fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("devPtr {address:#x} is not device memory"),
        );
    };
    tables.resolve(address, size, "devPtr")?;
    drop(tables);
    if owner != dstDevId && !crate::soft::peer::is_enabled(dstDevId, owner) {
        return fail(
            ACL_ERROR_RT_PARAM_INVALID,
            format!("peer access from device {dstDevId} to device {owner} is not enabled"),
        );
    }
    Ok(())
}

pub(crate) unsafe fn aclrtMemP2PMap(devPtr: *mut c_void, size: usize, dstDevId: i32, flags: u64) -> aclError {
    finish("aclrtMemP2PMap", p2p_map(devPtr, size, dstDevId, flags))
}

pub(crate) unsafe fn aclrtGetMemUceInfo(
    deviceId: i32,
    memUceInfoArray: *mut aclrtMemUceInfo,
    arraySize: usize,
    retSize: *mut usize,
) -> aclError {
    let _ = arraySize;
    let outcome = non_null(memUceInfoArray, "memUceInfoArray")
        .and_then(|()| non_null(retSize, "retSize"))
        .and_then(|()| crate::soft::started::core()?.device(deviceId).map(drop))
        .map(|()| {
            // No uncorrectable errors: nothing to report (any arraySize,
            // 0 included, holds none).
            // SAFETY: checked non-NULL; valid by the call's contract.
            unsafe { put(retSize, 0) }
        });
    finish("aclrtGetMemUceInfo", outcome)
}

/// `aclrtMemUceRepair`'s checks (ACL layer, `ACL_ERROR_INVALID_PARAM`):
/// the array not NULL, `arraySize` at most 128, and the reserved field of
/// each entry zero — the runtime compares its first `UCE_INFO_RESERVED_SIZE`
/// (14) bytes, not words, so only those are checked. The layer then
/// succeeds without asking the driver.
///
/// # Safety
///
/// `memUceInfoArray`, when not NULL, must hold `arraySize` entries.
unsafe fn uce_repair(memUceInfoArray: *const aclrtMemUceInfo, arraySize: usize) -> SoftResult {
    non_null(memUceInfoArray, "memUceInfoArray")?;
    if arraySize > MAX_MEM_UCE_INFO_ARRAY_SIZE as usize {
        return fail(
            ACL_ERROR_INVALID_PARAM,
            format!("arraySize {arraySize} must be less than or equal to {MAX_MEM_UCE_INFO_ARRAY_SIZE}"),
        );
    }
    for index in 0..arraySize {
        // SAFETY: `index < arraySize`: inside the caller's array.
        let entry = unsafe { &*memUceInfoArray.add(index) };
        let reserved = entry.reserved.iter().flat_map(|word| word.to_ne_bytes());
        if reserved.take(UCE_INFO_RESERVED_SIZE as usize).any(|byte| byte != 0) {
            return fail(
                ACL_ERROR_INVALID_PARAM,
                format!("memUceInfoArray[{index}].reserved is a reserved parameter and must be 0"),
            );
        }
    }
    Ok(())
}

pub(crate) unsafe fn aclrtMemUceRepair(
    deviceId: i32,
    memUceInfoArray: *mut aclrtMemUceInfo,
    arraySize: usize,
) -> aclError {
    let _ = deviceId;
    // SAFETY: forwarded contract.
    finish("aclrtMemUceRepair", unsafe { uce_repair(memUceInfoArray, arraySize) })
}

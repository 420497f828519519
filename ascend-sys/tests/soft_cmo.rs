//! Cache maintenance and memory checks on the software device (group
//! 3.12): each argument rule with the code of `hicann/runtime` (ACL layer
//! `src/acl/aclrt_impl/{memory,kernel,event,device}.cpp`, runtime layer
//! `src/runtime/api/api_c_standard_soc.cc`, `api_c_memory.cc`,
//! `impl/api_error.cc`), the operations ordered on their stream (queued
//! behind blocked work, finished by a synchronisation), the memory-type
//! answers, peer access for `aclrtMemP2PMap` and the empty UCE list.
//! Software device only.

mod soft_common;

use ascend_sys::*;
use soft_common::raw::{create_stream, destroy_stream, free, malloc, sync};
use soft_common::{on_device, on_device_id, recent};
use std::ffi::c_void;
use std::ptr::{null, null_mut};

const SIZE: usize = 4096;

fn cmo(src: *mut c_void, size: usize, op: aclrtCmoType, stream: aclrtStream) -> aclError {
    // SAFETY: the software device reads no byte of `src` for a CMO.
    unsafe { aclrtCmoAsync(src, size, op, stream) }
}

fn cmo_barrier(src: *mut c_void, size: usize, op: aclrtCmoType, id: u32, stream: aclrtStream) -> aclError {
    // SAFETY: as in `cmo`.
    unsafe { aclrtCmoAsyncWithBarrier(src, size, op, id, stream) }
}

fn barrier_info(entries: &[(aclrtCmoType, u32)]) -> aclrtBarrierTaskInfo {
    let mut info = aclrtBarrierTaskInfo {
        barrierNum: entries.len(),
        ..Default::default()
    };
    for (slot, &(op, id)) in info.cmoInfo.iter_mut().zip(entries) {
        slot.cmoType = op;
        slot.barrierId = id;
    }
    info
}

fn wait_barrier(info: &mut aclrtBarrierTaskInfo, stream: aclrtStream) -> aclError {
    // SAFETY: a live struct.
    unsafe { aclrtCmoWaitBarrier(info, stream, 0) }
}

fn status(stream: aclrtStream) -> aclrtStreamStatus {
    let mut status = 0;
    // SAFETY: a live stream and out-pointer.
    assert_eq!(unsafe { aclrtStreamQuery(stream, &mut status) }, ACL_SUCCESS);
    status
}

// ---- aclrtCmoAsync --------------------------------------------------------------

#[test]
fn cmo_async_rules() {
    on_device(|| {
        let buf = malloc(SIZE);
        let stream = create_stream();
        assert_eq!(
            cmo(null_mut(), SIZE, ACL_RT_CMO_TYPE_PREFETCH, stream),
            ACL_ERROR_INVALID_PARAM
        );
        assert!(recent().contains("src"), "{}", recent());
        assert_eq!(cmo(buf, 0, ACL_RT_CMO_TYPE_PREFETCH, stream), ACL_ERROR_INVALID_PARAM);
        assert_eq!(cmo(buf, SIZE, 4, stream), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
        // An unknown stream before the memory checks.
        assert_eq!(
            cmo(buf, SIZE, ACL_RT_CMO_TYPE_PREFETCH, 0x1234 as aclrtStream),
            ACL_ERROR_RT_INVALID_HANDLE
        );
        // Past the allocation, host memory.
        assert_eq!(
            cmo(buf, 2 * SIZE, ACL_RT_CMO_TYPE_FLUSH, stream),
            ACL_ERROR_RT_PARAM_INVALID
        );
        let mut host = vec![0u8; 64];
        assert_eq!(
            cmo(host.as_mut_ptr().cast(), 64, ACL_RT_CMO_TYPE_PREFETCH, stream),
            ACL_ERROR_RT_PARAM_INVALID
        );
        assert!(recent().contains("not device memory"), "{}", recent());
        for op in [
            ACL_RT_CMO_TYPE_PREFETCH,
            ACL_RT_CMO_TYPE_WRITEBACK,
            ACL_RT_CMO_TYPE_INVALID,
            ACL_RT_CMO_TYPE_FLUSH,
        ] {
            assert_eq!(cmo(buf, SIZE, op, stream), ACL_SUCCESS, "op {op}");
            // A sub-range and the default stream.
            assert_eq!(cmo(buf.wrapping_byte_add(128), 256, op, null_mut()), ACL_SUCCESS);
        }
        assert_eq!(sync(stream), ACL_SUCCESS);
        destroy_stream(stream);
        free(buf);
    });
}

#[test]
fn cmo_needs_a_current_device() {
    soft_common::without_device(|| {
        let mut word = 0u64;
        assert_eq!(
            cmo((&raw mut word).cast(), 8, ACL_RT_CMO_TYPE_PREFETCH, null_mut()),
            ACL_ERROR_RT_CONTEXT_NULL
        );
    });
}

/// A CMO queued behind a write that cannot run yet (the stream waits for a
/// value) completes after it: the stream stays busy until the value is
/// set, then a synchronisation finds the CMO done and the data written.
#[test]
fn cmo_is_ordered_after_queued_work() {
    on_device(|| {
        let flag = malloc(SIZE);
        let buf = malloc(SIZE);
        let stream = create_stream();
        // SAFETY: live device memory.
        unsafe {
            assert_eq!(aclrtMemset(flag, SIZE, 0, SIZE), ACL_SUCCESS);
            assert_eq!(aclrtValueWait(flag, 1, ACL_STREAM_WAIT_VALUE_EQ, stream), ACL_SUCCESS);
            assert_eq!(aclrtMemsetAsync(buf, SIZE, 0x5a, SIZE, stream), ACL_SUCCESS);
        }
        assert_eq!(cmo(buf, SIZE, ACL_RT_CMO_TYPE_WRITEBACK, stream), ACL_SUCCESS);
        assert_eq!(cmo_barrier(buf, SIZE, ACL_RT_CMO_TYPE_INVALID, 3, stream), ACL_SUCCESS);
        let mut info = barrier_info(&[(ACL_RT_CMO_TYPE_INVALID, 3)]);
        assert_eq!(wait_barrier(&mut info, stream), ACL_SUCCESS);
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert_eq!(status(stream), ACL_STREAM_STATUS_NOT_READY);
        let one = 1u64;
        // SAFETY: 8 bytes of live device memory and a host word.
        let code = unsafe { aclrtMemcpy(flag, 8, (&raw const one).cast(), 8, ACL_MEMCPY_HOST_TO_DEVICE) };
        assert_eq!(code, ACL_SUCCESS);
        assert_eq!(sync(stream), ACL_SUCCESS);
        assert_eq!(status(stream), ACL_STREAM_STATUS_COMPLETE);
        let mut out = vec![0u8; SIZE];
        // SAFETY: `out` holds SIZE bytes.
        let code = unsafe { aclrtMemcpy(out.as_mut_ptr().cast(), SIZE, buf, SIZE, ACL_MEMCPY_DEVICE_TO_HOST) };
        assert_eq!(code, ACL_SUCCESS);
        assert!(out.iter().all(|&byte| byte == 0x5a), "the CMO moved or lost data");
        destroy_stream(stream);
        free(buf);
        free(flag);
    });
}

// ---- barriers ---------------------------------------------------------------------

#[test]
fn cmo_with_barrier_rules() {
    on_device(|| {
        let buf = malloc(SIZE);
        let stream = create_stream();
        assert_eq!(
            cmo_barrier(null_mut(), SIZE, ACL_RT_CMO_TYPE_INVALID, 1, stream),
            ACL_ERROR_INVALID_PARAM
        );
        // The ACL layer does not check the size; the runtime does.
        assert_eq!(
            cmo_barrier(buf, 0, ACL_RT_CMO_TYPE_INVALID, 1, stream),
            ACL_ERROR_RT_PARAM_INVALID
        );
        assert_eq!(
            cmo_barrier(buf, SIZE, ACL_RT_CMO_TYPE_INVALID, 0, stream),
            ACL_ERROR_RT_PARAM_INVALID
        );
        for op in [
            ACL_RT_CMO_TYPE_PREFETCH,
            ACL_RT_CMO_TYPE_WRITEBACK,
            ACL_RT_CMO_TYPE_FLUSH,
        ] {
            assert_eq!(
                cmo_barrier(buf, SIZE, op, 1, stream),
                ACL_ERROR_RT_PARAM_INVALID,
                "op {op}"
            );
            assert_eq!(cmo_barrier(buf, SIZE, op, 0, stream), ACL_SUCCESS, "op {op}");
        }
        assert_eq!(cmo_barrier(buf, SIZE, 9, 0, stream), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
        assert_eq!(
            cmo_barrier(buf, 2 * SIZE, ACL_RT_CMO_TYPE_INVALID, 1, stream),
            ACL_ERROR_RT_PARAM_INVALID
        );
        assert_eq!(cmo_barrier(buf, SIZE, ACL_RT_CMO_TYPE_INVALID, 7, stream), ACL_SUCCESS);
        assert_eq!(sync(stream), ACL_SUCCESS);
        destroy_stream(stream);
        free(buf);
    });
}

#[test]
fn wait_barrier_rules() {
    on_device(|| {
        let stream = create_stream();
        // SAFETY: NULL is refused before use.
        assert_eq!(
            unsafe { aclrtCmoWaitBarrier(null_mut(), stream, 0) },
            ACL_ERROR_INVALID_PARAM
        );
        let mut empty = barrier_info(&[]);
        assert_eq!(wait_barrier(&mut empty, stream), ACL_ERROR_INVALID_PARAM);
        let mut too_many = barrier_info(&[(ACL_RT_CMO_TYPE_INVALID, 1); 6]);
        too_many.barrierNum = 7;
        assert_eq!(wait_barrier(&mut too_many, stream), ACL_ERROR_INVALID_PARAM);
        let mut not_invalid = barrier_info(&[(ACL_RT_CMO_TYPE_INVALID, 1), (ACL_RT_CMO_TYPE_FLUSH, 2)]);
        assert_eq!(wait_barrier(&mut not_invalid, stream), ACL_ERROR_RT_PARAM_INVALID);
        assert!(recent().contains("cmoInfo[1]"), "{}", recent());
        let mut zero_id = barrier_info(&[(ACL_RT_CMO_TYPE_INVALID, 0)]);
        assert_eq!(wait_barrier(&mut zero_id, stream), ACL_ERROR_RT_PARAM_INVALID);
        let mut six = barrier_info(&[(ACL_RT_CMO_TYPE_INVALID, 1); 6]);
        assert_eq!(wait_barrier(&mut six, stream), ACL_SUCCESS);
        assert_eq!(
            wait_barrier(&mut six, 0x4321 as aclrtStream),
            ACL_ERROR_RT_INVALID_HANDLE
        );
        assert_eq!(sync(stream), ACL_SUCCESS);
        destroy_stream(stream);
    });
}

// ---- descriptors ------------------------------------------------------------------

#[test]
fn descriptor_rules_and_use() {
    on_device(|| {
        let mut size = 0usize;
        // SAFETY: a live out-pointer; NULL is refused.
        unsafe {
            assert_eq!(aclrtCmoGetDescSize(&mut size), ACL_SUCCESS);
            assert_eq!(aclrtCmoGetDescSize(null_mut()), ACL_ERROR_RT_PARAM_INVALID);
        }
        assert_eq!(size, 32);
        let desc = malloc(size);
        let buf = malloc(SIZE);
        let stream = create_stream();
        let mut host = [0u8; 64];
        // SAFETY: live device memory; bad pointers are refused before use.
        unsafe {
            assert_eq!(aclrtCmoSetDesc(null_mut(), buf, SIZE), ACL_ERROR_RT_PARAM_INVALID);
            assert_eq!(aclrtCmoSetDesc(desc, null_mut(), SIZE), ACL_ERROR_RT_PARAM_INVALID);
            assert_eq!(aclrtCmoSetDesc(desc, buf, 0), ACL_ERROR_RT_PARAM_INVALID);
            assert_eq!(
                aclrtCmoSetDesc(host.as_mut_ptr().cast(), buf, SIZE),
                ACL_ERROR_RT_PARAM_INVALID
            );
            // A descriptor never set holds no range.
            assert_eq!(aclrtMemset(desc, size, 0, size), ACL_SUCCESS);
            assert_eq!(
                aclrtCmoAsyncWithDesc(desc, ACL_RT_CMO_TYPE_PREFETCH, stream, null()),
                ACL_ERROR_RT_PARAM_INVALID
            );
            assert_eq!(aclrtCmoSetDesc(desc, buf, SIZE), ACL_SUCCESS);
            let marker = 1u8;
            assert_eq!(
                aclrtCmoAsyncWithDesc(desc, ACL_RT_CMO_TYPE_PREFETCH, stream, (&raw const marker).cast()),
                ACL_ERROR_RT_PARAM_INVALID
            );
            assert_eq!(
                aclrtCmoAsyncWithDesc(desc, ACL_RT_CMO_TYPE_PREFETCH, 0x99 as aclrtStream, null()),
                ACL_ERROR_RT_INVALID_HANDLE
            );
            assert_eq!(
                aclrtCmoAsyncWithDesc(null_mut(), ACL_RT_CMO_TYPE_PREFETCH, stream, null()),
                ACL_ERROR_RT_PARAM_INVALID
            );
            assert_eq!(
                aclrtCmoAsyncWithDesc(desc, 4, stream, null()),
                ACL_ERROR_RT_PARAM_INVALID
            );
            for op in [
                ACL_RT_CMO_TYPE_PREFETCH,
                ACL_RT_CMO_TYPE_WRITEBACK,
                ACL_RT_CMO_TYPE_INVALID,
                ACL_RT_CMO_TYPE_FLUSH,
            ] {
                assert_eq!(aclrtCmoAsyncWithDesc(desc, op, stream, null()), ACL_SUCCESS, "op {op}");
            }
            // A descriptor of a range that has since been freed.
            let gone = malloc(SIZE);
            assert_eq!(aclrtCmoSetDesc(desc, gone, SIZE), ACL_SUCCESS);
            free(gone);
            assert_eq!(
                aclrtCmoAsyncWithDesc(desc, ACL_RT_CMO_TYPE_FLUSH, stream, null()),
                ACL_ERROR_RT_PARAM_INVALID
            );
        }
        assert_eq!(sync(stream), ACL_SUCCESS);
        destroy_stream(stream);
        free(buf);
        free(desc);
    });
}

// ---- synchronous cache calls --------------------------------------------------------

#[test]
fn flush_invalidate_and_l2() {
    on_device(|| {
        let buf = malloc(SIZE);
        let mut pinned = null_mut();
        // SAFETY: live out-pointers and pointers the checks refuse before use.
        unsafe {
            assert_eq!(aclrtMallocHost(&mut pinned, SIZE), ACL_SUCCESS);
            for call in [
                aclrtMemFlush as unsafe fn(*mut c_void, usize) -> aclError,
                aclrtMemInvalidate,
            ] {
                assert_eq!(call(null_mut(), SIZE), ACL_ERROR_INVALID_PARAM);
                assert_eq!(call(buf, 0), ACL_ERROR_INVALID_PARAM);
                assert_eq!(call(buf, SIZE), ACL_SUCCESS);
                assert_eq!(call(pinned, SIZE), ACL_SUCCESS);
                assert_eq!(call(buf, 2 * SIZE), ACL_ERROR_RT_PARAM_INVALID);
                let mut host = [0u8; 16];
                assert_eq!(call(host.as_mut_ptr().cast(), 16), ACL_ERROR_RT_PARAM_INVALID);
            }
            let mut word = 7u8;
            assert_eq!(aclrtDeviceL2CacheFlush((&raw mut word).cast()), ACL_ERROR_INVALID_PARAM);
            assert_eq!(aclrtDeviceL2CacheFlush(null_mut()), ACL_SUCCESS);
            assert_eq!(aclrtFreeHost(pinned), ACL_SUCCESS);
        }
        free(buf);
    });
    soft_common::without_device(|| {
        // SAFETY: NULL is the reserved value.
        assert_eq!(
            unsafe { aclrtDeviceL2CacheFlush(null_mut()) },
            ACL_ERROR_RT_CONTEXT_NULL
        );
    });
}

// ---- aclrtCheckMemType ------------------------------------------------------------------

fn check(addrs: &mut [*mut c_void], mem_type: u32, reserve: u32) -> (aclError, u32) {
    let mut result = 9u32;
    // SAFETY: a live list of `addrs.len()` addresses and a live out-pointer.
    let code = unsafe { aclrtCheckMemType(addrs.as_mut_ptr(), addrs.len() as u32, mem_type, &mut result, reserve) };
    (code, result)
}

#[test]
fn check_mem_type_rules_and_answers() {
    on_device(|| {
        let a = malloc(SIZE);
        let b = malloc(SIZE);
        let mut host = [0u8; 16];
        let mut result = 0u32;
        let mut list = [a];
        // SAFETY: NULL pointers are refused before use.
        unsafe {
            assert_eq!(
                aclrtCheckMemType(null_mut(), 1, ACL_RT_MEM_TYPE_DEV, &mut result, 0),
                ACL_ERROR_INVALID_PARAM
            );
            assert_eq!(
                aclrtCheckMemType(list.as_mut_ptr(), 1, ACL_RT_MEM_TYPE_DEV, null_mut(), 0),
                ACL_ERROR_INVALID_PARAM
            );
        }
        assert_eq!(check(&mut [a], ACL_RT_MEM_TYPE_DEV, 1), (ACL_ERROR_RT_PARAM_INVALID, 0));
        assert_eq!(check(&mut [], ACL_RT_MEM_TYPE_DEV, 0), (ACL_ERROR_RT_PARAM_INVALID, 0));
        assert_eq!(check(&mut [a], 0x1, 0), (ACL_ERROR_RT_PARAM_INVALID, 0));
        // The runtime's reserved-memory bit is 0x20; the header's 0x10 is refused.
        assert_eq!(
            check(&mut [a], ACL_RT_MEM_TYPE_RSVD, 0),
            (ACL_ERROR_RT_PARAM_INVALID, 0)
        );
        assert_eq!(check(&mut [a, b], ACL_RT_MEM_TYPE_DEV, 0), (ACL_SUCCESS, 1));
        assert_eq!(
            check(&mut [a.wrapping_byte_add(100)], ACL_RT_MEM_TYPE_DEV, 0),
            (ACL_SUCCESS, 1)
        );
        assert_eq!(
            check(&mut [a, host.as_mut_ptr().cast()], ACL_RT_MEM_TYPE_DEV, 0),
            (ACL_SUCCESS, 0)
        );
        assert_eq!(check(&mut [a], ACL_RT_MEM_TYPE_DVPP, 0), (ACL_SUCCESS, 0));
        assert_eq!(
            check(&mut [a], ACL_RT_MEM_TYPE_DEV | ACL_RT_MEM_TYPE_DVPP | 0x20, 0),
            (ACL_SUCCESS, 1)
        );
        // A reserved VMM range is reserved memory.
        let mut reserved = null_mut();
        // SAFETY: live out-pointer.
        assert_eq!(
            unsafe { aclrtReserveMemAddress(&mut reserved, 2 << 20, 0, null_mut(), 0) },
            ACL_SUCCESS
        );
        assert_eq!(check(&mut [reserved], 0x20, 0), (ACL_SUCCESS, 1));
        assert_eq!(check(&mut [a], 0x20, 0), (ACL_SUCCESS, 0));
        // SAFETY: the reservation made above.
        assert_eq!(unsafe { aclrtReleaseMemAddress(reserved) }, ACL_SUCCESS);
        free(b);
        free(a);
    });
}

// ---- aclrtMemP2PMap ----------------------------------------------------------------------

#[test]
fn p2p_map_rules_and_peer_access() {
    // Device 1 stays retained, so its memory outlives the helper threads.
    soft_common::holding_device(1, p2p_map_body);
}

fn p2p_map_body() {
    let address = on_device_id(1, || malloc(SIZE) as usize);
    on_device(|| {
        let buf = address as *mut c_void;
        // SAFETY: device memory of device 1; bad arguments are refused first.
        unsafe {
            assert_eq!(aclrtMemP2PMap(null_mut(), SIZE, 0, 0), ACL_ERROR_INVALID_PARAM);
            assert_eq!(aclrtMemP2PMap(buf, 0, 0, 0), ACL_ERROR_INVALID_PARAM);
            assert_eq!(aclrtMemP2PMap(buf, SIZE, 0, 1), ACL_ERROR_INVALID_PARAM);
            assert_eq!(aclrtMemP2PMap(buf, SIZE, 999, 0), ACL_ERROR_RT_INVALID_DEVICEID);
            assert_eq!(aclrtMemP2PMap(buf, 2 * SIZE, 1, 0), ACL_ERROR_RT_PARAM_INVALID);
            // Its own device needs no peer access.
            assert_eq!(aclrtMemP2PMap(buf, SIZE, 1, 0), ACL_SUCCESS);
            let mut host = [0u8; 16];
            assert_eq!(
                aclrtMemP2PMap(host.as_mut_ptr().cast(), 16, 0, 0),
                ACL_ERROR_RT_PARAM_INVALID
            );
            assert_eq!(aclrtMemP2PMap(buf, SIZE, 0, 0), ACL_ERROR_RT_PARAM_INVALID);
            assert!(recent().contains("peer access"), "{}", recent());
            assert_eq!(aclrtDeviceEnablePeerAccess(1, 0), ACL_SUCCESS);
            assert_eq!(aclrtMemP2PMap(buf, SIZE, 0, 0), ACL_SUCCESS);
            assert_eq!(aclrtDeviceDisablePeerAccess(1), ACL_SUCCESS);
            assert_eq!(aclrtMemP2PMap(buf, SIZE, 0, 0), ACL_ERROR_RT_PARAM_INVALID);
        }
    });
    on_device_id(1, || free(address as *mut c_void));
}

// ---- UCE ------------------------------------------------------------------------------------

#[test]
fn uce_info_is_empty_and_repair_validates() {
    on_device(|| {
        let mut list = [aclrtMemUceInfo::default(); 4];
        let mut count = 99usize;
        // SAFETY: a live array of 4 entries and out-pointer; NULLs refused first.
        unsafe {
            assert_eq!(
                aclrtGetMemUceInfo(0, null_mut(), 4, &mut count),
                ACL_ERROR_INVALID_PARAM
            );
            assert_eq!(
                aclrtGetMemUceInfo(0, list.as_mut_ptr(), 4, null_mut()),
                ACL_ERROR_INVALID_PARAM
            );
            assert_eq!(
                aclrtGetMemUceInfo(999, list.as_mut_ptr(), 4, &mut count),
                ACL_ERROR_RT_INVALID_DEVICEID
            );
            assert_eq!(count, 99);
            assert_eq!(aclrtGetMemUceInfo(0, list.as_mut_ptr(), 4, &mut count), ACL_SUCCESS);
            assert_eq!(count, 0);
            count = 5;
            assert_eq!(aclrtGetMemUceInfo(0, list.as_mut_ptr(), 0, &mut count), ACL_SUCCESS);
            assert_eq!(count, 0);

            assert_eq!(aclrtMemUceRepair(0, null_mut(), 1), ACL_ERROR_INVALID_PARAM);
            assert_eq!(aclrtMemUceRepair(0, list.as_mut_ptr(), 129), ACL_ERROR_INVALID_PARAM);
            assert_eq!(aclrtMemUceRepair(0, list.as_mut_ptr(), 4), ACL_SUCCESS);
            list[2].reserved[0] = 1;
            assert_eq!(aclrtMemUceRepair(0, list.as_mut_ptr(), 4), ACL_ERROR_INVALID_PARAM);
            assert!(recent().contains("memUceInfoArray[2].reserved"), "{}", recent());
            // Only the first 14 bytes of the reserved words are compared.
            list[2].reserved = [0; 14];
            list[2].reserved[13] = 1;
            assert_eq!(aclrtMemUceRepair(0, list.as_mut_ptr(), 4), ACL_SUCCESS);
            assert_eq!(aclrtMemUceRepair(0, list.as_mut_ptr(), 0), ACL_SUCCESS);
        }
    });
}

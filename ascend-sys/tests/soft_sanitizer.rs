//! The stream-hazard sanitizer: planted hazards, each caught with a report
//! naming both operations, and for each a correctly synchronised twin that
//! is not reported. Software device only (the sanitizer is part of it).
//!
//! The sanitizer is process-wide, so the tests of this file run one at a
//! time (a lock), each watching the misuse list only while it runs.

mod soft_common;

use ascend_sys::*;
use soft_common::physical;
use soft_common::sanitize::{done, fill, free, malloc, ok, planted, quiet, stream};
use std::ffi::c_void;
use std::ptr::null_mut;

const N: usize = 4096;

fn copy(dst: *mut c_void, src: *mut c_void, len: usize, stream: aclrtStream) {
    // SAFETY: both are device or pinned memory of at least `len` bytes.
    ok(
        unsafe { aclrtMemcpyAsync(dst, len, src, len, ACL_MEMCPY_DEFAULT, stream) },
        "memcpyAsync",
    );
}

/// Orders everything queued on `from` so far before what `to` runs next.
fn order(from: aclrtStream, to: aclrtStream) {
    let mut event = null_mut();
    // SAFETY: valid out-pointer; live streams and event.
    unsafe {
        ok(aclrtCreateEvent(&mut event), "create event");
        ok(aclrtRecordEvent(event, from), "record");
        ok(aclrtStreamWaitEvent(to, event), "wait");
        ok(aclrtDestroyEvent(event), "destroy event");
    }
}

fn read_host(ptr: *mut c_void, len: usize) -> Vec<u8> {
    let mut out = vec![0u8; len];
    // SAFETY: `out` holds `len` bytes; `ptr` is device memory of `len` bytes.
    ok(
        unsafe { aclrtMemcpy(out.as_mut_ptr().cast(), len, ptr, len, ACL_MEMCPY_DEVICE_TO_HOST) },
        "memcpy D2H",
    );
    out
}

#[test]
fn two_streams_writing_the_same_bytes() {
    planted(
        &["write after write", "aclrtMemsetAsync", "aclrtStreamWaitEvent"],
        |ordered| {
            let (a, b, buf) = (stream(), stream(), malloc(N));
            fill(buf, 1, N, a);
            if ordered {
                order(a, b);
            }
            fill(buf, 2, N, b);
            done(a);
            done(b);
            free(buf);
        },
    );
}

#[test]
fn a_stream_reading_what_another_writes() {
    planted(
        &["read after write", "aclrtMemcpyAsync", "aclrtMemsetAsync"],
        |ordered| {
            let (a, b, buf, out) = (stream(), stream(), malloc(N), malloc(N));
            fill(buf, 1, N, a);
            if ordered {
                order(a, b);
            }
            copy(out, buf, N, b);
            done(a);
            done(b);
            free(buf);
            free(out);
        },
    );
}

fn cmo(ptr: *mut c_void, len: usize, op: aclrtCmoType, stream: aclrtStream) {
    // SAFETY: live device memory of `len` bytes.
    ok(unsafe { aclrtCmoAsync(ptr, len, op, stream) }, "cmo");
}

/// An invalidation may drop data not yet written back: a write of its
/// range, racing a memset of another stream.
#[test]
fn an_invalidation_racing_a_write_of_another_stream() {
    planted(&["write after write", "aclrtCmoAsync", "aclrtMemsetAsync"], |ordered| {
        let (a, b, buf) = (stream(), stream(), malloc(N));
        fill(buf, 1, N, a);
        if ordered {
            order(a, b);
        }
        cmo(buf, N, ACL_RT_CMO_TYPE_INVALID, b);
        done(a);
        done(b);
        free(buf);
    });
}

/// A writeback reads its range: racing a memset of another stream, it is
/// reported; two prefetches of written memory on two streams are not.
#[test]
fn a_writeback_racing_a_write_and_prefetches_that_only_read() {
    planted(&["read after write", "aclrtCmoAsync", "aclrtMemsetAsync"], |ordered| {
        let (a, b, buf) = (stream(), stream(), malloc(N));
        fill(buf, 1, N, a);
        if ordered {
            order(a, b);
        }
        cmo(buf, N, ACL_RT_CMO_TYPE_WRITEBACK, b);
        done(a);
        done(b);
        free(buf);
    });
    quiet(|| {
        let (setup, a, b, buf) = (stream(), stream(), stream(), malloc(N));
        fill(buf, 1, N, setup);
        done(setup);
        cmo(buf, N, ACL_RT_CMO_TYPE_PREFETCH, a);
        cmo(buf, N, ACL_RT_CMO_TYPE_PREFETCH, b);
        done(a);
        done(b);
        free(buf);
    });
}

/// The synchronous invalidation is a write of the host (as the queued one
/// is of its stream): racing a memset still queued, it is reported; after
/// the stream is synchronised, it is not.
#[test]
fn a_synchronous_invalidation_racing_a_queued_write() {
    planted(
        &[
            "write after write",
            "aclrtMemInvalidate on the host",
            "aclrtMemsetAsync",
        ],
        |ordered| {
            let (a, buf) = (stream(), malloc(N));
            fill(buf, 1, N, a);
            if ordered {
                // SAFETY: a live stream.
                ok(unsafe { aclrtSynchronizeStream(a) }, "synchronize");
            }
            // SAFETY: live device memory of N bytes.
            ok(unsafe { aclrtMemInvalidate(buf, N) }, "invalidate");
            done(a);
            free(buf);
        },
    );
}

/// The synchronous flush reads its range (as a queued one does): racing a
/// memset still queued, it is reported; after the stream is synchronised,
/// it is not.
#[test]
fn a_synchronous_flush_racing_a_queued_write() {
    planted(
        &["read after write", "aclrtMemFlush on the host", "aclrtMemsetAsync"],
        |ordered| {
            let (a, buf) = (stream(), malloc(N));
            fill(buf, 1, N, a);
            if ordered {
                // SAFETY: a live stream.
                ok(unsafe { aclrtSynchronizeStream(a) }, "synchronize");
            }
            // SAFETY: live device memory of N bytes.
            ok(unsafe { aclrtMemFlush(buf, N) }, "flush");
            done(a);
            free(buf);
        },
    );
}

#[test]
fn a_stream_writing_what_another_reads() {
    planted(
        &["write after read", "aclrtMemsetAsync", "aclrtMemcpyAsync"],
        |ordered| {
            let (a, b, buf, out) = (stream(), stream(), malloc(N), malloc(N));
            let setup = stream();
            fill(buf, 1, N, setup);
            done(setup);
            copy(out, buf, N, a);
            if ordered {
                order(a, b);
            }
            fill(buf, 2, N, b);
            done(a);
            done(b);
            free(buf);
            free(out);
        },
    );
}

#[test]
fn a_32_bit_memset_racing_a_byte_memset_and_the_synchronous_one_after_it() {
    planted(
        &["write after write", "aclrtMemsetD32Async", "aclrtMemsetAsync"],
        |ordered| {
            let (a, b, buf) = (stream(), stream(), malloc(N));
            fill(buf, 1, N, a);
            if ordered {
                order(a, b);
            }
            // SAFETY: `buf` is device memory of `N` bytes.
            ok(
                unsafe { aclrtMemsetD32Async(buf, N, 0xDEAD_BEEF, N / 4, b) },
                "memsetD32Async",
            );
            done(a);
            done(b);
            // Both streams are synchronised: the host set is ordered.
            // SAFETY: as above.
            ok(unsafe { aclrtMemsetD32(buf, N, 7, N / 4) }, "memsetD32");
            free(buf);
        },
    );
}

#[test]
fn the_host_reading_what_a_stream_still_writes() {
    planted(
        &["read after write", "aclrtMemcpy on the host", "aclrtSynchronizeStream"],
        |ordered| {
            let (a, buf) = (stream(), malloc(N));
            fill(buf, 7, N, a);
            if ordered {
                // SAFETY: a live stream.
                ok(unsafe { aclrtSynchronizeStream(a) }, "synchronize");
            }
            let bytes = read_host(buf, N);
            if ordered {
                assert!(bytes.iter().all(|&byte| byte == 7));
            }
            done(a);
            free(buf);
        },
    );
}

#[test]
fn the_host_writing_what_a_stream_still_reads() {
    planted(&["write after read", "aclrtMemset on the host"], |ordered| {
        let (a, buf, out) = (stream(), malloc(N), malloc(N));
        // SAFETY: `buf` is device memory of N bytes.
        ok(unsafe { aclrtMemset(buf, N, 1, N) }, "memset");
        copy(out, buf, N, a);
        if ordered {
            // SAFETY: a live stream.
            ok(unsafe { aclrtSynchronizeStream(a) }, "synchronize");
        }
        // SAFETY: as above.
        ok(unsafe { aclrtMemset(buf, N, 2, N) }, "memset");
        done(a);
        free(buf);
        free(out);
    });
}

#[test]
fn pinned_memory_read_by_the_host_while_a_copy_fills_it() {
    planted(&["read after write", "aclrtMemcpy", "aclrtMemcpyAsync"], |ordered| {
        let (a, buf, dev) = (stream(), malloc(N), malloc(N));
        let mut pinned = null_mut();
        let mut event = null_mut();
        // SAFETY: valid out-pointers; live memory of N bytes each.
        unsafe {
            ok(aclrtMemset(buf, N, 3, N), "memset");
            ok(aclrtMallocHost(&mut pinned, N), "mallocHost");
            ok(aclrtCreateEvent(&mut event), "create event");
        }
        copy(pinned, buf, N, a);
        // SAFETY: live event and stream.
        unsafe {
            ok(aclrtRecordEvent(event, a), "record");
            if ordered {
                ok(aclrtSynchronizeEvent(event), "synchronize event");
            }
            ok(aclrtMemcpy(dev, N, pinned, N, ACL_MEMCPY_HOST_TO_DEVICE), "memcpy H2D");
            ok(aclrtDestroyEvent(event), "destroy event");
        }
        done(a);
        // SAFETY: pinned memory from aclrtMallocHost, freed once.
        ok(unsafe { aclrtFreeHost(pinned) }, "freeHost");
        free(buf);
        free(dev);
    });
}

#[test]
fn freeing_memory_a_stream_still_writes() {
    planted(&["free while in use", "aclrtFree", "aclrtFreeWithDevSync"], |ordered| {
        let (a, buf) = (stream(), malloc(N));
        fill(buf, 1, N, a);
        if ordered {
            // SAFETY: a live allocation, freed once.
            ok(unsafe { aclrtFreeWithDevSync(buf) }, "freeWithDevSync");
        } else {
            free(buf);
        }
        // The planted hazard may fail the memset (its memory is gone when
        // it runs): the synchronisation then reports it, as on hardware.
        // SAFETY: a live stream.
        let synchronized = unsafe { aclrtSynchronizeStream(a) };
        assert!(ordered || synchronized == ACL_SUCCESS || synchronized == ACL_ERROR_RT_SYS_DMA);
        done(a);
    });
}

#[test]
fn reading_device_memory_nothing_wrote() {
    planted(&["uninitialized read", "aclrtMalloc", "aclrtMemcpy"], |ordered| {
        let buf = malloc(N);
        if ordered {
            // SAFETY: `buf` is device memory of N bytes.
            ok(unsafe { aclrtMemset(buf, N, 0, N) }, "memset");
        }
        read_host(buf, N);
        free(buf);
    });
}

/// A granule of physical memory mapped at `maps` reserved ranges.
struct Vmm {
    handle: aclrtDrvMemHandle,
    maps: Vec<*mut c_void>,
    size: usize,
}

impl Vmm {
    fn new(maps: usize) -> Self {
        let mut size = 0;
        let mut prop = soft_common::device_prop(0);
        // SAFETY: valid out-pointer and property.
        ok(
            unsafe { aclrtMemGetAllocationGranularity(&mut prop, ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM, &mut size) },
            "granularity",
        );
        let handle = physical(size);
        let maps = (0..maps)
            .map(|_| {
                let mut va = null_mut();
                // SAFETY: valid out-pointer; a fresh range mapped with the whole allocation.
                unsafe {
                    ok(aclrtReserveMemAddress(&mut va, size, 0, null_mut(), 0), "reserve");
                    ok(aclrtMapMem(va, size, 0, handle, 0), "map");
                }
                va
            })
            .collect();
        Self { handle, maps, size }
    }
}

impl Drop for Vmm {
    fn drop(&mut self) {
        for &va in &self.maps {
            // SAFETY: mapped and reserved above, undone once.
            unsafe {
                ok(aclrtUnmapMem(va), "unmap");
                ok(aclrtReleaseMemAddress(va), "release");
            }
        }
        // SAFETY: allocated above, freed once.
        ok(unsafe { aclrtFreePhysical(self.handle) }, "freePhysical");
    }
}

#[test]
fn reading_physical_memory_nothing_wrote_and_remapping_keeps_what_was_written() {
    planted(&["uninitialized read", "aclrtMallocPhysical"], |ordered| {
        let vmm = Vmm::new(1);
        let va = vmm.maps[0];
        if ordered {
            // SAFETY: mapped device memory of N bytes at least.
            ok(unsafe { aclrtMemset(va, N, 5, N) }, "memset");
            // The bytes belong to the physical allocation: a new mapping of
            // it reads them written.
            let again = Vmm {
                handle: vmm.handle,
                maps: Vec::new(),
                size: vmm.size,
            };
            let mut second = null_mut();
            // SAFETY: a fresh range mapped with the same allocation.
            unsafe {
                ok(
                    aclrtReserveMemAddress(&mut second, vmm.size, 0, null_mut(), 0),
                    "reserve",
                );
                ok(aclrtMapMem(second, vmm.size, 0, vmm.handle, 0), "map");
            }
            assert!(read_host(second, N).iter().all(|&byte| byte == 5));
            // SAFETY: mapped and reserved just above.
            unsafe {
                ok(aclrtUnmapMem(second), "unmap");
                ok(aclrtReleaseMemAddress(second), "release");
            }
            std::mem::forget(again);
        }
        read_host(va, N);
    });
}

#[test]
fn two_mappings_of_one_allocation_share_their_history() {
    planted(&["read after write", "aclrtMemcpyAsync"], |ordered| {
        let vmm = Vmm::new(2);
        let (a, b, out) = (stream(), stream(), malloc(N));
        fill(vmm.maps[0], 1, N, a);
        if ordered {
            order(a, b);
        }
        copy(out, vmm.maps[1], N, b);
        done(a);
        done(b);
        free(out);
    });
}

#[test]
fn waiting_for_an_event_never_recorded() {
    planted(&["sync misuse", "never recorded", "no-op"], |ordered| {
        let (a, b) = (stream(), stream());
        let mut event = null_mut();
        // SAFETY: valid out-pointer; live event and streams.
        unsafe {
            ok(aclrtCreateEventExWithFlag(&mut event, ACL_EVENT_SYNC), "create event");
            if ordered {
                ok(aclrtRecordEvent(event, a), "record");
            }
            ok(aclrtStreamWaitEvent(b, event), "wait");
            ok(aclrtDestroyEvent(event), "destroy event");
        }
        done(a);
        done(b);
    });
}

#[test]
fn synchronising_with_an_event_never_recorded() {
    planted(&["sync misuse", "aclrtSynchronizeEvent"], |ordered| {
        let a = stream();
        let mut event = null_mut();
        // SAFETY: valid out-pointer; live event and stream.
        unsafe {
            ok(aclrtCreateEvent(&mut event), "create event");
            if ordered {
                ok(aclrtRecordEvent(event, a), "record");
            }
            ok(aclrtSynchronizeEvent(event), "synchronize event");
            ok(aclrtDestroyEvent(event), "destroy event");
        }
        done(a);
    });
}

#[test]
fn a_wait_covers_only_the_record_it_waited_for() {
    planted(
        &[
            "read after write",
            "has seen its operations up to 1, not its operation 2",
        ],
        |ordered| {
            let (a, b, x, y, out) = (stream(), stream(), malloc(N), malloc(N), malloc(N));
            fill(x, 1, N, a);
            order(a, b);
            // After the record: the wait does not cover this write.
            fill(if ordered { y } else { x }, 2, N, a);
            copy(out, x, N, b);
            done(a);
            done(b);
            for buf in [x, y, out] {
                free(buf);
            }
        },
    );
}

#[test]
fn the_default_stream_and_a_created_stream() {
    planted(&["write after write", "the default stream of device 0"], |ordered| {
        let (a, buf) = (stream(), malloc(N));
        fill(buf, 1, N, null_mut());
        if ordered {
            order(null_mut(), a);
        }
        fill(buf, 2, N, a);
        done(a);
        // SAFETY: the default stream.
        ok(unsafe { aclrtSynchronizeStream(null_mut()) }, "synchronize default");
        free(buf);
    });
}

#[test]
fn a_two_d_copy_races_only_on_its_rows() {
    // Rows of 16 bytes, 64 apart: a write into the gaps between rows is
    // not a race; a write into a row is.
    planted(&["write after write", "aclrtMemcpy2dAsync"], |gap| {
        let (a, b, src, dst) = (stream(), stream(), malloc(N), malloc(N));
        // SAFETY: `src` is device memory of N bytes.
        ok(unsafe { aclrtMemset(src, N, 1, N) }, "memset");
        // SAFETY: 8 rows of 16 bytes, 64 apart, inside both allocations.
        ok(
            unsafe { aclrtMemcpy2dAsync(dst, 64, src, 64, 16, 8, ACL_MEMCPY_DEVICE_TO_DEVICE, a) },
            "memcpy2dAsync",
        );
        // SAFETY: inside `dst`.
        let target = unsafe { dst.cast::<u8>().add(if gap { 16 } else { 64 }) };
        fill(target.cast(), 9, 16, b);
        done(a);
        done(b);
        free(src);
        free(dst);
    });
}

#[test]
fn disjoint_parts_of_one_allocation_do_not_race() {
    quiet(|| {
        let (a, b, buf) = (stream(), stream(), malloc(2 * N));
        fill(buf, 1, N, a);
        // SAFETY: the second half of `buf`.
        fill(unsafe { buf.cast::<u8>().add(N) }.cast(), 2, N, b);
        done(a);
        done(b);
        free(buf);
    });
}

#[test]
fn a_double_buffered_pipeline_is_quiet() {
    quiet(|| {
        let (load, compute) = (stream(), stream());
        let buffers = [malloc(N), malloc(N)];
        let out = malloc(N);
        let mut loaded = [null_mut(), null_mut()];
        let mut consumed = [null_mut(), null_mut()];
        // SAFETY: valid out-pointers.
        unsafe {
            for event in loaded.iter_mut().chain(consumed.iter_mut()) {
                ok(aclrtCreateEvent(event), "create event");
            }
        }
        for step in 0..6 {
            let slot = step % 2;
            // SAFETY: live events and streams.
            unsafe {
                if step >= 2 {
                    // The loader reuses a buffer once compute has read it.
                    ok(aclrtStreamWaitEvent(load, consumed[slot]), "wait consumed");
                }
                fill(buffers[slot], step as i32, N, load);
                ok(aclrtRecordEvent(loaded[slot], load), "record loaded");
                ok(aclrtStreamWaitEvent(compute, loaded[slot]), "wait loaded");
                copy(out, buffers[slot], N, compute);
                ok(aclrtRecordEvent(consumed[slot], compute), "record consumed");
            }
        }
        done(load);
        done(compute);
        // SAFETY: live events, destroyed once.
        unsafe {
            for event in loaded.into_iter().chain(consumed) {
                ok(aclrtDestroyEvent(event), "destroy event");
            }
        }
        for buf in buffers.into_iter().chain([out]) {
            free(buf);
        }
    });
}

#[test]
fn polling_an_event_until_complete_orders_the_host() {
    quiet(|| {
        let (a, buf) = (stream(), malloc(N));
        let mut event = null_mut();
        // SAFETY: valid out-pointer; live event and stream.
        unsafe {
            ok(aclrtCreateEvent(&mut event), "create event");
            fill(buf, 4, N, a);
            ok(aclrtRecordEvent(event, a), "record");
            let mut status = ACL_EVENT_RECORDED_STATUS_NOT_READY;
            while status != ACL_EVENT_RECORDED_STATUS_COMPLETE {
                ok(aclrtQueryEventStatus(event, &mut status), "query");
            }
        }
        assert!(read_host(buf, N).iter().all(|&byte| byte == 4));
        // SAFETY: a live event, destroyed once.
        ok(unsafe { aclrtDestroyEvent(event) }, "destroy event");
        done(a);
        free(buf);
    });
}

#[test]
fn polling_a_stream_until_complete_orders_the_host() {
    planted(&["read after write", "aclrtMemcpy on the host"], |ordered| {
        let (a, buf) = (stream(), malloc(N));
        fill(buf, 6, N, a);
        if ordered {
            let mut status = ACL_STREAM_STATUS_NOT_READY;
            while status != ACL_STREAM_STATUS_COMPLETE {
                // SAFETY: a live stream and a valid out-pointer.
                ok(unsafe { aclrtStreamQuery(a, &mut status) }, "stream query");
            }
        }
        let bytes = read_host(buf, N);
        if ordered {
            assert!(bytes.iter().all(|&byte| byte == 6));
        }
        done(a);
        free(buf);
    });
}

#[test]
fn a_timed_event_synchronisation_orders_the_host() {
    planted(&["read after write", "aclrtSynchronizeEvent"], |ordered| {
        let (a, buf) = (stream(), malloc(N));
        let mut event = null_mut();
        // SAFETY: valid out-pointer; live event and stream.
        unsafe {
            ok(aclrtCreateEvent(&mut event), "create event");
            fill(buf, 8, N, a);
            ok(aclrtRecordEvent(event, a), "record");
            if ordered {
                ok(aclrtSynchronizeEventWithTimeout(event, 10_000), "timed synchronize");
            }
        }
        let bytes = read_host(buf, N);
        if ordered {
            assert!(bytes.iter().all(|&byte| byte == 8));
        }
        // SAFETY: a live event, destroyed once.
        ok(unsafe { aclrtDestroyEvent(event) }, "destroy event");
        done(a);
        free(buf);
    });
}

#[test]
fn a_value_wait_is_not_reported() {
    quiet(|| {
        let (a, b, flag, buf, out) = (stream(), stream(), malloc(64), malloc(N), malloc(N));
        // SAFETY: device memory of 64 bytes; live streams.
        unsafe {
            ok(aclrtMemset(flag, 64, 0, 64), "memset flag");
            ok(aclrtValueWait(flag, 1, ACL_STREAM_WAIT_VALUE_EQ, b), "value wait");
        }
        copy(out, buf, N, b);
        fill(buf, 1, N, a);
        // SAFETY: as above.
        ok(unsafe { aclrtValueWrite(flag, 1, 0, a) }, "value write");
        done(a);
        done(b);
        for ptr in [flag, buf, out] {
            free(ptr);
        }
    });
}

#[test]
fn a_bad_sanitizer_variable_stops_the_software_device() {
    let output = soft_common::child_output("child_bad_sanitize_variable", &[(soft::ENV_SANITIZE, "race,raecs")]);
    assert!(output.status.success(), "{output:?}");
}

#[test]
#[ignore = "run by a_bad_sanitizer_variable_stops_the_software_device in its own process"]
fn child_bad_sanitize_variable() {
    soft_common::software();
    let mut count = 0;
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { aclrtGetDeviceCount(&mut count) }, ACL_ERROR_RT_INTERNAL_ERROR);
    let message = soft::recent_error().unwrap_or_default();
    assert!(
        message.contains("ASCEND_SOFT_SANITIZE") && message.contains("raecs"),
        "{message}"
    );
}

// ---- stream-ordered memory pools ----------------------------------------------

fn pool_create() -> aclrtMemPool {
    // SAFETY: a plain C struct; all zeros is valid.
    let mut props: aclrtMemPoolProps = unsafe { std::mem::zeroed() };
    props.allocType = ACL_MEM_ALLOCATION_TYPE_PINNED;
    props.location.type_ = ACL_MEM_LOCATION_TYPE_DEVICE;
    props.maxSize = 16 << 20;
    let mut pool = null_mut();
    // SAFETY: valid pointers.
    ok(unsafe { aclrtMemPoolCreate(&mut pool, &props) }, "pool create");
    pool
}

fn pool_alloc(pool: aclrtMemPool, stream: aclrtStream) -> *mut c_void {
    let mut ptr = null_mut();
    // SAFETY: a valid out-pointer, a live pool and stream.
    ok(
        unsafe { aclrtMemPoolMallocAsync(&mut ptr, N, pool, stream) },
        "pool malloc",
    );
    ptr
}

fn pool_free(ptr: *mut c_void, stream: aclrtStream) {
    // SAFETY: a live pool allocation, freed once.
    ok(unsafe { aclrtMemPoolFreeAsync(ptr, stream) }, "pool free");
}

fn pool_destroy(pool: aclrtMemPool) {
    // SAFETY: a live pool, destroyed once.
    ok(unsafe { aclrtMemPoolDestroy(pool) }, "pool destroy");
}

/// A use on another stream not ordered after `aclrtMemPoolFreeAsync` races
/// with the free; ordered after it (an event recorded after the free), it
/// does not.
#[test]
fn a_stream_using_pool_memory_another_freed() {
    planted(
        &["write after write", "aclrtMemsetAsync", "aclrtMemPoolFreeAsync"],
        |ordered| {
            let (a, b, pool) = (stream(), stream(), pool_create());
            let ptr = pool_alloc(pool, a);
            fill(ptr, 1, N, a);
            pool_free(ptr, a);
            if ordered {
                order(a, b);
            }
            fill(ptr, 2, N, b);
            done(a);
            done(b);
            pool_destroy(pool);
        },
    );
}

/// A reused block is fresh: reading it before writing it is reported, even
/// though its previous owner wrote it.
#[test]
fn reading_a_reused_pool_block_before_writing_it() {
    planted(&["uninitialized read", "aclrtMemPoolMallocAsync"], |write_first| {
        let (a, pool) = (stream(), pool_create());
        let out = malloc(N);
        let first = pool_alloc(pool, a);
        fill(first, 1, N, a);
        pool_free(first, a);
        let again = pool_alloc(pool, a);
        assert_eq!(again, first, "reused on the freeing stream");
        if write_first {
            fill(again, 2, N, a);
        }
        copy(out, again, N, a);
        pool_free(again, a);
        done(a);
        free(out);
        pool_destroy(pool);
    });
}

/// Correct stream-ordered reuse is not reported: on the freeing stream at
/// once, on another after the free has run (a synchronisation, or an event
/// recorded after the free), then trimming and destroying.
#[test]
fn stream_ordered_pool_reuse_is_quiet() {
    quiet(|| {
        let (a, b, pool) = (stream(), stream(), pool_create());
        let first = pool_alloc(pool, a);
        fill(first, 1, N, a);
        pool_free(first, a);
        let same = pool_alloc(pool, a);
        fill(same, 2, N, a);
        pool_free(same, a);
        order(a, b);
        // SAFETY: a live stream.
        ok(unsafe { aclrtSynchronizeStream(a) }, "sync");
        let other = pool_alloc(pool, b);
        assert_eq!(other, first, "the free has run: reused on another stream");
        fill(other, 3, N, b);
        assert!(read_host_after(other, b).iter().all(|&byte| byte == 3));
        pool_free(other, b);
        // A block freed on `b` and not yet seen by the host: the trim
        // releases only blocks whose free has run.
        // SAFETY: a live stream.
        ok(unsafe { aclrtSynchronizeStream(b) }, "sync");
        // SAFETY: a live pool.
        ok(unsafe { aclrtMemPoolTrimTo(pool, 0) }, "trim");
        done(a);
        done(b);
        pool_destroy(pool);
    });
}

fn read_host_after(ptr: *mut c_void, stream: aclrtStream) -> Vec<u8> {
    // SAFETY: a live stream.
    ok(unsafe { aclrtSynchronizeStream(stream) }, "sync");
    read_host(ptr, N)
}

#[test]
fn a_batch_copy_reading_what_another_stream_still_sets() {
    planted(
        &["read after write", "aclrtMemcpyBatchAsync", "aclrtMemsetAsync"],
        |ordered| {
            let (a, b, buf) = (stream(), stream(), malloc(N));
            let mut pinned = null_mut();
            // SAFETY: valid out-pointer.
            ok(unsafe { aclrtMallocHost(&mut pinned, N) }, "mallocHost");
            fill(buf, 1, N, a);
            if ordered {
                order(a, b);
            }
            let location = |type_| aclrtMemLocation { id: 0, type_ };
            let mut attrs = [aclrtMemcpyBatchAttr {
                dstLoc: location(ACL_MEM_LOCATION_TYPE_HOST),
                srcLoc: location(ACL_MEM_LOCATION_TYPE_DEVICE),
                rsv: [0; 16],
            }];
            let (mut dsts, mut srcs, mut sizes, mut maxes, mut starts) = ([pinned], [buf], [N], [N], [0usize]);
            let mut fail_index = 0;
            // SAFETY: one entry: pinned and device memory of `N` bytes.
            let code = unsafe {
                aclrtMemcpyBatchAsync(
                    dsts.as_mut_ptr(),
                    maxes.as_mut_ptr(),
                    srcs.as_mut_ptr(),
                    sizes.as_mut_ptr(),
                    1,
                    attrs.as_mut_ptr(),
                    starts.as_mut_ptr(),
                    1,
                    &mut fail_index,
                    b,
                )
            };
            ok(code, "memcpyBatchAsync");
            done(a);
            done(b);
            // SAFETY: from aclrtMallocHost, freed once, after both streams.
            ok(unsafe { aclrtFreeHost(pinned) }, "freeHost");
            free(buf);
        },
    );
}

#[test]
fn a_descriptor_copy_writing_what_another_stream_still_sets() {
    planted(
        &["write after write", "aclrtMemcpyAsyncWithDesc", "aclrtMemsetAsync"],
        |ordered| {
            let (a, b, from, to, desc) = (stream(), stream(), malloc(N), malloc(N), malloc(64));
            // SAFETY: device memory of `N` bytes.
            ok(unsafe { aclrtMemset(from, N, 3, N) }, "memset");
            // SAFETY: device pointers; config NULL.
            ok(
                unsafe { aclrtSetMemcpyDesc(desc, ACL_MEMCPY_INNER_DEVICE_TO_DEVICE, from, to, N, null_mut()) },
                "setMemcpyDesc",
            );
            fill(to, 1, N, a);
            if ordered {
                order(a, b);
            }
            // SAFETY: a descriptor set above, a live stream.
            ok(
                unsafe { aclrtMemcpyAsyncWithDesc(desc, ACL_MEMCPY_INNER_DEVICE_TO_DEVICE, b) },
                "memcpyAsyncWithDesc",
            );
            done(a);
            done(b);
            free(desc);
            free(from);
            free(to);
        },
    );
}

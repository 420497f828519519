//! Thread safety of the software device: several threads allocate, map,
//! copy, stream and free at once, on private and shared resources, with
//! every byte checked; the run must finish (no deadlock) and leave the
//! device exactly as it found it (no lost update). Software device only.

use ascend_sys::*;
use std::ffi::c_void;
use std::ptr::null_mut;
use std::sync::mpsc;
use std::time::Duration;

const THREADS: usize = 6;

/// Rounds per thread: 150, times `ASCEND_TEST_SCALE` (default 1) for long
/// local runs.
fn rounds() -> usize {
    let scale = std::env::var("ASCEND_TEST_SCALE")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1usize);
    150 * scale.max(1)
}
const GRANULE: usize = 2 << 20;

fn ok(code: aclError, what: &str) {
    assert_eq!(code, ACL_SUCCESS, "{what}");
}

/// A deterministic byte pattern per thread and round.
fn pattern(thread: usize, round: usize, len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| (i.wrapping_mul(31) ^ (thread * 7) ^ (round * 13)) as u8)
        .collect()
}

/// One worker: private malloc/VMM/stream traffic plus its own slice of a
/// shared buffer.
fn work(thread: usize, shared: usize, slice: usize) {
    let device = (thread % 2) as i32;
    // SAFETY: every pointer passed is a live local buffer or a device
    // address returned by the runtime; sizes match the buffers.
    unsafe {
        ok(aclrtSetDevice(device), "set device");
        let mut stream = null_mut();
        ok(aclrtCreateStream(&mut stream), "create stream");
        let prop = aclrtPhysicalMemProp {
            handleType: ACL_MEM_HANDLE_TYPE_NONE,
            allocationType: ACL_MEM_ALLOCATION_TYPE_PINNED,
            memAttr: ACL_MEM_HUGE,
            location: aclrtMemLocation {
                id: device as u32,
                type_: ACL_MEM_LOCATION_TYPE_DEVICE,
            },
            reserve: 0,
        };
        for round in 0..rounds() {
            let len = 1000 + (thread * 997 + round * 131) % 60_000;
            let data = pattern(thread, round, len);
            // Plain device memory, synchronous.
            let mut dev: *mut c_void = null_mut();
            ok(aclrtMalloc(&mut dev, len, ACL_MEM_MALLOC_HUGE_FIRST), "malloc");
            ok(
                aclrtMemcpy(dev, len, data.as_ptr().cast(), len, ACL_MEMCPY_HOST_TO_DEVICE),
                "h2d",
            );
            // VMM: reserve, allocate, map, copy device to device.
            let mut handle = null_mut();
            let mut base = null_mut();
            ok(aclrtMallocPhysical(&mut handle, GRANULE, &prop, 0), "malloc physical");
            ok(aclrtReserveMemAddress(&mut base, GRANULE, 0, null_mut(), 0), "reserve");
            ok(aclrtMapMem(base, GRANULE, 0, handle, 0), "map");
            ok(aclrtMemcpy(base, GRANULE, dev, len, ACL_MEMCPY_DEVICE_TO_DEVICE), "d2d");
            // Asynchronously back to pinned host memory.
            let mut host = null_mut();
            ok(aclrtMallocHost(&mut host, len), "malloc host");
            ok(
                aclrtMemcpyAsync(host, len, base, len, ACL_MEMCPY_DEVICE_TO_HOST, stream),
                "d2h async",
            );
            ok(aclrtSynchronizeStream(stream), "sync");
            let back = std::slice::from_raw_parts(host.cast::<u8>(), len);
            assert_eq!(back, &data[..], "thread {thread} round {round}: data corrupted");
            // This thread's slice of the shared buffer.
            ok(
                aclrtMemset(
                    (shared + thread * slice) as *mut c_void,
                    slice,
                    (round + thread) as i32,
                    slice,
                ),
                "memset",
            );
            // Tear down in a legal order.
            ok(aclrtFreeHost(host), "free host");
            ok(aclrtUnmapMem(base), "unmap");
            ok(aclrtFreePhysical(handle), "free physical");
            ok(aclrtReleaseMemAddress(base), "release");
            ok(aclrtFree(dev), "free");
        }
        ok(aclrtDestroyStream(stream), "destroy stream");
        ok(aclrtResetDevice(device), "reset device");
    }
}

#[test]
fn many_threads_share_the_device_without_lost_updates_or_deadlock() {
    select_backend(BackendRequest::Software).unwrap();
    let slice = 4096;
    let mut shared = null_mut();
    let before;
    // SAFETY: valid out-pointers.
    unsafe {
        ok(aclrtSetDevice(0), "set device");
        ok(
            aclrtMalloc(&mut shared, THREADS * slice, ACL_MEM_MALLOC_HUGE_FIRST),
            "shared malloc",
        );
        before = soft::live();
    }
    let shared = shared as usize;
    let (done, finished) = mpsc::channel();
    let workers: Vec<_> = (0..THREADS)
        .map(|thread| {
            let done = done.clone();
            std::thread::spawn(move || {
                work(thread, shared, slice);
                let _ = done.send(thread);
            })
        })
        .collect();
    drop(done);
    for _ in 0..THREADS {
        // A deadlock shows as a timeout rather than a hung test run.
        let finished_thread = finished.recv_timeout(Duration::from_secs(60));
        assert!(
            finished_thread.is_ok(),
            "a worker did not finish within 60 s (deadlock?)"
        );
    }
    for worker in workers {
        worker.join().expect("worker panicked");
    }
    // Every thread's last memset landed in its own slice, none lost.
    let mut back = vec![0u8; THREADS * slice];
    // SAFETY: `back` holds the whole shared buffer.
    unsafe {
        ok(
            aclrtMemcpy(
                back.as_mut_ptr().cast(),
                back.len(),
                shared as *mut c_void,
                back.len(),
                ACL_MEMCPY_DEVICE_TO_HOST,
            ),
            "read shared",
        );
    }
    for thread in 0..THREADS {
        let expected = ((rounds() - 1 + thread) % 256) as u8;
        assert!(
            back[thread * slice..(thread + 1) * slice]
                .iter()
                .all(|&b| b == expected),
            "thread {thread}'s slice lost an update"
        );
    }
    assert_eq!(soft::live(), before, "resources leaked:\n{}", soft::leak_report());
    // SAFETY: the shared buffer is freed once.
    unsafe {
        ok(aclrtFree(shared as *mut c_void), "free shared");
        ok(aclrtResetDevice(0), "reset device");
    }
}

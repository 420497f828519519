//! Shared benchmark settings and helpers.
//!
//! Every group measures an operation beside its physical limit on this
//! machine (a plain host copy, an `mmap`/`munmap` pair) in the same run;
//! the ratios, not the absolute times, are the claim
//! (`scripts/bench-report.py` computes them; `docs/performance.md` has the
//! tables).

#![allow(dead_code)]

use ascend_sys as sys;
use criterion::Criterion;
use std::ffi::c_void;
use std::time::Duration;

/// A criterion configuration that fits a 2-core shared machine.
pub fn config() -> Criterion {
    Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_millis(1200))
        .without_plots()
}

/// Panics with the call and code: benchmarks have no other way to report.
pub fn ok(code: sys::aclError, what: &str) {
    assert_eq!(code, sys::ACL_SUCCESS, "{what} failed");
}

/// Selects the software device and makes device 0 current.
pub fn software_device() {
    sys::select_backend(sys::BackendRequest::Software).expect("software device");
    // SAFETY: no pointer arguments.
    ok(unsafe { sys::aclrtSetDevice(0) }, "aclrtSetDevice");
}

/// `size` bytes of device memory, written once so pages are resident.
pub fn device_buffer(size: usize) -> *mut c_void {
    let mut ptr = std::ptr::null_mut();
    // SAFETY: valid out-pointer; the memset covers the allocation.
    unsafe {
        ok(
            sys::aclrtMalloc(&mut ptr, size, sys::ACL_MEM_MALLOC_HUGE_FIRST),
            "aclrtMalloc",
        );
        ok(sys::aclrtMemset(ptr, size, 1, size), "aclrtMemset");
    }
    ptr
}

/// `size` bytes of pinned host memory, written once.
pub fn host_buffer(size: usize) -> *mut c_void {
    let mut ptr = std::ptr::null_mut();
    // SAFETY: valid out-pointer; the allocation holds `size` bytes.
    unsafe {
        ok(sys::aclrtMallocHost(&mut ptr, size), "aclrtMallocHost");
        ptr.cast::<u8>().write_bytes(2, size);
    }
    ptr
}

/// Device-memory properties of device 0 with huge pages.
pub fn device_prop() -> sys::aclrtPhysicalMemProp {
    sys::aclrtPhysicalMemProp {
        handleType: sys::ACL_MEM_HANDLE_TYPE_NONE,
        allocationType: sys::ACL_MEM_ALLOCATION_TYPE_PINNED,
        memAttr: sys::ACL_MEM_HUGE,
        location: sys::aclrtMemLocation {
            id: 0,
            type_: sys::ACL_MEM_LOCATION_TYPE_DEVICE,
        },
        reserve: 0,
    }
}

/// Human-readable size for benchmark ids.
pub fn label(size: usize) -> String {
    match size {
        s if s >= 1 << 30 => format!("{}GiB", s >> 30),
        s if s >= 1 << 20 => format!("{}MiB", s >> 20),
        s if s >= 1 << 10 => format!("{}KiB", s >> 10),
        s => format!("{s}B"),
    }
}

/// A new stream of the current device.
pub fn raw_stream() -> sys::aclrtStream {
    let mut stream = std::ptr::null_mut();
    // SAFETY: valid out-pointer.
    ok(unsafe { sys::aclrtCreateStream(&mut stream) }, "aclrtCreateStream");
    stream
}

/// Waits for everything queued on `stream`.
pub fn synchronize(stream: sys::aclrtStream) {
    // SAFETY: no pointer arguments besides the stream handle.
    ok(unsafe { sys::aclrtSynchronizeStream(stream) }, "aclrtSynchronizeStream");
}

/// Queues a host-to-device copy of `size` bytes from pinned `src` to
/// `dst` on `stream`.
///
/// # Safety
///
/// `dst` and `src` hold `size` bytes and stay live until `stream` is
/// synchronised.
pub unsafe fn copy_async(dst: *mut c_void, src: *const c_void, size: usize, stream: sys::aclrtStream) {
    // SAFETY: forwarded contract.
    let code = unsafe { sys::aclrtMemcpyAsync(dst, size, src, size, sys::ACL_MEMCPY_HOST_TO_DEVICE, stream) };
    ok(code, "aclrtMemcpyAsync");
}

/// Copies queued between two synchronisations in [`queued_copies`].
pub const BATCH: u64 = 64;

/// `iterations` queued copies as [`copy_async`], with a synchronisation
/// after every [`BATCH`] of them and at the end (so the queue stays
/// short): the time per call of queuing a copy, its share of a
/// synchronisation included.
///
/// # Safety
///
/// As [`copy_async`].
pub unsafe fn queued_copies(
    iterations: u64,
    (dst, src, size): (*mut c_void, *const c_void, usize),
    stream: sys::aclrtStream,
) -> Duration {
    let start = std::time::Instant::now();
    for call in 0..iterations {
        // SAFETY: forwarded contract.
        unsafe { copy_async(dst, src, size, stream) };
        if call % BATCH == BATCH - 1 {
            synchronize(stream);
        }
    }
    synchronize(stream);
    start.elapsed()
}

/// Runs `body(iterations)` on `threads` threads at once; the time until
/// all are done (per iteration: the time of one iteration of each thread,
/// so throughput on two threads ÷ one = 2 × one's time ÷ two's).
pub fn on_threads(threads: usize, iterations: u64, body: impl Fn(u64) + Sync) -> Duration {
    let start = std::time::Instant::now();
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| body(iterations));
        }
    });
    start.elapsed()
}

/// glibc `malloc` + `free` of `layout` (through `System`): the general-
/// purpose allocator a pool hit is set beside.
pub fn glibc_malloc_free(layout: std::alloc::Layout) {
    use std::alloc::{GlobalAlloc, System};
    // SAFETY: the benches' layouts have a non-zero size; the block is
    // freed with its layout.
    unsafe {
        let block = System.alloc(layout);
        assert!(!block.is_null());
        System.dealloc(std::hint::black_box(block), layout);
    }
}

/// `aclrtMalloc` + `aclrtFree` of `size` bytes.
pub fn malloc_free(size: usize) {
    let mut ptr = std::ptr::null_mut();
    // SAFETY: valid out-pointer; the block is freed once, unused.
    unsafe {
        ok(
            sys::aclrtMalloc(&mut ptr, size, sys::ACL_MEM_MALLOC_HUGE_FIRST),
            "aclrtMalloc",
        );
        ok(sys::aclrtFree(std::hint::black_box(ptr)), "aclrtFree");
    }
}

/// A synchronous host-to-device `aclrtMemcpy` of `size` bytes.
///
/// # Safety
///
/// `dst` and `src` hold `size` bytes.
pub unsafe fn memcpy_h2d(dst: *mut c_void, src: *const c_void, size: usize) {
    // SAFETY: forwarded contract.
    let code = unsafe { sys::aclrtMemcpy(dst, size, src, size, sys::ACL_MEMCPY_HOST_TO_DEVICE) };
    ok(code, "aclrtMemcpy");
}

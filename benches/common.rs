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

//! The software device's memory stays sparse: host RAM backs only device
//! bytes that were written and are still allocated. A large free gives its
//! pages back at once; small frees give theirs back in batches, so at most
//! a bounded amount of RAM stays behind freed memory. Measured as this
//! process's resident set (`/proc/self/statm`, shared pages included: the
//! device memory is a shared mapping of a `memfd`). One test in this file,
//! so no other test moves the figures. Software device only.

mod soft_common;

use ascend_sys::*;
use soft_common::on_device;
use std::ffi::c_void;
use std::ptr::null_mut;

const MIB: usize = 1 << 20;

/// Small frees may leave this much resident (the budget is 32 MiB; the rest
/// is slack for the allocator and the test itself).
const SLACK: usize = 48 * MIB;

fn resident() -> usize {
    let statm = std::fs::read_to_string("/proc/self/statm").expect("statm");
    let pages: usize = statm
        .split_whitespace()
        .nth(1)
        .and_then(|field| field.parse().ok())
        .expect("resident pages");
    pages * 4096
}

fn ok(code: aclError, what: &str) {
    assert_eq!(code, ACL_SUCCESS, "{what}");
}

/// `size` bytes of device memory, all written.
fn written(size: usize) -> *mut c_void {
    let mut ptr = null_mut();
    // SAFETY: a valid out-pointer; the memset covers the new allocation.
    unsafe {
        ok(aclrtMalloc(&mut ptr, size, ACL_MEM_MALLOC_HUGE_FIRST), "malloc");
        ok(aclrtMemset(ptr, size, 0x5A, size), "memset");
    }
    ptr
}

fn free(ptr: *mut c_void) {
    // SAFETY: a live allocation, freed once.
    ok(unsafe { aclrtFree(ptr) }, "free");
}

#[test]
fn freed_memory_gives_its_ram_back() {
    on_device(|| {
        let start = resident();
        // A zeroed 1 GiB buffer: resident while allocated, gone once freed.
        let big = written(1 << 30);
        let full = resident();
        assert!(full >= start + 900 * MIB, "1 GiB written: {start} -> {full}");
        free(big);
        let after = resident();
        assert!(after <= start + SLACK, "1 GiB freed: {start} -> {full} -> {after}");

        // 256 MiB in 64 KiB buffers: small frees, released in batches.
        let small: Vec<_> = (0..4096).map(|_| written(64 << 10)).collect();
        let full = resident();
        assert!(
            full >= start + 240 * MIB,
            "256 MiB written in 64 KiB buffers: {start} -> {full}"
        );
        small.into_iter().for_each(free);
        let after = resident();
        assert!(
            after <= start + SLACK,
            "256 MiB freed in 64 KiB buffers: {start} -> {full} -> {after}"
        );
    });
}

//! `aclrtMemsetD32` and `aclrtMemsetD32Async` on the software device: the
//! ACL layer's argument rules with its codes (`hicann/runtime`
//! `src/acl/aclrt_impl/memory.cpp`), the 32-bit pattern in every element
//! with the rest untouched, the asynchronous set ordered by its stream, and
//! pinned host memory set during the call. Software device only.

mod soft_common;

use ascend_sys::*;
use soft_common::raw::{create_stream, destroy_stream, free, malloc};
use soft_common::{on_device, recent};
use std::ffi::c_void;
use std::ptr::null_mut;

const PATTERN: u32 = 0xDEAD_BEEF;

fn sync(stream: aclrtStream) {
    // SAFETY: a live stream.
    assert_eq!(unsafe { aclrtSynchronizeStream(stream) }, ACL_SUCCESS);
}

fn d32(ptr: *mut c_void, mem_size: usize, value: u32, n: usize) -> aclError {
    // SAFETY: callers pass memory of `mem_size` bytes, or a pointer the
    // checks refuse before use.
    unsafe { aclrtMemsetD32(ptr, mem_size, value, n) }
}

fn d32_async(ptr: *mut c_void, mem_size: usize, value: u32, n: usize, stream: aclrtStream) -> aclError {
    // SAFETY: as in `d32`.
    unsafe { aclrtMemsetD32Async(ptr, mem_size, value, n, stream) }
}

/// Sets `bytes` bytes of device memory to `value` (synchronously).
fn memset(ptr: *mut c_void, value: i32, bytes: usize) {
    // SAFETY: live device memory of at least `bytes` bytes.
    assert_eq!(unsafe { aclrtMemset(ptr, bytes, value, bytes) }, ACL_SUCCESS);
}

/// Reads `elements` 32-bit words of device memory.
fn read_words(ptr: *mut c_void, elements: usize) -> Vec<u32> {
    let mut out = vec![0u32; elements];
    // SAFETY: `out` holds `elements * 4` bytes; `ptr` is live device memory
    // of at least that many.
    let code = unsafe {
        aclrtMemcpy(
            out.as_mut_ptr().cast(),
            elements * 4,
            ptr,
            elements * 4,
            ACL_MEMCPY_DEVICE_TO_HOST,
        )
    };
    assert_eq!(code, ACL_SUCCESS);
    out
}

fn expect_words(ptr: *mut c_void, set: usize, total: usize, rest: u32) {
    let words = read_words(ptr, total);
    for (index, &word) in words.iter().enumerate() {
        let want = if index < set { PATTERN } else { rest };
        assert_eq!(word, want, "element {index} of {total} ({set} set)");
    }
}

/// Every ACL check of both calls, in its order, with its code and no write.
fn refuses(call: &dyn Fn(*mut c_void, usize, u32, usize) -> aclError) {
    let buf = malloc(64);
    memset(buf, 0, 64);
    assert_eq!(call(null_mut(), 64, PATTERN, 4), ACL_ERROR_INVALID_PARAM);
    assert!(recent().contains("ptr is NULL"), "{}", recent());
    // N 0 is refused (unlike aclrtMemset's count 0), even with NULL.
    assert_eq!(call(buf, 64, PATTERN, 0), ACL_ERROR_INVALID_PARAM);
    assert!(recent().contains("N must be positive"), "{}", recent());
    // SAFETY: inside the allocation.
    let odd = unsafe { buf.cast::<u8>().add(2) }.cast::<c_void>();
    assert_eq!(call(odd, 60, PATTERN, 1), ACL_ERROR_INVALID_PARAM);
    assert!(recent().contains("not 4-byte aligned"), "{}", recent());
    // memSize counts bytes: 4 elements need 16.
    assert_eq!(call(buf, 15, PATTERN, 4), ACL_ERROR_INVALID_PARAM);
    assert!(recent().contains("N * 4"), "{}", recent());
    assert_eq!(call(buf, usize::MAX, PATTERN, usize::MAX / 2), ACL_ERROR_INVALID_PARAM);
    // Pageable host memory is neither aclrtMalloc nor aclrtMallocHost memory.
    let mut pageable = vec![0u32; 4];
    assert_eq!(
        call(pageable.as_mut_ptr().cast(), 16, PATTERN, 4),
        ACL_ERROR_INVALID_PARAM
    );
    assert!(recent().contains("aclrtMallocHost"), "{}", recent());
    assert_eq!(pageable, [0; 4]);
    expect_words(buf, 0, 16, 0);
    free(buf);
}

#[test]
fn memset_d32_argument_rules() {
    on_device(|| refuses(&|ptr, size, value, n| d32(ptr, size, value, n)));
}

#[test]
fn memset_d32_async_argument_rules() {
    on_device(|| {
        let stream = create_stream();
        refuses(&|ptr, size, value, n| d32_async(ptr, size, value, n, stream));
        destroy_stream(stream);
        let buf = malloc(64);
        // A destroyed stream is an invalid handle.
        assert_ne!(d32_async(buf, 64, PATTERN, 4, stream), ACL_SUCCESS);
        free(buf);
    });
}

#[test]
fn memset_d32_sets_every_element_and_leaves_the_rest() {
    on_device(|| {
        const TOTAL: usize = 1024;
        let buf = malloc(TOTAL * 4);
        memset(buf, 0x11, TOTAL * 4);
        // A partial count: 777 elements; memSize may exceed N * 4.
        assert_eq!(d32(buf, TOTAL * 4, PATTERN, 777), ACL_SUCCESS);
        expect_words(buf, 777, TOTAL, 0x1111_1111);
        // Starting inside the allocation at a 4-byte offset.
        memset(buf, 0, TOTAL * 4);
        // SAFETY: inside the allocation.
        let inner = unsafe { buf.cast::<u32>().add(3) }.cast::<c_void>();
        assert_eq!(d32(inner, 8, PATTERN, 2), ACL_SUCCESS);
        let words = read_words(buf, 8);
        assert_eq!(words, [0, 0, 0, PATTERN, PATTERN, 0, 0, 0]);
        free(buf);
    });
}

#[test]
fn memset_d32_on_pinned_host_memory() {
    on_device(|| {
        let mut host = null_mut();
        // SAFETY: `host` is a valid out-pointer.
        assert_eq!(unsafe { aclrtMallocHost(&mut host, 64) }, ACL_SUCCESS);
        let words = host.cast::<u32>();
        // SAFETY: 64 bytes of live pinned memory, 16 aligned words.
        unsafe { std::ptr::write_bytes(words, 0, 16) };
        assert_eq!(d32(host, 64, PATTERN, 5), ACL_SUCCESS);
        // SAFETY: as above.
        let seen = unsafe { std::slice::from_raw_parts(words, 16) }.to_vec();
        assert_eq!(&seen[..5], [PATTERN; 5]);
        assert_eq!(&seen[5..], [0; 11]);
        // SAFETY: from aclrtMallocHost, freed once.
        assert_eq!(unsafe { aclrtFreeHost(host) }, ACL_SUCCESS);
    });
}

fn event_sync() -> aclrtEvent {
    let mut event = null_mut();
    // SAFETY: `event` is a valid out-pointer.
    assert_eq!(
        unsafe { aclrtCreateEventWithFlag(&mut event, ACL_EVENT_SYNC) },
        ACL_SUCCESS
    );
    event
}

#[test]
fn memset_d32_async_is_ordered_by_its_stream() {
    on_device(|| {
        const TOTAL: usize = 256;
        let buf = malloc(TOTAL * 4);
        memset(buf, 0, TOTAL * 4);
        let stream = create_stream();
        // Block the stream on an event not recorded yet.
        let gate = event_sync();
        // SAFETY: live stream and event.
        assert_eq!(unsafe { aclrtStreamWaitEvent(stream, gate) }, ACL_SUCCESS);
        // SAFETY: live device memory.
        assert_eq!(
            unsafe { aclrtMemsetAsync(buf, TOTAL * 4, 0x22, TOTAL * 4, stream) },
            ACL_SUCCESS
        );
        assert_eq!(d32_async(buf, TOTAL * 4, PATTERN, 100, stream), ACL_SUCCESS);
        // Nothing has run: the stream waits.
        expect_words(buf, 0, TOTAL, 0);
        let opener = create_stream();
        // SAFETY: live event and stream.
        assert_eq!(unsafe { aclrtRecordEvent(gate, opener) }, ACL_SUCCESS);
        sync(opener);
        sync(stream);
        // The byte set ran first, then the 32-bit set over part of it.
        expect_words(buf, 100, TOTAL, 0x2222_2222);
        destroy_stream(opener);
        destroy_stream(stream);
        // SAFETY: a live event, destroyed once.
        assert_eq!(unsafe { aclrtDestroyEvent(gate) }, ACL_SUCCESS);
        free(buf);
    });
}

#[test]
fn memset_d32_async_on_pinned_host_memory_sets_during_the_call() {
    on_device(|| {
        let mut host = null_mut();
        // SAFETY: `host` is a valid out-pointer.
        assert_eq!(unsafe { aclrtMallocHost(&mut host, 32) }, ACL_SUCCESS);
        let words = host.cast::<u32>();
        // SAFETY: 32 bytes of live pinned memory.
        unsafe { std::ptr::write_bytes(words, 0, 8) };
        let stream = create_stream();
        let gate = event_sync();
        // SAFETY: live stream and event.
        assert_eq!(unsafe { aclrtStreamWaitEvent(stream, gate) }, ACL_SUCCESS);
        assert_eq!(d32_async(host, 32, PATTERN, 3, stream), ACL_SUCCESS);
        // Set already, although the stream is blocked.
        // SAFETY: as above.
        let seen = unsafe { std::slice::from_raw_parts(words, 8) }.to_vec();
        assert_eq!(seen, [PATTERN, PATTERN, PATTERN, 0, 0, 0, 0, 0]);
        let opener = create_stream();
        // SAFETY: live event and stream.
        assert_eq!(unsafe { aclrtRecordEvent(gate, opener) }, ACL_SUCCESS);
        sync(opener);
        sync(stream);
        destroy_stream(opener);
        destroy_stream(stream);
        // SAFETY: a live event, destroyed once.
        assert_eq!(unsafe { aclrtDestroyEvent(gate) }, ACL_SUCCESS);
        // SAFETY: from aclrtMallocHost, freed once.
        assert_eq!(unsafe { aclrtFreeHost(host) }, ACL_SUCCESS);
    });
}

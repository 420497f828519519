//! Device memory used from many threads at once: each thread allocates from
//! a shard of its own, so what one thread frees another may need. Software
//! device only (a small device, and exact capacity accounting); a file of
//! its own so that no other test allocates meanwhile.

mod soft_common;

use ascend_sys::*;
use std::ffi::c_void;
use std::ptr::null_mut;

const MEMORY: u64 = 64 << 20;

/// The tests of this file check exact free bytes: one at a time.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn start() -> std::sync::MutexGuard<'static, ()> {
    let turn = ONE_AT_A_TIME.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    select_backend(BackendRequest::Software).unwrap();
    soft::configure(soft::Config {
        device_count: 1,
        device_memory: MEMORY,
        ..soft::Config::default()
    })
    .unwrap();
    turn
}

fn mem_free() -> usize {
    let (mut free, mut total) = (0, 0);
    // SAFETY: valid out-pointers.
    assert_eq!(
        unsafe { aclrtGetMemInfo(ACL_HBM_MEM, &mut free, &mut total) },
        ACL_SUCCESS
    );
    assert_eq!(total as u64, MEMORY);
    free
}

/// Runs `body` on `threads` threads, each with device 0 set.
fn on_threads(threads: usize, body: impl Fn(usize) + Sync) {
    std::thread::scope(|scope| {
        for index in 0..threads {
            let body = &body;
            scope.spawn(move || {
                // SAFETY: no pointer arguments.
                assert_eq!(unsafe { aclrtSetDevice(0) }, ACL_SUCCESS);
                body(index);
                // SAFETY: as above.
                assert_eq!(unsafe { aclrtResetDevice(0) }, ACL_SUCCESS);
            });
        }
    });
}

#[test]
fn threads_copy_through_their_own_buffers_and_the_accounting_returns() {
    let _turn = start();
    // SAFETY: no pointer arguments.
    assert_eq!(unsafe { aclrtSetDevice(0) }, ACL_SUCCESS);
    let before = (mem_free(), soft::live());
    on_threads(6, |index| {
        for round in 0..200usize {
            let size = 64 + (index * 977 + round * 131) % 8192;
            let pattern: Vec<u8> = (0..size).map(|byte| (byte + index + round) as u8).collect();
            let mut back = vec![0u8; size];
            let mut device: *mut c_void = null_mut();
            // SAFETY: valid pointers and lengths; the buffer is this
            // thread's own and freed at the end of the round.
            unsafe {
                assert_eq!(aclrtMalloc(&mut device, size, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
                let h2d = aclrtMemcpy(device, size, pattern.as_ptr().cast(), size, ACL_MEMCPY_HOST_TO_DEVICE);
                assert_eq!(h2d, ACL_SUCCESS);
                let d2h = aclrtMemcpy(back.as_mut_ptr().cast(), size, device, size, ACL_MEMCPY_DEVICE_TO_HOST);
                assert_eq!(d2h, ACL_SUCCESS);
                assert_eq!(aclrtFree(device), ACL_SUCCESS);
            }
            assert_eq!(back, pattern, "thread {index}, round {round}");
        }
    });
    assert_eq!(mem_free(), before.0);
    assert_eq!(soft::live(), before.1);

    // Empty slabs the threads' shards keep are handed back when a buffer
    // needs their room: all the free memory in one allocation.
    let mut whole: *mut c_void = null_mut();
    let free = mem_free();
    // SAFETY: a valid out-pointer; freed below. `aclrtMallocAlign32` adds
    // no padding, so exactly the free bytes (a multiple of 32) fit.
    unsafe {
        assert_eq!(
            aclrtMallocAlign32(&mut whole, free, ACL_MEM_MALLOC_HUGE_FIRST),
            ACL_SUCCESS,
            "{:?}",
            soft::recent_error()
        );
        assert_eq!(mem_free(), 0);
        let mut one_more: *mut c_void = null_mut();
        assert_eq!(
            aclrtMalloc(&mut one_more, 1, ACL_MEM_MALLOC_HUGE_FIRST),
            ACL_ERROR_RT_MEMORY_ALLOCATION
        );
        assert_eq!(aclrtFree(whole), ACL_SUCCESS);
    }
    assert_eq!(mem_free(), free);
    // SAFETY: no pointer arguments.
    assert_eq!(unsafe { aclrtResetDevice(0) }, ACL_SUCCESS);
}

#[test]
fn physical_memory_can_take_what_the_threads_shards_set_aside() {
    let _turn = start();
    // SAFETY: no pointer arguments.
    assert_eq!(unsafe { aclrtSetDevice(0) }, ACL_SUCCESS);
    // Each thread's shard keeps capacity and a slab for its next buffers.
    on_threads(4, |_| {
        let mut device: *mut c_void = null_mut();
        // SAFETY: a valid out-pointer; freed at once.
        unsafe {
            assert_eq!(aclrtMalloc(&mut device, 4096, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
            assert_eq!(aclrtFree(device), ACL_SUCCESS);
        }
    });
    let free = mem_free();
    assert_eq!(free as u64, MEMORY, "nothing is allocated, whatever the shards keep");
    let prop = soft_common::device_prop(0);
    let mut handle = null_mut();
    // SAFETY: valid pointers; the handle is freed below.
    unsafe {
        assert_eq!(
            aclrtMallocPhysical(&mut handle, free, &prop, 0),
            ACL_SUCCESS,
            "{:?}",
            soft::recent_error()
        );
        assert_eq!(mem_free(), 0);
        assert_eq!(aclrtFreePhysical(handle), ACL_SUCCESS);
        assert_eq!(mem_free(), free);
        assert_eq!(aclrtResetDevice(0), ACL_SUCCESS);
    }
}

#[test]
fn a_small_buffer_fits_in_the_last_bytes_when_no_whole_slab_is_free() {
    let _turn = start();
    // SAFETY: valid out-pointers; everything is freed below.
    unsafe {
        assert_eq!(aclrtSetDevice(0), ACL_SUCCESS);
        let free = mem_free();
        assert_eq!(free as u64, MEMORY);
        // Leaves 1.5 MiB at the end: no whole 2 MiB slab for a shard.
        let mut large: *mut c_void = null_mut();
        let leave = 3 << 19;
        assert_eq!(
            aclrtMallocAlign32(&mut large, free - leave, ACL_MEM_MALLOC_HUGE_FIRST),
            ACL_SUCCESS,
            "{:?}",
            soft::recent_error()
        );
        assert_eq!(mem_free(), leave);
        // Small (a shard's size) but with no slab for it: placed by the
        // space, counted once.
        let mut small: *mut c_void = null_mut();
        assert_eq!(
            aclrtMalloc(&mut small, 768 << 10, ACL_MEM_MALLOC_HUGE_FIRST),
            ACL_SUCCESS,
            "{:?}",
            soft::recent_error()
        );
        assert_eq!(mem_free(), leave - (768 << 10) - 32);
        assert_eq!(aclrtFree(small), ACL_SUCCESS);
        assert_eq!(aclrtFree(large), ACL_SUCCESS);
        assert_eq!(mem_free(), free);
        assert_eq!(aclrtResetDevice(0), ACL_SUCCESS);
    }
}

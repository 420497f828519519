//! The software device's rules for device/host memory, copies and memsets:
//! each test breaks one rule and checks the exact code the real runtime
//! returns (`acl-behaviour.md` §4–§6). Software device only: these tests
//! select it explicitly.

mod soft_common;

use ascend_sys::*;
use soft_common::raw::malloc;
use soft_common::{on_device, recent, software, without_device};
use std::ffi::c_void;
use std::ptr::null_mut;

#[test]
fn malloc_refuses_null_out_pointer_and_zero_size() {
    on_device(|| {
        let mut ptr = null_mut();
        // SAFETY: a NULL out-pointer is refused before any write.
        assert_eq!(unsafe { aclrtMalloc(null_mut(), 64, 0) }, ACL_ERROR_INVALID_PARAM);
        assert!(recent().contains("devPtr"));
        // SAFETY: `ptr` is a valid out-pointer.
        assert_eq!(unsafe { aclrtMalloc(&mut ptr, 0, 0) }, ACL_ERROR_INVALID_PARAM);
        assert!(recent().contains("size is 0"));
        // SAFETY: as above.
        assert_eq!(unsafe { aclrtMallocAlign32(&mut ptr, 0, 0) }, ACL_ERROR_INVALID_PARAM);
        // SAFETY: as above.
        assert_eq!(unsafe { aclrtMallocCached(&mut ptr, 0, 0) }, ACL_ERROR_INVALID_PARAM);
        // SAFETY: as above; size_t overflow on rounding.
        assert_eq!(
            unsafe { aclrtMalloc(&mut ptr, usize::MAX - 8, 0) },
            ACL_ERROR_INVALID_PARAM
        );
    });
}

#[test]
fn calls_that_need_a_context_fail_without_one() {
    without_device(|| {
        let mut ptr = null_mut();
        let (mut free, mut total) = (0, 0);
        let mut device = -1;
        let mut buf = [0u8; 16];
        // SAFETY: every out-pointer is valid; the host buffers are live.
        unsafe {
            assert_eq!(aclrtMalloc(&mut ptr, 64, 0), ACL_ERROR_RT_CONTEXT_NULL);
            assert!(recent().contains("aclrtSetDevice"));
            assert_eq!(aclrtMallocHost(&mut ptr, 64), ACL_ERROR_RT_CONTEXT_NULL);
            assert_eq!(
                aclrtGetMemInfo(ACL_HBM_MEM, &mut free, &mut total),
                ACL_ERROR_RT_CONTEXT_NULL
            );
            assert_eq!(aclrtGetDevice(&mut device), ACL_ERROR_RT_CONTEXT_NULL);
            let src = [1u8; 16];
            assert_eq!(
                aclrtMemcpy(
                    buf.as_mut_ptr().cast(),
                    16,
                    src.as_ptr().cast(),
                    16,
                    ACL_MEMCPY_HOST_TO_HOST
                ),
                ACL_ERROR_RT_CONTEXT_NULL
            );
            assert_eq!(
                aclrtMemset(buf.as_mut_ptr().cast(), 16, 0, 16),
                ACL_ERROR_RT_CONTEXT_NULL
            );
            assert_eq!(aclrtSynchronizeDevice(), ACL_ERROR_RT_CONTEXT_NULL);
        }
    });
}

#[test]
fn free_works_without_a_context_but_refuses_bad_pointers() {
    // This thread keeps device 0 retained, so that the allocating thread's
    // reset is not the last one (which would tear the memory down).
    software();
    // SAFETY: no pointer arguments.
    assert_eq!(unsafe { aclrtSetDevice(0) }, ACL_SUCCESS);
    let ptr = on_device(|| malloc(256) as usize);
    without_device(move || {
        // SAFETY: `ptr` is a live allocation; interior and repeated frees are
        // refused without touching memory.
        unsafe {
            assert_eq!(aclrtFree(null_mut()), ACL_ERROR_INVALID_PARAM);
            assert_eq!(aclrtFree((ptr + 32) as *mut c_void), ACL_ERROR_RT_PARAM_INVALID);
            assert!(recent().contains("not its start"));
            assert_eq!(aclrtFree(ptr as *mut c_void), ACL_SUCCESS);
            assert_eq!(aclrtFree(ptr as *mut c_void), ACL_ERROR_RT_PARAM_INVALID);
            assert!(recent().contains("not a live device allocation"));
            let mut local = 0u64;
            assert_eq!(aclrtFree((&raw mut local).cast()), ACL_ERROR_RT_PARAM_INVALID);
            assert!(recent().contains("not a device address"));
        }
    });
    // SAFETY: no pointer arguments; balances the retain above.
    assert_eq!(unsafe { aclrtResetDevice(0) }, ACL_SUCCESS);
}

#[test]
fn device_addresses_are_distinct_and_aligned() {
    on_device(|| {
        let a = malloc(1) as usize;
        let b = malloc(1) as usize;
        assert_ne!(a, b);
        assert_eq!(a % 512, 0, "the runtime allocates at 512-byte alignment");
        assert_eq!(b % 512, 0);
        // SAFETY: both are live allocations.
        unsafe {
            assert_eq!(aclrtFree(a as *mut c_void), ACL_SUCCESS);
            assert_eq!(aclrtFree(b as *mut c_void), ACL_SUCCESS);
        }
    });
}

#[test]
fn round_trip_host_device_device_host() {
    on_device(|| {
        let data: Vec<u8> = (0..100_000u32).map(|i| (i * 7 % 251) as u8).collect();
        let n = data.len();
        let a = malloc(n);
        let b = malloc(n);
        let mut back = vec![0u8; n];
        // SAFETY: `a` and `b` hold `n` bytes; host buffers are live.
        unsafe {
            assert_eq!(
                aclrtMemcpy(a, n, data.as_ptr().cast(), n, ACL_MEMCPY_HOST_TO_DEVICE),
                ACL_SUCCESS
            );
            assert_eq!(aclrtMemcpy(b, n, a, n, ACL_MEMCPY_DEVICE_TO_DEVICE), ACL_SUCCESS);
            // The kind is only range-checked: DEFAULT infers the direction.
            assert_eq!(
                aclrtMemcpy(back.as_mut_ptr().cast(), n, b, n, ACL_MEMCPY_DEFAULT),
                ACL_SUCCESS
            );
            assert_eq!(aclrtFree(a), ACL_SUCCESS);
            assert_eq!(aclrtFree(b), ACL_SUCCESS);
        }
        assert_eq!(back, data);
    });
}

#[test]
fn memcpy_argument_rules() {
    on_device(|| {
        let dev = malloc(64);
        let mut host = [0u8; 128];
        let h = host.as_mut_ptr().cast::<c_void>();
        // SAFETY: every pointer is NULL (refused before use) or live with
        // the sizes given.
        unsafe {
            // count 0 succeeds without looking at the pointers.
            assert_eq!(aclrtMemcpy(null_mut(), 0, std::ptr::null(), 0, 99), ACL_SUCCESS);
            assert_eq!(
                aclrtMemcpy(null_mut(), 8, h, 8, ACL_MEMCPY_HOST_TO_DEVICE),
                ACL_ERROR_INVALID_PARAM
            );
            assert_eq!(
                aclrtMemcpy(dev, 8, std::ptr::null(), 8, ACL_MEMCPY_HOST_TO_DEVICE),
                ACL_ERROR_INVALID_PARAM
            );
            // Kinds 6 and 7 are refused by aclrtMemcpy.
            assert_eq!(
                aclrtMemcpy(dev, 8, h, 8, ACL_MEMCPY_INNER_DEVICE_TO_DEVICE),
                ACL_ERROR_INVALID_PARAM
            );
            assert_eq!(
                aclrtMemcpy(dev, 8, h, 8, ACL_MEMCPY_INTER_DEVICE_TO_DEVICE),
                ACL_ERROR_INVALID_PARAM
            );
            assert_eq!(
                aclrtMemcpy(dev, 0, h, 8, ACL_MEMCPY_HOST_TO_DEVICE),
                ACL_ERROR_RT_PARAM_INVALID
            );
            assert!(recent().contains("destMax is 0"));
            assert_eq!(
                aclrtMemcpy(dev, 8, h, 9, ACL_MEMCPY_HOST_TO_DEVICE),
                ACL_ERROR_RT_PARAM_INVALID
            );
            assert!(recent().contains("larger than destMax"));
            // dst == src: success, nothing copied.
            assert_eq!(aclrtMemcpy(dev, 8, dev, 8, ACL_MEMCPY_DEVICE_TO_DEVICE), ACL_SUCCESS);
            // 64 requested, 96 reserved (32-aligned + 32 padding): 96 fit,
            // 97 run past the allocation.
            assert_eq!(aclrtMemcpy(dev, 128, h, 96, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
            assert_eq!(
                aclrtMemcpy(dev, 128, h, 97, ACL_MEMCPY_HOST_TO_DEVICE),
                ACL_ERROR_RT_PARAM_INVALID
            );
            assert!(recent().contains("past the end"));
            assert_eq!(aclrtFree(dev), ACL_SUCCESS);
            // Freed memory is no longer reachable.
            assert_eq!(
                aclrtMemcpy(h, 8, dev, 8, ACL_MEMCPY_DEVICE_TO_HOST),
                ACL_ERROR_RT_PARAM_INVALID
            );
            assert!(recent().contains("not inside a live allocation"));
        }
    });
}

#[test]
fn memset_truncates_the_value_and_checks_max_count() {
    on_device(|| {
        let dev = malloc(32);
        let mut back = [0u8; 32];
        // SAFETY: `dev` holds 32 bytes; `back` is live.
        unsafe {
            assert_eq!(aclrtMemset(null_mut(), 8, 0, 8), ACL_ERROR_INVALID_PARAM);
            assert_eq!(aclrtMemset(dev, 32, 0x1AB, 32), ACL_SUCCESS);
            assert_eq!(aclrtMemset(dev, 8, 0, 16), ACL_ERROR_RT_PARAM_INVALID);
            assert_eq!(
                aclrtMemcpy(back.as_mut_ptr().cast(), 32, dev, 32, ACL_MEMCPY_DEVICE_TO_HOST),
                ACL_SUCCESS
            );
            assert_eq!(aclrtFree(dev), ACL_SUCCESS);
        }
        assert_eq!(back, [0xAB; 32]);
    });
}

/// A thread's last allocation is translated without its owner's lock
/// (`device_mem/last.rs`) while it is live: every way it can stop being
/// live — a free by this thread or another, a new allocation at the same
/// address, a range past its end — is still refused as before.
#[test]
fn the_last_allocation_translated_without_a_lock_keeps_the_rules() {
    on_device(|| {
        let dev = malloc(4096);
        // SAFETY: `dev` holds 4096 bytes (each call below is checked).
        unsafe {
            assert_eq!(aclrtMemset(dev, 4096, 0, 4096), ACL_SUCCESS);
            // Past the end (of the bytes reserved, 4096 and the padding):
            // the same refusal as a looked-up allocation.
            assert_eq!(
                aclrtMemset(dev.byte_add(4096), 4096, 0, 4096),
                ACL_ERROR_RT_PARAM_INVALID
            );
            assert!(recent().contains("past the end"), "{}", recent());
            // Freed by this thread: refused.
            assert_eq!(aclrtFree(dev), ACL_SUCCESS);
            assert_eq!(aclrtMemset(dev, 4096, 0, 4096), ACL_ERROR_RT_PARAM_INVALID);
            assert!(recent().contains("not inside a live allocation"), "{}", recent());
        }
        // The next allocation of the size takes the block kept for reuse
        // (the same address), now live again.
        let again = malloc(4096);
        assert_eq!(again, dev);
        // SAFETY: `again` holds 4096 bytes.
        unsafe {
            assert_eq!(aclrtMemset(again, 4096, 7, 4096), ACL_SUCCESS);
            assert_eq!(aclrtFree(again), ACL_SUCCESS);
        }
        // Freed by another thread after this one remembered it: refused here.
        let shared = malloc(4096) as usize;
        // SAFETY: `shared` holds 4096 bytes.
        assert_eq!(
            unsafe { aclrtMemset(shared as *mut c_void, 4096, 1, 4096) },
            ACL_SUCCESS
        );
        std::thread::spawn(move || {
            // SAFETY: the allocation above, freed once (no context needed).
            assert_eq!(unsafe { aclrtFree(shared as *mut c_void) }, ACL_SUCCESS);
        })
        .join()
        .unwrap();
        // SAFETY: a freed address: refused before any write.
        assert_eq!(
            unsafe { aclrtMemset(shared as *mut c_void, 4096, 0, 4096) },
            ACL_ERROR_RT_PARAM_INVALID
        );
    });
}

#[test]
fn pinned_host_memory_rules() {
    on_device(|| {
        let mut ptr = null_mut();
        // SAFETY: out-pointers are valid; frees are of pointers checked by
        // the software device before use.
        unsafe {
            assert_eq!(aclrtMallocHost(null_mut(), 64), ACL_ERROR_INVALID_PARAM);
            assert_eq!(aclrtMallocHost(&mut ptr, 0), ACL_ERROR_INVALID_PARAM);
            assert_eq!(aclrtMallocHost(&mut ptr, 100), ACL_SUCCESS);
            assert_eq!(ptr as usize % 64, 0, "64-byte aligned as documented");
            // Host memory is host-accessible.
            ptr.cast::<u8>().write_bytes(7, 100);
            let dev = malloc(64);
            assert_eq!(aclrtFreeHost(dev), ACL_ERROR_RT_PARAM_INVALID);
            assert!(recent().contains("device address"));
            assert_eq!(aclrtFree(dev), ACL_SUCCESS);
            let mut local = [0u8; 8];
            assert_eq!(aclrtFreeHost(local.as_mut_ptr().cast()), ACL_ERROR_RT_PARAM_INVALID);
            assert_eq!(aclrtFreeHost(null_mut()), ACL_ERROR_INVALID_PARAM);
            assert_eq!(aclrtFreeHost(ptr), ACL_SUCCESS);
            assert_eq!(aclrtFreeHost(ptr), ACL_ERROR_RT_PARAM_INVALID);
            assert_eq!(aclrtFreeHostWithDevSync(null_mut()), ACL_ERROR_INVALID_PARAM);
        }
    });
}

#[test]
fn malloc_with_cfg_checks_its_configuration() {
    on_device(|| {
        let mut ptr = null_mut();
        let device_id = |id| aclrtMallocAttribute {
            attr: ACL_RT_MEM_ATTR_DEVICE_ID,
            value: aclrtMallocAttrValue { deviceId: id },
        };
        let va_flag = aclrtMallocAttribute {
            attr: ACL_RT_MEM_ATTR_VA_FLAG,
            value: aclrtMallocAttrValue { vaFlag: 1 },
        };
        // Each call gets a fresh configuration pointing at a fresh attribute.
        let with = |attr: Option<aclrtMallocAttribute>, num: usize, host: bool, out: &mut *mut c_void| {
            let mut attr = attr;
            let mut cfg = aclrtMallocConfig {
                attrs: attr.as_mut().map_or(null_mut(), |a| a as *mut _),
                numAttrs: num,
            };
            // SAFETY: `cfg` and the attribute live across the call.
            unsafe {
                if host {
                    aclrtMallocHostWithCfg(out, 64, &mut cfg)
                } else {
                    aclrtMallocWithCfg(out, 64, 0, &mut cfg)
                }
            }
        };
        assert_eq!(with(None, 1, false, &mut ptr), ACL_ERROR_INVALID_PARAM);
        assert_eq!(with(None, 0, false, &mut ptr), ACL_ERROR_RT_PARAM_INVALID);
        // Device id 1 is not the current device 0.
        assert_eq!(with(Some(device_id(1)), 1, false, &mut ptr), ACL_ERROR_RT_PARAM_INVALID);
        assert_eq!(with(Some(device_id(0)), 1, false, &mut ptr), ACL_SUCCESS);
        // SAFETY: a live allocation.
        assert_eq!(unsafe { aclrtFree(ptr) }, ACL_SUCCESS);
        assert_eq!(with(Some(va_flag), 1, false, &mut ptr), ACL_ERROR_RT_PARAM_INVALID);
        // The host variant accepts VA_FLAG, but the software device has no
        // shared host/device addresses.
        assert_eq!(with(Some(va_flag), 1, true, &mut ptr), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
        assert_eq!(with(Some(device_id(0)), 1, true, &mut ptr), ACL_ERROR_RT_PARAM_INVALID);
        // SAFETY: valid out-pointer, NULL configuration.
        assert_eq!(unsafe { aclrtMallocHostWithCfg(&mut ptr, 64, null_mut()) }, ACL_SUCCESS);
        // SAFETY: a live allocation.
        assert_eq!(unsafe { aclrtFreeHost(ptr) }, ACL_SUCCESS);
    });
}

#[test]
fn device_ids_are_range_checked() {
    software();
    let mut count = 0;
    // SAFETY: valid out-pointer; no other pointers.
    unsafe {
        assert_eq!(aclrtGetDeviceCount(&mut count), ACL_SUCCESS);
        assert_eq!(aclrtSetDevice(-1), ACL_ERROR_RT_INVALID_DEVICEID);
        assert_eq!(aclrtSetDevice(count as i32), ACL_ERROR_RT_INVALID_DEVICEID);
        assert!(recent().contains("out of range"));
        assert_eq!(aclrtResetDevice(count as i32), ACL_ERROR_RT_INVALID_DEVICEID);
    }
}

#[test]
fn mem_info_checks_the_attribute_and_pointers() {
    on_device(|| {
        let (mut free, mut total) = (0, 0);
        // SAFETY: valid out-pointers or NULL (refused).
        unsafe {
            assert_eq!(
                aclrtGetMemInfo(ACL_HBM_MEM, null_mut(), &mut total),
                ACL_ERROR_INVALID_PARAM
            );
            assert_eq!(
                aclrtGetMemInfo(18, &mut free, &mut total),
                ACL_ERROR_RT_INVALID_MEMORY_TYPE
            );
            assert_eq!(aclrtGetMemInfo(ACL_MEM_P2P_HUGE1G, &mut free, &mut total), ACL_SUCCESS);
        }
        assert!(free <= total && total > 0);
    });
}

#[test]
fn malloc_for_task_scheduler_follows_malloc_with_cfg() {
    on_device(|| {
        let mut ptr = null_mut();
        // SAFETY: valid out-pointer, NULL configuration.
        unsafe {
            assert_eq!(
                aclrtMallocForTaskScheduler(&mut ptr, 0, 0, null_mut()),
                ACL_ERROR_INVALID_PARAM
            );
            assert_eq!(
                aclrtMallocForTaskScheduler(null_mut(), 64, 0, null_mut()),
                ACL_ERROR_INVALID_PARAM
            );
            assert_eq!(aclrtMallocForTaskScheduler(&mut ptr, 64, 0, null_mut()), ACL_SUCCESS);
            assert!(!ptr.is_null());
            assert_eq!(aclrtFree(ptr), ACL_SUCCESS);
        }
    });
}

/// The padding rule is visible through the copy bound: a request of 1000
/// bytes reserves 1024 + 32 when padded, 1024 when not.
fn reserved_bytes(ptr: *mut c_void) -> usize {
    let host = [0u8; 2048];
    let mut reserved = 0;
    for len in [1024usize, 1056] {
        // SAFETY: `host` holds 2048 bytes; the device side is validated.
        if unsafe { aclrtMemcpy(ptr, len, host.as_ptr().cast(), len, ACL_MEMCPY_HOST_TO_DEVICE) } == ACL_SUCCESS {
            reserved = len;
        }
    }
    reserved
}

#[test]
fn malloc_cached_pads_every_policy_it_does_not_map() {
    on_device(|| {
        for (policy, padded) in [
            (ACL_MEM_MALLOC_HUGE_FIRST, true),
            (ACL_MEM_MALLOC_HUGE1G_ONLY, false),
            // Not mapped by aclrtMallocCached: the default policy, padded.
            (ACL_MEM_MALLOC_HUGE1G_ONLY_P2P, true),
            (ACL_MEM_MALLOC_HUGE_FIRST_P2P, true),
        ] {
            let mut ptr = null_mut();
            // SAFETY: valid out-pointer; freed below.
            assert_eq!(unsafe { aclrtMallocCached(&mut ptr, 1000, policy) }, ACL_SUCCESS);
            assert_eq!(reserved_bytes(ptr), if padded { 1056 } else { 1024 }, "policy {policy}");
            // SAFETY: a live allocation.
            assert_eq!(unsafe { aclrtFree(ptr) }, ACL_SUCCESS);
        }
        // aclrtMalloc maps HUGE1G_ONLY_P2P itself: unpadded.
        let mut ptr = null_mut();
        // SAFETY: valid out-pointer; freed below.
        assert_eq!(
            unsafe { aclrtMalloc(&mut ptr, 1000, ACL_MEM_MALLOC_HUGE1G_ONLY_P2P) },
            ACL_SUCCESS
        );
        assert_eq!(reserved_bytes(ptr), 1024);
        // SAFETY: a live allocation.
        assert_eq!(unsafe { aclrtFree(ptr) }, ACL_SUCCESS);
    });
}

#[test]
fn large_pinned_host_memory_works_like_small() {
    on_device(|| {
        let size = 40 << 20;
        let mut host = null_mut();
        // SAFETY: valid out-pointer; the allocation holds `size` bytes and is
        // freed once (the second free is refused before any use).
        unsafe {
            assert_eq!(aclrtMallocHost(&mut host, size), ACL_SUCCESS);
            assert_eq!(host as usize % 64, 0);
            host.cast::<u8>().add(size - 1).write(0x5A);
            let dev = {
                let mut dev = null_mut();
                assert_eq!(aclrtMalloc(&mut dev, size, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
                dev
            };
            assert_eq!(
                aclrtMemcpy(dev, size, host, size, ACL_MEMCPY_HOST_TO_DEVICE),
                ACL_SUCCESS
            );
            let mut last = 0u8;
            let tail = dev.byte_add(size - 1);
            assert_eq!(
                aclrtMemcpy((&raw mut last).cast(), 1, tail, 1, ACL_MEMCPY_DEVICE_TO_HOST),
                ACL_SUCCESS
            );
            assert_eq!(last, 0x5A);
            // A copy running past the pinned allocation is refused.
            assert_eq!(
                aclrtMemcpy(dev, size, host.byte_add(1), size, ACL_MEMCPY_HOST_TO_DEVICE),
                ACL_ERROR_RT_PARAM_INVALID
            );
            assert_eq!(aclrtFree(dev), ACL_SUCCESS);
            assert_eq!(aclrtFreeHost(host), ACL_SUCCESS);
            assert_eq!(aclrtFreeHost(host), ACL_ERROR_RT_PARAM_INVALID);
        }
    });
}

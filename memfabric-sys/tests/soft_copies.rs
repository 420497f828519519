//! Every copy type and the copy validation of the software fabric, in one
//! process (world size 1), in a child process.

mod soft_common;

use memfabric_sys::*;
use soft_common::{common, config, copy, create, device_alloc, device_read, gva, init, last_error, pattern, scenario};
use std::ptr::null_mut;

const SIZE: usize = 64 << 10;

#[test]
fn every_copy_type_moves_the_bytes() {
    scenario("every_copy_type_moves_the_bytes", "copies", || {
        let port = common::free_port();
        assert_eq!(init(port, 1, &config(None, true)), SMEM_OK);
        let bm = create(7, 2 << 20, 2 << 20);
        assert!(!bm.is_null(), "{:?}", last_error());
        // SAFETY: a live handle.
        assert_eq!(unsafe { smem_bm_join(bm, 0) }, SMEM_OK);
        let (host, device) = (gva(bm, SMEM_MEM_TYPE_HOST, 0), gva(bm, SMEM_MEM_TYPE_DEVICE, 0));
        let local = device_alloc(SIZE);
        let source = pattern(SIZE, 3);
        let mut back = vec![0u8; SIZE];

        // H2G and G2H through the device range.
        assert_eq!(
            copy(bm, source.as_ptr(), device, SIZE, SMEMB_COPY_H2G),
            SMEM_OK,
            "{:?}",
            last_error()
        );
        assert_eq!(copy(bm, device, back.as_mut_ptr(), SIZE, SMEMB_COPY_G2H), SMEM_OK);
        assert_eq!(back, source);
        // The device GVA is the local device memory behind gva_to_va.
        let mut va = null_mut();
        // SAFETY: a live handle and a valid out-pointer.
        assert_eq!(
            unsafe { smem_bm_gva_to_va(bm, device.cast(), SMEM_MEM_TYPE_LOCAL_DEVICE, &mut va) },
            SMEM_OK
        );
        assert_eq!(device_read(va.cast(), SIZE), source);

        // H2GH and GH2H through the host range.
        let second = pattern(SIZE, 9);
        back.fill(0);
        assert_eq!(copy(bm, second.as_ptr(), host, SIZE, SMEMB_COPY_H2GH), SMEM_OK);
        assert_eq!(copy(bm, host, back.as_mut_ptr(), SIZE, SMEMB_COPY_GH2H), SMEM_OK);
        assert_eq!(back, second);

        // G2L and L2G; GH2L and L2GH.
        assert_eq!(
            copy(bm, device, local, SIZE, SMEMB_COPY_G2L),
            SMEM_OK,
            "{:?}",
            last_error()
        );
        assert_eq!(device_read(local, SIZE), source);
        let offset = unsafe { device.add(SIZE) };
        assert_eq!(copy(bm, local, offset, SIZE, SMEMB_COPY_L2G), SMEM_OK);
        back.fill(0);
        assert_eq!(copy(bm, offset, back.as_mut_ptr(), SIZE, SMEMB_COPY_G2H), SMEM_OK);
        assert_eq!(back, source);
        assert_eq!(copy(bm, host, local, SIZE, SMEMB_COPY_GH2L), SMEM_OK);
        assert_eq!(device_read(local, SIZE), second);
        let host_offset = unsafe { host.add(SIZE) };
        assert_eq!(copy(bm, local, host_offset, SIZE, SMEMB_COPY_L2GH), SMEM_OK);
        back.fill(0);
        assert_eq!(copy(bm, host_offset, back.as_mut_ptr(), SIZE, SMEMB_COPY_GH2H), SMEM_OK);
        assert_eq!(back, second);

        // G2G: device range to host range; AUTO both ways.
        let far = unsafe { host.add(4 * SIZE) };
        assert_eq!(copy(bm, device, far, SIZE, SMEMB_COPY_G2G), SMEM_OK);
        back.fill(0);
        assert_eq!(copy(bm, far, back.as_mut_ptr(), SIZE, SMEMB_COPY_AUTO), SMEM_OK);
        assert_eq!(back, source);
        let third = pattern(SIZE, 77);
        assert_eq!(copy(bm, third.as_ptr(), far, SIZE, SMEMB_COPY_AUTO), SMEM_OK);
        assert_eq!(copy(bm, far, local, SIZE, SMEMB_COPY_AUTO), SMEM_OK);
        assert_eq!(device_read(local, SIZE), third);

        // A batch, direction from entry 0.
        let (a, b) = (pattern(4096, 1), pattern(4096, 2));
        let mut sources = [a.as_ptr() as *mut c_void, b.as_ptr() as *mut c_void];
        let mut destinations = [host.cast::<c_void>(), unsafe { host.add(8192) }.cast()];
        let sizes = [4096u64, 4096];
        let mut batch = smem_batch_copy_params_t {
            sources: sources.as_mut_ptr(),
            destinations: destinations.as_mut_ptr(),
            dataSizes: sizes.as_ptr(),
            batchSize: 2,
            stream: null_mut(),
        };
        // SAFETY: two entries of the test's buffers and GVAs.
        assert_eq!(
            unsafe { smem_bm_copy_batch(bm, &mut batch, SMEMB_COPY_H2GH, 0) },
            SMEM_OK
        );
        let mut check = vec![0u8; 4096];
        assert_eq!(
            copy(bm, unsafe { host.add(8192) }, check.as_mut_ptr(), 4096, SMEMB_COPY_GH2H),
            SMEM_OK
        );
        assert_eq!(check, b);

        // Async and on the caller's stream.
        let mut params = smem_copy_params_t {
            src: source.as_ptr().cast(),
            dest: far.cast(),
            dataSize: SIZE,
            stream: null_mut(),
        };
        // SAFETY: the test's buffer and a GVA.
        unsafe {
            assert_eq!(smem_bm_copy(bm, &mut params, SMEMB_COPY_H2G, ASYNC_COPY_FLAG), SMEM_OK);
            assert_eq!(smem_bm_wait(bm), SMEM_OK);
        }
        let mut stream = null_mut();
        // SAFETY: a valid out-pointer; device 0 is current (device_alloc).
        assert_eq!(
            unsafe { ascend_sys::soft::direct::aclrtCreateStream(&mut stream) },
            ascend_sys::ACL_SUCCESS
        );
        params.src = local.cast();
        params.stream = stream;
        // SAFETY: local device memory, a GVA and a live stream.
        unsafe {
            assert_eq!(
                smem_bm_copy(bm, &mut params, SMEMB_COPY_L2G, SMEM_BM_FLAG_USE_EXTERNAL_STREAM),
                SMEM_OK,
                "{:?}",
                last_error()
            );
            assert_eq!(
                ascend_sys::soft::direct::aclrtSynchronizeStream(stream),
                ascend_sys::ACL_SUCCESS
            );
        }
        back.fill(0);
        assert_eq!(copy(bm, far, back.as_mut_ptr(), SIZE, SMEMB_COPY_G2H), SMEM_OK);
        assert_eq!(back, third);

        // SAFETY: a live handle.
        unsafe {
            smem_bm_destroy(bm);
            smem_bm_uninit(0);
        }
        assert!(common::port_is_free(port));
    });
}

#[test]
fn copies_are_validated_with_the_real_codes() {
    scenario("copies_are_validated_with_the_real_codes", "validation", || {
        let port = common::free_port();
        assert_eq!(init(port, 1, &config(Some(0), true)), SMEM_OK);
        let bm = create(3, 2 << 20, 2 << 20);
        assert!(!bm.is_null());
        let (host, device) = (gva(bm, SMEM_MEM_TYPE_HOST, 0), gva(bm, SMEM_MEM_TYPE_DEVICE, 0));
        let mut buffer = vec![0u8; 4096];
        let plain = buffer.as_mut_ptr();
        assert_eq!(
            copy(bm, std::ptr::null(), device, 8, SMEMB_COPY_H2G),
            SMEM_INVALID_PARAM
        );
        assert_eq!(copy(bm, plain, null_mut(), 8, SMEMB_COPY_H2G), SMEM_INVALID_PARAM);
        assert_eq!(copy(bm, plain, device, 0, SMEMB_COPY_H2G), SMEM_INVALID_PARAM);
        assert_eq!(copy(bm, plain, device, 8, SMEMB_COPY_BUTT), SMEM_INVALID_PARAM);
        // A side that does not match its class.
        assert_eq!(copy(bm, plain, plain, 8, SMEMB_COPY_H2G), SMEM_INVALID_PARAM);
        assert_eq!(copy(bm, device, plain, 8, SMEMB_COPY_H2G), SMEM_INVALID_PARAM);
        assert_eq!(copy(bm, plain, device, 8, SMEMB_COPY_H2GH), SMEM_INVALID_PARAM);
        assert_eq!(copy(bm, host, device, 8, SMEMB_COPY_GH2H), SMEM_INVALID_PARAM);
        assert_eq!(copy(bm, plain, plain, 8, SMEMB_COPY_AUTO), SMEM_INVALID_PARAM);
        // Past the end of the segment.
        let near_end = unsafe { host.add((2 << 20) - 4) };
        assert_eq!(copy(bm, plain, near_end, 8, SMEMB_COPY_H2G), SMEM_INVALID_PARAM);
        // A NULL params, a bad handle.
        // SAFETY: NULL params are refused.
        assert_eq!(
            unsafe { smem_bm_copy(bm, null_mut(), SMEMB_COPY_H2G, 0) },
            SMEM_INVALID_PARAM
        );
        assert_eq!(
            copy(0x8 as smem_bm_t, plain, device, 8, SMEMB_COPY_H2G),
            SMEM_INVALID_PARAM
        );
        // A batch is classified by entry 0 only: entry 1 is not classified,
        // and fails only when it is moved; entry 0 is moved: partly failed.
        let mut sources = [plain.cast::<c_void>(), plain.cast()];
        let mut destinations = [device.cast::<c_void>(), plain.cast()];
        let sizes = [8u64, 8];
        let mut batch = smem_batch_copy_params_t {
            sources: sources.as_mut_ptr(),
            destinations: destinations.as_mut_ptr(),
            dataSizes: sizes.as_ptr(),
            batchSize: 2,
            stream: null_mut(),
        };
        // SAFETY: two entries.
        assert_eq!(
            unsafe { smem_bm_copy_batch(bm, &mut batch, SMEMB_COPY_H2G, 0) },
            SMEM_PARTIAL_FAILED
        );
        assert!(last_error().1.contains("batch entry 1"), "{:?}", last_error());
        batch.batchSize = 0;
        // SAFETY: as above.
        assert_eq!(
            unsafe { smem_bm_copy_batch(bm, &mut batch, SMEMB_COPY_H2G, 0) },
            SMEM_INVALID_PARAM
        );
        // SAFETY: a live handle.
        unsafe {
            smem_bm_destroy(bm);
            smem_bm_uninit(0);
        }
    });
}

/// One `smem_bm_copy` with `flags`.
fn copy_with(bm: smem_bm_t, src: *const u8, dst: *mut u8, size: usize, kind: u32, flags: u32) -> i32 {
    let mut params = smem_copy_params_t {
        src: src.cast(),
        dest: dst.cast(),
        dataSize: size,
        stream: null_mut(),
    };
    // SAFETY: the addresses are the test's buffers or GVAs of `bm`.
    unsafe { smem_bm_copy(bm, &mut params, kind, flags) }
}

/// A handle that may cross threads (the test's, for the raw calls).
#[derive(Clone, Copy)]
struct Shared(smem_bm_t);
// SAFETY: an opaque handle; the calls made with it on another thread are
// part of what this test checks.
unsafe impl Send for Shared {}

#[test]
fn an_asynchronous_copy_is_finished_by_its_own_threads_wait() {
    scenario(
        "an_asynchronous_copy_is_finished_by_its_own_threads_wait",
        "async_per_thread",
        || {
            let port = common::free_port();
            assert_eq!(init(port, 1, &config(None, true)), SMEM_OK);
            let bm = create(9, 2 << 20, 0);
            assert!(!bm.is_null(), "{:?}", last_error());
            // SAFETY: a live handle.
            assert_eq!(unsafe { smem_bm_join(bm, 0) }, SMEM_OK);
            let host = gva(bm, SMEM_MEM_TYPE_HOST, 0);
            let source = pattern(4096, 9);
            let mut back = vec![0u8; 4096];
            // SAFETY: the test's buffer, registered for the copies below.
            assert_eq!(
                unsafe { smem_bm_register_user_mem(bm, source.as_ptr() as u64, 4096) },
                SMEM_OK
            );

            // Queued on this thread: another thread's wait does not run it.
            assert_eq!(
                copy_with(bm, source.as_ptr(), host, 4096, SMEMB_COPY_H2GH, ASYNC_COPY_FLAG),
                SMEM_OK
            );
            let shared = Shared(bm);
            let code = std::thread::spawn(move || {
                let whole = shared; // the whole value, not its field (closures capture fields)
                let Shared(bm) = whole;
                // SAFETY: a live handle.
                unsafe { smem_bm_wait(bm) }
            })
            .join()
            .unwrap();
            assert_eq!(code, SMEM_OK, "another thread's wait has nothing of its own");
            assert_eq!(copy(bm, host, back.as_mut_ptr(), 4096, SMEMB_COPY_GH2H), SMEM_OK);
            assert_ne!(back, source, "not moved by the other thread's wait");
            // SAFETY: a live handle.
            assert_eq!(unsafe { smem_bm_wait(bm) }, SMEM_OK);
            assert_eq!(copy(bm, host, back.as_mut_ptr(), 4096, SMEMB_COPY_GH2H), SMEM_OK);
            assert_eq!(back, source, "moved by this thread's wait");

            // Unregistered before the wait: the queued copy fails there
            // instead of reading the memory.
            assert_eq!(
                copy_with(bm, source.as_ptr(), host, 4096, SMEMB_COPY_H2GH, ASYNC_COPY_FLAG),
                SMEM_OK
            );
            // SAFETY: a live handle; the address registered above.
            assert_eq!(
                unsafe { smem_bm_unregister_user_mem(bm, source.as_ptr() as u64) },
                SMEM_OK
            );
            // SAFETY: a live handle.
            assert_eq!(unsafe { smem_bm_wait(bm) }, SMEM_ERROR);
            assert!(last_error().1.contains("unregistered"), "{:?}", last_error());
            // SAFETY: a live handle, then the world.
            unsafe {
                smem_bm_destroy(bm);
                smem_bm_uninit(0);
            }
        },
    );
}

#[test]
fn the_external_stream_counts_only_with_the_async_flag() {
    scenario(
        "the_external_stream_counts_only_with_the_async_flag",
        "external_stream",
        || {
            use ascend_sys::soft::direct as acl;
            let port = common::free_port();
            assert_eq!(init(port, 1, &config(None, true)), SMEM_OK);
            let bm = create(10, 0, 2 << 20);
            assert!(!bm.is_null(), "{:?}", last_error());
            // SAFETY: a live handle.
            assert_eq!(unsafe { smem_bm_join(bm, 0) }, SMEM_OK);
            let hbm = gva(bm, SMEM_MEM_TYPE_DEVICE, 0);
            let local = device_alloc(4096);
            let (source, later) = (pattern(4096, 4), pattern(4096, 5));
            let with_stream = |from: &[u8], flags: u32, stream: *mut std::ffi::c_void| {
                let mut params = smem_copy_params_t {
                    src: from.as_ptr().cast(),
                    dest: hbm.cast(),
                    dataSize: 4096,
                    stream,
                };
                // SAFETY: the test's buffer and a GVA of `bm`.
                unsafe { smem_bm_copy(bm, &mut params, SMEMB_COPY_H2G, flags) }
            };
            // Without ASYNC_COPY_FLAG the stream is ignored (even one that is
            // no stream): the copy is synchronous.
            assert_eq!(
                with_stream(&source, SMEM_BM_FLAG_USE_EXTERNAL_STREAM, 0x10 as *mut _),
                SMEM_OK,
                "{:?}",
                last_error()
            );
            assert_eq!(copy(bm, hbm, local, 4096, SMEMB_COPY_G2L), SMEM_OK);
            assert_eq!(device_read(local, 4096), source);
            // With it, the copy is queued on the stream: the software device
            // validates the stream (a bogus one is refused), a real one runs
            // it in its order.
            assert_ne!(
                with_stream(
                    &later,
                    SMEM_BM_FLAG_USE_EXTERNAL_STREAM | ASYNC_COPY_FLAG,
                    0x10 as *mut _
                ),
                SMEM_OK
            );
            let mut stream = null_mut();
            // SAFETY: a valid out-pointer.
            assert_eq!(unsafe { acl::aclrtCreateStream(&mut stream) }, ascend_sys::ACL_SUCCESS);
            assert_eq!(
                with_stream(&later, SMEM_BM_FLAG_USE_EXTERNAL_STREAM | ASYNC_COPY_FLAG, stream),
                SMEM_OK,
                "{:?}",
                last_error()
            );
            // SAFETY: a live stream, destroyed once.
            unsafe {
                assert_eq!(acl::aclrtSynchronizeStream(stream), ascend_sys::ACL_SUCCESS);
                assert_eq!(acl::aclrtDestroyStream(stream), ascend_sys::ACL_SUCCESS);
            }
            assert_eq!(copy(bm, hbm, local, 4096, SMEMB_COPY_G2L), SMEM_OK);
            assert_eq!(device_read(local, 4096), later, "the stream's copy ran");
            // SAFETY: a live handle, then the world.
            unsafe {
                smem_bm_destroy(bm);
                smem_bm_uninit(0);
            }
        },
    );
}

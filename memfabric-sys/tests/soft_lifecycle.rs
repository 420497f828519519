//! The software fabric's lifecycle, store and GVA layout in one process
//! (world size 1). Each test runs in a child process: the BM world is a
//! process singleton.

mod soft_common;

use memfabric_sys::*;
use soft_common::{common, config, create, gva, init, last_error, scenario};
use std::ffi::CString;
use std::ptr::null_mut;

#[test]
fn the_lifecycle_follows_the_real_library() {
    scenario("the_lifecycle_follows_the_real_library", "lifecycle", || {
        // SAFETY: no arguments / flags 0.
        assert_eq!(unsafe { smem_get_abi_version() }, SMEM_ABI_VERSION_SUPPORTED);
        // SAFETY: flags are not checked.
        assert_eq!(unsafe { smem_init(0) }, SMEM_OK);
        // SAFETY: no arguments.
        assert_eq!(unsafe { smem_bm_get_rank_id() }, u32::MAX);
        assert!(create(1, 2 << 20, 0).is_null());
        assert_eq!(last_error().0, SMEM_NOT_INIT);
        // Copies before init: -2008.
        let (mut a, mut b) = ([1u8; 8], [0u8; 8]);
        assert_eq!(
            soft_common::copy(null_mut(), a.as_mut_ptr(), b.as_mut_ptr(), 8, SMEMB_COPY_H2G),
            SMEM_NOT_INIT
        );

        let defaults = {
            // SAFETY: zeroed plain data, filled by the call.
            let mut config: smem_bm_config_t = unsafe { std::mem::zeroed() };
            // SAFETY: valid out-pointer.
            assert_eq!(unsafe { smem_bm_config_init(&mut config) }, SMEM_OK);
            config
        };
        assert_eq!(
            (
                defaults.initTimeout,
                defaults.createTimeout,
                defaults.controlOperationTimeout
            ),
            (120, 120, 900)
        );
        assert!(defaults.startConfigStoreServer && defaults.autoRanking && defaults.unifiedAddressSpace);
        assert_eq!(defaults.rankId, 0xFFFF);
        // SAFETY: NULL is refused.
        assert_eq!(unsafe { smem_bm_config_init(null_mut()) }, SMEM_INVALID_PARAM);

        let port = common::free_port();
        assert_eq!(init(port, 0, &config(None, true)), SMEM_INVALID_PARAM);
        assert_eq!(init(port, 1, &config(Some(1), true)), SMEM_INVALID_PARAM);
        assert_eq!(init(port, 1, &config(None, true)), SMEM_OK);
        // SAFETY: no arguments.
        assert_eq!(unsafe { smem_bm_get_rank_id() }, 0);
        // A second init is OK without looking at its arguments.
        // SAFETY: NULL URL and config: not read.
        assert_eq!(
            unsafe { smem_bm_init(std::ptr::null(), 0, 0, std::ptr::null()) },
            SMEM_OK
        );
        assert!(!common::port_is_free(port), "rank 0 serves the store");

        assert!(create(1, 0, 0).is_null());
        assert_eq!(last_error().0, SMEM_INVALID_PARAM);
        // SAFETY: NULL option.
        assert!(unsafe { smem_bm_create2(1, std::ptr::null()) }.is_null());
        assert_eq!(last_error().0, SMEM_INVALID_PARAM);
        // The last error survives a success.
        // SAFETY: flags 0.
        assert_eq!(unsafe { smem_init(0) }, SMEM_OK);
        assert_eq!(last_error().0, SMEM_INVALID_PARAM);

        let bm = create(1, 3 << 20, 2 << 20);
        assert!(!bm.is_null(), "{:?}", last_error());
        // SAFETY: a live handle.
        assert_eq!(unsafe { smem_bm_join(bm, 0) }, SMEM_OK);
        // SAFETY: a live handle.
        unsafe {
            assert_eq!(smem_bm_get_local_mem_size_by_mem_type(bm, SMEM_MEM_TYPE_HOST), 3 << 20);
            assert_eq!(
                smem_bm_get_local_mem_size_by_mem_type(bm, SMEM_MEM_TYPE_DEVICE),
                2 << 20
            );
        }
        let host = gva(bm, SMEM_MEM_TYPE_HOST, 0) as u64;
        let device = gva(bm, SMEM_MEM_TYPE_DEVICE, 0) as u64;
        assert_eq!(host, 0x2000_0000_0000);
        assert_eq!(device, 0x2800_0000_0000);
        assert!(gva(bm, SMEM_MEM_TYPE_HOST, 1).is_null(), "world size 1");
        assert!(gva(bm, SMEM_MEM_TYPE_LOCAL_HOST, 0).is_null());
        // SAFETY: a live handle; plain addresses.
        unsafe {
            assert_eq!(smem_bm_get_rank_id_by_gva(bm, (host + 5) as *mut _), 0);
            assert_eq!(smem_bm_get_rank_id_by_gva(bm, (device + (2 << 20) - 1) as *mut _), 0);
            assert_eq!(smem_bm_get_rank_id_by_gva(bm, (device + (2 << 20)) as *mut _), u32::MAX);
            assert_eq!(smem_bm_get_rank_id_by_gva(bm, 0x1000 as *mut _), u32::MAX);
        }
        let mut va = null_mut();
        // SAFETY: a live handle and a valid out-pointer.
        unsafe {
            assert_eq!(
                smem_bm_gva_to_va(bm, device as *mut _, SMEM_MEM_TYPE_LOCAL_DEVICE, &mut va),
                SMEM_OK
            );
            let mut attributes = ascend_sys::aclrtPtrAttributes::default();
            assert_eq!(
                ascend_sys::soft::direct::aclrtPointerGetAttributes(va, &mut attributes),
                ascend_sys::ACL_SUCCESS
            );
            assert_eq!(attributes.location.type_, ascend_sys::ACL_MEM_LOCATION_TYPE_DEVICE);
            assert_eq!(
                smem_bm_gva_to_va(bm, host as *mut _, SMEM_MEM_TYPE_LOCAL_HOST, &mut va),
                SMEM_OK
            );
            assert!(!va.is_null());
            assert_eq!(
                smem_bm_gva_to_va(bm, host as *mut _, SMEM_MEM_TYPE_HOST, &mut va),
                SMEM_INVALID_PARAM
            );
            assert_eq!(
                smem_bm_gva_to_va(bm, host as *mut _, SMEM_MEM_TYPE_LOCAL_DEVICE, &mut va),
                SMEM_INVALID_PARAM
            );
        }
        // Registration rules.
        let buffer = vec![0u8; 4096];
        let address = buffer.as_ptr() as u64;
        // SAFETY: a live handle; the addresses are only recorded.
        unsafe {
            assert_eq!(smem_bm_register_user_mem(bm, address, 4096), SMEM_OK);
            assert_eq!(smem_bm_register_user_mem(bm, address, 4096), SMEM_OK);
            assert_eq!(smem_bm_register_user_mem(bm, address, 2048), SMEM_ERROR);
            assert_eq!(smem_bm_unregister_user_mem(bm, address), SMEM_OK);
            assert_eq!(smem_bm_unregister_user_mem(bm, address + 1), SMEM_OK);
            assert_eq!(smem_bm_register_user_mem(bm, address, 2048), SMEM_OK);
        }
        // Not emulated yet: a clear code.
        // SAFETY: a live handle.
        assert_eq!(
            unsafe { smem_bm_extend_local_mem(bm, SMEM_MEM_TYPE_HOST, 1) },
            MEMFABRIC_SYS_NOT_SUPPORTED
        );
        assert!(last_error().1.contains("smem_bm_extend_local_mem"));
        // SAFETY: a live handle, then gone.
        unsafe {
            assert_eq!(smem_bm_leave(bm, 0), SMEM_OK);
            smem_bm_destroy(bm);
            assert_eq!(smem_bm_join(bm, 0), SMEM_INVALID_PARAM);
            smem_bm_uninit(0);
            assert_eq!(smem_bm_get_rank_id(), u32::MAX);
        }
        assert!(common::port_is_free(port), "uninit stops the store it served");
    });
}

#[test]
fn a_standalone_store_starts_once_and_frees_its_port() {
    scenario("a_standalone_store_starts_once_and_frees_its_port", "store", || {
        let port = common::free_port();
        let url = CString::new(format!("tcp://127.0.0.1:{port}")).unwrap();
        // SAFETY: valid strings.
        unsafe {
            assert_eq!(smem_create_config_store(url.as_ptr(), 0), SMEM_OK);
            assert_eq!(smem_create_config_store(url.as_ptr(), 0), SMEM_OK);
            assert!(!common::port_is_free(port));
            let bad = CString::new("tcp://127.0.0.1").unwrap();
            assert_eq!(smem_create_config_store(bad.as_ptr(), 0), SMEM_INVALID_PARAM);
            // A BM world on the standalone store (this process does not serve
            // a second one).
            assert_eq!(init(port, 1, &soft_common::config(Some(0), true)), SMEM_OK);
            smem_bm_uninit(0);
            assert!(!common::port_is_free(port), "the standalone store outlives uninit");
            smem_destroy_config_store(url.as_ptr());
        }
        assert!(common::port_is_free(port), "destroy frees the port before returning");
    });
}

//! The bound functions the software fabric does not emulate yet: TRANS,
//! growing a rank's contribution, and the store's high-availability calls.
//! Each returns its failure value with [`MEMFABRIC_SYS_NOT_SUPPORTED`] as
//! the last error code and a message naming the function.
#![allow(non_snake_case, clippy::too_many_arguments, clippy::unused_unit)]

use crate::dispatch::FailureValue;
use crate::soft::core::last_error;
use crate::soft::core::result::SoftError;
use crate::types::*;

/// Records that `api` is not emulated and returns its failure value.
fn not_supported<R: FailureValue>(api: &'static str) -> R {
    last_error::record(
        api,
        &SoftError {
            code: MEMFABRIC_SYS_NOT_SUPPORTED,
            message: "the software fabric does not emulate this function yet".into(),
        },
    );
    R::failure(MEMFABRIC_SYS_NOT_SUPPORTED)
}

macro_rules! unsupported {
    ($(fn $name:ident($($arg:ident : $ty:ty),* $(,)?) -> $ret:ty;)*) => {
        $(
        pub(crate) unsafe fn $name($(_: $ty),*) -> $ret {
            not_supported(stringify!($name))
        }
        )*
    };
}

unsupported! {
    fn smem_bm_extend_local_mem(handle: smem_bm_t, memType: smem_bm_mem_type_t, size: u64) -> i32;
    fn smem_bm_update_store_url(storeURL: *const c_char) -> i32;
    fn smem_bm_update_store_server(ip: *const c_char, port: u16) -> i32;
    fn smem_bm_register_leader_change_callback(callback: smem_bm_leader_change_cb, userData: *mut c_void) -> i32;
    fn smem_bm_get_bindable_leader_address(ip: *mut c_char, ipLen: usize, port: *mut u16) -> i32;
    fn smem_bm_get_bindable_leader_address_by_store_url(storeUrl: *const c_char, tlsOption: *const smem_tls_config, worldSize: u32, ip: *mut c_char, ipLen: usize, port: *mut u16) -> i32;
    fn smem_bm_release_leader_address_store() -> ();
    fn smem_trans_config_init(config: *mut smem_trans_config_t) -> i32;
    fn smem_trans_init(config: *const smem_trans_config_t) -> i32;
    fn smem_trans_uninit(flags: u32) -> ();
    fn smem_trans_create(storeUrl: *const c_char, uniqueId: *const c_char, config: *const smem_trans_config_t) -> smem_trans_t;
    fn smem_trans_destroy(handle: smem_trans_t, flags: u32) -> ();
    fn smem_trans_register_mem(handle: smem_trans_t, address: *mut c_void, capacity: usize, flags: u32) -> i32;
    fn smem_trans_batch_register_mem(handle: smem_trans_t, addresses: *mut *mut c_void, capacities: *mut usize, count: u32, flags: u32) -> i32;
    fn smem_trans_deregister_mem(handle: smem_trans_t, address: *mut c_void) -> i32;
    fn smem_trans_write(handle: smem_trans_t, localAddr: *const c_void, remoteUniqueId: *const c_char, remoteAddr: *mut c_void, dataSize: usize, flags: u32) -> i32;
    fn smem_trans_read(handle: smem_trans_t, localAddr: *mut c_void, remoteUniqueId: *const c_char, remoteAddr: *const c_void, dataSize: usize, flags: u32) -> i32;
    fn smem_trans_batch_write(handle: smem_trans_t, localAddrs: *mut *const c_void, remoteUniqueId: *const c_char, remoteAddrs: *mut *mut c_void, dataSizes: *mut usize, batchSize: u32, flags: u32) -> i32;
    fn smem_trans_batch_read(handle: smem_trans_t, localAddrs: *mut *mut c_void, remoteUniqueId: *const c_char, remoteAddrs: *mut *const c_void, dataSizes: *mut usize, batchSize: u32, flags: u32) -> i32;
    fn smem_trans_read_submit(handle: smem_trans_t, localAddr: *mut c_void, remoteUniqueId: *const c_char, remoteAddr: *const c_void, dataSize: usize, stream: *mut c_void, flags: u32) -> i32;
    fn smem_trans_write_submit(handle: smem_trans_t, localAddr: *const c_void, remoteUniqueId: *const c_char, remoteAddr: *mut c_void, dataSize: usize, stream: *mut c_void, flags: u32) -> i32;
    fn smem_trans_batch_read_submit(handle: smem_trans_t, localAddrs: *mut *mut c_void, remoteUniqueId: *const c_char, remoteAddrs: *mut *const c_void, dataSizes: *mut usize, batchSize: u32, stream: *mut c_void, flags: u32) -> i32;
    fn smem_trans_batch_write_submit(handle: smem_trans_t, localAddrs: *mut *const c_void, remoteUniqueId: *const c_char, remoteAddrs: *mut *mut c_void, dataSizes: *mut usize, batchSize: u32, stream: *mut c_void, flags: u32) -> i32;
    fn smem_trans_batch_quant_write(handle: smem_trans_t, params: *mut smem_trans_quant_copy_param_t) -> i32;
    fn smem_trans_set_peer_down_callback(handle: smem_trans_t, callback: smem_trans_peer_down_callback_t, userData: *mut c_void) -> i32;
}

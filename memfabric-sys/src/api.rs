//! The list of every MemFabric function this crate binds, with each
//! function's C name, C parameter names and Rust types, in the groups of the
//! reference (`memfabric.md` §1.3): the common `smem_*` calls, then BM, then
//! TRANS.
//!
//! - Common (12): `smem_get_abi_version`, `smem_init`, `smem_uninit`,
//!   `smem_create_config_store`, `smem_destroy_config_store`,
//!   `smem_set_extern_logger`, `smem_set_extern_alarm`, `smem_set_log_level`,
//!   `smem_set_conf_store_tls`, `smem_get_last_err_msg`,
//!   `smem_get_and_clear_last_err_msg`, `smem_get_last_err_code`.
//! - BM (26): `smem_bm_config_init`, `smem_bm_init`, `smem_bm_uninit`,
//!   `smem_bm_get_rank_id`, `smem_bm_create`, `smem_bm_create2`,
//!   `smem_bm_destroy`, `smem_bm_join`, `smem_bm_leave`,
//!   `smem_bm_extend_local_mem`, `smem_bm_get_local_mem_size_by_mem_type`,
//!   `smem_bm_ptr_by_mem_type`, `smem_bm_gva_to_va`,
//!   `smem_bm_get_rank_id_by_gva`, `smem_bm_register_user_mem`,
//!   `smem_bm_unregister_user_mem`, `smem_bm_copy`, `smem_bm_copy_batch`,
//!   `smem_bm_wait`, `smem_bm_update_store_url`,
//!   `smem_bm_update_store_server`, `smem_bm_register_leader_change_callback`,
//!   `smem_bm_get_bindable_leader_address`,
//!   `smem_bm_get_bindable_leader_address_by_store_url`,
//!   `smem_bm_release_leader_address_store`, `smem_bm_set_group_event_handler`.
//! - TRANS (18): `smem_trans_config_init`, `smem_trans_init`,
//!   `smem_trans_uninit`, `smem_trans_create`, `smem_trans_destroy`,
//!   `smem_trans_register_mem`, `smem_trans_batch_register_mem`,
//!   `smem_trans_deregister_mem`, `smem_trans_write`, `smem_trans_read`,
//!   `smem_trans_batch_write`, `smem_trans_batch_read`,
//!   `smem_trans_read_submit`, `smem_trans_write_submit`,
//!   `smem_trans_batch_read_submit`, `smem_trans_batch_write_submit`,
//!   `smem_trans_batch_quant_write`, `smem_trans_set_peer_down_callback`.
//!
//! 56 functions in all. Not bound in this version: `smem_config_store_set_backend_op`
//! (a pluggable store for `reg://` URLs, whose operation table the reference
//! does not describe), `smem_set_config_store_tls_key` (its decrypt handler
//! takes a C++ reference), the SHM API (`smem_shm_*`, for AICore kernels;
//! out of scope for a host memory SDK) and the `smem_acc_*` and
//! `smem_config_store_*` internals.

use crate::dispatch::smem_functions;
use crate::types::*;

/// Invokes a macro with the list of every bound MemFabric function: its doc
/// comments, C name, parameters (C names, Rust types) and return type, as
/// one invocation:
///
/// ```text
/// callback! {
///     /// docs
///     fn smem_get_abi_version() -> u32;
///     /// docs
///     fn smem_init(flags: u32) -> i32;
///     ...
/// }
/// ```
///
/// This is the crate's single list of signatures: the crate-root functions
/// and [`FUNCTION_NAMES`](crate::FUNCTION_NAMES) are generated from it (and
/// a drop-in `libmf_smem.so` can be). Functions returning nothing say
/// `-> ()`. The types are written as this crate exports them, unqualified,
/// so the invoking module needs `use memfabric_sys::*;` in scope.
///
/// ```
/// use memfabric_sys::*;
///
/// macro_rules! count {
///     ($($(#[$meta:meta])* fn $name:ident($($arg:ident : $ty:ty),* $(,)?) -> $ret:ty;)*) => {
///         [$(stringify!($name)),*].len()
///     };
/// }
/// assert_eq!(memfabric_sys::for_each_smem_function!(count), memfabric_sys::FUNCTION_NAMES.len());
/// ```
#[macro_export]
macro_rules! for_each_smem_function {
    ($($callback:ident)::+) => {
        $($callback)::+! {
            // Common (smem.h)
            /// The library's ABI version: major in the high 16 bits, minor in the low
            /// 16 (0x00010003 for 1.3.0, the only one this crate loads).
            fn smem_get_abi_version() -> u32;
            /// Initialises the library (logging, error state) for this process;
            /// `flags` is 0.
            fn smem_init(flags: u32) -> i32;
            /// Tears down what `smem_init` set up.
            fn smem_uninit() -> ();
            /// Starts a standalone config store (a TCP server) at `storeUrl`
            /// (`tcp://ip:port`). A second call for a running store returns 0.
            fn smem_create_config_store(storeUrl: *const c_char, flags: u64) -> i32;
            /// Stops the standalone config store at `storeUrl`.
            fn smem_destroy_config_store(storeUrl: *const c_char) -> ();
            /// Sends the library's log lines to `func` instead of its own output.
            fn smem_set_extern_logger(func: smem_logger_fn) -> i32;
            /// Sends the library's alarms (and their resolution) to the callbacks.
            fn smem_set_extern_alarm(alarm: smem_alarm_fn, resume: smem_alarm_resume_fn) -> i32;
            /// Sets the log level: 0 debug, 1 info, 2 warning, 3 error (1.3.0 accepts
            /// 0..=4 and returns `SMEM_INVALID_PARAM` otherwise). The library logs to
            /// stdout until `smem_set_extern_logger` takes its lines.
            fn smem_set_log_level(level: c_int) -> i32;
            /// Turns the config store's TLS on or off; `tls_info` holds `tls_info_len`
            /// bytes of settings. TLS is off by default.
            fn smem_set_conf_store_tls(enable: bool, tls_info: *const c_char, tls_info_len: u32) -> i32;
            /// The message of the most recent failure on this thread, a NUL-terminated
            /// string owned by the library (empty when none). Per thread; a successful
            /// call does not reset it, and not every failure sets it.
            fn smem_get_last_err_msg() -> *const c_char;
            /// As `smem_get_last_err_msg`, and forgets the message (not the code).
            fn smem_get_and_clear_last_err_msg() -> *const c_char;
            /// The code of the most recent failure on this thread (new in 1.3). Never
            /// reset: read it only right after a call that failed.
            fn smem_get_last_err_code() -> i32;

            // BM (smem_bm.h)
            /// Writes the default configuration into `config`.
            fn smem_bm_config_init(config: *mut smem_bm_config_t) -> i32;
            /// Joins the process to the BM world at `storeURL` with `worldSize` ranks
            /// (1..=1024) on device `deviceId`. A process singleton: a second call
            /// returns 0 without checking its arguments. Fails (-1, "init hybm
            /// failed") where no Ascend driver is installed.
            fn smem_bm_init(
                storeURL: *const c_char,
                worldSize: u32,
                deviceId: u16,
                config: *const smem_bm_config_t,
            ) -> i32;
            /// Leaves the BM world and releases what `smem_bm_init` set up.
            fn smem_bm_uninit(flags: u32) -> ();
            /// This process's rank (process-global), or `UINT32_MAX` on failure.
            fn smem_bm_get_rank_id() -> u32;
            /// Creates BM object `id` contributing `localDRAMSize` and `localHBMSize`
            /// bytes; NULL on failure (see `smem_get_last_err_code`).
            fn smem_bm_create(
                id: u32,
                memberSize: u32,
                dataOpType: smem_bm_data_op_type_t,
                localDRAMSize: u64,
                localHBMSize: u64,
                flags: u32,
            ) -> smem_bm_t;
            /// Creates BM object `id` from `option`; NULL on failure (for example
            /// with last error code `SMEM_NOT_INIT` before `smem_bm_init`).
            fn smem_bm_create2(id: u32, option: *const smem_bm_create_option_t) -> smem_bm_t;
            /// Destroys a BM object.
            fn smem_bm_destroy(handle: smem_bm_t) -> ();
            /// Joins the BM object's pool (two parameters in the 1.3 header).
            fn smem_bm_join(handle: smem_bm_t, flags: u32) -> i32;
            /// Leaves the BM object's pool.
            fn smem_bm_leave(handle: smem_bm_t, flags: u32) -> i32;
            /// Grows this rank's contribution of `memType` by `size` bytes.
            fn smem_bm_extend_local_mem(handle: smem_bm_t, memType: smem_bm_mem_type_t, size: u64) -> i32;
            /// This rank's contribution of `memType`, bytes.
            fn smem_bm_get_local_mem_size_by_mem_type(handle: smem_bm_t, memType: smem_bm_mem_type_t) -> u64;
            /// The GVA of rank `peerRankId`'s segment of `memType` (rank 0 gives the
            /// range's base), or NULL.
            fn smem_bm_ptr_by_mem_type(
                handle: smem_bm_t,
                memType: smem_bm_mem_type_t,
                peerRankId: u16,
            ) -> *mut c_void;
            /// Translates a GVA of this rank into a local address of `vaMemType`
            /// (`SMEM_MEM_TYPE_LOCAL_DEVICE` or `SMEM_MEM_TYPE_LOCAL_HOST`).
            fn smem_bm_gva_to_va(
                handle: smem_bm_t,
                gva: *mut c_void,
                vaMemType: smem_bm_mem_type_t,
                va: *mut *mut c_void,
            ) -> i32;
            /// The rank owning `gva`, or `UINT32_MAX` when it is outside the pool.
            fn smem_bm_get_rank_id_by_gva(handle: smem_bm_t, gva: *mut c_void) -> u32;
            /// Registers the caller's memory `[addr, addr + size)` for copies. Again
            /// with the same size: 0; with another size: -1.
            fn smem_bm_register_user_mem(handle: smem_bm_t, addr: u64, size: u64) -> i32;
            /// Unregisters memory registered at `addr` (an unknown address gives 0).
            fn smem_bm_unregister_user_mem(handle: smem_bm_t, addr: u64) -> i32;
            /// Copies `params.dataSize` bytes in direction `t`; `flags` takes
            /// `ASYNC_COPY_FLAG`, `COPY_EXTEND_FLAG`, `SMEM_BM_FLAG_USE_EXTERNAL_STREAM`.
            fn smem_bm_copy(
                handle: smem_bm_t,
                params: *mut smem_copy_params_t,
                t: smem_bm_copy_type_t,
                flags: u32,
            ) -> i32;
            /// Copies a batch in direction `t`; the library classifies entry 0 only.
            fn smem_bm_copy_batch(
                handle: smem_bm_t,
                params: *mut smem_batch_copy_params_t,
                t: smem_bm_copy_type_t,
                flags: u32,
            ) -> i32;
            /// Waits for the calling thread's asynchronous copies on the handle (MemFabric
            /// queues them on the thread's own stream).
            fn smem_bm_wait(handle: smem_bm_t) -> i32;
            /// Points the process at another config store URL (high availability).
            fn smem_bm_update_store_url(storeURL: *const c_char) -> i32;
            /// Points the process at another config store server.
            fn smem_bm_update_store_server(ip: *const c_char, port: u16) -> i32;
            /// Calls `callback(userData)` when the store's leader changes.
            fn smem_bm_register_leader_change_callback(
                callback: smem_bm_leader_change_cb,
                userData: *mut c_void,
            ) -> i32;
            /// Writes an address this process can bind as the store's leader.
            fn smem_bm_get_bindable_leader_address(ip: *mut c_char, ipLen: usize, port: *mut u16) -> i32;
            /// As `smem_bm_get_bindable_leader_address`, for the store at `storeUrl`.
            fn smem_bm_get_bindable_leader_address_by_store_url(
                storeUrl: *const c_char,
                tlsOption: *const smem_tls_config,
                worldSize: u32,
                ip: *mut c_char,
                ipLen: usize,
                port: *mut u16,
            ) -> i32;
            /// Releases the store held for the leader address.
            fn smem_bm_release_leader_address_store() -> ();
            /// Sets a group event handler (a no-op in 1.3).
            fn smem_bm_set_group_event_handler(
                handle: smem_bm_t,
                cb: smem_bm_group_event_cb,
                context: *mut c_void,
            ) -> i32;

            // TRANS (smem_trans.h)
            /// Writes the default TRANS configuration; `dataOpType` is left unwritten.
            fn smem_trans_config_init(config: *mut smem_trans_config_t) -> i32;
            /// Initialises TRANS for this process.
            fn smem_trans_init(config: *const smem_trans_config_t) -> i32;
            /// Tears TRANS down.
            fn smem_trans_uninit(flags: u32) -> ();
            /// Creates a TRANS instance named `uniqueId` on the store at `storeUrl`;
            /// NULL on failure.
            fn smem_trans_create(
                storeUrl: *const c_char,
                uniqueId: *const c_char,
                config: *const smem_trans_config_t,
            ) -> smem_trans_t;
            /// Destroys a TRANS instance.
            fn smem_trans_destroy(handle: smem_trans_t, flags: u32) -> ();
            /// Registers `capacity` bytes at `address` for transfers.
            fn smem_trans_register_mem(handle: smem_trans_t, address: *mut c_void, capacity: usize, flags: u32) -> i32;
            /// Registers `count` regions.
            fn smem_trans_batch_register_mem(
                handle: smem_trans_t,
                addresses: *mut *mut c_void,
                capacities: *mut usize,
                count: u32,
                flags: u32,
            ) -> i32;
            /// Deregisters the region at `address`.
            fn smem_trans_deregister_mem(handle: smem_trans_t, address: *mut c_void) -> i32;
            /// Writes `dataSize` local bytes to `remoteAddr` of peer `remoteUniqueId`.
            fn smem_trans_write(
                handle: smem_trans_t,
                localAddr: *const c_void,
                remoteUniqueId: *const c_char,
                remoteAddr: *mut c_void,
                dataSize: usize,
                flags: u32,
            ) -> i32;
            /// Reads `dataSize` bytes at `remoteAddr` of peer `remoteUniqueId`.
            fn smem_trans_read(
                handle: smem_trans_t,
                localAddr: *mut c_void,
                remoteUniqueId: *const c_char,
                remoteAddr: *const c_void,
                dataSize: usize,
                flags: u32,
            ) -> i32;
            /// Writes a batch to one peer.
            fn smem_trans_batch_write(
                handle: smem_trans_t,
                localAddrs: *mut *const c_void,
                remoteUniqueId: *const c_char,
                remoteAddrs: *mut *mut c_void,
                dataSizes: *mut usize,
                batchSize: u32,
                flags: u32,
            ) -> i32;
            /// Reads a batch from one peer.
            fn smem_trans_batch_read(
                handle: smem_trans_t,
                localAddrs: *mut *mut c_void,
                remoteUniqueId: *const c_char,
                remoteAddrs: *mut *const c_void,
                dataSizes: *mut usize,
                batchSize: u32,
                flags: u32,
            ) -> i32;
            /// `smem_trans_read`, ordered on `stream` (SDMA only).
            fn smem_trans_read_submit(
                handle: smem_trans_t,
                localAddr: *mut c_void,
                remoteUniqueId: *const c_char,
                remoteAddr: *const c_void,
                dataSize: usize,
                stream: *mut c_void,
                flags: u32,
            ) -> i32;
            /// `smem_trans_write`, ordered on `stream` (SDMA only).
            fn smem_trans_write_submit(
                handle: smem_trans_t,
                localAddr: *const c_void,
                remoteUniqueId: *const c_char,
                remoteAddr: *mut c_void,
                dataSize: usize,
                stream: *mut c_void,
                flags: u32,
            ) -> i32;
            /// `smem_trans_batch_read`, ordered on `stream` (SDMA only).
            fn smem_trans_batch_read_submit(
                handle: smem_trans_t,
                localAddrs: *mut *mut c_void,
                remoteUniqueId: *const c_char,
                remoteAddrs: *mut *const c_void,
                dataSizes: *mut usize,
                batchSize: u32,
                stream: *mut c_void,
                flags: u32,
            ) -> i32;
            /// `smem_trans_batch_write`, ordered on `stream` (SDMA only).
            fn smem_trans_batch_write_submit(
                handle: smem_trans_t,
                localAddrs: *mut *const c_void,
                remoteUniqueId: *const c_char,
                remoteAddrs: *mut *mut c_void,
                dataSizes: *mut usize,
                batchSize: u32,
                stream: *mut c_void,
                flags: u32,
            ) -> i32;
            /// Writes a batch quantised from fp16/bf16 to int8 (A3 only).
            fn smem_trans_batch_quant_write(handle: smem_trans_t, params: *mut smem_trans_quant_copy_param_t) -> i32;
            /// Calls `callback(peerUniqueId, userData)` when a peer goes down.
            fn smem_trans_set_peer_down_callback(
                handle: smem_trans_t,
                callback: smem_trans_peer_down_callback_t,
                userData: *mut c_void,
            ) -> i32;
        }
    };
}

crate::for_each_smem_function!(smem_functions);

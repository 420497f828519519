//! The C types, constants and structs of MemFabric Hybrid's host API (ABI
//! 1.3), under their C names.
//!
//! Written by hand from the project's reference (`memfabric.md` §1.3): the
//! enumerators' values, the struct fields with their C types, and the error
//! codes. C enums are `u32` type aliases with one constant per enumerator, so
//! that a value coming back from C can never be undefined behaviour. The
//! layouts are checked at compile time in `layout.rs`.
#![allow(non_camel_case_types)]

pub use core::ffi::{c_char, c_int, c_void};

// ---------------------------------------------------------------------------
// Versions and limits
// ---------------------------------------------------------------------------

/// The only ABI version this crate accepts: 1.3, as
/// `smem_get_abi_version` returns it (major in the high 16 bits, minor in
/// the low 16). The loader refuses any other version.
pub const SMEM_ABI_VERSION_SUPPORTED: u32 = 0x0001_0003;

/// The largest world size `smem_bm_init` accepts.
pub const SMEM_WORLD_SIZE_MAX: u32 = 1024;

/// The device id meaning "no device" (as a signed value).
pub const SMEM_INVALID_DEV_ID: i32 = -1;

/// The most ranks a TRANS instance can hold.
pub const SMEM_TRANS_RANK_COUNT_MAX: u32 = 512;

/// The length of each path field of [`smem_tls_config`].
pub const SMEM_TLS_PATH_SIZE: usize = 256;

/// The largest timeout, in seconds, of the BM configuration.
pub const SMEM_BM_TIMEOUT_MAX: u32 = u32::MAX;

// ---------------------------------------------------------------------------
// Error codes
// ---------------------------------------------------------------------------

/// Success.
pub const SMEM_OK: i32 = 0;
/// A generic failure (also hybm's `BM_ERROR`).
pub const SMEM_ERROR: i32 = -1;
/// An argument was refused.
pub const SMEM_INVALID_PARAM: i32 = -2000;
/// An allocation failed.
pub const SMEM_MALLOC_FAILED: i32 = -2001;
/// A resource ran out.
pub const SMEM_NO_RESOURCES: i32 = -2002;
/// The component was not started.
pub const SMEM_NOT_STARTED: i32 = -2003;
/// An operation timed out.
pub const SMEM_TIMEOUT: i32 = -2004;
/// A call that may be made once was made again.
pub const SMEM_REPEAT_INVOKE: i32 = -2005;
/// The item exists already.
pub const SMEM_DUPLICATED: i32 = -2006;
/// The item does not exist.
pub const SMEM_NOT_EXIST: i32 = -2007;
/// The component is not initialised (for example `smem_bm_create2` before
/// `smem_bm_init`).
pub const SMEM_NOT_INIT: i32 = -2008;
/// The resource is in use.
pub const SMEM_RES_IN_USE: i32 = -2009;
/// Part of a batch failed.
pub const SMEM_PARTIAL_FAILED: i32 = -2012;
/// The peer is not connected.
pub const SMEM_NOT_CONNECTED: i32 = -2014;
/// The caller's buffer is too small.
pub const SMEM_BUFFER_TOO_SMALL: i32 = -2015;

/// hybm's `BM_TIMEOUT`, from the core under the library: a copy or wait
/// whose peer stopped answering passes it through unmapped (it is not in
/// `smem.h`'s list, so [`error_name`] does not name it).
pub const BM_TIMEOUT: i32 = -7;

/// The lowest code of the config store back-end's range (−3000 … −3007).
pub const SMEM_STORE_ERROR_MIN: i32 = -3007;
/// The highest code of the config store back-end's range (−3000 … −3007).
pub const SMEM_STORE_ERROR_MAX: i32 = -3000;

/// This crate's own code, not the library's: the loaded `libmf_smem.so` does
/// not export the function called (see [`missing_symbol`](crate::missing_symbol)).
/// Outside every range the library uses (0, −1 … −11, −100, −101, −2000 …
/// −2015, −3000 … −3007).
pub const MEMFABRIC_SYS_NOT_SUPPORTED: i32 = -9001;
/// This crate's own code, not the library's: no MemFabric library is loaded
/// (none was found, its ABI is not 1.3, or the software fabric was asked
/// for); `smem_get_last_err_msg` says why and [`backend`](crate::backend)
/// returns the typed error.
pub const MEMFABRIC_SYS_NO_BACKEND: i32 = -9002;

/// The C name of each of the library's public error codes (and this crate's
/// two), or `None` for a code not in the public list (a hybm `BM_*` code
/// passed through, or a store back-end code).
pub const fn error_name(code: i32) -> Option<&'static str> {
    Some(match code {
        SMEM_OK => "SMEM_OK",
        SMEM_ERROR => "SMEM_ERROR",
        SMEM_INVALID_PARAM => "SMEM_INVALID_PARAM",
        SMEM_MALLOC_FAILED => "SMEM_MALLOC_FAILED",
        SMEM_NO_RESOURCES => "SMEM_NO_RESOURCES",
        SMEM_NOT_STARTED => "SMEM_NOT_STARTED",
        SMEM_TIMEOUT => "SMEM_TIMEOUT",
        SMEM_REPEAT_INVOKE => "SMEM_REPEAT_INVOKE",
        SMEM_DUPLICATED => "SMEM_DUPLICATED",
        SMEM_NOT_EXIST => "SMEM_NOT_EXIST",
        SMEM_NOT_INIT => "SMEM_NOT_INIT",
        SMEM_RES_IN_USE => "SMEM_RES_IN_USE",
        SMEM_PARTIAL_FAILED => "SMEM_PARTIAL_FAILED",
        SMEM_NOT_CONNECTED => "SMEM_NOT_CONNECTED",
        SMEM_BUFFER_TOO_SMALL => "SMEM_BUFFER_TOO_SMALL",
        MEMFABRIC_SYS_NOT_SUPPORTED => "MEMFABRIC_SYS_NOT_SUPPORTED",
        MEMFABRIC_SYS_NO_BACKEND => "MEMFABRIC_SYS_NO_BACKEND",
        _ => return None,
    })
}

// ---------------------------------------------------------------------------
// Flags
// ---------------------------------------------------------------------------

/// Copy flag: return before the copy completes; `smem_bm_wait` waits.
pub const ASYNC_COPY_FLAG: u32 = 1 << 0;
/// Copy flag: copy by MTE inside an A3 SuperPoD.
pub const COPY_EXTEND_FLAG: u32 = 1 << 1;
/// Copy flag: order the copy on the caller's stream (`stream` of the params).
pub const SMEM_BM_FLAG_USE_EXTERNAL_STREAM: u32 = 1 << 2;
/// A config store flag (`smem_create_config_store`): skip recovering the
/// store's state.
pub const SMEM_STORE_SKIP_RECOVER: u64 = 1 << 0;

/// First bit of the NUMA binding field of the create flags.
pub const SMEM_BM_BIND_NUMA_FLAG_INDEX: u32 = 0;
/// Width of the NUMA binding field of the create flags.
pub const SMEM_BM_BIND_NUMA_FLAG_LEN: u32 = 7;
/// The NUMA binding value meaning "bind by affinity, automatically".
pub const SMEM_BM_BIND_NUMA_AUTO_AFFINITY_FLAG: u32 = (1 << SMEM_BM_BIND_NUMA_FLAG_LEN) - 1;
/// The bit of the performance mode in the create flags.
pub const SMEM_BM_PERFORMANCE_MODE_FLAG_INDEX: u32 = 7;
/// Width of the performance mode field of the create flags.
pub const SMEM_BM_PERFORMANCE_MODE_FLAG_LEN: u32 = 1;
/// Create flag: the caller hands in DRAM through `dramShmFd`.
pub const SMEM_BM_FLAG_CREATE_WITH_SHM: u32 = 1 << 8;
/// Create flag: map the pool's DRAM at host virtual addresses.
pub const SMEM_BM_FLAG_DRAM_MAP_HOST_VA: u32 = 1 << 9;
/// Create flag: allocate DRAM on a best-effort basis.
pub const SMEM_BM_FLAG_DRAM_BEST_EFFORT: u32 = 1 << 10;

// ---------------------------------------------------------------------------
// Enums
// ---------------------------------------------------------------------------

/// Which memory a GVA or size query is about (`smem_bm_mem_type`).
pub type smem_bm_mem_type = u32;
/// The same type under its 1.3 name.
pub type smem_bm_mem_type_t = smem_bm_mem_type;
/// Memory on the local device, outside the pool.
pub const SMEM_MEM_TYPE_LOCAL_DEVICE: smem_bm_mem_type = 0;
/// Memory on the local host, outside the pool.
pub const SMEM_MEM_TYPE_LOCAL_HOST: smem_bm_mem_type = 1;
/// The pool's global device (HBM) range.
pub const SMEM_MEM_TYPE_DEVICE: smem_bm_mem_type = 2;
/// The pool's global host (DRAM) range.
pub const SMEM_MEM_TYPE_HOST: smem_bm_mem_type = 3;
/// One past the last memory type.
pub const SMEM_MEM_TYPE_BUTT: smem_bm_mem_type = 4;

/// The transports a BM may use, as bit flags (`smem_bm_data_op_type`).
pub type smem_bm_data_op_type = u32;
/// The same type under its 1.3 name.
pub type smem_bm_data_op_type_t = smem_bm_data_op_type;
/// Device SDMA.
pub const SMEMB_DATA_OP_SDMA: smem_bm_data_op_type = 1 << 0;
/// Host RDMA.
pub const SMEMB_DATA_OP_HOST_RDMA: smem_bm_data_op_type = 1 << 1;
/// Host TCP.
pub const SMEMB_DATA_OP_HOST_TCP: smem_bm_data_op_type = 1 << 2;
/// Device RDMA.
pub const SMEMB_DATA_OP_DEVICE_RDMA: smem_bm_data_op_type = 1 << 3;
/// Host URMA.
pub const SMEMB_DATA_OP_HOST_URMA: smem_bm_data_op_type = 1 << 4;
/// Same-node host shared memory (no network transport).
pub const SMEMB_DATA_OP_HOST_SHM: smem_bm_data_op_type = 1 << 5;
/// Device URMA.
pub const SMEMB_DATA_OP_DEVICE_URMA: smem_bm_data_op_type = 1 << 6;
/// Device UBoE.
pub const SMEMB_DATA_OP_DEVICE_UBOE: smem_bm_data_op_type = 1 << 7;
/// One past the last transport bit.
pub const SMEMB_DATA_OP_BUTT: smem_bm_data_op_type = (1 << 7) + 1;

/// The direction of a BM copy (`smem_bm_copy_type`). L is local HBM outside
/// the pool, H local DRAM outside the pool, G a global GVA, GH a global host
/// (DRAM) GVA.
pub type smem_bm_copy_type = u32;
/// The same type under its 1.3 name.
pub type smem_bm_copy_type_t = smem_bm_copy_type;
/// Local HBM to a global GVA.
pub const SMEMB_COPY_L2G: smem_bm_copy_type = 0;
/// A global GVA to local HBM.
pub const SMEMB_COPY_G2L: smem_bm_copy_type = 1;
/// A global GVA to local DRAM.
pub const SMEMB_COPY_G2H: smem_bm_copy_type = 2;
/// Local DRAM to a global GVA.
pub const SMEMB_COPY_H2G: smem_bm_copy_type = 3;
/// Local HBM to a global host GVA.
pub const SMEMB_COPY_L2GH: smem_bm_copy_type = 4;
/// A global host GVA to local HBM.
pub const SMEMB_COPY_GH2L: smem_bm_copy_type = 5;
/// A global host GVA to local DRAM.
pub const SMEMB_COPY_GH2H: smem_bm_copy_type = 6;
/// Local DRAM to a global host GVA.
pub const SMEMB_COPY_H2GH: smem_bm_copy_type = 7;
/// A global GVA to a global GVA.
pub const SMEMB_COPY_G2G: smem_bm_copy_type = 8;
/// The library picks the direction from the addresses.
pub const SMEMB_COPY_AUTO: smem_bm_copy_type = 9;
/// One past the last copy type (refused with `SMEM_INVALID_PARAM`).
pub const SMEMB_COPY_BUTT: smem_bm_copy_type = 10;

/// A group event (deprecated in 1.3, whose handler is a no-op).
pub type smem_bm_group_event_t = u32;
/// A member joined (deprecated).
pub const SMEM_GROUP_EVENT_JOIN: smem_bm_group_event_t = 0;
/// A member left (deprecated).
pub const SMEM_GROUP_EVENT_LEAVE: smem_bm_group_event_t = 1;
/// One past the last group event.
pub const SMEM_MEMBER_EVENT_BUTT: smem_bm_group_event_t = 2;

/// The role of a TRANS instance (`smem_trans_role_t`).
pub type smem_trans_role_t = u32;
/// No role.
pub const SMEM_TRANS_NONE: smem_trans_role_t = 0;
/// Sends (the default of `smem_trans_config_init`).
pub const SMEM_TRANS_SENDER: smem_trans_role_t = 1;
/// Receives.
pub const SMEM_TRANS_RECEIVER: smem_trans_role_t = 2;
/// Sends and receives.
pub const SMEM_TRANS_BOTH: smem_trans_role_t = 3;
/// One past the last role.
pub const SMEM_TRANS_BUTT: smem_trans_role_t = 4;

// ---------------------------------------------------------------------------
// Handles and callbacks
// ---------------------------------------------------------------------------

/// A BM ("big memory") object, from `smem_bm_create`/`smem_bm_create2`.
pub type smem_bm_t = *mut c_void;
/// A TRANS (point-to-point) instance, from `smem_trans_create`.
pub type smem_trans_t = *mut c_void;

/// A log sink for `smem_set_extern_logger`: level (0 debug … 3 error) and a
/// NUL-terminated message.
pub type smem_logger_fn = Option<unsafe extern "C" fn(level: c_int, msg: *const c_char)>;
/// An alarm sink for `smem_set_extern_alarm`: a code and a message.
pub type smem_alarm_fn = Option<unsafe extern "C" fn(code: u16, msg: *const c_char)>;
/// The "alarm resolved" sink for `smem_set_extern_alarm`.
pub type smem_alarm_resume_fn = Option<unsafe extern "C" fn(code: u16)>;
/// Called when the config store's leader changes.
pub type smem_bm_leader_change_cb = Option<unsafe extern "C" fn(user_data: *mut c_void)>;
/// A group event callback (the handler is a no-op in 1.3).
pub type smem_bm_group_event_cb =
    Option<unsafe extern "C" fn(handle: smem_bm_t, rank_id: u32, event: smem_bm_group_event_t, context: *mut c_void)>;
/// Called when a TRANS peer goes down, with its unique id.
pub type smem_trans_peer_down_callback_t =
    Option<unsafe extern "C" fn(peer_unique_id: *const c_char, user_data: *mut c_void)>;

// ---------------------------------------------------------------------------
// Structs
// ---------------------------------------------------------------------------

/// TLS settings of the config store or of the host transport. TLS is off by
/// default (`tlsEnable == false`); each path is a NUL-terminated string.
#[repr(C)]
#[derive(Clone, Copy)]
#[allow(non_snake_case)]
pub struct smem_tls_config {
    /// Whether TLS is on.
    pub tlsEnable: bool,
    /// The CA certificate file.
    pub caPath: [c_char; SMEM_TLS_PATH_SIZE],
    /// The certificate revocation list.
    pub crlPath: [c_char; SMEM_TLS_PATH_SIZE],
    /// This side's certificate.
    pub certPath: [c_char; SMEM_TLS_PATH_SIZE],
    /// This side's private key.
    pub keyPath: [c_char; SMEM_TLS_PATH_SIZE],
    /// The file holding the key's passphrase.
    pub keyPassPath: [c_char; SMEM_TLS_PATH_SIZE],
    /// The TLS package (library) path.
    pub packagePath: [c_char; SMEM_TLS_PATH_SIZE],
    /// The library that decrypts the passphrase.
    pub decrypterLibPath: [c_char; SMEM_TLS_PATH_SIZE],
}
/// The same type under its 1.3 name.
pub type smem_tls_config_t = smem_tls_config;

/// The configuration of `smem_bm_init`. Fill it with `smem_bm_config_init`
/// first (it writes the defaults: timeouts 120/120/900 s, the store server
/// started by rank 0, auto-ranking, TLS off).
#[repr(C)]
#[derive(Clone, Copy)]
#[allow(non_snake_case)]
pub struct smem_bm_config_t {
    /// Timeout of `smem_bm_init`, seconds.
    pub initTimeout: u32,
    /// Timeout of `smem_bm_create`, seconds.
    pub createTimeout: u32,
    /// Timeout of control operations, seconds.
    pub controlOperationTimeout: u32,
    /// Whether rank 0 starts the config store inside `smem_bm_init`.
    pub startConfigStoreServer: bool,
    /// Only start the config store.
    pub startConfigStoreOnly: bool,
    /// Whether members may join dynamically.
    pub dynamicWorldSize: bool,
    /// Unified address space with SVM.
    pub unifiedAddressSpace: bool,
    /// Whether the store assigns rank ids.
    pub autoRanking: bool,
    /// The rank id when `autoRanking` is false (a `u32` in ABI 1.3).
    pub rankId: u32,
    /// Other flags.
    pub flags: u32,
    /// The host transport's URL.
    pub hcomUrl: [c_char; 64],
    /// TLS of the host transport.
    pub hcomTlsConfig: smem_tls_config,
    /// TLS of the config store.
    pub storeTlsConfig: smem_tls_config,
}

/// The options of `smem_bm_create2`.
#[repr(C)]
#[derive(Clone, Copy)]
#[allow(non_snake_case)]
pub struct smem_bm_create_option_t {
    /// The most DRAM all ranks together contribute, bytes.
    pub maxDramSize: u64,
    /// The most HBM all ranks together contribute, bytes.
    pub maxHbmSize: u64,
    /// The DRAM this rank contributes, bytes.
    pub localDRAMSize: u64,
    /// The HBM this rank contributes, bytes.
    pub localHBMSize: u64,
    /// The transports ([`smem_bm_data_op_type`] bits), used when `tag` or
    /// `tagOpInfo` is empty.
    pub dataOpType: smem_bm_data_op_type,
    /// Use 56-bit GVAs (for address spaces over 32 TB).
    pub enable56BitsGva: bool,
    /// Create flags (`SMEM_BM_FLAG_*`, NUMA binding, performance mode).
    pub flags: u32,
    /// This BM's tag, NUL-terminated.
    pub tag: [c_char; 32],
    /// Transports between tags, NUL-terminated text.
    pub tagOpInfo: [c_char; 256],
    /// The shm file descriptor with `SMEM_BM_FLAG_CREATE_WITH_SHM`.
    pub dramShmFd: c_int,
}

/// One copy of `smem_bm_copy`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
#[allow(non_snake_case)]
pub struct smem_copy_params {
    /// The source address.
    pub src: *const c_void,
    /// The destination address.
    pub dest: *mut c_void,
    /// Bytes to copy.
    pub dataSize: usize,
    /// The stream with `SMEM_BM_FLAG_USE_EXTERNAL_STREAM` (new in 1.3).
    pub stream: *mut c_void,
}
/// The same type under its 1.3 name.
pub type smem_copy_params_t = smem_copy_params;

/// The copies of `smem_bm_copy_batch`. The library takes the direction of
/// every entry from entry 0.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
#[allow(non_snake_case)]
pub struct smem_batch_copy_params {
    /// `batchSize` source addresses.
    pub sources: *mut *mut c_void,
    /// `batchSize` destination addresses.
    pub destinations: *mut *mut c_void,
    /// `batchSize` byte counts.
    pub dataSizes: *const u64,
    /// The number of entries.
    pub batchSize: u32,
    /// The stream with `SMEM_BM_FLAG_USE_EXTERNAL_STREAM` (new in 1.3).
    pub stream: *mut c_void,
}
/// The same type under its 1.3 name.
pub type smem_batch_copy_params_t = smem_batch_copy_params;

/// Per-entry results of a batch.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
#[allow(non_snake_case)]
pub struct smem_batch_copy_result {
    /// `batchSize` result codes.
    pub results: *mut i32,
    /// The number of entries.
    pub batchSize: u32,
}
/// The same type under its 1.3 name.
pub type smem_batch_copy_result_t = smem_batch_copy_result;

/// The configuration of `smem_trans_init`/`smem_trans_create`. Fill it with
/// `smem_trans_config_init`, then **always set `dataOpType`**: the init call
/// leaves it unwritten.
#[repr(C)]
#[derive(Clone, Copy)]
#[allow(non_snake_case)]
pub struct smem_trans_config_t {
    /// The role ([`smem_trans_role_t`]).
    pub role: smem_trans_role_t,
    /// Timeout, seconds.
    pub initTimeout: u32,
    /// The NPU device id.
    pub deviceId: u32,
    /// Optional flags.
    pub flags: u32,
    /// The transport ([`smem_bm_data_op_type`] bits).
    pub dataOpType: smem_bm_data_op_type,
    /// The host NIC for host RDMA, `tcp://ip:port`, NUL-terminated.
    pub nic: [c_char; 64],
    /// TLS of the host transport.
    pub hcomTlsConfig: smem_tls_config,
}

/// The parameters of `smem_trans_batch_quant_write` (A3 only; fp16/bf16 to
/// int8).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
#[allow(non_snake_case)]
pub struct smem_trans_quant_copy_param_t {
    /// The remote peer's unique id, NUL-terminated.
    pub remoteUniqueId: *const c_char,
    /// `batchSize` local addresses.
    pub localAddrs: *mut *mut c_void,
    /// `batchSize` remote addresses.
    pub remoteAddrs: *mut *mut c_void,
    /// `batchSize` byte counts.
    pub dataSizes: *mut usize,
    /// Quantisation scales (addresses on the remote peer).
    pub scale: *mut *mut f32,
    /// Quantisation offsets (addresses on the remote peer).
    pub offset: *mut *mut f32,
    /// The number of entries.
    pub batchSize: u32,
    /// Elements per token.
    pub unitNum: u32,
    /// Submit on this stream, asynchronously, when not NULL.
    pub stream: *mut c_void,
    /// 0: bfloat16 input; 1: float16 input.
    pub inputType: u32,
    /// Unused.
    pub flags: u32,
}

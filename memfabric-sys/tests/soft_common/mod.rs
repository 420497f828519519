//! Helpers of the software-fabric tests: run a body in a child process on
//! the software backend, and thin wrappers over the C calls.
#![allow(dead_code)]

use memfabric_sys::*;
use std::ffi::{CStr, CString};
use std::ptr::null_mut;

#[path = "../common/mod.rs"]
pub mod common;

/// Runs `body` in a child of this test binary on the software backend (the
/// BM world is a process singleton), or, in the child, runs it.
pub fn scenario(test: &str, name: &str, body: impl FnOnce()) {
    if common::is_child(name) {
        assert_eq!(backend().expect("the software fabric").backend, Backend::Software);
        body();
        println!("child {name} done");
        return;
    }
    common::run_isolated_child(test, name, &[(ENV_BACKEND, "software".into())]);
}

/// The last error code and message of this thread.
pub fn last_error() -> (i32, String) {
    // SAFETY: no arguments.
    let code = unsafe { smem_get_last_err_code() };
    // SAFETY: no arguments; copied at once.
    let text = unsafe { smem_get_last_err_msg() };
    assert!(!text.is_null());
    // SAFETY: a C string of the fabric.
    (code, unsafe { CStr::from_ptr(text) }.to_string_lossy().into_owned())
}

/// A config with short timeouts (`rank`: `None` for auto-ranking).
pub fn config(rank: Option<u32>, serve: bool) -> smem_bm_config_t {
    // SAFETY: zeroed plain data, then filled by the call.
    let mut config: smem_bm_config_t = unsafe { std::mem::zeroed() };
    // SAFETY: a valid out-pointer.
    assert_eq!(unsafe { smem_bm_config_init(&mut config) }, SMEM_OK);
    config.initTimeout = 20;
    config.controlOperationTimeout = 20;
    config.startConfigStoreServer = serve;
    config.autoRanking = rank.is_none();
    config.rankId = rank.unwrap_or(0xFFFF);
    config
}

/// `smem_bm_init` on `tcp://127.0.0.1:port`.
pub fn init(port: u16, world: u32, config: &smem_bm_config_t) -> i32 {
    let url = CString::new(format!("tcp://127.0.0.1:{port}")).unwrap();
    // SAFETY: valid string and config.
    unsafe { smem_bm_init(url.as_ptr(), world, 0, config) }
}

/// `smem_bm_create2` with the given sizes.
pub fn create(id: u32, dram: u64, hbm: u64) -> smem_bm_t {
    // SAFETY: zeroed plain data.
    let mut option: smem_bm_create_option_t = unsafe { std::mem::zeroed() };
    option.localDRAMSize = dram;
    option.localHBMSize = hbm;
    option.dataOpType = SMEMB_DATA_OP_SDMA;
    // SAFETY: a valid option.
    unsafe { smem_bm_create2(id, &option) }
}

/// One `smem_bm_copy`.
pub fn copy(bm: smem_bm_t, src: *const u8, dst: *mut u8, size: usize, kind: u32) -> i32 {
    let mut params = smem_copy_params_t {
        src: src.cast(),
        dest: dst.cast(),
        dataSize: size,
        stream: null_mut(),
    };
    // SAFETY: the addresses are the test's buffers or GVAs of `bm`.
    unsafe { smem_bm_copy(bm, &mut params, kind, 0) }
}

/// The GVA of `rank`'s segment of `kind`.
pub fn gva(bm: smem_bm_t, kind: u32, rank: u16) -> *mut u8 {
    // SAFETY: plain values.
    unsafe { smem_bm_ptr_by_mem_type(bm, kind, rank) }.cast()
}

/// Device memory of the software device (device 0 current on this thread).
pub fn device_alloc(size: usize) -> *mut u8 {
    use ascend_sys::soft::direct as acl;
    // SAFETY: no pointer arguments.
    assert_eq!(unsafe { acl::aclrtSetDevice(0) }, ascend_sys::ACL_SUCCESS);
    let mut ptr = null_mut();
    // SAFETY: a valid out-pointer.
    assert_eq!(
        unsafe { acl::aclrtMalloc(&mut ptr, size, ascend_sys::ACL_MEM_MALLOC_HUGE_FIRST) },
        ascend_sys::ACL_SUCCESS
    );
    ptr.cast()
}

/// Reads `size` bytes of device memory.
pub fn device_read(ptr: *const u8, size: usize) -> Vec<u8> {
    use ascend_sys::soft::direct as acl;
    let mut out = vec![0u8; size];
    // SAFETY: `out` holds `size` bytes; the device side is validated.
    let code = unsafe {
        acl::aclrtMemcpy(
            out.as_mut_ptr().cast(),
            size,
            ptr.cast(),
            size,
            ascend_sys::ACL_MEMCPY_DEVICE_TO_HOST,
        )
    };
    assert_eq!(code, ascend_sys::ACL_SUCCESS);
    out
}

/// A pattern of `size` bytes seeded by `seed`.
pub fn pattern(size: usize, seed: u8) -> Vec<u8> {
    (0..size)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
        .collect()
}

//! The common `smem_*` entry points.

use super::{finish, text};
use crate::soft::bm::world;
use crate::soft::core::last_error;
use crate::soft::core::result::fail;
use crate::types::*;

pub(crate) unsafe fn smem_get_abi_version() -> u32 {
    SMEM_ABI_VERSION_SUPPORTED
}

/// Flags are not checked, as on the real library.
pub(crate) unsafe fn smem_init(_flags: u32) -> i32 {
    SMEM_OK
}

pub(crate) unsafe fn smem_uninit() {}

pub(crate) unsafe fn smem_create_config_store(storeUrl: *const c_char, _flags: u64) -> i32 {
    // SAFETY: NULL or a C string by the call's contract.
    let url = unsafe { text(storeUrl, "storeUrl") };
    finish("smem_create_config_store", url.and_then(world::create_store))
}

pub(crate) unsafe fn smem_destroy_config_store(storeUrl: *const c_char) {
    // SAFETY: NULL or a C string by the call's contract.
    let url = unsafe { text(storeUrl, "storeUrl") };
    finish("smem_destroy_config_store", url.and_then(world::destroy_store));
}

/// Accepted; the software fabric logs through the `log` crate.
pub(crate) unsafe fn smem_set_extern_logger(_func: smem_logger_fn) -> i32 {
    SMEM_OK
}

/// Accepted; the software fabric raises no alarms.
pub(crate) unsafe fn smem_set_extern_alarm(_alarm: smem_alarm_fn, _resume: smem_alarm_resume_fn) -> i32 {
    SMEM_OK
}

pub(crate) unsafe fn smem_set_log_level(level: c_int) -> i32 {
    let result = if (0..=4).contains(&level) {
        Ok(())
    } else {
        fail(SMEM_INVALID_PARAM, format!("log level {level} is not in 0..=4"))
    };
    finish("smem_set_log_level", result)
}

/// Turning TLS off is accepted; the software fabric has no TLS.
pub(crate) unsafe fn smem_set_conf_store_tls(enable: bool, _tls_info: *const c_char, _tls_info_len: u32) -> i32 {
    let result = if enable {
        fail(MEMFABRIC_SYS_NOT_SUPPORTED, "the software fabric's store has no TLS")
    } else {
        Ok(())
    };
    finish("smem_set_conf_store_tls", result)
}

pub(crate) unsafe fn smem_get_last_err_msg() -> *const c_char {
    last_error::message(false)
}

pub(crate) unsafe fn smem_get_and_clear_last_err_msg() -> *const c_char {
    last_error::message(true)
}

pub(crate) unsafe fn smem_get_last_err_code() -> i32 {
    last_error::code()
}

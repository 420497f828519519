//! The BM entry points.

use super::{finish, finish_or, text};
use crate::soft::bm::{handle, world};
use crate::soft::copy;
use crate::soft::core::result::{SoftResult, fail};
use crate::types::*;

pub(crate) unsafe fn smem_bm_config_init(config: *mut smem_bm_config_t) -> i32 {
    if config.is_null() {
        return finish("smem_bm_config_init", fail(SMEM_INVALID_PARAM, "config is NULL"));
    }
    // SAFETY: non-NULL and writable by the call's contract.
    unsafe { config.write(world::default_config()) };
    SMEM_OK
}

pub(crate) unsafe fn smem_bm_init(
    storeURL: *const c_char,
    worldSize: u32,
    deviceId: u16,
    config: *const smem_bm_config_t,
) -> i32 {
    let result = (|| {
        if world::current().is_ok() {
            log::info!("smem bm initialized already");
            return Ok(());
        }
        // SAFETY: NULL or a C string by the call's contract.
        let url = unsafe { text(storeURL, "storeURL") }?;
        let config = if config.is_null() {
            world::default_config()
        } else {
            // SAFETY: non-NULL and readable by the call's contract.
            unsafe { config.read() }
        };
        world::init(url, worldSize, deviceId, &config)
    })();
    finish("smem_bm_init", result)
}

pub(crate) unsafe fn smem_bm_uninit(_flags: u32) {
    world::uninit();
}

pub(crate) unsafe fn smem_bm_get_rank_id() -> u32 {
    world::rank_id()
}

pub(crate) unsafe fn smem_bm_create(
    id: u32,
    _memberSize: u32,
    _dataOpType: smem_bm_data_op_type_t,
    localDRAMSize: u64,
    localHBMSize: u64,
    _flags: u32,
) -> smem_bm_t {
    finish_or(
        "smem_bm_create",
        handle::create(id, localDRAMSize, localHBMSize),
        std::ptr::null_mut(),
    )
}

pub(crate) unsafe fn smem_bm_create2(id: u32, option: *const smem_bm_create_option_t) -> smem_bm_t {
    let result = world::current().and_then(|_| {
        if option.is_null() {
            return fail(SMEM_INVALID_PARAM, "option is NULL");
        }
        // SAFETY: non-NULL and readable by the call's contract.
        let option = unsafe { option.read() };
        handle::create(id, option.localDRAMSize, option.localHBMSize)
    });
    finish_or("smem_bm_create2", result, std::ptr::null_mut())
}

pub(crate) unsafe fn smem_bm_destroy(handle: smem_bm_t) {
    finish("smem_bm_destroy", handle::destroy(handle));
}

pub(crate) unsafe fn smem_bm_join(handle: smem_bm_t, _flags: u32) -> i32 {
    finish("smem_bm_join", handle::get(handle).and_then(|bm| bm.join()))
}

pub(crate) unsafe fn smem_bm_leave(handle: smem_bm_t, _flags: u32) -> i32 {
    finish("smem_bm_leave", handle::get(handle).and_then(|bm| bm.leave()))
}

pub(crate) unsafe fn smem_bm_get_local_mem_size_by_mem_type(handle: smem_bm_t, memType: smem_bm_mem_type_t) -> u64 {
    let result = handle::get(handle).and_then(|bm| match memType {
        SMEM_MEM_TYPE_DEVICE | SMEM_MEM_TYPE_LOCAL_DEVICE => Ok(bm.local_sizes.1),
        SMEM_MEM_TYPE_HOST | SMEM_MEM_TYPE_LOCAL_HOST => Ok(bm.local_sizes.0),
        _ => fail(
            SMEM_INVALID_PARAM,
            format!("memType {memType} is not below SMEM_MEM_TYPE_BUTT"),
        ),
    });
    finish_or("smem_bm_get_local_mem_size_by_mem_type", result, 0)
}

pub(crate) unsafe fn smem_bm_ptr_by_mem_type(
    handle: smem_bm_t,
    memType: smem_bm_mem_type_t,
    peerRankId: u16,
) -> *mut c_void {
    let result = handle::get(handle).and_then(|bm| {
        let range = match memType {
            SMEM_MEM_TYPE_DEVICE => bm.device,
            SMEM_MEM_TYPE_HOST => bm.host,
            _ => {
                return fail(
                    SMEM_INVALID_PARAM,
                    format!("memType {memType}: only DEVICE and HOST have GVAs"),
                );
            }
        };
        match range.segment(u32::from(peerRankId)) {
            Some(gva) => Ok(gva as *mut c_void),
            None => fail(
                SMEM_INVALID_PARAM,
                format!(
                    "rank {peerRankId} has no segment of memType {memType} (world size {})",
                    range.ranks
                ),
            ),
        }
    });
    finish_or("smem_bm_ptr_by_mem_type", result, std::ptr::null_mut())
}

pub(crate) unsafe fn smem_bm_gva_to_va(
    handle: smem_bm_t,
    gva: *mut c_void,
    vaMemType: smem_bm_mem_type_t,
    va: *mut *mut c_void,
) -> i32 {
    let result = handle::get(handle).and_then(|bm| {
        if va.is_null() || gva.is_null() {
            return fail(SMEM_INVALID_PARAM, "gva and va must not be NULL");
        }
        let local = copy::gva_to_va(&bm, gva as u64, vaMemType)?;
        // SAFETY: non-NULL and writable by the call's contract.
        unsafe { va.write(local) };
        Ok(())
    });
    finish("smem_bm_gva_to_va", result)
}

pub(crate) unsafe fn smem_bm_get_rank_id_by_gva(handle: smem_bm_t, gva: *mut c_void) -> u32 {
    let result = handle::get(handle).map(|bm| copy::rank_by_gva(&bm, gva as u64));
    finish_or("smem_bm_get_rank_id_by_gva", result, u32::MAX)
}

pub(crate) unsafe fn smem_bm_register_user_mem(handle: smem_bm_t, addr: u64, size: u64) -> i32 {
    finish(
        "smem_bm_register_user_mem",
        handle::get(handle).and_then(|bm| bm.register(addr, size)),
    )
}

pub(crate) unsafe fn smem_bm_unregister_user_mem(handle: smem_bm_t, addr: u64) -> i32 {
    finish(
        "smem_bm_unregister_user_mem",
        handle::get(handle).map(|bm| bm.unregister(addr)),
    )
}

/// The order of the real library: the arguments, then initialisation,
/// then the handle.
fn copy_prelude(handle: smem_bm_t, null_params: bool) -> SoftResult<std::sync::Arc<handle::Bm>> {
    if null_params {
        return fail(SMEM_INVALID_PARAM, "params is NULL");
    }
    world::current()?;
    handle::get(handle)
}

pub(crate) unsafe fn smem_bm_copy(
    handle: smem_bm_t,
    params: *mut smem_copy_params_t,
    t: smem_bm_copy_type_t,
    flags: u32,
) -> i32 {
    let result = copy_prelude(handle, params.is_null()).and_then(|bm| {
        // SAFETY: non-NULL and readable by the call's contract.
        let params = unsafe { params.read() };
        copy::copy(&bm, &params, t, flags)
    });
    finish("smem_bm_copy", result)
}

pub(crate) unsafe fn smem_bm_copy_batch(
    handle: smem_bm_t,
    params: *mut smem_batch_copy_params_t,
    t: smem_bm_copy_type_t,
    flags: u32,
) -> i32 {
    let result = copy_prelude(handle, params.is_null()).and_then(|bm| {
        // SAFETY: non-NULL and readable by the call's contract.
        let params = unsafe { params.read() };
        // SAFETY: the arrays hold `batchSize` entries by the call's contract.
        unsafe { copy::copy_batch(&bm, &params, t, flags) }
    });
    finish("smem_bm_copy_batch", result)
}

/// Copies complete before they return, so there is nothing to wait for.
pub(crate) unsafe fn smem_bm_wait(handle: smem_bm_t) -> i32 {
    finish("smem_bm_wait", handle::get(handle).and_then(|bm| copy::wait(&bm)))
}

/// A no-op, as in the real 1.3.
pub(crate) unsafe fn smem_bm_set_group_event_handler(
    handle: smem_bm_t,
    _cb: smem_bm_group_event_cb,
    _context: *mut c_void,
) -> i32 {
    finish("smem_bm_set_group_event_handler", handle::get(handle).map(drop))
}

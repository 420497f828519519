//! `aclInit`/`aclFinalize` and device selection.

use super::context;
use super::fail::{SoftResult, fail};
use super::runtime;
use crate::types::*;

/// `aclInit`: NULL or empty path means the default configuration; another
/// path must name a readable file. A second call while initialised returns
/// `ACL_ERROR_REPEAT_INITIALIZE`; re-initialising after `aclFinalize` with a
/// configuration whose content differs from the first one is refused.
pub(crate) fn init(config_path: Option<&str>) -> SoftResult {
    let content = match config_path {
        None | Some("") => Vec::new(),
        Some(path) => match std::fs::read(path) {
            Ok(bytes) => bytes,
            Err(error) => {
                return fail(
                    ACL_ERROR_INVALID_FILE,
                    format!("configPath {path:?} cannot be read: {error}"),
                );
            }
        },
    };
    let mut state = runtime::lock()?;
    let init = &mut state.init;
    if init.initialized {
        init.references += 1;
        return fail(
            ACL_ERROR_REPEAT_INITIALIZE,
            "AscendCL is already initialised in this process (the configuration of this call is ignored)",
        );
    }
    match &init.first_config {
        Some(first) if *first != content => {
            return fail(
                ACL_ERROR_INVALID_PARAM,
                "re-initialisation after aclFinalize with a configuration that differs from the first aclInit",
            );
        }
        Some(_) => {}
        None => init.first_config = Some(content),
    }
    init.initialized = true;
    init.finalized = false;
    init.references = 1;
    Ok(())
}

/// `aclFinalize`: tears down however many `aclInit` calls were made; a second
/// call returns `ACL_ERROR_REPEAT_FINALIZE`. The first call of a process
/// succeeds even without `aclInit`, as on hardware.
pub(crate) fn finalize() -> SoftResult {
    let mut state = runtime::lock()?;
    if state.init.finalized {
        return fail(ACL_ERROR_REPEAT_FINALIZE, "AscendCL is already finalized");
    }
    state.init.initialized = false;
    state.init.finalized = true;
    state.init.references = 0;
    super::introspect::log_leaks(&state);
    Ok(())
}

/// `aclFinalizeReference`: drops one `aclInit` reference, finalizing at zero.
pub(crate) fn finalize_reference(count: &mut u64) -> SoftResult {
    let mut state = runtime::lock()?;
    if !state.init.initialized || state.init.references == 0 {
        return fail(ACL_ERROR_REPEAT_FINALIZE, "AscendCL is not initialised");
    }
    state.init.references -= 1;
    *count = state.init.references;
    if state.init.references == 0 {
        state.init.initialized = false;
        state.init.finalized = true;
        super::introspect::log_leaks(&state);
    }
    Ok(())
}

/// `aclrtSetDevice`: retains the device's primary context and makes it this
/// thread's current device.
pub(crate) fn set_device(id: i32) -> SoftResult {
    let mut state = runtime::lock()?;
    state.device(id)?.retains += 1;
    context::set(Some(id));
    Ok(())
}

/// `aclrtResetDevice` (`force`: `aclrtResetDeviceForce`, drops every retain).
///
/// When the last retain goes, the primary context is torn down as on
/// hardware: the device's streams, events and `aclrtMalloc*` memory stop
/// existing, and later calls on them fail as for destroyed handles and freed
/// memory (`ACL_ERROR_RT_INVALID_HANDLE`, `ACL_ERROR_RT_PARAM_INVALID`; see
/// docs/runtime-choices.md). Work already queued on the device's streams
/// (its default stream included) runs to the end first; the memory goes
/// after that, unless the device was set again meanwhile.
pub(crate) fn reset_device(id: i32, force: bool) -> SoftResult {
    let detached = {
        let mut state = runtime::lock()?;
        let device = state.device(id)?;
        if device.retains == 0 {
            return fail(
                ACL_ERROR_RT_CONTEXT_RELEASE_ERROR,
                format!("device {id} is not set (aclrtSetDevice was not called, or it was already reset)"),
            );
        }
        device.retains = if force { 0 } else { device.retains - 1 };
        let last = device.retains == 0;
        context::release_primary(id);
        last.then(|| state.streams.detach_device(id))
    };
    let Some((streams, events)) = detached else {
        return Ok(());
    };
    let stream_count = streams.len();
    streams.finish();
    let mut state = runtime::lock()?;
    let allocations = if state.device(id)?.retains == 0 {
        super::device_mem::free_device(&mut state, id)
    } else {
        0
    };
    if stream_count + events + allocations > 0 {
        log::warn!(
            "device {id} reset by its last retain: {stream_count} stream(s), {events} event(s) and {allocations} \
             allocation(s) of its primary context are destroyed"
        );
    }
    Ok(())
}

/// `aclrtGetDeviceCount`.
pub(crate) fn device_count() -> SoftResult<u32> {
    Ok(runtime::core()?.devices.len() as u32)
}

/// `aclrtGetMemInfo` for the current device. The software device has a
/// single pool per device, so every valid attribute reports it.
pub(crate) fn mem_info(attr: aclrtMemAttr) -> SoftResult<(usize, usize)> {
    if attr > ACL_MEM_P2P_HUGE1G {
        return fail(
            ACL_ERROR_RT_INVALID_MEMORY_TYPE,
            format!("attr {attr} is not an aclrtMemAttr (0 to {ACL_MEM_P2P_HUGE1G})"),
        );
    }
    let device = context::require()?;
    let (free, capacity) = super::device_mem::free_bytes(device)?;
    Ok((free as usize, capacity as usize))
}

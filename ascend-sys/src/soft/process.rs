//! `aclInit`/`aclFinalize` and device selection.

use crate::soft::context;
use crate::soft::core::lock_order::{self, Rank, Ranked};
use crate::soft::core::soft_result::{SoftResult, fail};
use crate::soft::started;
use crate::soft::started::current;
use crate::types::*;
use std::sync::Mutex;

/// `aclInit` / `aclFinalize` state: this family's state, behind its own
/// lock.
#[derive(Debug)]
struct InitState {
    initialized: bool,
    finalized: bool,
    references: u64,
    /// Content of the first successful configuration (re-initialisation with
    /// a different one is refused, as the runtime does).
    first_config: Option<Vec<u8>>,
}

static INIT: Mutex<InitState> = Mutex::new(InitState {
    initialized: false,
    finalized: false,
    references: 0,
    first_config: None,
});

/// The family's state, locked ([`Rank::Init`]); fails only if the software
/// device cannot start.
fn init_state() -> SoftResult<Ranked<'static, InitState>> {
    started::core()?;
    Ok(lock_order::lock(&INIT, Rank::Init))
}

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
    let mut init = init_state()?;
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
    {
        let mut init = init_state()?;
        if init.finalized {
            return fail(ACL_ERROR_REPEAT_FINALIZE, "AscendCL is already finalized");
        }
        init.initialized = false;
        init.finalized = true;
        init.references = 0;
    }
    crate::soft::introspect::log_leaks();
    Ok(())
}

/// `aclFinalizeReference`: drops one `aclInit` reference, finalizing at zero.
pub(crate) fn finalize_reference(count: &mut u64) -> SoftResult {
    let last = {
        let mut init = init_state()?;
        if !init.initialized || init.references == 0 {
            return fail(ACL_ERROR_REPEAT_FINALIZE, "AscendCL is not initialised");
        }
        init.references -= 1;
        *count = init.references;
        if init.references == 0 {
            init.initialized = false;
            init.finalized = true;
        }
        init.references == 0
    };
    if last {
        crate::soft::introspect::log_leaks();
    }
    Ok(())
}

/// `aclrtSetDevice`: retains the device's primary context and makes it this
/// thread's current device.
pub(crate) fn set_device(id: i32) -> SoftResult {
    context::retain_primary(id)?;
    current::set(Some(id));
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
/// after that, unless the device was set again meanwhile. The decision and
/// the release are one step for `aclrtSetDevice`: a retain taken during it
/// waits for its end, so what is made under that retain is never released.
pub(crate) fn reset_device(id: i32, force: bool) -> SoftResult {
    let detached = {
        // The streams first, then the contexts: the lock order.
        let mut streams = crate::soft::compose::streams::lock()?;
        let last = context::release_primary(id, force)?;
        last.then(|| streams.detach_device(id))
    };
    let Some((streams, events)) = detached else {
        return Ok(());
    };
    let stream_count = streams.len();
    streams.finish();
    // Whether the memory goes is decided, and the memory goes, with the
    // device unretained throughout (the contexts' lock held, after the
    // sharing tables' in the lock order): a thread setting the device again
    // meanwhile waits until its pools and memory are gone, so nothing it
    // makes under its new retain is taken with them. Managed memory loses
    // its host mapping before the device's memory is freed, both under the
    // managed family's lock (taken before the sharing tables').
    let (managed, released) = crate::soft::compose::managed::release_device(
        id,
        || {
            let share = crate::soft::share::write()?;
            Ok(context::unretained(id)?.map(|unretained| (share, unretained)))
        },
        |(mut share, _unretained)| {
            // The pools first: a block of a live pool is never plain device
            // memory (`aclrtFree` refuses pool blocks by address).
            let pools = crate::soft::compose::mem_pool::release_device(id, &mut share);
            // The device's memory goes, and with it the IPC keys of what
            // was exported (the sharing tables are held throughout).
            let freed = crate::soft::device_mem::free_device(id);
            for &start in &freed {
                crate::soft::share::forget_allocation(&mut share, start);
            }
            (pools, freed.len())
        },
    )?;
    let (pools, allocations) = released.unwrap_or((0, 0));
    if stream_count + events + allocations + pools > 0 {
        log::warn!(
            "device {id} reset by its last retain: {stream_count} stream(s), {events} event(s), {pools} memory \
             pool(s) and {allocations} allocation(s) ({managed} of them managed) of its primary context are \
             destroyed"
        );
    }
    Ok(())
}

/// `aclrtGetDeviceCount`.
pub(crate) fn device_count() -> SoftResult<u32> {
    Ok(started::core()?.devices.len() as u32)
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
    let device = current::require()?;
    let (free, capacity) = crate::soft::device_mem::free_bytes(device)?;
    Ok((free as usize, capacity as usize))
}

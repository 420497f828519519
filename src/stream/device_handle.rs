//! [`destroy_once`]: the destruction every owned runtime object of a device
//! (an event, a notify, a count notify) does the same way.

use crate::Device;
use crate::error::{Result, check};
use ascend_sys as sys;
use std::ffi::c_void;
use std::ptr::NonNull;

/// Destroys `handle` once (`api`, through `destroy`) with `device` made
/// current; nothing when it is gone already. The handle is taken first, so
/// it is never destroyed twice, whatever the call returns.
///
/// # Safety
///
/// `handle` came from the create call that `destroy` undoes, and is not
/// used elsewhere after this.
pub(super) unsafe fn destroy_once(
    handle: &mut Option<NonNull<c_void>>,
    device: &Device,
    api: &'static str,
    destroy: unsafe fn(*mut c_void) -> sys::aclError,
) -> Result<()> {
    let Some(handle) = handle.take() else {
        return Ok(());
    };
    device.make_current()?;
    // SAFETY: the caller's contract: a live handle of `destroy`'s kind,
    // destroyed once (taken above).
    check(api, unsafe { destroy(handle.as_ptr()) })
}
